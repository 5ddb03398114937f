// Existing data folders move to the new schema with nothing lost: a database at schema 4 (what
// the previous release wrote: account holders, a funded ledger, events) is migrated to the
// latest, on both engines, and every row is still there, the system balances are derived,
// events get positions, and the books verify. Batches of outgoing transfers of schema 20 get
// their count of moving transfers; transfers of schema 23 keep their created events, and those
// of schema 24 their rows when ids become unique alone.
#include <gtest/gtest.h>

#include "domain/events/events.hpp"
#include "domain/events/polling.hpp"
#include "domain/ledger/journal.hpp"
#include "test_stores.hpp"

using namespace tesoro;
using test_stores::TempStore;

namespace {

class MigrationTest : public test_stores::EngineTest {};

std::int64_t scalar(store::Store& s, const std::string& sql) {
  return s.read<std::int64_t>([&](store::Tx& tx) -> Result<std::int64_t> {
            return tx.query_one(sql)->integer(0);
          }).value();
}

// How many of the three indexes that migrations 24 and 25 make again after rebuilding
// outgoing_transfers on SQLite exist.
std::int64_t transfer_indexes_made_again(store::Store& s) {
  return scalar(s, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name IN "
                   "('outgoing_transfers_by_time', 'outgoing_transfers_moving', "
                   "'outgoing_transfers_created_by_tenant')");
}

// An outgoing transfer's row as schemas 23 and 24 have it: tenant, id, external id and
// created_position bound.
constexpr const char* k_insert_transfer =
    "INSERT INTO outgoing_transfers (tenant_id, id, batch_id, external_id, "
    "tenant_account_id, amount, currency, end_to_end_id, payment_id, payer_name, "
    "resolution_request_id, target_id, key_type, key_value, target, metadata, state, "
    "timemarks, held, next_step_at_micros, inserted_at, updated_at, created_position) "
    "VALUES (?, ?, 'bbotb_1', ?, 'bbtacc_1', 100, 'COP', 'e', 'p', 'n', 'r', 't', "
    "'cellphone', '3001234565', '[]', '{}', 'created', '{}', 100, 1000000, "
    "'2026-11-26T10:00:00.000000Z', 'x', ?)";

// Rows as the release with schema 4 wrote them, straight in SQL (its code no longer exists).
void write_schema_4_data(store::Store& s) {
  static_cast<void>(s.write<int>([](store::Tx& tx) -> Result<int> {
    tx.exec("INSERT INTO tenants (id, name, environment, inserted_at) VALUES "
            "('ten_1', 'old', 'sandbox', '2026-01-01T00:00:00.000000Z')");
    tx.exec("INSERT INTO account_holders (tenant_id, id, external_id, address, person, email, "
            "phone_number, metadata, state, state_reason, state_reason_detail, type, inserted_at, "
            "updated_at) VALUES ('ten_1', 'acch_1', 'customer-1', '{}', '{}', 'a@b.co', NULL, "
            "'{\"k\":\"v\"}', 'active', NULL, NULL, 'self', '2026-01-01T00:00:00.000000Z', "
            "'2026-01-01T00:00:00.000000Z')");
    const char* account = "INSERT INTO ledger_accounts (tenant_id, id, surface, name, number, type, "
                          "currency, state, balance, balance_updated_at, inserted_at, updated_at) "
                          "VALUES ('ten_1', ?, ?, ?, ?, ?, 'COP', 'active', ?, 'x', 'x', 'x')";
    tx.exec(account, {std::string("acc_cust"), std::string("core"), std::string("savings"),
                      std::string("1111111111"), std::string("savings_account"), std::int64_t{700}});
    tx.exec(account, {std::string("acc_sys"), std::string("system"),
                      std::string("system:external_funding:COP"),
                      std::string("system:external_funding:COP"), std::string("system"),
                      std::int64_t{-700}});
    tx.exec("INSERT INTO journal_entries (tenant_id, id, kind, description, inserted_at) VALUES "
            "('ten_1', 'jen_1', 'sandbox_funding', 'd', 'x')");
    tx.exec("INSERT INTO postings (tenant_id, entry_id, seq, account_id, currency, amount, "
            "balance_after, inserted_at) VALUES ('ten_1', 'jen_1', 0, 'acc_sys', 'COP', -700, -700, "
            "'x'), ('ten_1', 'jen_1', 1, 'acc_cust', 'COP', 700, 700, 'x')");
    for (const char* id : {"evt_1", "evt_2", "evt_3"}) {
      tx.exec("INSERT INTO events (tenant_id, id, type, data, inserted_at) VALUES "
              "('ten_1', ?, 'account.credited', '{}', 'x')",
              {std::string(id)});
    }
    return 0;
  }));
}

}  // namespace

