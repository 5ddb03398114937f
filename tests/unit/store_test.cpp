// The storage seam on both real engines: atomic units, rollback on error, group commit, jobs
// claimed once across nodes, and both engines ending at the same schema.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <functional>
#include <future>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "core/limits.hpp"
#include "core/metrics.hpp"
#include "domain/jobs/jobs.hpp"
#include "store/bulk.hpp"
#include "store/idempotency.hpp"
#include "store/postgres/postgres_store.hpp"
#include "store/sqlite/wal_vfs.hpp"
#include "test_stores.hpp"

using namespace tesoro;
using test_stores::TempStore;

namespace {

std::int64_t count_events(store::Store& s) {
  return s.read<std::int64_t>([](store::Tx& tx) -> Result<std::int64_t> {
            return tx.query_one("SELECT COUNT(*) FROM events")->integer(0);
          }).value();
}

class StoreTest : public test_stores::EngineStoreTest {};

}  // namespace

TEST_P(StoreTest, MigrationsAreIdempotent) {
  int version = store::migrate(*temp->store);
  EXPECT_GE(version, 3);
  EXPECT_EQ(store::migrate(*temp->store), version);
  EXPECT_FALSE(store::is_initialised(*temp->store));
}

// Texts bound where they are (TextRef) store what they point at, on both engines; exec_many
// counts the rows an INSERT ... ON CONFLICT DO NOTHING wrote, across its statements.
TEST_P(StoreTest, BorrowedTextsBindAndBulkInsertsCountTheRowsWritten) {
  std::vector<std::string> ids;
  for (int i = 0; i < 263; ++i) ids.push_back("e" + std::to_string(i));  // 250 + 10 + 3 rows
  const std::string tenant = "tenant-with-a-long-enough-id";
  const std::string data = R"({"text":"held by the caller"})";
  auto insert_all = [&](store::Tx& tx) {
    store::Params values;
    for (const std::string& id : ids) {
      for (store::Value value : {store::Value(store::TextRef(tenant)), store::Value(store::TextRef(id)),
                                 store::Value("x"), store::Value(store::TextRef(data)),
                                 store::Value(nullptr), store::Value("now")}) {
        values.push_back(std::move(value));
      }
    }
    return store::exec_many(tx, "INSERT INTO events (tenant_id, id, type, data, position, inserted_at)",
                            6, "ON CONFLICT (tenant_id, id) DO NOTHING", std::move(values));
  };
  auto first = temp->store->write<std::int64_t>(
      [&](store::Tx& tx) -> Result<std::int64_t> { return insert_all(tx); });
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first.value(), 263);
  ids.push_back("e-new");  // one new row among 263 that are there: 264 rows, 1 written
  auto second = temp->store->write<std::int64_t>(
      [&](store::Tx& tx) -> Result<std::int64_t> { return insert_all(tx); });
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second.value(), 1);
  auto row = temp->store->read<store::Row>([&](store::Tx& tx) -> Result<store::Row> {
    return *tx.query_one("SELECT tenant_id, data, position FROM events WHERE id = ?",
                         {store::TextRef(ids[200])});
  });
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(row->text(0), tenant);
  EXPECT_EQ(row->text(1), data);
  EXPECT_TRUE(row->is_null(2));
  EXPECT_EQ(count_events(*temp->store), 264);
}

// Rows packed where they are made (store::PackedRows) insert what was added, value for value,
// on both engines (PostgreSQL binds each text by its NUL): a text equal to the one above it in
// its column is kept once and still written to every row; a NULL, an empty text and integers
// keep their kinds; the buffer may grow while rows are added; rows are chosen by index.
TEST_P(StoreTest, PackedRowsInsertWhatWasAddedAndKeepARepeatedTextOnce) {
  ASSERT_TRUE(temp->store
                  ->write<bool>([](store::Tx& tx) -> Result<bool> {
                    tx.exec("CREATE TABLE packed (k BIGINT PRIMARY KEY, shared TEXT, own TEXT, "
                            "maybe TEXT, n BIGINT)");
                    return true;
                  })
                  .ok());
  const std::string shared = "the same text in every row, longer than a short string's room";
  store::PackedRows rows(5);
  rows.reserve(1, 8);  // far too little: the texts move as the buffer grows
  constexpr std::int64_t k_rows = 300;
  auto own = [](std::int64_t k) { return "own-" + std::to_string(k / 2); };  // pairs repeat
  for (std::int64_t k = 0; k < k_rows; ++k) {
    rows.integer(k).text(shared).text(own(k));
    const char* maybe = k % 3 == 1 ? "" : "x";
    rows.optional_text(k % 3 == 0 ? std::nullopt : std::optional<std::string>(maybe));
    rows.optional_integer(k % 5 == 0 ? std::nullopt : std::optional<std::int64_t>(-k));
  }
  ASSERT_EQ(rows.rows(), static_cast<std::size_t>(k_rows));
  EXPECT_EQ(rows.text_at(7, 2), own(7));
  EXPECT_EQ(rows.text_at(7, 1).data(), rows.text_at(6, 1).data());  // kept once
  EXPECT_EQ(rows.text_at(7, 2).data(), rows.text_at(6, 2).data());  // the pair's second
  EXPECT_NE(rows.text_at(8, 2).data(), rows.text_at(7, 2).data());
  EXPECT_EQ(rows.text_at(7, 0), "");  // not a text
  std::vector<std::size_t> chosen;
  for (std::size_t row = 0; row < rows.rows(); row += 2) chosen.push_back(row);
  auto written = temp->store->write<std::int64_t>([&](store::Tx& tx) -> Result<std::int64_t> {
    store::Params values;
    for (std::size_t row : chosen) rows.append_row(row, values);
    return store::exec_many(tx, "INSERT INTO packed (k, shared, own, maybe, n)", 5, "", values);
  });
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(written.value(), static_cast<std::int64_t>(chosen.size()));
  auto read = temp->store->read<store::Rows>([](store::Tx& tx) -> Result<store::Rows> {
    return tx.query("SELECT k, shared, own, maybe, n FROM packed ORDER BY k");
  });
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->size(), chosen.size());
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const store::Row& row = (*read)[i];
    const auto k = static_cast<std::int64_t>(chosen[i]);
    ASSERT_EQ(row.integer(0), k);
    EXPECT_EQ(row.text(1), shared) << k;
    EXPECT_EQ(row.text(2), own(k)) << k;
    if (k % 3 == 0) EXPECT_TRUE(row.is_null(3)) << k;
    else EXPECT_EQ(row.optional_text(3), std::optional<std::string>(k % 3 == 1 ? "" : "x")) << k;
    if (k % 5 == 0) EXPECT_TRUE(row.is_null(4)) << k;
    else EXPECT_EQ(row.optional_integer(4), -k) << k;
  }
}

