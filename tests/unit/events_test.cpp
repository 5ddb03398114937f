// Event positions on both engines: committed events get positions in the order they were
// emitted, and a reader that consumed everything up to P never later finds an event below P,
// even with writers whose transactions commit in another order than they started.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "core/ids.hpp"
#include "domain/events/events.hpp"
#include "domain/events/polling.hpp"
#include "test_stores.hpp"

using namespace tesoro;
using test_stores::TempStore;

namespace {

class EventsTest : public test_stores::EngineStoreTest {
 protected:
  std::int64_t sequence(store::Store& store) {
    return store.write<std::int64_t>([](store::Tx& tx) -> Result<std::int64_t> {
      return events::assign_positions(tx, 50);
    }).value();
  }
  std::vector<events::Event> read_after(std::int64_t after, std::int64_t limit = 100) {
    return temp->store->read<std::vector<events::Event>>(
        [&](store::Tx& tx) -> Result<std::vector<events::Event>> {
          return events::list_after(tx, "t", events::EventFilter{}, after, limit);
        }).value();
  }
};

}  // namespace

TEST_P(EventsTest, PositionsFollowEmissionAndOnlyPositionedEventsAreRead) {
  std::vector<std::string> emitted;
  static_cast<void>(temp->store->write<int>([&](store::Tx& tx) -> Result<int> {
    for (const char* type : {"collection.attempt_successful", "collection.paid", "account.credited"}) {
      emitted.push_back(events::emit(tx, "t", type, "{}", time::now_micros()));
    }
    events::emit(tx, "other-tenant", "account.credited", "{}", time::now_micros());
    return 0;
  }));
  if (GetParam() == store::Engine::postgres) {
    EXPECT_TRUE(read_after(0).empty()) << "an event is visible only once it has a position";
    EXPECT_EQ(sequence(*temp->store), 4);
  }
  // SQLite: the unit positioned its events as it wrote them; nothing is left to sequence.
  EXPECT_EQ(sequence(*temp->store), 0);
  auto read = read_after(0);
  ASSERT_EQ(read.size(), 3u);
  for (std::size_t i = 0; i < read.size(); ++i) {
    EXPECT_EQ(read[i].id, emitted[i]) << "the order inside one transaction is kept";
    if (i > 0) {
      EXPECT_GT(read[i].position, read[i - 1].position);
    }
  }
  EXPECT_EQ(read_after(read[1].position).size(), 1u);
}