TEST_P(MigrationTest, Schema4DataSurvivesTheMigrationToTheLatest) {
  TempStore temp(GetParam(), 4);
  write_schema_4_data(*temp.store);
  EXPECT_GT(store::migrate(*temp.store), 4);

  EXPECT_EQ(scalar(*temp.store, "SELECT COUNT(*) FROM account_holders WHERE external_id = "
                                "'customer-1' AND email = 'a@b.co' AND metadata = '{\"k\":\"v\"}'"),
            1);
  EXPECT_EQ(scalar(*temp.store, "SELECT clock_offset_micros FROM tenants WHERE id = 'ten_1'"), 0);
  EXPECT_EQ(scalar(*temp.store, "SELECT balance FROM ledger_accounts WHERE id = 'acc_cust'"), 700);
  EXPECT_EQ(scalar(*temp.store, "SELECT balance FROM ledger_accounts WHERE id = 'acc_sys'"), 0)
      << "system balances are derived from now on";
  EXPECT_EQ(scalar(*temp.store, "SELECT COUNT(*) FROM postings WHERE account_id = 'acc_sys' "
                                "AND amount = -700 AND balance_after IS NULL"),
            1);
  EXPECT_EQ(scalar(*temp.store, "SELECT balance_after FROM postings WHERE account_id = 'acc_cust'"),
            700);
  EXPECT_TRUE(temp.store->read<std::vector<std::string>>([](store::Tx& tx) -> Result<std::vector<std::string>> {
                return ledger::verify(tx);
              }).value().empty());

  // Old events keep their order and get positions; null external ids are now allowed.
  EXPECT_EQ(temp.store->write<std::int64_t>([](store::Tx& tx) -> Result<std::int64_t> {
              return events::assign_positions(tx, 100);
            }).value(),
            3);
  auto events = temp.store->read<std::vector<events::Event>>(
      [](store::Tx& tx) -> Result<std::vector<events::Event>> {
        return events::list_after(tx, "ten_1", events::EventFilter{}, 0, 10);
      }).value();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].id, "evt_1");
  EXPECT_EQ(events[2].id, "evt_3");
  static_cast<void>(temp.store->write<int>([](store::Tx& tx) -> Result<int> {
    for (const char* id : {"acch_2", "acch_3"}) {
      tx.exec("INSERT INTO account_holders (tenant_id, id, external_id, address, person, state, "
              "type, inserted_at, updated_at) VALUES ('ten_1', ?, NULL, '{}', '{}', 'active', "
              "'self', 'x', 'x')",
              {std::string(id)});
    }
    return 0;
  }));
  EXPECT_EQ(scalar(*temp.store, "SELECT COUNT(*) FROM account_holders WHERE external_id IS NULL"), 2);
  EXPECT_EQ(store::migrate(*temp.store), store::migrate(*temp.store));  // nothing left to apply
}