// Tx::append_rows (PostgreSQL: COPY's text format, sent in pieces of 256 KiB) gives back every
// value as it was: the characters COPY escapes, a text that reads "\N", an empty text apart
// from NULL, the integers' extremes; a row that repeats a key fails as an INSERT's would.
TEST_P(StoreTest, AppendedRowsReadBackExactlyAndARepeatedKeyIsADuplicateRow) {
  ASSERT_TRUE(temp->store
                  ->write<bool>([](store::Tx& tx) -> Result<bool> {
                    tx.exec("CREATE TABLE appended (k BIGINT PRIMARY KEY, t TEXT, "
                            "n BIGINT CHECK (n <> 42))");
                    return true;
                  })
                  .ok());
  const std::vector<std::string> texts = {
      "tab\there", "line\nend", "carriage\rreturn", "back\\slash", "\\N", "", "ñandú € 😀",
      "\\\t\n\r\\", "eight by\ttes, then a tab; sixteen bytes and a line\nfeed ending in \\",
      "no byte here is escaped, over several blocks of eight"};
  const std::string long_text(300'000, 'x');  // a row across two of COPY's pieces
  constexpr std::int64_t k_long_row = 1234;
  const std::vector<std::int64_t> numbers = {std::numeric_limits<std::int64_t>::min(),
                                             std::numeric_limits<std::int64_t>::max(), 0, -1};
  constexpr std::int64_t k_rows = 3000;
  auto text_of = [&](std::int64_t k) -> const std::string& {
    return k == k_long_row ? long_text : texts[static_cast<std::size_t>(k) % texts.size()];
  };
  auto number_of = [&](std::int64_t k) {
    return numbers[static_cast<std::size_t>(k) % numbers.size()];
  };
  store::Params values;
  for (std::int64_t k = 0; k < k_rows; ++k) {
    values.emplace_back(k);
    if (k % 10 == 9) values.emplace_back(nullptr);
    else values.emplace_back(store::TextRef(text_of(k)));
    if (k % 7 == 6) values.emplace_back(nullptr);
    else values.emplace_back(number_of(k));
  }
  auto written = temp->store->write<std::int64_t>([&](store::Tx& tx) -> Result<std::int64_t> {
    return tx.append_rows("appended (k, t, n)", 3, values);
  });
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(written.value(), k_rows);
  auto rows = temp->store->read<store::Rows>([](store::Tx& tx) -> Result<store::Rows> {
    return tx.query("SELECT k, t, n FROM appended ORDER BY k");
  });
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), static_cast<std::size_t>(k_rows));
  for (std::int64_t k = 0; k < k_rows; ++k) {
    const store::Row& row = (*rows)[static_cast<std::size_t>(k)];
    ASSERT_EQ(row.integer(0), k);
    if (k % 10 == 9) {
      EXPECT_TRUE(row.is_null(1)) << k;
    } else {
      EXPECT_FALSE(row.is_null(1)) << k;
      EXPECT_EQ(row.text(1), text_of(k)) << k;
    }
    if (k % 7 == 6) EXPECT_TRUE(row.is_null(2)) << k;
    else EXPECT_EQ(row.optional_integer(2), number_of(k)) << k;
  }
  // A new row and one whose key is there: the whole unit fails, and nothing of it stays.
  const store::Params again = {std::int64_t{k_rows}, "new", std::int64_t{1},
                               std::int64_t{5}, "repeated", std::int64_t{2}};
  try {
    (void)temp->store->write<bool>([&](store::Tx& tx) -> Result<bool> {
      tx.append_rows("appended (k, t, n)", 3, again);
      return true;
    });
    ADD_FAILURE() << "a repeated key was appended";
  } catch (const store::StoreError& failure) {
    EXPECT_TRUE(failure.duplicate_row()) << failure.what();
    EXPECT_FALSE(failure.unavailable());
  }
  auto count = temp->store->read<std::int64_t>([](store::Tx& tx) -> Result<std::int64_t> {
    return tx.query_one("SELECT COUNT(*) FROM appended")->integer(0);
  });
  EXPECT_EQ(count.value(), k_rows);
  // Another constraint's failure is not a duplicate row.
  try {
    (void)temp->store->write<bool>([&](store::Tx& tx) -> Result<bool> {
      tx.append_rows("appended (k, t, n)", 3,
                     store::Params{std::int64_t{k_rows + 1}, "text", std::int64_t{42}});
      return true;
    });
    ADD_FAILURE() << "a row against the check was appended";
  } catch (const store::StoreError& failure) {
    EXPECT_FALSE(failure.duplicate_row()) << failure.what();
  }
}

// Tx::exec_later: a deferred write is there for the unit's next statement and its commit; its
// failure fails the unit where it is sent (the next query, the commit), or only the nested part
// that deferred it, and a failed nested part's writes are not sent again.
TEST_P(StoreTest, DeferredWritesGoBeforeWhatFollowsAndTheirFailureIsTheirUnitsOrNestedParts) {
  ASSERT_TRUE(temp->store
                  ->write<bool>([](store::Tx& tx) -> Result<bool> {
                    tx.exec("CREATE TABLE deferred (k TEXT PRIMARY KEY, n BIGINT)");
                    return true;
                  })
                  .ok());
  auto keys = [&] {
    return temp->store
        ->read<std::string>([](store::Tx& tx) -> Result<std::string> {
          std::string all;
          for (const store::Row& row : tx.query("SELECT k FROM deferred ORDER BY k")) {
            all += row.text(0) + " ";
          }
          return all;
        })
        .value();
  };
  // Deferred as the unit's first statements, read back by the unit, committed.
  auto seen = temp->store->write<std::int64_t>([](store::Tx& tx) -> Result<std::int64_t> {
    const std::string borrowed = "a";
    tx.exec_later("INSERT INTO deferred (k, n) VALUES (?, ?)",
                  {store::TextRef(borrowed), std::int64_t{1}});
    tx.exec_later("UPDATE deferred SET n = n + 1 WHERE k = ?", {"a"});
    const std::int64_t n = tx.query_one("SELECT n FROM deferred WHERE k = 'a'")->integer(0);
    tx.exec_later("INSERT INTO deferred (k, n) VALUES (?, ?)", {"b", nullptr});
    return n;
  });
  ASSERT_TRUE(seen.ok());
  EXPECT_EQ(seen.value(), 2);
  EXPECT_EQ(keys(), "a b ");

  // A repeated key deferred: the commit fails as the INSERT would, and nothing of the unit stays.
  for (bool first_statement : {true, false}) {
    try {
      (void)temp->store->write<bool>([&](store::Tx& tx) -> Result<bool> {
        if (!first_statement) tx.exec("INSERT INTO deferred (k, n) VALUES ('c', 0)");
        tx.exec_later("INSERT INTO deferred (k, n) VALUES ('d', 0)");
        tx.exec_later("INSERT INTO deferred (k, n) VALUES ('a', 0)");
        tx.exec_later("INSERT INTO deferred (k, n) VALUES ('e', 0)");
        return true;
      });
      ADD_FAILURE() << "a repeated key was written";
    } catch (const store::StoreError& failure) {
      EXPECT_TRUE(failure.duplicate_row()) << failure.what();
      EXPECT_FALSE(failure.unavailable());
    }
    EXPECT_EQ(keys(), "a b ");
  }
  // ... or fails the query it was sent with.
  try {
    (void)temp->store->write<bool>([&](store::Tx& tx) -> Result<bool> {
      tx.exec_later("INSERT INTO deferred (k, n) VALUES ('b', 0)");
      (void)tx.query("SELECT k FROM deferred");
      ADD_FAILURE() << "the query ran after a failed deferred write";
      return true;
    });
    ADD_FAILURE() << "a repeated key was written";
  } catch (const store::StoreError& failure) {
    EXPECT_TRUE(failure.duplicate_row()) << failure.what();
  }

  // In a nested part: its failure is the nested part's; the unit goes on and commits the rest.
  auto outcome = temp->store->write<bool>([&](store::Tx& tx) -> Result<bool> {
    tx.exec_later("INSERT INTO deferred (k, n) VALUES ('f', 0)");
    bool duplicate = false;
    try {
      (void)tx.nested<bool>([](store::Tx& inner) -> Result<bool> {
        inner.exec_later("INSERT INTO deferred (k, n) VALUES ('g', 0)");
        inner.exec_later("INSERT INTO deferred (k, n) VALUES ('b', 0)");
        return true;
      });
    } catch (const store::StoreError& failure) {
      duplicate = failure.duplicate_row();
    }
    // A nested part that returned an error: its deferred writes are undone with it.
    auto refused = tx.nested<bool>([](store::Tx& inner) -> Result<bool> {
      inner.exec_later("INSERT INTO deferred (k, n) VALUES ('h', 0)");
      return errors::make("conflict", "no");
    });
    EXPECT_FALSE(refused.ok());
    tx.exec_later("INSERT INTO deferred (k, n) VALUES ('i', 0)");
    return duplicate;
  });
  ASSERT_TRUE(outcome.ok());
  EXPECT_TRUE(outcome.value()) << "the nested part's repeated key was not reported as such";
  EXPECT_EQ(keys(), "a b f i ");
}

