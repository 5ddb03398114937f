// The double-entry ledger: accounts, journal entries and their postings.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "core/limits.hpp"
#include "store/migrations/migrations.hpp"
#include "store/store.hpp"

namespace tesoro::store {
namespace {

struct PostingRow {
  std::string entry_id;
  std::int64_t seq = 0;
  std::int64_t amount = 0;
  std::int64_t balance_after = 0;
  std::string inserted_at;
};

// The order in which an account's postings were applied, which their running balances record:
// each posting starts from the balance the one before it left (balance_after - amount), the first
// from 0. `rows` come in time order; a write whose clock read came before another's may have
// committed after it, so time alone can misplace a few. Seen as edges from one balance to the
// next, the postings form a trail from 0 that uses each once (an Eulerian trail), which
// Hierholzer's walk finds; taking the earliest unused posting at each balance gives back the time
// order wherever it chains. Time order when no trail exists (`tesoro verify` then says so).
std::vector<std::size_t> applied_order(const std::vector<PostingRow>& rows) {
  std::map<std::int64_t, std::deque<std::size_t>> starting_at;  // balance -> postings, by time
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::int64_t before = 0;
    if (__builtin_sub_overflow(rows[i].balance_after, rows[i].amount, &before)) before = -1;
    starting_at[before].push_back(i);
  }
  std::vector<std::size_t> trail;
  std::vector<std::int64_t> balances = {0};
  std::vector<std::size_t> walked;  // the posting that led to each balance of `balances` but the first
  while (!balances.empty()) {
    auto next = starting_at.find(balances.back());
    if (next != starting_at.end() && !next->second.empty()) {
      std::size_t i = next->second.front();
      next->second.pop_front();
      balances.push_back(rows[i].balance_after);
      walked.push_back(i);
      continue;
    }
    balances.pop_back();
    if (!walked.empty() && balances.size() == walked.size()) {
      trail.push_back(walked.back());
      walked.pop_back();
    }
  }
  std::reverse(trail.begin(), trail.end());
  bool chains = trail.size() == rows.size();
  std::int64_t balance = 0;
  for (std::size_t k = 0; chains && k < trail.size(); ++k) {
    const PostingRow& row = rows[trail[k]];
    chains = row.balance_after - row.amount == balance;
    balance = row.balance_after;
  }
  if (chains) return trail;
  std::vector<std::size_t> by_time(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) by_time[i] = i;
  return by_time;
}

// Migration 29's data: each customer posting's position in its account (1 for the first), its
// instant made no earlier than the one before it (a few microseconds at most, where two writes
// read the clock in one order and committed in the other), and each account's count and last
// instant, as new postings keep them.
void number_postings(Tx& tx) {
  tx.exec("CREATE TEMPORARY TABLE posting_positions (tenant_id TEXT NOT NULL, "
          "account_id TEXT NOT NULL, entry_id TEXT NOT NULL, seq INTEGER NOT NULL, "
          "position BIGINT NOT NULL, inserted_at TEXT NOT NULL)");
  Rows rows = tx.query(
      "SELECT tenant_id, account_id, entry_id, seq, amount, balance_after, inserted_at "
      "FROM postings WHERE balance_after IS NOT NULL "
      "ORDER BY tenant_id, account_id, inserted_at, entry_id, seq");
  Params positions;
  auto flush = [&] {
    tx.append_rows("posting_positions (tenant_id, account_id, entry_id, seq, position, "
                   "inserted_at)",
                   6, positions);
    positions.clear();
  };
  for (std::size_t first = 0; first < rows.size();) {
    const std::string tenant_id = rows[first].text(0);
    const std::string account_id = rows[first].text(1);
    std::vector<PostingRow> of_account;
    std::size_t end = first;
    for (; end < rows.size() && rows[end].text(0) == tenant_id && rows[end].text(1) == account_id;
         ++end) {
      const Row& row = rows[end];
      of_account.push_back(
          {row.text(2), row.integer(3), row.integer(4), row.integer(5), row.text(6)});
    }
    std::string latest;
    std::int64_t position = 0;
    for (std::size_t i : applied_order(of_account)) {
      const PostingRow& posting = of_account[i];
      latest = std::max(latest, posting.inserted_at);
      for (Value value : {Value(tenant_id), Value(account_id), Value(posting.entry_id),
                          Value(posting.seq), Value(++position), Value(latest)}) {
        positions.push_back(std::move(value));
      }
    }
    if (positions.size() >= 6 * limits::k_migration_rows_per_flush) flush();
    first = end;
  }
  flush();
  tx.exec("UPDATE postings SET position = pp.position, inserted_at = pp.inserted_at "
          "FROM posting_positions pp WHERE postings.tenant_id = pp.tenant_id "
          "AND postings.entry_id = pp.entry_id AND postings.seq = pp.seq");
  tx.exec("UPDATE ledger_accounts SET postings_count = c.count, last_posted_at = c.latest "
          "FROM (SELECT tenant_id, account_id, MAX(position) AS count, MAX(inserted_at) AS latest "
          "FROM posting_positions GROUP BY tenant_id, account_id) c "
          "WHERE ledger_accounts.tenant_id = c.tenant_id AND ledger_accounts.id = c.account_id");
  tx.exec("DROP TABLE posting_positions");
}

}  // namespace