// Batches written before migration 21 get their count of moving transfers from their rows: the
// processor counts down from it.
TEST_P(MigrationTest, BatchesOfSchema20CountTheirMovingTransfers) {
  TempStore temp(GetParam(), 20);
  static_cast<void>(temp.store->write<int>([](store::Tx& tx) -> Result<int> {
    for (const char* batch : {"bbotb_moving", "bbotb_ended"}) {
      tx.exec("INSERT INTO outgoing_transfer_batches (tenant_id, id, tenant_account_id, state, "
              "accepted_count, duplicated_count, rejected_count, inserted_at, updated_at) VALUES "
              "('ten_1', ?, 'bbtacc_1', ?, 3, 0, 0, '2026-11-26T10:00:00.000000Z', 'x')",
              {std::string(batch),
               std::string(std::string(batch) == "bbotb_ended" ? "completed" : "created")});
    }
    // bbotb_moving: two of its three transfers still move; bbotb_ended: none does.
    const char* transfer =
        "INSERT INTO outgoing_transfers (tenant_id, id, batch_id, external_id, "
        "tenant_account_id, amount, currency, end_to_end_id, payment_id, payer_name, "
        "resolution_request_id, target_id, key_type, key_value, target, metadata, state, "
        "timemarks, held, next_step_at_micros, inserted_at, updated_at) VALUES ('ten_1', ?, ?, "
        "?, 'bbtacc_1', 100, 'COP', 'e', 'p', 'n', 'r', 't', 'cellphone', '3001234565', '[]', "
        "'{}', 'created', '{}', 100, ?, '2026-11-26T10:00:00.000000Z', 'x')";
    int n = 0;
    for (const char* batch : {"bbotb_moving", "bbotb_ended"}) {
      for (int i = 0; i < 3; ++i, ++n) {
        const bool moving = std::string(batch) == "bbotb_moving" && i < 2;
        const store::Value next_step =
            moving ? store::Value(std::int64_t{1'000'000}) : store::Value(nullptr);
        tx.exec(transfer, {"bbot_" + std::to_string(n), std::string(batch),
                           "ext-" + std::to_string(n), next_step});
      }
    }
    return 0;
  }));
  EXPECT_GE(store::migrate(*temp.store), 21);
  EXPECT_EQ(scalar(*temp.store, "SELECT moving_count FROM outgoing_transfer_batches "
                                "WHERE id = 'bbotb_moving'"),
            2);
  EXPECT_EQ(scalar(*temp.store, "SELECT moving_count FROM outgoing_transfer_batches "
                                "WHERE id = 'bbotb_ended'"),
            0);
}

// Events written without a position before migration 22 are positioned after it, after every
// positioned event and in the order they were emitted: on PostgreSQL they move into the outbox
// and the sequencer moves them back with their positions; on SQLite they stay where they are.
TEST_P(MigrationTest, UnpositionedEventsOfSchema21ArePositionedInEmissionOrder) {
  TempStore temp(GetParam(), 21);
  static_cast<void>(temp.store->write<int>([](store::Tx& tx) -> Result<int> {
    tx.exec("INSERT INTO events (tenant_id, id, type, data, inserted_at, position) VALUES "
            "('t', 'evt_positioned', 'x', '{}', 'x', 1)");
    for (const char* id : {"evt_waiting_1", "evt_waiting_2"}) {
      tx.exec("INSERT INTO events (tenant_id, id, type, data, inserted_at) VALUES "
              "('t', ?, 'x', '{}', 'x')",
              {std::string(id)});
    }
    return 0;
  }));
  EXPECT_GE(store::migrate(*temp.store), 22);
  if (GetParam() == store::Engine::postgres) {
    EXPECT_EQ(scalar(*temp.store, "SELECT COUNT(*) FROM event_outbox"), 2);
    EXPECT_EQ(scalar(*temp.store, "SELECT COUNT(*) FROM events"), 1);
  }
  EXPECT_EQ(temp.store->write<std::int64_t>([](store::Tx& tx) -> Result<std::int64_t> {
    return events::assign_positions(tx, 100);
  }).value(), 2);
  EXPECT_EQ(scalar(*temp.store, "SELECT position FROM events WHERE id = 'evt_waiting_1'"), 2);
  EXPECT_EQ(scalar(*temp.store, "SELECT position FROM events WHERE id = 'evt_waiting_2'"), 3);
}