TEST_P(StoreTest, ErrorRollsBackTheWholeUnit) {
  auto result = temp->store->write<int>([](store::Tx& tx) -> Result<int> {
    tx.exec("INSERT INTO events (tenant_id, id, type, data, inserted_at) VALUES ('t', 'e1', 'x', '{}', 'now')");
    return errors::make("insufficient_funds", "no");
  });
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(count_events(*temp->store), 0);
}

TEST_P(StoreTest, ExceptionRollsBackOnlyItsUnit) {
  std::atomic<int> thrown{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 40; ++i) {
    threads.emplace_back([&, i] {
      try {
        static_cast<void>(temp->store->write<int>([i](store::Tx& tx) -> Result<int> {
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
  EXPECT_EQ(count_events(*temp->store), 30);
}

TEST_P(StoreTest, NestedSavepointKeepsOuterWork) {
  auto result = temp->store->write<int>([](store::Tx& tx) -> Result<int> {
    tx.exec("INSERT INTO events (tenant_id, id, type, data, inserted_at) VALUES ('t', 'outer', 'x', '{}', 'now')");
    auto inner = tx.nested<int>([](store::Tx& inner_tx) -> Result<int> {
      inner_tx.exec("INSERT INTO events (tenant_id, id, type, data, inserted_at) VALUES ('t', 'inner', 'x', '{}', 'now')");
      return errors::make("conflict", "no");
    });
    EXPECT_FALSE(inner.ok());
    return 1;
  });
  EXPECT_TRUE(result.ok());
  EXPECT_EQ(count_events(*temp->store), 1);
}

TEST_P(StoreTest, IdempotencyRecordIsFirstWriterWins) {
  auto now = time::now_micros();
  auto write = [&](const std::string& body) {
    return temp->store->write<bool>([&](store::Tx& tx) -> Result<bool> {
      return idempotency::record(tx, "t", "k", "hash", {201, "application/json", body}, now);
    }).value();
  };
  EXPECT_TRUE(write("first"));
  EXPECT_FALSE(write("second"));
  // An expired record is taken over by a new use of its key.
  auto later = now + 25LL * 3600 * time::k_micros_per_second;
  EXPECT_TRUE(temp->store->write<bool>([&](store::Tx& tx) -> Result<bool> {
    return idempotency::record(tx, "t", "old", "hash", {201, "application/json", "a"}, now);
  }).value());
  EXPECT_TRUE(temp->store->write<bool>([&](store::Tx& tx) -> Result<bool> {
    return idempotency::record(tx, "t", "old", "other", {201, "application/json", "b"}, later);
  }).value());
  auto found = temp->store->read<std::optional<idempotency::Found>>(
      [&](store::Tx& tx) -> Result<std::optional<idempotency::Found>> {
        return idempotency::find(tx, "t", "k", "hash", now);
      }).value();
  ASSERT_TRUE(found);
  EXPECT_TRUE(found->same_request);
  EXPECT_EQ(found->response.body, "first");
  auto expired = temp->store->write<std::int64_t>([&](store::Tx& tx) -> Result<std::int64_t> {
    return idempotency::sweep_expired(tx, now + 25LL * 3600 * time::k_micros_per_second, 100);
  }).value();
  EXPECT_EQ(expired, 1);  // "k" expired; "old" was renewed at `later`
}

// A replay's lookup rewrites the record unchanged (so that its unit waits for the standbys):
// same answer as find, the record as it was, nothing for an unknown or expired key.
TEST_P(StoreTest, IdempotencyReplayLookupLeavesTheRecordAsItWas) {
  auto now = time::now_micros();
  ASSERT_TRUE(temp->store->write<bool>([&](store::Tx& tx) -> Result<bool> {
    return idempotency::record(tx, "t", "k", "hash", {201, "application/json", "stored"}, now);
  }).value());
  auto replay = [&](const std::string& key, const std::string& hash, time::Micros at) {
    return temp->store->write<std::optional<idempotency::Found>>(
        [&](store::Tx& tx) -> Result<std::optional<idempotency::Found>> {
          return idempotency::find_for_replay(tx, "t", key, hash, at);
        }).value();
  };
  auto found = replay("k", "hash", now);
  ASSERT_TRUE(found);
  EXPECT_TRUE(found->same_request);
  EXPECT_EQ(found->response.status, 201);
  EXPECT_EQ(found->response.content_type, "application/json");
  EXPECT_EQ(found->response.body, "stored");
  auto other = replay("k", "another request", now);
  ASSERT_TRUE(other);
  EXPECT_FALSE(other->same_request);
  EXPECT_FALSE(replay("unknown", "hash", now));
  EXPECT_FALSE(replay("k", "hash", now + 25LL * 3600 * time::k_micros_per_second));
  // Still there and unchanged: the sweep of a day later finds it expired as recorded.
  auto again = temp->store->read<std::optional<idempotency::Found>>(
      [&](store::Tx& tx) -> Result<std::optional<idempotency::Found>> {
        return idempotency::find(tx, "t", "k", "hash", now);
      }).value();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->response.body, "stored");
  EXPECT_EQ(temp->store->write<std::int64_t>([&](store::Tx& tx) -> Result<std::int64_t> {
    return idempotency::sweep_expired(tx, now + 25LL * 3600 * time::k_micros_per_second, 100);
  }).value(), 1);
}

TEST_P(StoreTest, JobsAreClaimedOnceAcrossNodes) {
  constexpr int k_jobs = 200;
  time::Micros now = time::now_micros();
  static_cast<void>(temp->store->write<int>([&](store::Tx& tx) -> Result<int> {
    for (int i = 0; i < k_jobs; ++i) jobs::enqueue(tx, "t", "deliver", std::to_string(i), now, now);
    return 0;
  }));
  auto other_node = temp->open_again();
  std::mutex mutex;
  std::multiset<std::string> claimed;
  auto worker = [&](store::Store& node, const std::string& name) {
    while (true) {
      auto batch = node.write<std::vector<jobs::Job>>([&](store::Tx& tx) -> Result<std::vector<jobs::Job>> {
        auto got = jobs::claim(tx, "deliver", name, 7, time::now_micros(), 60 * time::k_micros_per_second);
        for (const auto& job : got) EXPECT_TRUE(jobs::complete(tx, job));
        return got;
      }).value();
      if (batch.empty()) return;
      std::lock_guard lock(mutex);
      for (const auto& job : batch) claimed.insert(job.payload);
    }
  };
  std::thread a(worker, std::ref(*temp->store), "node-a");
  std::thread b(worker, std::ref(*other_node), "node-b");
  a.join();
  b.join();
  EXPECT_EQ(claimed.size(), static_cast<std::size_t>(k_jobs));
  EXPECT_EQ(std::set<std::string>(claimed.begin(), claimed.end()).size(), static_cast<std::size_t>(k_jobs));
}

TEST_P(StoreTest, ExpiredLeaseMakesAJobClaimableAgain) {
  time::Micros now = time::now_micros();
  static_cast<void>(temp->store->write<int>([&](store::Tx& tx) -> Result<int> {
    jobs::enqueue(tx, "t", "sweep", "x", now, now);
    return 0;
  }));
  auto claim_at = [&](time::Micros at) {
    return temp->store->write<std::vector<jobs::Job>>([&](store::Tx& tx) -> Result<std::vector<jobs::Job>> {
      return jobs::claim(tx, "sweep", "w", 10, at, 1000);
    }).value();
  };
  EXPECT_EQ(claim_at(now).size(), 1u);
  EXPECT_EQ(claim_at(now + 10).size(), 0u);     // leased
  auto again = claim_at(now + 5000);            // lease over: the worker died
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].attempts, 2);
  // The first claim is stale now: it can neither complete nor release the job.
  jobs::Job stale = again[0];
  stale.claim_token = "clm_stale";
  EXPECT_FALSE(temp->store->write<bool>([&](store::Tx& tx) -> Result<bool> {
    return jobs::complete(tx, stale);
  }).value());
  EXPECT_TRUE(temp->store->write<bool>([&](store::Tx& tx) -> Result<bool> {
    return jobs::reschedule(tx, again[0], now + 6000);
  }).value());
}

TEST_P(StoreTest, SingleStatementReadsAndTheirFailuresKeepThePoolUsable) {
  for (int i = 0; i < 40; ++i) {  // more than the PostgreSQL pool holds: a leak would hang here
    EXPECT_THROW(static_cast<void>(temp->store->read_single<int>([](store::Tx& tx) -> Result<int> {
                   tx.query("SELECT * FROM no_such_table");
                   return 0;
                 })),
                 store::StoreError);
  }
  auto count = temp->store->read_single<std::int64_t>([](store::Tx& tx) -> Result<std::int64_t> {
    return tx.query_one("SELECT COUNT(*) FROM events")->integer(0);
  });
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(count.value(), 0);
}

TEST_P(StoreTest, ASchemaNewerThanTheBinaryIsRefused) {
  static_cast<void>(temp->store->write<int>([](store::Tx& tx) -> Result<int> {
    tx.exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 'now')");
    return 0;
  }));
  EXPECT_THROW(store::migrate(*temp->store), store::StoreError);
}

TESORO_ON_BOTH_ENGINES(StoreTest);

namespace {

using Schema = std::set<std::string>;

Schema schema_of(store::Store& s) {
  return s.read<Schema>([](store::Tx& tx) -> Result<Schema> {
            Schema out;
            bool pg = tx.engine() == store::Engine::postgres;
            for (const auto& row : tx.query(
                     pg ? "SELECT table_name, column_name FROM information_schema.columns "
                          "WHERE table_schema = 'public'"
                        : "SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p "
                          "WHERE m.type = 'table'")) {
              out.insert("column " + row.text(0) + "." + row.text(1));
            }
            for (const auto& row : tx.query(
                     pg ? "SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND "
                          "indexname NOT LIKE '%\\_pkey' AND indexname NOT LIKE '%\\_key'"
                        : "SELECT name FROM sqlite_master WHERE type = 'index' AND "
                          "name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")) {
              out.insert("index " + row.text(0));
            }
            return out;
          }).value();
}

}  // namespace

TEST(Schema, BothEnginesEndAtTheSameSchema) {
  if (!test_stores::postgres_available()) GTEST_SKIP() << "TESORO_TEST_DATABASE_URL not set";
  TempStore sqlite(store::Engine::sqlite);
  TempStore postgres(store::Engine::postgres);
  // Where an event waits for its position differs (migration 22): PostgreSQL's outbox, and
  // SQLite's index of events an earlier version left without one (SQLite positions as it writes).
  Schema of_postgres = schema_of(*postgres.store);
  std::erase_if(of_postgres, [](const std::string& item) {
    return item.starts_with("column event_outbox.");
  });
  Schema of_sqlite = schema_of(*sqlite.store);
  EXPECT_EQ(of_sqlite.erase("index events_unsequenced"), 1u);
  // SQLite's transfers keep a batch's created events (migration 23: the view all_events reads
  // them by their rowid, created_position since migration 24, and by this index); PostgreSQL
  // has the column, always NULL, and writes event rows.
  EXPECT_EQ(of_sqlite.erase("index outgoing_transfers_created_by_tenant"), 1u);
  EXPECT_EQ(of_sqlite, of_postgres);
}

TEST(Schema, TenantDataKeysIncludeTenantId) {
  if (!test_stores::postgres_available()) GTEST_SKIP() << "TESORO_TEST_DATABASE_URL not set";
  TempStore postgres(store::Engine::postgres);
  // Global by design: the tenant list, the schema version, credential lookups by secret, and the
  // network's key directory (a payer names a key, not a tenant: a key is unique network-wide),
  // the webhook fan-out cursor (one position in the events of every tenant), and the console's
  // failed sign-ins (counted by the email tried and the caller's address, which name no tenant),
  // and the events waiting for their position (one order across tenants: the sequencer's).
  const std::set<std::string> global = {"tenants", "schema_migrations", "network_keys",
                                        "webhook_fanout", "console_sign_in_failures",
                                        "event_outbox"};
  auto violations = postgres.store->read<std::vector<std::string>>([&](store::Tx& tx) -> Result<std::vector<std::string>> {
    std::vector<std::string> out;
    for (const auto& row : tx.query(
             "SELECT tc.table_name, tc.constraint_name, "
             "SUM(CASE WHEN k.column_name = 'tenant_id' THEN 1 ELSE 0 END) "
             "FROM information_schema.table_constraints tc JOIN information_schema.key_column_usage k "
             "ON k.constraint_name = tc.constraint_name AND k.table_name = tc.table_name "
             "WHERE tc.table_schema = 'public' AND tc.constraint_type IN ('PRIMARY KEY', 'UNIQUE') "
             "GROUP BY tc.table_name, tc.constraint_name")) {
      if (!global.count(row.text(0)) && row.integer(2) == 0) out.push_back(row.text(0) + "." + row.text(1));
    }
    return out;
  }).value();
  EXPECT_TRUE(violations.empty()) << ::testing::PrintToString(violations);
}

TEST(Postgres, PlaceholdersSkipQuotedText) {
  EXPECT_EQ(store::translate_placeholders("SELECT ? , '?' , \"a?\" , ?"), "SELECT $1 , '?' , \"a?\" , $2");
}

TEST(Postgres, DeadlockedUnitIsRetriedAndBothSucceed) {
  if (!test_stores::postgres_available()) GTEST_SKIP() << "TESORO_TEST_DATABASE_URL not set";
  TempStore temp(store::Engine::postgres);
  static_cast<void>(temp.store->write<int>([](store::Tx& tx) -> Result<int> {
    tx.exec("INSERT INTO events (tenant_id, id, type, data, inserted_at) VALUES ('t', 'a', 'x', '0', 'now')");
    tx.exec("INSERT INTO events (tenant_id, id, type, data, inserted_at) VALUES ('t', 'b', 'x', '0', 'now')");
    return 0;
  }));
  // Two units lock the same two rows in opposite orders: PostgreSQL kills one with a deadlock
  // (40P01); the store runs that unit again and both end up committed.
  std::atomic<int> attempts{0};
  std::atomic<int> first_locks{0};
  auto unit = [&](const std::string& first, const std::string& second) {
    return temp.store->write<int>([&](store::Tx& tx) -> Result<int> {
      ++attempts;
      tx.exec("UPDATE events SET data = data || '1' WHERE tenant_id = 't' AND id = ?", {first});
      ++first_locks;
      for (int i = 0; i < 200 && first_locks.load() < 2; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      tx.exec("UPDATE events SET data = data || '1' WHERE tenant_id = 't' AND id = ?", {second});
      return 1;
    });
  };
  auto a = std::async(std::launch::async, [&] { return unit("a", "b"); });
  auto b = std::async(std::launch::async, [&] { return unit("b", "a"); });
  EXPECT_TRUE(a.get().ok());
  EXPECT_TRUE(b.get().ok());
  EXPECT_EQ(attempts.load(), 3);  // one of the two ran twice
  auto data = temp.store->read<std::string>([](store::Tx& tx) -> Result<std::string> {
    return tx.query_one("SELECT string_agg(data, ',' ORDER BY id) FROM events")->text(0);
  }).value();
  EXPECT_EQ(data, "011,011");  // each row updated exactly twice: the killed attempt left nothing
}


// store::ArmedCheck: the calling thread's next unit runs the check's statement in the round
// trip of its own first statement. A check that holds is done and sent no more; one that does
// not fails its unit with CheckFailed, nothing of the unit committed, and stays armed; a unit
// that runs no statement, or runs on another thread, sends nothing.
TEST(Postgres, AnArmedCheckRidesWithTheFirstStatementAndFailsItsUnitWhenItDoesNotHold) {
  if (!test_stores::postgres_available()) GTEST_SKIP() << "TESORO_TEST_DATABASE_URL not set";
  TempStore temp(store::Engine::postgres);
  ASSERT_TRUE(temp.store->carries_checks());
  auto insert = [&](const std::string& id) {
    return temp.store->write<int>([&](store::Tx& tx) -> Result<int> {
      tx.exec_later("INSERT INTO events (tenant_id, id, type, data, inserted_at) "
                    "VALUES ('t', ?, 'x', '0', 'now')",
                    {id});
      return 0;
    });
  };
  std::string wanted = "open";
  int judged = 0;
  auto holds = [&](const std::optional<store::Row>& row) {
    ++judged;
    return row && row->text(0) == wanted;
  };
  {
    store::ArmedCheck check({"SELECT ?::text", {std::string("open")}, holds});
    EXPECT_TRUE(temp.store->read<int>([](store::Tx&) -> Result<int> { return 0; }).ok());
    std::thread other([&] { EXPECT_TRUE(insert("elsewhere").ok()); });
    other.join();
    EXPECT_EQ(judged, 0) << "a unit without a statement, or on another thread, sent it";
    EXPECT_TRUE(insert("first").ok());
    EXPECT_EQ(judged, 1);
    EXPECT_TRUE(check.done());
    EXPECT_TRUE(insert("second").ok());
    EXPECT_EQ(judged, 1) << "a check that held is sent once";
  }
  {
    wanted = "closed";
    store::ArmedCheck check({"SELECT ?::text", {std::string("open")}, holds});
    EXPECT_THROW((void)insert("refused"), store::CheckFailed);
    EXPECT_FALSE(check.done());
    EXPECT_THROW((void)temp.store->read_single<std::int64_t>(
                     [](store::Tx& tx) -> Result<std::int64_t> {
                       return tx.query_one("SELECT COUNT(*) FROM events")->integer(0);
                     }),
                 store::CheckFailed)
        << "still armed: the next unit sends it again";
    wanted = "open";
    EXPECT_TRUE(insert("after").ok());
    EXPECT_TRUE(check.done());
  }
  EXPECT_TRUE(insert("unarmed").ok());
  EXPECT_EQ(judged, 4);
  std::vector<std::string> ids;
  auto rows = temp.store->read<store::Rows>([](store::Tx& tx) -> Result<store::Rows> {
    return tx.query("SELECT id FROM events ORDER BY id");
  });
  ASSERT_TRUE(rows.ok());
  for (const store::Row& row : rows.value()) ids.push_back(row.text(0));
  EXPECT_EQ(ids, (std::vector<std::string>{"after", "elsewhere", "first", "second", "unarmed"}));
}

// A unit whose connection breaks after it deferred a write (Tx::exec_later) fails whole: the
// write is not left on the connection for its next user, a single-statement read, which would
// send it in autocommit (a hold applied without its authorization, seen once under failover).
TEST(Postgres, AWriteDeferredByAUnitWhoseConnectionBrokeIsNeverSentByTheNextUser) {
  if (!test_stores::postgres_available()) GTEST_SKIP() << "TESORO_TEST_DATABASE_URL not set";
  TempStore temp(store::Engine::postgres);
  auto insert_sql = "INSERT INTO events (tenant_id, id, type, data, inserted_at) "
                    "VALUES ('t', ?, 'x', '0', 'now')";
  EXPECT_THROW((void)temp.store->write<int>([&](store::Tx& tx) -> Result<int> {
                 tx.exec(insert_sql, {std::string("first")});
                 tx.exec_later(insert_sql, {std::string("deferred")});
                 tx.query("SELECT pg_terminate_backend(pg_backend_pid())");  // the connection ends
                 return 0;
               }),
               store::StoreError);
  for (int i = 0; i < 3; ++i) {  // on the connection that broke (the pool's last released)
    auto count = temp.store->read_single<std::int64_t>([](store::Tx& tx) -> Result<std::int64_t> {
      return tx.query_one("SELECT COUNT(*) FROM events")->integer(0);
    });
    ASSERT_TRUE(count.ok());
    EXPECT_EQ(count.value(), 0) << "read " << i;
  }
}

TEST(Postgres, SessionsRunWithTheSettingsDurabilityAssumes) {
  if (!test_stores::postgres_available()) GTEST_SKIP() << "TESORO_TEST_DATABASE_URL not set";
  TempStore temp(store::Engine::postgres);
  auto settings = temp.store->read<std::string>([](store::Tx& tx) -> Result<std::string> {
    return tx.query_one("SELECT current_setting('synchronous_commit') || ',' || "
                        "current_setting('statement_timeout') || ',' || "
                        "current_setting('default_transaction_isolation')")->text(0);
  }).value();
  EXPECT_EQ(settings, "on,30s,read committed");
}

// The after-commit contract: a hook runs once, after the unit is durable, on the calling thread;
// never for a unit that rolled back, for a nested part that rolled back, or for a retried attempt.
TEST_P(StoreTest, AfterCommitHooksRunOnceAndOnlyForCommittedWork) {
  std::vector<std::string> ran;
  std::vector<std::string> heard;
  temp->store->set_listener([&](const std::string& topic) { heard.push_back(topic); });
  auto committed = temp->store->write<int>([&](store::Tx& tx) -> Result<int> {
    tx.exec("INSERT INTO events (tenant_id, id, type, data, inserted_at) VALUES ('t', 'kept', 'x', '{}', 'now')");
    tx.after_commit([&] {
      // Runs after the commit: another connection already sees the row.
      ran.push_back("kept:" + std::to_string(count_events(*temp->store)));
    });
    tx.notify("jobs:deliver");
    tx.notify("jobs:deliver");  // heard once
    auto inner = tx.nested<int>([&](store::Tx& inner_tx) -> Result<int> {
      inner_tx.after_commit([&] { ran.push_back("nested"); });
      inner_tx.notify("nested-topic");
      return errors::make("conflict", "undone");
    });
    EXPECT_FALSE(inner.ok());
    return 1;
  });
  ASSERT_TRUE(committed.ok());
  EXPECT_EQ(ran, std::vector<std::string>{"kept:1"});
  EXPECT_EQ(heard, std::vector<std::string>{"jobs:deliver"});

  auto refused = temp->store->write<int>([&](store::Tx& tx) -> Result<int> {
    tx.after_commit([&] { ran.push_back("refused"); });
    tx.notify("refused-topic");
    return errors::make("insufficient_funds", "no");
  });
  EXPECT_FALSE(refused.ok());
  EXPECT_THROW(static_cast<void>(temp->store->write<int>([&](store::Tx& tx) -> Result<int> {
                 tx.after_commit([&] { ran.push_back("thrown"); });
                 tx.exec("INSERT INTO no_such_table VALUES (1)");
                 return 1;
               })),
               store::StoreError);
  EXPECT_EQ(ran, std::vector<std::string>{"kept:1"});
  EXPECT_EQ(heard, std::vector<std::string>{"jobs:deliver"});
  temp->store->set_listener(nullptr);
}

// What the network processor reads around its own unit to learn whether requests write too.
TEST_P(StoreTest, WriterUnitsCountTheUnitsQueuedForSQLitesOneWriter) {
  const std::uint64_t before = temp->store->writer_units();
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(temp->store->write<int>([](store::Tx&) -> Result<int> { return 0; }).ok());
  }
  ASSERT_FALSE(temp->store->write<int>([](store::Tx&) -> Result<int> {
                 return errors::internal();
               }).ok());
  const std::uint64_t after = temp->store->writer_units();
  if (GetParam() == store::Engine::sqlite) {
    EXPECT_EQ(after - before, 4u) << "every unit queued counts, failed or not";
  } else {
    EXPECT_EQ(after, 0u) << "PostgreSQL's writes do not queue for one writer";
  }
}

TEST_P(StoreTest, AWriteAfterStopFailsAtOnceWith503) {
  ASSERT_TRUE(temp->store->write<int>([](store::Tx&) -> Result<int> { return 1; }).ok());
  temp->store->stop();
  auto started = std::chrono::steady_clock::now();
  try {
    static_cast<void>(temp->store->write<int>([](store::Tx&) -> Result<int> { return 1; }));
    ADD_FAILURE() << "a write after stop() was accepted";
  } catch (const store::StoreError& failure) {
    EXPECT_TRUE(failure.unavailable());  // answered 503 service_is_unavailable
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));
  EXPECT_EQ(count_events(*temp->store), 0);  // reads still answer
}

// A queued write (SQLite) is write() without the wait: its outcome comes after the commit, with
// the unit's after-commit work done first; an error or a throw undoes only its unit, and after
// stop() the outcome throws at once. PostgreSQL queues nothing.
TEST_P(StoreTest, AQueuedWriteTellsItsOutcomeAfterItsCommit) {
  using Outcome = store::Store::Outcome<int>;
  struct Told {
    std::promise<void> told;
    std::optional<Result<int>> result;
    std::exception_ptr failure;
    std::int64_t events_seen = -1;  // by another connection, when the outcome came
    std::vector<std::string> heard;  // the unit's topics, when the outcome came
  };
  std::mutex heard_mutex;
  std::vector<std::string> heard;
  temp->store->set_listener([&](const std::string& topic) {
    std::lock_guard lock(heard_mutex);
    heard.push_back(topic);
  });
  const auto queue = [&](Told& told, std::function<Result<int>(store::Tx&)> fn) {
    return temp->store->write_queued<int>(std::move(fn), [&](Outcome outcome) {
      try {
        told.result.emplace(outcome());
      } catch (...) {
        told.failure = std::current_exception();
      }
      told.events_seen = count_events(*temp->store);
      {
        std::lock_guard lock(heard_mutex);
        told.heard = heard;
      }
      told.told.set_value();
    });
  };
  Told kept, refused, thrown, stopped;
  const bool queued = queue(kept, [](store::Tx& tx) -> Result<int> {
    tx.exec("INSERT INTO events (tenant_id, id, type, data, inserted_at) VALUES ('t', 'kept', 'x', '{}', 'now')");
    tx.notify("queued-topic");
    return 7;
  });
  if (GetParam() == store::Engine::postgres) {
    EXPECT_FALSE(queued) << "PostgreSQL's writes block their caller: nothing is queued";
    EXPECT_EQ(count_events(*temp->store), 0);
    temp->store->set_listener(nullptr);
    return;
  }
  ASSERT_TRUE(queued);
  ASSERT_TRUE(queue(refused, [](store::Tx& tx) -> Result<int> {
    tx.exec("INSERT INTO events (tenant_id, id, type, data, inserted_at) VALUES ('t', 'refused', 'x', '{}', 'now')");
    tx.notify("refused-topic");
    return errors::make("insufficient_funds", "no");
  }));
  ASSERT_TRUE(queue(thrown, [](store::Tx& tx) -> Result<int> {
    tx.exec("INSERT INTO no_such_table VALUES (1)");
    return 1;
  }));
  for (Told* told : {&kept, &refused, &thrown}) {
    ASSERT_EQ(told->told.get_future().wait_for(std::chrono::seconds(10)),
              std::future_status::ready);
  }
  ASSERT_TRUE(kept.result && kept.result->ok());
  EXPECT_EQ(kept.result->value(), 7);
  EXPECT_GE(kept.events_seen, 1) << "the outcome came before the commit";
  EXPECT_EQ(kept.heard, std::vector<std::string>{"queued-topic"})
      << "the outcome came before the unit's after-commit work";
  ASSERT_TRUE(refused.result && !refused.result->ok());
  EXPECT_EQ(refused.result->error().first_code(), "insufficient_funds");
  EXPECT_TRUE(thrown.failure);
  EXPECT_FALSE(thrown.result);
  EXPECT_EQ(count_events(*temp->store), 1) << "only the kept unit's row is there";
  {
    std::lock_guard lock(heard_mutex);
    EXPECT_EQ(heard, std::vector<std::string>{"queued-topic"});
  }

  temp->store->stop();
  ASSERT_TRUE(queue(stopped, [](store::Tx&) -> Result<int> { return 1; }));
  ASSERT_EQ(stopped.told.get_future().wait_for(std::chrono::seconds(0)),
            std::future_status::ready)
      << "after stop() the outcome is told at once, on the calling thread";
  ASSERT_TRUE(stopped.failure);
  try {
    std::rethrow_exception(stopped.failure);
  } catch (const store::StoreError& failure) {
    EXPECT_TRUE(failure.unavailable());
  }
  temp->store->set_listener(nullptr);
}

TEST_P(StoreTest, SweepsDeleteInBoundedChunks) {
  auto now = time::now_micros();
  static_cast<void>(temp->store->write<int>([&](store::Tx& tx) -> Result<int> {
    for (int i = 0; i < 1200; ++i) {
      idempotency::record(tx, "t", "k" + std::to_string(i), "h", {201, "application/json", "{}"}, now);
    }
    idempotency::record(tx, "t", "live", "h", {201, "application/json", "{}"}, now + 1);
    return 0;
  }));
  auto later = now + 24LL * 3600 * time::k_micros_per_second;  // every record but "live" expired
  std::vector<std::int64_t> chunks;
  while (true) {
    auto swept = temp->store->write<std::int64_t>([&](store::Tx& tx) -> Result<std::int64_t> {
      return idempotency::sweep_expired(tx, later, 500);
    }).value();
    chunks.push_back(swept);
    if (swept < 500) break;
  }
  EXPECT_EQ(chunks, (std::vector<std::int64_t>{500, 500, 200}));
  auto live = temp->store->read<std::optional<idempotency::Found>>(
      [&](store::Tx& tx) -> Result<std::optional<idempotency::Found>> {
        return idempotency::find(tx, "t", "live", "h", later);
      }).value();
  EXPECT_TRUE(live.has_value());
}

// PostgreSQL runs a unit again after a serialization failure: a write function that did its
// outside effect itself would do it twice; through after_commit it happens once.
TEST(Postgres, RetriedUnitRunsItsAfterCommitHookOnce) {
  if (!test_stores::postgres_available()) GTEST_SKIP() << "TESORO_TEST_DATABASE_URL not set";
  TempStore temp(store::Engine::postgres);
  int attempts = 0;
  int effects_inside = 0;  // what a careless write function would do
  int effects_after_commit = 0;
  auto before = metrics::store_retries();
  auto result = temp.store->write<int>([&](store::Tx& tx) -> Result<int> {
    ++attempts;
    ++effects_inside;
    tx.after_commit([&] { ++effects_after_commit; });
    if (attempts == 1) {
      tx.exec("DO $$ BEGIN RAISE EXCEPTION 'provoked' USING ERRCODE = '40001'; END $$");
    }
    return 1;
  });
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(attempts, 2);
  EXPECT_EQ(effects_inside, 2);        // doubled: why write functions must have no outside effect
  EXPECT_EQ(effects_after_commit, 1);  // once, after the durable commit
  EXPECT_EQ(metrics::store_retries(), before + 1);
}

namespace {

std::uintmax_t wal_bytes(const std::string& dir) {
  std::error_code missing;
  std::uintmax_t size = std::filesystem::file_size(dir + "/tesoro.db-wal", missing);
  return missing ? 0 : size;
}

// Opens the store of `temp` again with lowered WAL thresholds, and a table to fill.
void reopen_with_wal_limits(test_stores::TempStore& temp, std::int64_t restart_frames,
                            std::int64_t size_limit_bytes) {
  temp.store.reset();
  temp.options.wal_restart_frames = restart_frames;
  temp.options.wal_size_limit_bytes = size_limit_bytes;
  temp.store = store::open(temp.options);
  ASSERT_TRUE(temp.store->write<int>([](store::Tx& tx) -> Result<int> {
                tx.exec("CREATE TABLE wal_test (data BLOB)");
                return 0;
              }).ok());
}

Status write_blobs(store::Store& s, int rows, int bytes) {
  return s.write<int>([&](store::Tx& tx) -> Result<int> {
            for (int i = 0; i < rows; ++i) {
              tx.exec("INSERT INTO wal_test (data) VALUES (randomblob(?))",
                      {static_cast<std::int64_t>(bytes)});
            }
            return 0;
          }).ok()
             ? ok_status()
             : Status(errors::internal());
}

}  // namespace

TEST(Sqlite, AWalThatGrewUnderALongReaderStartsOverSmallOnceTheReaderLeaves) {
  // Lowered thresholds: restart past 16 frames, cut the file back to 256 KiB.
  test_stores::TempStore temp(store::Engine::sqlite);
  reopen_with_wal_limits(temp, 16, 256 * 1024);

  // A reader holds its snapshot while 4 MiB are written: the WAL cannot start over meanwhile.
  std::promise<void> reading, release;
  std::shared_future<void> released = release.get_future().share();
  std::thread reader([&] {
    auto read = temp.store->read<std::int64_t>([&](store::Tx& tx) -> Result<std::int64_t> {
      auto count = tx.query_one("SELECT COUNT(*) FROM wal_test")->integer(0);
      reading.set_value();
      released.wait();
      return count;
    });
    EXPECT_TRUE(read.ok());
  });
  reading.get_future().wait();
  for (int unit = 0; unit < 16; ++unit) ASSERT_TRUE(write_blobs(*temp.store, 4, 64 * 1024).ok());
  // The checkpointer (every 200 ms) tries meanwhile and gives up after its short wait.
  const auto grown = wal_bytes(temp.dir);
  EXPECT_GT(grown, 4u * 1024 * 1024) << "the reader kept the WAL from starting over";
  release.set_value();
  reader.join();

  // Once the reader is gone, a checkpoint copies the WAL and restarts it; the next commit starts
  // it over and cuts the file back to the limit. Small writes keep commits coming meanwhile.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::uintmax_t size = grown;
  while (std::chrono::steady_clock::now() < deadline) {
    ASSERT_TRUE(write_blobs(*temp.store, 1, 100).ok());
    size = wal_bytes(temp.dir);
    if (size <= 256u * 1024) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_LE(size, 256u * 1024) << "the WAL kept the " << grown << " bytes it grew to";
}

TEST(Sqlite, SteadyWritesWithShortReadersKeepTheWalNearItsRestartSize) {
  // Readers that come and go all the time (as requests' reads do) no longer keep the WAL from
  // starting over: the RESTART checkpoint waits a few milliseconds for them.
  test_stores::TempStore temp(store::Engine::sqlite);
  reopen_with_wal_limits(temp, 64, 1024 * 1024);  // restart past 512 KiB (8 KiB pages)
  std::atomic<bool> stop{false};
  std::vector<std::thread> readers;
  for (int r = 0; r < 4; ++r) {
    readers.emplace_back([&] {
      while (!stop) {
        auto read = temp.store->read<std::int64_t>([](store::Tx& tx) -> Result<std::int64_t> {
          return tx.query_one("SELECT COUNT(*) FROM wal_test")->integer(0);
        });
        EXPECT_TRUE(read.ok());
      }
    });
  }
  // 500 units of 32 KiB (16 MiB written) over a few seconds, with reads always in flight.
  std::uintmax_t largest = 0;
  for (int unit = 0; unit < 500; ++unit) {
    ASSERT_TRUE(write_blobs(*temp.store, 1, 32 * 1024).ok());
    largest = std::max(largest, wal_bytes(temp.dir));
  }
  stop = true;
  for (auto& reader : readers) reader.join();
  EXPECT_LT(largest, 8u * 1024 * 1024) << "the WAL grew with everything written";
}

TEST(Sqlite, BackToBackWritesKeepTheWalNearItsRestartSize) {
  // Writers that never leave the write lock free (as the network processor's chunks under load):
  // the checkpointer cannot restart the WAL, so the writer does it between two commits.
  test_stores::TempStore temp(store::Engine::sqlite);
  reopen_with_wal_limits(temp, 64, 1024 * 1024);  // restart past 512 KiB (8 KiB pages)
  std::atomic<std::uintmax_t> largest{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&] {
      for (int unit = 0; unit < 100; ++unit) {
        EXPECT_TRUE(write_blobs(*temp.store, 2, 32 * 1024).ok());
        std::uintmax_t size = wal_bytes(temp.dir);
        std::uintmax_t seen = largest.load();
        while (size > seen && !largest.compare_exchange_weak(seen, size)) {
        }
      }
    });
  }
  for (auto& writer : writers) writer.join();
  // 25 MiB written in all.
  EXPECT_LT(largest.load(), 8u * 1024 * 1024) << "the WAL grew with everything written";
}

namespace {

std::int64_t page_size_of(store::Store& s) {
  return s.read<std::int64_t>([](store::Tx& tx) -> Result<std::int64_t> {
            return tx.query_one("PRAGMA page_size")->integer(0);
          }).value();
}

}  // namespace

TEST(Sqlite, ANewDatabaseTakesTheConfiguredPageSizeAndAnOlderOneKeepsItsOwn) {
  test_stores::TempStore fresh(store::Engine::sqlite);
  EXPECT_EQ(page_size_of(*fresh.store), limits::k_sqlite_page_size_bytes);
  ASSERT_NE(limits::k_sqlite_page_size_bytes, 4096) << "the case below needs another size";

  // A database made with 4 KiB pages (SQLite's default, which Tesoro used before) opens, migrates
  // and takes writes with its pages as they are.
  char pattern[] = "/tmp/tesoro-unit-XXXXXX";
  const std::string dir = ::mkdtemp(pattern);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir + "/tesoro.db").c_str(), &db), SQLITE_OK);
  for (const char* sql : {"PRAGMA page_size=4096", "PRAGMA journal_mode=WAL",
                          "CREATE TABLE made_before (id INTEGER PRIMARY KEY)"}) {
    ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sql;
  }
  sqlite3_close(db);
  store::Options options;
  options.data_dir = dir;
  {
    auto older = store::open(options);
    EXPECT_GT(store::migrate(*older), 0);
    EXPECT_TRUE(older->write<int>([](store::Tx& tx) -> Result<int> {
                  tx.exec("INSERT INTO made_before (id) VALUES (1)");
                  return 0;
                }).ok());
    EXPECT_EQ(page_size_of(*older), 4096);
  }
  std::filesystem::remove_all(dir);
}