std::vector<Migration> ledger_migrations() {
  const char* k_postings_by_account =
      "CREATE INDEX postings_by_account ON postings (tenant_id, account_id)";
  // System accounts keep no stored balance (their balance is the sum of their postings), so
  // that no posting locks or rewrites their row; their postings carry no balance_after.
  std::vector<Statement> derived_system_balances = drop_not_null(
      "postings", "balance_after",
      "CREATE TABLE postings_new (tenant_id TEXT NOT NULL, entry_id TEXT NOT NULL, "
      "seq INTEGER NOT NULL, account_id TEXT NOT NULL, currency TEXT NOT NULL, "
      "amount BIGINT NOT NULL, balance_after BIGINT, inserted_at TEXT NOT NULL, "
      "PRIMARY KEY (tenant_id, entry_id, seq))",
      {k_postings_by_account});
  derived_system_balances.push_back(
      "UPDATE postings SET balance_after = NULL WHERE EXISTS (SELECT 1 FROM ledger_accounts a "
      "WHERE a.tenant_id = postings.tenant_id AND a.id = postings.account_id "
      "AND a.surface = 'system')");
  derived_system_balances.push_back(
      "UPDATE ledger_accounts SET balance = 0 WHERE surface = 'system'");
  return {
      {4,
       "ledger",
       {
           // surface: core (acc_), participant (bbtacc_ tenant accounts) or system (funding,
           // settlement: may go negative, never listed).
           "CREATE TABLE ledger_accounts (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
           "surface TEXT NOT NULL, name TEXT NOT NULL, number TEXT NOT NULL, type TEXT NOT NULL, "
           "currency TEXT NOT NULL, state TEXT NOT NULL, account_holder_id TEXT, role TEXT, "
           "beneficiary TEXT, balance BIGINT NOT NULL, balance_updated_at TEXT NOT NULL, "
           "inserted_at TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (tenant_id, id), "
           "UNIQUE (tenant_id, number))",
           "CREATE INDEX ledger_accounts_by_time ON ledger_accounts "
           "(tenant_id, surface, inserted_at, id)",
           "CREATE TABLE journal_entries (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
           "kind TEXT NOT NULL, description TEXT NOT NULL, inserted_at TEXT NOT NULL, "
           "PRIMARY KEY (tenant_id, id))",
           "CREATE TABLE postings (tenant_id TEXT NOT NULL, entry_id TEXT NOT NULL, "
           "seq INTEGER NOT NULL, account_id TEXT NOT NULL, currency TEXT NOT NULL, "
           "amount BIGINT NOT NULL, balance_after BIGINT NOT NULL, inserted_at TEXT NOT NULL, "
           "PRIMARY KEY (tenant_id, entry_id, seq))",
           k_postings_by_account,
       }},
      {8, "ledger_derived_system_balances", std::move(derived_system_balances)},
      {29,
       "ledger_account_statements",
       {
           // position: the posting's place in its account's history (1, 2, ...; null for a
           // system account's, which keep no running balance); postings_count and
           // last_posted_at: the account's last position and its instant, which the next
           // posting follows. An account's postings are dated in the order they were applied,
           // so one index serves its statement newest first, its filters by time and its
           // balance as of an instant.
           "ALTER TABLE postings ADD COLUMN position BIGINT",
           "ALTER TABLE ledger_accounts ADD COLUMN postings_count BIGINT NOT NULL DEFAULT 0",
           "ALTER TABLE ledger_accounts ADD COLUMN last_posted_at TEXT",
           // reference_type and reference_id: what caused the entry, for a reader to fetch.
           "ALTER TABLE journal_entries ADD COLUMN reference_type TEXT",
           "ALTER TABLE journal_entries ADD COLUMN reference_id TEXT",
           "DROP INDEX postings_by_account",
           "CREATE INDEX postings_by_account ON postings "
           "(tenant_id, account_id, inserted_at, position)",
           // The references of the entries written before: from the rows that name their
           // entry, or from the description their writer gave them.
           "UPDATE journal_entries SET reference_type = 'sandbox_funding', reference_id = id "
           "WHERE kind = 'sandbox_funding'",
           "UPDATE journal_entries SET reference_type = 'card_transaction', "
           "reference_id = SUBSTR(description, 18) WHERE kind IN ('card_capture', 'card_refund') "
           "AND description LIKE 'card transaction %'",
           "UPDATE journal_entries SET reference_type = 'card_balance_operation', "
           "reference_id = o.id FROM card_balance_operations o WHERE o.tenant_id = "
           "journal_entries.tenant_id AND o.entry_id = journal_entries.id",
           "UPDATE journal_entries SET reference_type = CASE WHEN t.payout_id IS NULL THEN "
           "'outgoing_transfer' ELSE 'payout' END, reference_id = COALESCE(t.payout_id, t.id) "
           "FROM outgoing_transfers t WHERE t.tenant_id = journal_entries.tenant_id "
           "AND t.entry_id = journal_entries.id",
           "UPDATE journal_entries SET reference_type = 'collection_attempt', "
           "reference_id = t.attempt_id FROM incoming_transfers t "
           "WHERE t.tenant_id = journal_entries.tenant_id AND t.entry_id = journal_entries.id",
       },
       number_postings},
  };
}

}  // namespace tesoro::store