// Transfers of schema 23 keep what they had through migration 24, which on SQLite makes
// created_position the rowid: a created event's position stays, the rows that keep none get
// negative ones of their own (in the order they were written), the view shows the same events.
// PostgreSQL's rows are unchanged (NULL).
TEST_P(MigrationTest, TransfersOfSchema23KeepTheirCreatedEvents) {
  TempStore temp(GetParam(), 23);
  static_cast<void>(temp.store->write<int>([](store::Tx& tx) -> Result<int> {
    const bool sqlite = tx.engine() == store::Engine::sqlite;
    int n = 0;
    for (const char* id : {"bbot_old_a", "bbot_kept", "bbot_old_b"}) {
      const store::Value position = std::string(id) == "bbot_kept" && sqlite
                                        ? store::Value(std::int64_t{7})
                                        : store::Value(nullptr);
      tx.exec(k_insert_transfer,
              {std::string("ten_1"), std::string(id), "ext-" + std::to_string(n++), position});
    }
    return 0;
  }));
  EXPECT_GE(store::migrate(*temp.store), 24);
  auto position_of = [&](const std::string& id) {
    return temp.store->read<std::optional<std::int64_t>>(
        [&](store::Tx& tx) -> Result<std::optional<std::int64_t>> {
          return tx.query_one("SELECT created_position FROM outgoing_transfers WHERE id = ?",
                              {id})->optional_integer(0);
        }).value();
  };
  EXPECT_EQ(scalar(*temp.store, "SELECT COUNT(*) FROM outgoing_transfers"), 3);
  EXPECT_EQ(scalar(*temp.store, "SELECT COUNT(*) FROM outgoing_transfers "
                                "WHERE held = 100 AND external_id LIKE 'ext-%'"),
            3);
  if (GetParam() == store::Engine::postgres) {
    for (const char* id : {"bbot_old_a", "bbot_kept", "bbot_old_b"}) {
      EXPECT_EQ(position_of(id), std::nullopt) << id;
    }
    return;
  }
  EXPECT_EQ(position_of("bbot_kept"), 7);
  EXPECT_EQ(position_of("bbot_old_a"), -1);
  EXPECT_EQ(position_of("bbot_old_b"), -2);
  EXPECT_EQ(scalar(*temp.store, "SELECT COUNT(*) FROM all_events"), 1);
  EXPECT_EQ(scalar(*temp.store, "SELECT position FROM all_events WHERE id = 'evt_kept'"), 7);
  EXPECT_EQ(transfer_indexes_made_again(*temp.store), 3);
  EXPECT_EQ(store::migrate(*temp.store), store::migrate(*temp.store));  // nothing left to apply
}

// Migration 25 makes a transfer's id unique on its own on SQLite (PostgreSQL keeps its key
// (tenant_id, id)): the rows of schema 24 stay, with their created events' positions, and a
// second tenant's transfer with an id already taken is refused, where before only the same
// tenant's was.
TEST_P(MigrationTest, TransfersOfSchema24KeepTheirRowsAndIdsBecomeUniqueAlone) {
  TempStore temp(GetParam(), 24);
  const bool sqlite = GetParam() == store::Engine::sqlite;
  // Whether the row was written (a constraint the row breaks throws out of the write).
  auto insert = [&](const std::string& tenant, const std::string& id,
                    const std::string& external_id, std::int64_t position) {
    try {
      return static_cast<bool>(temp.store->write<int>([&](store::Tx& tx) -> Result<int> {
        tx.exec(k_insert_transfer, {tenant, id, external_id,
                                    sqlite ? store::Value(position) : store::Value(nullptr)});
        return 0;
      }));
    } catch (const std::exception&) {
      return false;
    }
  };
  ASSERT_TRUE(insert("ten_1", "bbot_a", "ext-a", 5));
  ASSERT_TRUE(insert("ten_1", "bbot_b", "ext-b", -1));
  // Before: the same id under another tenant is a row of its own.
  ASSERT_TRUE(insert("ten_2", "bbot_a", "ext-a", 6));
  ASSERT_TRUE(temp.store->write<int>([](store::Tx& tx) -> Result<int> {
    tx.exec("DELETE FROM outgoing_transfers WHERE tenant_id = 'ten_2'");
    return 0;
  }));
  EXPECT_GE(store::migrate(*temp.store), 25);
  EXPECT_EQ(scalar(*temp.store, "SELECT COUNT(*) FROM outgoing_transfers WHERE tenant_id = "
                                "'ten_1' AND held = 100 AND external_id LIKE 'ext-%'"),
            2);
  if (sqlite) {
    EXPECT_EQ(scalar(*temp.store, "SELECT created_position FROM outgoing_transfers "
                                  "WHERE id = 'bbot_a'"),
              5);
    EXPECT_EQ(scalar(*temp.store, "SELECT position FROM all_events WHERE id = 'evt_a'"), 5);
    EXPECT_EQ(transfer_indexes_made_again(*temp.store), 3);
  }
  // After: on SQLite the id is taken whatever the tenant; PostgreSQL still keys by both.
  EXPECT_EQ(insert("ten_2", "bbot_a", "ext-a", 6), !sqlite);
  // The same tenant's id and external id stay unique on both.
  EXPECT_FALSE(insert("ten_1", "bbot_a", "ext-c", 7));
  EXPECT_FALSE(insert("ten_1", "bbot_c", "ext-a", 8));
  EXPECT_EQ(store::migrate(*temp.store), store::migrate(*temp.store));  // nothing left to apply
}