// store/sqlite/wal_vfs: a commit's WAL frames reach the file in few writes, and every reader
// (another connection, the checkpoint, a reopened database) finds them whole.
TEST(Sqlite, ACommitsWalFramesReachTheFileInFewWritesAndReadBackWhole) {
  test_stores::TempStore temp(store::Engine::sqlite);
  reopen_with_wal_limits(temp, 1'000'000, 64 * 1024 * 1024);  // no restart during the test
  const store::wal_vfs::Counts before = store::wal_vfs::counts();
  // 96 rows of 8 KB of text and their number in one unit: about 100 frames of 8 KiB, each
  // written by SQLite as a header and a page.
  ASSERT_TRUE(temp.store->write<int>([](store::Tx& tx) -> Result<int> {
                for (int i = 0; i < 96; ++i) {
                  tx.exec("INSERT INTO wal_test (data) "
                          "VALUES (replace(hex(zeroblob(4000)), '0', 'x') || ?)",
                          {static_cast<std::int64_t>(i)});
                }
                return 0;
              }).ok());
  const store::wal_vfs::Counts after = store::wal_vfs::counts();
  const long long gathered = after.writes_gathered - before.writes_gathered;
  const long long flushes = after.flushes - before.flushes;
  EXPECT_GE(gathered, 2 * 90) << "each frame is a header and a page";
  EXPECT_GE(flushes, 1);
  EXPECT_LE(flushes, gathered / 20) << "the frames went out one system call each";

  // Another connection (a reader of the pool) reads every row as written: 8000 x's, then its
  // number (0 to 95, which add up to 4560).
  using CountAndSum = std::pair<std::int64_t, std::int64_t>;
  auto rows = temp.store->read<CountAndSum>([](store::Tx& tx) -> Result<CountAndSum> {
    auto row = tx.query_one(
        "SELECT COUNT(*), SUM(CAST(substr(data, 8001) AS INTEGER)) FROM wal_test "
        "WHERE substr(data, 1, 8000) = replace(hex(zeroblob(4000)), '0', 'x')");
    return CountAndSum{row->integer(0), row->integer(1)};
  });
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows.value(), CountAndSum(96, 4560));

  // Closed (the last checkpoint copies the WAL) and opened with SQLite's own VFS: intact.
  temp.store.reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((temp.dir + "/tesoro.db").c_str(), &db), SQLITE_OK);
  std::string integrity;
  sqlite3_exec(
      db, "PRAGMA integrity_check",
      [](void* out, int, char** values, char**) {
        *static_cast<std::string*>(out) += values[0] ? values[0] : "";
        return 0;
      },
      &integrity, nullptr);
  sqlite3_stmt* count = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM wal_test", -1, &count, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(count), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int64(count, 0), 96);
  sqlite3_finalize(count);
  sqlite3_close(db);
  EXPECT_EQ(integrity, "ok");
}

