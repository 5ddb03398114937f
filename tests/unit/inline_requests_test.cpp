// Which requests the app runs on the I/O thread (App::handle_inline answers them): only
// those that never wait long. A write or a PostgreSQL read on an I/O thread would stall every
// connection it serves, and so would a SQLite read waiting for a reader of the pool.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <latch>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/app.hpp"
#include "test_stores.hpp"

using namespace tesoro;

namespace {

class InlineRequests : public test_stores::EngineStoreTest {
 protected:
  void SetUp() override {
    EngineStoreTest::SetUp();
    if (IsSkipped()) return;
    // One reader opened and idle, as a serving store has them: an I/O thread never opens one
    // (that reads the database file), so a read there needs one idle.
    static_cast<void>(temp->store->read<int>([](store::Tx& tx) -> Result<int> {
      tx.query("SELECT 1");
      return 0;
    }));
    app::Config config;
    config.data_dir = temp->dir;
    app = std::make_unique<app::App>(config, std::move(temp->store),
                                     crypto::Sealer(std::string(32, 'k')));
  }
  // Whether the I/O thread answers it (else it is handed to a worker).
  bool runs_inline(const std::string& method, const std::string& target) const {
    http::Request request;
    request.method = method;
    request.target = target;
    return app->handle_inline(request).has_value();
  }
  std::unique_ptr<app::App> app;  // owns the fixture's store
};

}  // namespace

TEST_P(InlineRequests, OnlyRequestsThatNeverWaitRunOnTheIoThread) {
  bool sqlite = GetParam() == store::Engine::sqlite;
  EXPECT_TRUE(runs_inline("GET", "/healthz"));
  EXPECT_TRUE(runs_inline("GET", "/metrics"));
  EXPECT_TRUE(runs_inline("GET", "/no/such/route?x=1"));
  EXPECT_TRUE(runs_inline("HEAD", "/healthz"));
  // readyz asks the database; reads are WAL snapshots on SQLite, round trips on PostgreSQL.
  EXPECT_EQ(runs_inline("GET", "/readyz"), sqlite);
  EXPECT_EQ(runs_inline("GET", "/v1/accounts?page_size=10"), sqlite);
  EXPECT_EQ(runs_inline("HEAD", "/v1/accounts"), sqlite);
  // The console's pages come from memory; its API reads the session (and proxies reads).
  EXPECT_TRUE(runs_inline("GET", "/console/"));
  EXPECT_TRUE(runs_inline("GET", "/console/js/app.js"));
  EXPECT_EQ(runs_inline("GET", "/console/api/session"), sqlite);
  EXPECT_EQ(runs_inline("GET", "/console/api/v1/accounts"), sqlite);
  EXPECT_FALSE(runs_inline("POST", "/console/api/session"));
  // Writes wait for their commit: never on the I/O thread.
  EXPECT_FALSE(runs_inline("POST", "/v1/ledger/account_holders"));
  EXPECT_FALSE(runs_inline("PATCH", "/api/v1/collections/bbcol_0123456789012345678901"));
  EXPECT_FALSE(runs_inline("DELETE", "/v1/webhook_endpoints/whe_0123456789012345678901"));
  EXPECT_FALSE(runs_inline("POST", "/healthz"));  // a 405, but handled like any write
}

TESORO_ON_BOTH_ENGINES(InlineRequests);

namespace {

// A request as the I/O thread hands it over.
http::Request get(const std::string& target) {
  http::Request request;
  request.method = "GET";
  request.target = target;
  return request;
}

// `count` readers of the store, each taken by a thread of its own in a read that lasts until
// release() (or the end of this).
class ReadersTaken {
 public:
  ReadersTaken(store::Store& store, int count) : taken_(count) {
    std::shared_future<void> released = release_.get_future().share();
    for (int i = 0; i < count; ++i) {
      threads_.emplace_back([this, &store, released] {
        static_cast<void>(store.read<int>([&](store::Tx& tx) -> Result<int> {
          static_cast<void>(tx.query_one("SELECT 1"));
          taken_.count_down();
          released.wait();
          return 0;
        }));
      });
    }
    taken_.wait();
  }
  ~ReadersTaken() { release(); }
  ReadersTaken(const ReadersTaken&) = delete;
  ReadersTaken& operator=(const ReadersTaken&) = delete;
  void release() {
    if (released_) return;
    released_ = true;
    release_.set_value();
    for (std::thread& thread : threads_) thread.join();
  }

 private:
  std::latch taken_;
  std::promise<void> release_;
  bool released_ = false;
  std::vector<std::thread> threads_;
};

// The temporary database opened again with at most `readers` reader connections.
std::unique_ptr<store::Store> store_with_readers(test_stores::TempStore& temp, int readers) {
  temp.store.reset();
  store::Options options = temp.options;
  options.read_connections = readers;
  return store::open(options);
}

}  // namespace