// Statements (schema 29): the postings a schema-28 folder holds get their places in their
// accounts from their running balances, not from their instants alone (a write whose clock read
// came first may have committed second), the instants follow that order, the accounts their
// counts, the entries their references; an account whose balances do not chain keeps time order
// and `verify` says so.
TEST_P(MigrationTest, PostingsOfSchema28AreOrderedByTheirRunningBalances) {
  TempStore temp(GetParam(), 28);
  auto at = [](int second) {
    return "2026-11-20T10:00:" + std::string(second < 10 ? "0" : "") + std::to_string(second) +
           ".000000Z";
  };
  // (entry, kind, description, amount, balance_after, second) of acc_c, in the order applied.
  struct Old {
    const char* entry;
    const char* kind;
    const char* description;
    std::int64_t amount;
    std::int64_t balance_after;
    int second;
  };
  const std::vector<Old> applied = {
      {"jen_1", "sandbox_funding", "funding", 100, 100, 10},
      {"jen_2", "card_capture", "card transaction ctx_a", -40, 60, 30},
      {"jen_3", "card_topup", "top up", 5, 65, 20},  // read the clock before jen_2 committed
      {"jen_4", "sandbox_funding", "f", 35, 100, 40},
      {"jen_5", "card_refund", "card transaction ctx_b", -35, 65, 50},
      {"jen_6", "sandbox_funding", "f", 35, 100, 55},
      {"jen_7", "sandbox_funding", "f", 50, 150, 57},
      {"jen_8", "sandbox_funding", "f", -50, 100, 58},
      {"jen_9", "sandbox_funding", "f", 50, 150, 59},
      {"jen_10", "sandbox_funding", "f", 30, 180, 56},  // earlier than jen_8, applied last
  };
  ASSERT_TRUE(temp.store->write<int>([&](store::Tx& tx) -> Result<int> {
    const char* account =
        "INSERT INTO ledger_accounts (tenant_id, id, surface, name, number, type, currency, "
        "state, balance, balance_updated_at, inserted_at, updated_at) "
        "VALUES ('ten_1', ?, ?, ?, ?, 'x', 'COP', 'active', ?, 'x', 'x', 'x')";
    tx.exec(account, {std::string("acc_c"), std::string("core"), std::string("c"),
                      std::string("1"), std::int64_t{180}});
    tx.exec(account, {std::string("acc_b"), std::string("core"), std::string("b"),
                      std::string("2"), std::int64_t{20}});
    tx.exec(account, {std::string("acc_s"), std::string("system"), std::string("s"),
                      std::string("3"), std::int64_t{0}});
    auto entry = [&](const std::string& id, const std::string& kind,
                     const std::string& description, const std::string& account_id,
                     std::int64_t amount, std::int64_t balance_after, const std::string& when) {
      tx.exec("INSERT INTO journal_entries (tenant_id, id, kind, description, inserted_at) "
              "VALUES ('ten_1', ?, ?, ?, ?)",
              {id, kind, description, when});
      tx.exec("INSERT INTO postings (tenant_id, entry_id, seq, account_id, currency, amount, "
              "balance_after, inserted_at) VALUES ('ten_1', ?, 0, 'acc_s', 'COP', ?, NULL, ?), "
              "('ten_1', ?, 1, ?, 'COP', ?, ?, ?)",
              {id, -amount, when, id, account_id, amount, balance_after, when});
    };
    for (const Old& old : applied) {
      entry(old.entry, old.kind, old.description, "acc_c", old.amount, old.balance_after,
            at(old.second));
    }
    // acc_b's second running balance does not follow its first: no order chains.
    entry("jen_b1", "sandbox_funding", "b", "acc_b", 10, 10, at(1));
    entry("jen_b2", "sandbox_funding", "b", "acc_b", 10, 25, at(2));
    tx.exec("INSERT INTO card_balance_operations (tenant_id, id, card_id, operation, amount, "
            "currency, description, entity_id, entry_id, performed_at) VALUES ('ten_1', "
            "'cbo_1', 'car_1', 'topup', 5, 'COP', 'top up', 'e1', 'jen_3', 'x')");
    return 0;
  }));
  EXPECT_GE(store::migrate(*temp.store), 29);
  std::int64_t position = 0;
  std::string latest;
  for (const Old& old : applied) {
    ++position;
    auto row = temp.store->read<std::optional<store::Row>>([&](store::Tx& tx) {
      return Result<std::optional<store::Row>>(tx.query_one(
          "SELECT p.position, p.inserted_at, e.reference_type, e.reference_id FROM postings p "
          "JOIN journal_entries e ON e.tenant_id = p.tenant_id AND e.id = p.entry_id "
          "WHERE p.entry_id = ? AND p.account_id = 'acc_c'",
          {std::string(old.entry)}));
    }).value();
    ASSERT_TRUE(row) << old.entry;
    EXPECT_EQ(row->integer(0), position) << old.entry;
    latest = std::max(latest, at(old.second));
    EXPECT_EQ(row->text(1), latest) << old.entry << ": dated no earlier than the one before";
    const std::string kind = old.kind;
    if (kind == "sandbox_funding") {
      EXPECT_EQ(row->text(2), "sandbox_funding");
      EXPECT_EQ(row->text(3), old.entry);
    } else if (kind == "card_topup") {
      EXPECT_EQ(row->text(2), "card_balance_operation");
      EXPECT_EQ(row->text(3), "cbo_1");
    } else {
      EXPECT_EQ(row->text(2), "card_transaction");
      EXPECT_EQ(row->text(3), std::string(old.description).substr(17));
    }
  }
  EXPECT_EQ(scalar(*temp.store, "SELECT postings_count FROM ledger_accounts WHERE id = 'acc_c'"),
            10);
  EXPECT_EQ(scalar(*temp.store, "SELECT COUNT(*) FROM ledger_accounts WHERE id = 'acc_c' "
                                "AND last_posted_at = '" + at(59) + "'"),
            1);
  EXPECT_EQ(scalar(*temp.store, "SELECT COUNT(*) FROM postings WHERE account_id = 'acc_s' "
                                "AND position IS NULL"),
            12);
  EXPECT_EQ(scalar(*temp.store, "SELECT position FROM postings WHERE entry_id = 'jen_b2' "
                                "AND account_id = 'acc_b'"),
            2);
  const std::vector<std::string> violations =
      temp.store->read<std::vector<std::string>>([](store::Tx& tx) {
        return Result<std::vector<std::string>>(ledger::verify(tx));
      }).value();
  ASSERT_EQ(violations.size(), 1u) << "acc_b's chain (its postings sum to its balance), nothing "
                                      "of acc_c's";
  for (const std::string& violation : violations) {
    EXPECT_NE(violation.find("acc_b"), std::string::npos) << violation;
  }
  EXPECT_EQ(store::migrate(*temp.store), store::migrate(*temp.store));  // nothing left to apply
}

TESORO_ON_BOTH_ENGINES(MigrationTest);