// A transaction larger than its connection's page cache spills pages to the WAL before its
// commit and reads them back from there: the gathered frames are in the file by then.
TEST(Sqlite, PagesSpilledToTheWalBeforeTheCommitAreReadBackWhole) {
  char pattern[] = "/tmp/tesoro-unit-XXXXXX";
  const std::string dir = ::mkdtemp(pattern);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2((dir + "/spill.db").c_str(), &db,
                            SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, store::wal_vfs::name()),
            SQLITE_OK);
  auto exec = [&](const std::string& sql) {
    char* message = nullptr;
    const int code = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
    std::string text = message ? message : "";
    sqlite3_free(message);
    return code == SQLITE_OK ? std::string() : sql + ": " + text;
  };
  for (const char* sql : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL",
                          "PRAGMA cache_size=8", "CREATE TABLE spill (n INTEGER, data BLOB)",
                          "BEGIN"}) {
    ASSERT_EQ(exec(sql), "") << sql;
  }
  // 2 MiB in one transaction through a cache of 8 pages; then every row read back in it.
  for (int i = 0; i < 512; ++i) {
    ASSERT_EQ(exec("INSERT INTO spill VALUES (" + std::to_string(i) +
                   ", replace(hex(zeroblob(2000)), '0', 'y') || '" + std::to_string(i) + "')"),
              "");
  }
  sqlite3_stmt* check = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT COUNT(*), SUM(n) FROM spill "
                               "WHERE CAST(substr(data, 4001) AS INTEGER) = n",
                               -1, &check, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(check), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int64(check, 0), 512);
  EXPECT_EQ(sqlite3_column_int64(check, 1), 511 * 512 / 2);
  sqlite3_reset(check);
  ASSERT_EQ(exec("COMMIT"), "");
  ASSERT_EQ(sqlite3_step(check), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int64(check, 0), 512);
  sqlite3_finalize(check);
  sqlite3_close(db);
  std::filesystem::remove_all(dir);
}