// store/store.hpp's contract: an I/O thread never waits for a reader. With every reader of the
// pool taken, a read goes to a worker (handle_inline answers nothing, at once) instead of
// waiting on the I/O thread; requests that read no database are still answered there.
TEST(InlineRequestsOnSqlite, AReadWithEveryReaderTakenIsHandedToAWorker) {
  test_stores::TempStore temp(store::Engine::sqlite);
  std::unique_ptr<store::Store> opened = store_with_readers(temp, 2);
  store::Store& store = *opened;
  app::Config config;
  config.data_dir = temp.dir;
  app::App app(config, std::move(opened), crypto::Sealer(std::string(32, 'k')));

  ReadersTaken every_reader(store, 2);
  // Run where a blocked call cannot hang the suite: a wait of seconds means it waited.
  auto inline_answer = [&app](const std::string& target) {
    auto answered = std::async(std::launch::async, [&app, target] {
      http::Request request = get(target);
      return app.handle_inline(request);
    });
    return answered;
  };
  auto readyz = inline_answer("/readyz");
  const bool returned = readyz.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  EXPECT_TRUE(returned) << "the I/O thread waited for a reader";
  auto health = inline_answer("/healthz");
  const bool health_returned =
      health.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  every_reader.release();
  if (returned) {
    EXPECT_FALSE(readyz.get().has_value()) << "a read ran without a reader";
  }
  ASSERT_TRUE(health_returned);
  std::optional<http::Response> healthy = health.get();
  ASSERT_TRUE(healthy.has_value());
  EXPECT_EQ(healthy->status, 200);

  // Readers idle again: the read runs on the calling thread, through the reader it holds.
  http::Request again = get("/readyz");
  std::optional<http::Response> ready = app.handle_inline(again);
  ASSERT_TRUE(ready.has_value());
  EXPECT_EQ(ready->status, 200);
}

// A read inside a read on a thread that holds a reader (a GET on an I/O thread whose handler
// reads again) runs on the held reader, in the outer read's snapshot: with every other reader
// taken it still never waits for the pool.
TEST(InlineRequestsOnSqlite, AReadInsideAReadOnTheHeldReaderNeverWaits) {
  test_stores::TempStore temp(store::Engine::sqlite);
  std::unique_ptr<store::Store> opened = store_with_readers(temp, 2);
  store::Store& store = *opened;
  // Both readers opened (two reads at once), then idle.
  {
    std::latch both(2);
    auto read_with_other = [&] {
      static_cast<void>(store.read<int>([&](store::Tx& tx) -> Result<int> {
        static_cast<void>(tx.query_one("SELECT 1"));
        both.arrive_and_wait();
        return 0;
      }));
    };
    std::thread first(read_with_other);
    read_with_other();
    first.join();
  }
  // One reader taken by another thread until released; the other held by the "I/O thread".
  ReadersTaken other(store, 1);
  auto nested = std::async(std::launch::async, [&store]() -> std::optional<std::int64_t> {
    store::HeldReader held(store);
    if (!held) return std::nullopt;
    auto outer = store.read<std::int64_t>([&](store::Tx& tx) -> Result<std::int64_t> {
      const std::int64_t first = tx.query_one("SELECT 40")->integer(0);
      auto inner = store.read<std::int64_t>([](store::Tx& inner_tx) -> Result<std::int64_t> {
        return inner_tx.query_one("SELECT 2")->integer(0);
      });
      auto single = store.read_single<std::int64_t>(
          [](store::Tx& inner_tx) -> Result<std::int64_t> {
            return inner_tx.query_one("SELECT 0")->integer(0);
          });
      return first + inner.value() + single.value();
    });
    return outer.value();
  });
  const bool returned = nested.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  other.release();
  EXPECT_TRUE(returned) << "a read inside a held reader's read waited for the pool";
  std::optional<std::int64_t> sum = nested.get();
  ASSERT_TRUE(sum.has_value()) << "no idle reader to hold";
  EXPECT_EQ(*sum, 42);
  // The held reader went back: both readers idle again.
  store::HeldReader first(store);
  EXPECT_TRUE(first);
}

// A held reader serves the holding thread's reads; one per thread; given back on release.
TEST(InlineRequestsOnSqlite, AHeldReaderServesTheThreadsReads) {
  test_stores::TempStore temp(store::Engine::sqlite);
  EXPECT_FALSE(store::HeldReader(*temp.store)) << "no reader idle before the first read";
  EXPECT_EQ(test_stores::read_integer(*temp.store, "SELECT 7"), 7);  // opens one, then idle
  {
    store::HeldReader held(*temp.store);
    ASSERT_TRUE(held);
    EXPECT_FALSE(store::HeldReader(*temp.store)) << "a second reader held by one thread";
    EXPECT_EQ(test_stores::read_integer(*temp.store, "SELECT 8"), 8);
  }
  store::HeldReader again(*temp.store);
  EXPECT_TRUE(again) << "the reader went back to the pool";
}
