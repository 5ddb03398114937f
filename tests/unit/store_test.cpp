// The storage seam on a real SQLite file: atomic units, rollback on error, group commit.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "domain/idempotency/idempotency.hpp"
#include "store/store.hpp"

using namespace tesoro;

namespace {

struct TempStore {
  std::string dir;
  std::unique_ptr<store::Store> store;
  TempStore() {
    char pattern[] = "/tmp/tesoro-unit-XXXXXX";
    dir = ::mkdtemp(pattern);
    store::Options options;
    options.data_dir = dir;
    store = store::open(options);
    store::migrate(*store);
  }
  ~TempStore() {
    store.reset();
    std::filesystem::remove_all(dir);
  }
};

std::int64_t count_events(store::Store& s) {
  return s.read<std::int64_t>([](store::Tx& tx) -> Result<std::int64_t> {
            return tx.query_one("SELECT COUNT(*) FROM events")->integer(0);
          }).value();
}

}  // namespace

TEST(Store, MigrationsAreIdempotent) {
  TempStore t;
  int version = store::migrate(*t.store);
  EXPECT_GE(version, 2);
  EXPECT_EQ(store::migrate(*t.store), version);
  EXPECT_FALSE(store::is_initialised(*t.store));
}

TEST(Store, ErrorRollsBackTheWholeUnit) {
  TempStore t;
  auto result = t.store->write<int>([](store::Tx& tx) -> Result<int> {
    tx.exec("INSERT INTO events (tenant_id, id, type, data, inserted_at) VALUES ('t', 'e1', 'x', '{}', 'now')");
    return errors::make(422, "insufficient_funds", "no");
  });
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(count_events(*t.store), 0);
}

TEST(Store, ExceptionRollsBackOnlyItsUnit) {
  TempStore t;
  std::atomic<int> thrown{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 40; ++i) {
    threads.emplace_back([&, i] {
      try {
        static_cast<void>(t.store->write<int>([i](store::Tx& tx) -> Result<int> {
          tx.exec("INSERT INTO events (tenant_id, id, type, data, inserted_at) VALUES ('t', ?, 'x', '{}', 'now')",
                  {std::string("e") + std::to_string(i)});
          if (i % 4 == 0) tx.exec("INSERT INTO no_such_table VALUES (1)");
          return i;
        }));
      } catch (const store::StoreError&) {
        ++thrown;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(thrown.load(), 10);
  EXPECT_EQ(count_events(*t.store), 30);
}

TEST(Store, NestedSavepointKeepsOuterWork) {
  TempStore t;
  auto result = t.store->write<int>([](store::Tx& tx) -> Result<int> {
    tx.exec("INSERT INTO events (tenant_id, id, type, data, inserted_at) VALUES ('t', 'outer', 'x', '{}', 'now')");
    auto inner = tx.nested<int>([](store::Tx& inner_tx) -> Result<int> {
      inner_tx.exec("INSERT INTO events (tenant_id, id, type, data, inserted_at) VALUES ('t', 'inner', 'x', '{}', 'now')");
      return errors::make(409, "conflict", "no");
    });
    EXPECT_FALSE(inner.ok());
    return 1;
  });
  EXPECT_TRUE(result.ok());
  EXPECT_EQ(count_events(*t.store), 1);
}

TEST(Store, IdempotencyRecordIsFirstWriterWins) {
  TempStore t;
  auto now = time::now_micros();
  auto write = [&](const std::string& body) {
    return t.store->write<bool>([&](store::Tx& tx) -> Result<bool> {
      return idempotency::record(tx, "t", "k", "hash", {201, "application/json", body}, now);
    }).value();
  };
  EXPECT_TRUE(write("first"));
  EXPECT_FALSE(write("second"));
  auto found = t.store->read<std::optional<idempotency::Found>>([&](store::Tx& tx) -> Result<std::optional<idempotency::Found>> {
    return idempotency::find(tx, "t", "k", "hash", now);
  }).value();
  ASSERT_TRUE(found);
  EXPECT_TRUE(found->same_request);
  EXPECT_EQ(found->response.body, "first");
  auto expired = t.store->write<std::int64_t>([&](store::Tx& tx) -> Result<std::int64_t> {
    return idempotency::sweep_expired(tx, now + 25LL * 3600 * time::k_micros_per_second);
  }).value();
  EXPECT_EQ(expired, 1);
}