TEST(PostgresReadiness, SynchronousStandbysRequiredReadsEveryFormOfTheSetting) {
  EXPECT_EQ(store::synchronous_standbys_required(""), 0);
  EXPECT_EQ(store::synchronous_standbys_required("  "), 0);
  EXPECT_EQ(store::synchronous_standbys_required("ANY 1 (pgautofailover_standby_2)"), 1);
  EXPECT_EQ(store::synchronous_standbys_required("any 2 (a, b, c)"), 2);
  EXPECT_EQ(store::synchronous_standbys_required("FIRST 2 (a, b)"), 2);
  EXPECT_EQ(store::synchronous_standbys_required(" 3 (a, b, c)"), 3);
  EXPECT_EQ(store::synchronous_standbys_required("standby_a, standby_b"), 1);
  EXPECT_EQ(store::synchronous_standbys_required("*"), 1);
  EXPECT_EQ(store::synchronous_standbys_required("anything"), 1);
}

// synchronous_standby_names naming a standby that never connects, on the whole test server
// (TESORO_TEST_DATABASE_URL), until put back: at the latest when this goes out of scope.
class StandbysGone {
 public:
  StandbysGone() { set("nobody"); }
  ~StandbysGone() { put_back(); }
  StandbysGone(const StandbysGone&) = delete;
  StandbysGone& operator=(const StandbysGone&) = delete;
  void put_back() {
    if (std::exchange(gone_, false)) set("");
  }