// Writers hold their transactions open for random times, so they commit out of the order in
// which they emitted; two sequencers (two nodes) run at once; a reader pages by position the
// whole time and checks, after every page, that nothing new appeared at or below what it has
// consumed.
TEST_P(EventsTest, AReaderNeverFindsACommittedEventBelowWhatItConsumed) {
  constexpr int k_writers = 6;
  constexpr int k_units = 25;
  auto second_node = temp->open_again();
  std::atomic<bool> writing{true};
  std::atomic<int> sequencers_failed{0};
  auto sequencer = [&](store::Store& node) {
    while (writing.load()) {
      try {
        sequence(node);
      } catch (const store::StoreError&) {
        ++sequencers_failed;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  };
  std::mutex written_mutex;
  std::set<std::string> written;
  std::atomic<int> writers_left{k_writers};
  auto writer = [&](int seed) {
    std::mt19937 random(static_cast<unsigned>(seed));
    for (int unit = 0; unit < k_units; ++unit) {
      std::vector<std::string> ids;
      static_cast<void>(temp->store->write<int>([&](store::Tx& tx) -> Result<int> {
        ids.clear();
        for (int i = 0; i < 1 + static_cast<int>(random() % 3); ++i) {
          ids.push_back(events::emit(tx, "t", "test.event", "{}", time::now_micros()));
          if (tx.engine() == store::Engine::postgres) {
            std::this_thread::sleep_for(std::chrono::microseconds(random() % 4000));
          }
        }
        return 0;
      }));
      std::lock_guard lock(written_mutex);
      written.insert(ids.begin(), ids.end());
    }
    --writers_left;
  };
  std::vector<std::thread> threads;
  threads.emplace_back(sequencer, std::ref(*temp->store));
  threads.emplace_back(sequencer, std::ref(*second_node));
  std::vector<std::thread> writers;
  for (int w = 0; w < k_writers; ++w) writers.emplace_back(writer, w);

  std::set<std::string> consumed;
  std::int64_t last = 0;
  std::vector<std::string> violations;
  auto read_page = [&] {
    auto page = read_after(last, 37);
    for (const events::Event& event : page) {
      if (!consumed.insert(event.id).second) violations.push_back("read twice: " + event.id);
      last = event.position;
    }
    auto at_or_below = temp->store->read<std::int64_t>([&](store::Tx& tx) -> Result<std::int64_t> {
      return tx.query_one("SELECT COUNT(*) FROM events WHERE tenant_id = 't' AND position <= ?", {last})->integer(0);
    }).value();
    if (at_or_below != static_cast<std::int64_t>(consumed.size())) {
      violations.push_back("an event appeared at or below position " + std::to_string(last));
    }
    return page.size();
  };
  while (writers_left.load() > 0 && violations.empty()) {
    read_page();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (auto& thread : writers) thread.join();
  writing = false;
  for (auto& thread : threads) thread.join();
  while (sequence(*temp->store) > 0) {
  }
  while (read_page() > 0) {
  }
  EXPECT_TRUE(violations.empty()) << ::testing::PrintToString(violations);
  EXPECT_EQ(consumed, written) << "every committed event was read exactly once";
  EXPECT_EQ(sequencers_failed.load(), 0);
}

// emit_many keeps the order given, after every event written before it, and events the
// sequencer positions (on SQLite only rows an earlier version left without a position) come
// after those too: a reader never finds one below what it consumed.
TEST_P(EventsTest, EmitManyAndLeftoverRowsTakePositionsAfterEverythingBefore) {
  std::string first;
  static_cast<void>(temp->store->write<int>([&](store::Tx& tx) -> Result<int> {
    first = events::emit(tx, "t", "test.first", "{}", time::now_micros());
    return 0;
  }));
  sequence(*temp->store);
  const std::int64_t first_position = read_after(0).at(0).position;
  // A row as the previous version wrote it: no position (on PostgreSQL migration 22 moved such
  // rows into the outbox, where they wait as every unpositioned event does).
  static_cast<void>(temp->store->write<int>([&](store::Tx& tx) -> Result<int> {
    tx.exec(std::string("INSERT INTO ") +
            (GetParam() == store::Engine::postgres ? "event_outbox" : "events") +
            " (tenant_id, id, type, data, inserted_at) VALUES "
            "('t', 'evt_leftover', 'test.leftover', '{}', 'x')");
    return 0;
  }));
  static_cast<void>(temp->store->write<int>([&](store::Tx& tx) -> Result<int> {
    events::emit_many(tx, {{"t", "test.many.1", "{}", time::now_micros()},
                           {"other", "test.many.other", "{}", time::now_micros()},
                           {"t", "test.many.2", "{}", time::now_micros()}});
    return 0;
  }));
  EXPECT_GE(sequence(*temp->store), 1) << "the leftover row is positioned";
  auto read = read_after(first_position);
  std::vector<std::string> types;
  for (const auto& event : read) types.push_back(event.type);
  if (GetParam() == store::Engine::sqlite) {
    EXPECT_EQ(types, (std::vector<std::string>{"test.many.1", "test.many.2", "test.leftover"}));
  } else {  // the sequencer positions in emission order
    EXPECT_EQ(types, (std::vector<std::string>{"test.leftover", "test.many.1", "test.many.2"}));
  }
  for (std::size_t i = 1; i < read.size(); ++i) EXPECT_GT(read[i].position, read[i - 1].position);
}

// Each event of one emit_many keeps its own time, whether it shares it with the one before or
// not (emit_many writes a time once for a run of equal times).
TEST_P(EventsTest, EmitManyWritesEachEventsOwnTime) {
  const time::Micros a = time::now_micros();
  const time::Micros b = a + 4'000'000;
  static_cast<void>(temp->store->write<int>([&](store::Tx& tx) -> Result<int> {
    events::emit_many(tx, {{"t", "test.time.1", "{}", a},
                           {"t", "test.time.2", "{}", a},
                           {"t", "test.time.3", "{}", b},
                           {"t", "test.time.4", "{}", a},
                           {"t", "test.time.5", "{}", b}});
    return 0;
  }));
  sequence(*temp->store);
  const auto read = read_after(0);
  std::vector<std::string> times;
  for (const auto& event : read) times.push_back(event.inserted_at);
  EXPECT_EQ(times, (std::vector<std::string>{time::iso(a), time::iso(a), time::iso(b),
                                             time::iso(a), time::iso(b)}));
}

TESORO_ON_BOTH_ENGINES(EventsTest);
namespace {

// A module's renderer, for the test below: the subject's id and the event's type and time.
std::vector<std::optional<std::string>> render_for_test(
    store::Tx&, const std::string& tenant_id, const std::vector<events::Referenced>& asked) {
  std::vector<std::optional<std::string>> texts;
  for (const events::Referenced& event : asked) {
    if (event.subject_id == "gone") {
      texts.emplace_back();
      continue;
    }
    texts.emplace_back("{\"tenant\":\"" + tenant_id + "\",\"subject\":\"" + event.subject_id +
                       "\",\"type\":\"" + event.type + "\",\"at\":\"" + event.inserted_at + "\"}");
  }
  return texts;
}

}  // namespace

TEST_P(EventsTest, EventsByReferenceAreReadWithTheDataTheirKindsRendererGives) {
  ASSERT_TRUE(events::register_renderer("test_subject", &render_for_test));
  EXPECT_EQ(events::reference("test_subject", "sub_1"), "@test_subject:sub_1");
  const time::Micros at = time::now_micros();
  static_cast<void>(temp->store->write<int>([&](store::Tx& tx) -> Result<int> {
    events::emit(tx, "t", "test_subject.made", "{\"kept\":true}", at);
    events::emit_many(
        tx, {{"t", "test_subject.made", events::reference("test_subject", "sub_1"), at},
             {"t", "test_subject.moved", events::reference("test_subject", "gone"), at},
             {"t", "unknown.made", events::reference("unknown_kind", "sub_2"), at},
             {"t", "test_subject.moved", events::reference("test_subject", "sub_1"), at}});
    return 0;
  }));
  sequence(*temp->store);
  const auto read = read_after(0);
  ASSERT_EQ(read.size(), 5u);
  EXPECT_EQ(read[0].data_json, "{\"kept\":true}") << "data stored whole is read as stored";
  EXPECT_EQ(read[1].data_json,
            "{\"tenant\":\"t\",\"subject\":\"sub_1\",\"type\":\"test_subject.made\",\"at\":\"" +
                time::iso(at) + "\"}");
  EXPECT_EQ(read[2].data_json, "null") << "a subject that is gone";
  EXPECT_EQ(read[3].data_json, "null") << "a kind nobody registered";
  EXPECT_EQ(read[4].data_json,
            "{\"tenant\":\"t\",\"subject\":\"sub_1\",\"type\":\"test_subject.moved\",\"at\":\"" +
                time::iso(at) + "\"}");
}

// PostgreSQL writes an event once: it waits in event_outbox, unseen by readers, and the
// sequencer moves it into `events` with its position, keeping its emitted_seq. SQLite writes it
// into `events` with its position at once.
TEST_P(EventsTest, AnEventIsWrittenOnceWithItsPosition) {
  std::vector<std::string> emitted;
  static_cast<void>(temp->store->write<int>([&](store::Tx& tx) -> Result<int> {
    emitted.push_back(events::emit(tx, "t", "test.one", "{}", time::now_micros()));
    events::emit_many(tx, {{"t", "test.many.1", "{}", time::now_micros()},
                           {"t", "test.many.2", "{}", time::now_micros()}});
    return 0;
  }));
  auto integer = [&](const std::string& sql) {
    return test_stores::read_integer(*temp->store, sql);
  };
  if (GetParam() == store::Engine::postgres) {
    EXPECT_EQ(integer("SELECT COUNT(*) FROM events"), 0);
    EXPECT_EQ(integer("SELECT COUNT(*) FROM event_outbox"), 3);
    const std::int64_t first_seq = integer("SELECT MIN(emitted_seq) FROM event_outbox");
    EXPECT_TRUE(read_after(0).empty());
    EXPECT_EQ(sequence(*temp->store), 3);
    EXPECT_EQ(integer("SELECT COUNT(*) FROM event_outbox"), 0) << "moved, not copied";
    EXPECT_EQ(integer("SELECT MIN(emitted_seq) FROM events"), first_seq);
  } else {
    EXPECT_EQ(sequence(*temp->store), 0);
  }
  EXPECT_EQ(integer("SELECT COUNT(*) FROM events WHERE position IS NULL"), 0);
  const auto read = read_after(0);
  ASSERT_EQ(read.size(), 3u);
  EXPECT_EQ(read[0].id, emitted[0]);
  EXPECT_EQ(read[1].type, "test.many.1");
  EXPECT_EQ(read[2].type, "test.many.2");
  EXPECT_EQ(integer("SELECT COUNT(*) FROM events WHERE position <= (SELECT MAX(position) FROM "
                    "events) AND position > (SELECT MAX(position) - 3 FROM events)"),
            3)
      << "positions follow one another";
}

// The sequencer's move (events::assign_positions on PostgreSQL, the statement copied here) reads
// the events it moves through the outbox's key, also before the table has statistics: planned on
// an empty table's estimates, other shapes of it (`IN (... LIMIT ?)`) read the whole outbox
// again for every event moved.
TEST_P(EventsTest, TheSequencerReadsTheOutboxThroughItsKey) {
  if (GetParam() != store::Engine::postgres) GTEST_SKIP() << "SQLite has no outbox";
  static_cast<void>(temp->store->write<int>([&](store::Tx& tx) -> Result<int> {
    std::vector<events::Emission> many(2000, {"t", "test.waiting", "{}", time::now_micros()});
    events::emit_many(tx, many);
    return 0;
  }));
  const std::string plan = temp->store->read<std::string>([](store::Tx& tx) -> Result<std::string> {
    std::string text;
    for (const store::Row& row : tx.query(
             "EXPLAIN WITH oldest AS (SELECT MIN(emitted_seq) AS first, MAX(emitted_seq) AS "
             "last FROM (SELECT emitted_seq FROM event_outbox ORDER BY emitted_seq LIMIT 1000) "
             "AS o), moved AS (DELETE FROM event_outbox x USING oldest WHERE x.emitted_seq "
             "BETWEEN oldest.first AND oldest.last RETURNING x.*) INSERT INTO events (tenant_id, "
             "id, type, data, inserted_at, emitted_seq, position) SELECT tenant_id, id, type, "
             "data, inserted_at, emitted_seq, 0 + ROW_NUMBER() OVER (ORDER BY emitted_seq) "
             "FROM moved")) {
      text += row.text(0) + "\n";
    }
    return text;
  }).value();
  // The rows to move: a range of the key (how the oldest are found may depend on the table's
  // size; it runs once a statement, not once per row).
  EXPECT_NE(plan.find("event_outbox_pkey"), std::string::npos) << plan;
  EXPECT_NE(plan.find("Index Cond: ((emitted_seq >= oldest.first) AND (emitted_seq <= "
                      "oldest.last))"),
            std::string::npos)
      << plan;
  EXPECT_EQ(plan.find("Seq Scan on event_outbox x"), std::string::npos) << plan;
  EXPECT_EQ(sequence(*temp->store), 50) << "the sequencer moves at most its limit";
}

// The readers' queries keep their indexes: on PostgreSQL those indexes hold positioned events
// only (migration 19, from when an event's first row version had no position; since migration 22
// every row of the table has one), so the planner must see that each query asks for positioned
// events. Sequential scans are priced out to show which index is usable.
TEST_P(EventsTest, ReadersOfPositionedEventsQueryThroughTheEventIndexes) {
  static_cast<void>(temp->store->write<int>([&](store::Tx& tx) -> Result<int> {
    for (int i = 0; i < 20; ++i) events::emit(tx, "t", "test.indexed", "{}", time::now_micros());
    return 0;
  }));
  sequence(*temp->store);
  const bool postgres = GetParam() == store::Engine::postgres;
  // A write unit: SET LOCAL needs a transaction of its own.
  auto plan = [&](const std::string& sql) {
    return temp->store->write<std::string>([&](store::Tx& tx) -> Result<std::string> {
      if (postgres) tx.exec("SET LOCAL enable_seqscan = off");
      const std::string explain = postgres ? "EXPLAIN " : "EXPLAIN QUERY PLAN ";
      std::string text;
      for (const store::Row& row : tx.query(explain + sql)) {
        text += row.text(postgres ? 0 : 3) + "\n";  // SQLite: (id, parent, notused, detail)
      }
      return text;
    }).value();
  };
  auto expect_uses = [&](const std::string& sql, const std::string& index) {
    const std::string text = plan(sql);
    EXPECT_NE(text.find(index), std::string::npos) << sql << "\n" << text;
  };
  // The sequencer's and a new webhook endpoint's last position.
  expect_uses("SELECT COALESCE(MAX(position), 0) FROM events", "events_by_position");
  // The dispatcher's next events of every tenant.
  expect_uses("SELECT position, tenant_id, id, type FROM events WHERE position > 3 "
              "ORDER BY position LIMIT 10", "events_by_position");
  // A tenant's events after a position (events::list_after).
  expect_uses("SELECT position, id, type, data, inserted_at FROM events WHERE tenant_id = 't' "
              "AND position > 3 ORDER BY position LIMIT 10", "events_by_tenant_position");
  // A page of the list (GET /v1/events), with and without a time range: there is no index by
  // time, the range is checked on the rows read by position.
  expect_uses("SELECT position, id FROM events WHERE tenant_id = 't' AND position IS NOT NULL "
              "ORDER BY position DESC LIMIT 10", "events_by_tenant_position");
  expect_uses("SELECT position, id FROM events WHERE tenant_id = 't' AND position IS NOT NULL "
              "AND inserted_at >= '2020-01-01' AND inserted_at <= '2999-01-01' "
              "ORDER BY position DESC LIMIT 10", "events_by_tenant_position");
}

// On SQLite the readers read the view all_events (migration 23): the events' rows and the
// created events a batch's transfers keep. Each reader's query must read both parts through
// their indexes, in order where it asks for an order (the parts merged, not sorted), and never
// scan a table: the view is flattened into the query only while its parts' columns have the
// same affinity, and its planner, without statistics, would otherwise read a tenant's every
// transfer for a few positions.
TEST_P(EventsTest, OnSqliteTheReadersOfTheEventsViewReadBothPartsThroughTheirIndexes) {
  if (GetParam() != store::Engine::sqlite) GTEST_SKIP() << "SQLite's view";
  auto plan = [&](const std::string& sql) {
    return temp->store->read<std::string>([&](store::Tx& tx) -> Result<std::string> {
      std::string text;
      for (const store::Row& row : tx.query("EXPLAIN QUERY PLAN " + sql)) {
        text += row.text(3) + "\n";
      }
      return text;
    }).value();
  };
  // An index by name, or k_by_rowid: the transfers' part read by its rowid, created_position
  // (migration 24).
  const std::string k_by_rowid = "outgoing_transfers USING INTEGER PRIMARY KEY";
  auto expect_indexed = [&](const std::string& sql, const std::vector<std::string>& indexes,
                            bool ordered) {
    const std::string text = plan(sql);
    for (const std::string& index : indexes) {
      const bool used = index == k_by_rowid
                            ? text.find(k_by_rowid + " (rowid") != std::string::npos
                            : text.find(" INDEX " + index + " ") != std::string::npos ||
                                  text.find(" INDEX " + index + "\n") != std::string::npos;
      EXPECT_TRUE(used) << index << " in " << sql << "\n" << text;
    }
    EXPECT_EQ(text.find("SCAN "), std::string::npos) << sql << "\n" << text;
    EXPECT_EQ(text.find("AUTOMATIC"), std::string::npos) << sql << "\n" << text;
    if (ordered) {
      EXPECT_EQ(text.find("TEMP B-TREE"), std::string::npos) << sql << "\n" << text;
    }
  };
  const std::vector<std::string> by_position = {"events_by_position", k_by_rowid};
  const std::vector<std::string> by_tenant = {"events_by_tenant_position",
                                              "outgoing_transfers_created_by_tenant"};
  // The dispatcher's next events of every tenant, and their tenants.
  expect_indexed("SELECT position, tenant_id, id, type FROM all_events WHERE position > 3 "
                 "ORDER BY position LIMIT 10", by_position, true);
  // Due deliveries' events, by position.
  expect_indexed("SELECT position, id, type, data, inserted_at, tenant_id FROM all_events "
                 "WHERE position IN (4, 5, 9)", by_position, false);
  // A tenant's events after a position (events::list_after).
  expect_indexed("SELECT position, id, type, data, inserted_at FROM all_events AS events WHERE "
                 "tenant_id = 't' AND position IS NOT NULL AND position > 3 "
                 "ORDER BY position LIMIT 10", by_tenant, true);
  // A page of the list, filtered by type, by time, and by deliveries.
  expect_indexed("SELECT position, id FROM all_events AS events WHERE tenant_id = 't' AND "
                 "position IS NOT NULL AND type >= 'a.' AND type < 'a/' AND +inserted_at >= "
                 "'2020-01-01' ORDER BY position DESC LIMIT 10 OFFSET 20", by_tenant, true);
  expect_indexed("SELECT position, id FROM all_events AS events WHERE tenant_id = 't' AND "
                 "position IS NOT NULL AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE "
                 "d.tenant_id = events.tenant_id AND d.event_id = events.id AND "
                 "d.state = 'delivered') ORDER BY position DESC LIMIT 10", by_tenant, true);
  // The list's count, part by part.
  expect_indexed("SELECT COUNT(*) FROM events AS events WHERE tenant_id = 't' AND "
                 "position IS NOT NULL", {"events_by_tenant_position"}, false);
  expect_indexed("SELECT COUNT(*) FROM outgoing_transfers AS events WHERE tenant_id = 't' AND "
                 "created_position > 0", {"outgoing_transfers_created_by_tenant"}, false);
  // An event by id: the events' key, or the transfer's and then its position.
  expect_indexed("SELECT position, id, type, data, inserted_at FROM all_events WHERE "
                 "tenant_id = 't' AND id = 'evt_x' AND position = (SELECT created_position "
                 "FROM outgoing_transfers WHERE tenant_id = 't' AND id = 'bbot_x')",
                 {"events_by_position", "sqlite_autoindex_outgoing_transfers_1", k_by_rowid},
                 false);
}