 private:
  static std::string psql(const std::string& sql) {
    const std::string command = "psql '" + std::string(std::getenv("TESORO_TEST_DATABASE_URL")) +
                                "' -X -qAtc \"" + sql + "\" 2>&1";
    std::string out;
    if (FILE* pipe = ::popen(command.c_str(), "r")) {
      char buffer[256];
      while (std::fgets(buffer, sizeof buffer, pipe)) out += buffer;
      ::pclose(pipe);
    }
    return out;
  }
  void set(const std::string& value) {
    psql(value.empty() ? "ALTER SYSTEM RESET synchronous_standby_names"
                       : "ALTER SYSTEM SET synchronous_standby_names = '" + value + "'");
    psql("SELECT pg_reload_conf()");
    for (int i = 0; i < 100 && psql("SHOW synchronous_standby_names") != value + "\n"; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    gone_ = !value.empty();
  }
  bool gone_ = false;
};

// A primary whose synchronous standby is gone: it is not ready, and a write is answered
// unavailable after the bounded wait instead of waiting for ever; its transaction stands on the
// server alone, as PostgreSQL keeps a commit whose wait was cancelled. The writes after it are
// refused at once until the standby is back.
TEST(PostgresReadiness, APrimaryWithoutItsSynchronousStandbyIsNotReadyAndFailsWritesFast) {
  if (!test_stores::postgres_available()) GTEST_SKIP() << "TESORO_TEST_DATABASE_URL not set";
  TempStore temp(store::Engine::postgres);
  auto write = [&](const std::string& id) {
    return temp.store->write<int>([&](store::Tx& tx) -> Result<int> {
      tx.exec("INSERT INTO commit_probe (id) VALUES (?)", {id});
      return 0;
    });
  };
  ASSERT_TRUE(temp.store->write<int>([](store::Tx& tx) -> Result<int> {
    tx.exec("CREATE TABLE commit_probe (id TEXT NOT NULL)");
    return 0;
  }));
  EXPECT_TRUE(temp.store->ready());

  // A write that must be refused as unavailable; returns how long it took, in milliseconds.
  auto refused_after_ms = [&](const std::string& id, const char* failure) {
    const auto started = std::chrono::steady_clock::now();
    try {
      static_cast<void>(write(id));
      ADD_FAILURE() << failure;
    } catch (const store::StoreError& error) {
      EXPECT_TRUE(error.unavailable()) << error.what();
    }
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now() - started)
        .count();
  };

  StandbysGone gone;
  EXPECT_FALSE(temp.store->ready());
  const auto waited = refused_after_ms("unacknowledged", "the commit was answered without its standby");
  EXPECT_GE(waited, limits::k_pg_commit_ack_wait_ms);
  EXPECT_LT(waited, limits::k_pg_commit_ack_wait_ms + 2'000);
  // The next write asks first, and is refused at once: nothing written, nothing waited out.
  EXPECT_LT(refused_after_ms("refused", "a write went ahead without its standby"),
            limits::k_pg_commit_ack_wait_ms / 2);

  gone.put_back();
  EXPECT_TRUE(temp.store->ready());
  EXPECT_NO_THROW(static_cast<void>(write("acknowledged")));
  auto kept = temp.store->read<std::int64_t>([](store::Tx& tx) -> Result<std::int64_t> {
    return tx.query_one("SELECT COUNT(*) FROM commit_probe")->integer(0);
  });
  EXPECT_EQ(kept.value(), 2) << "the cancelled wait left its commit on the server; the refused "
                                "write none";
}
