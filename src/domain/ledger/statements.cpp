#include "domain/ledger/statements.hpp"

#include <algorithm>

namespace tesoro::ledger {
namespace {

// The position of the account's first posting at or after an instant, and of its last at or
// before one: an index seek each.
constexpr const char* k_first_at_or_after =
    "SELECT position FROM postings WHERE tenant_id = ? AND account_id = ? AND inserted_at >= ? "
    "ORDER BY inserted_at, position LIMIT 1";
constexpr const char* k_last_at_or_before =
    "SELECT position FROM postings WHERE tenant_id = ? AND account_id = ? AND inserted_at <= ? "
    "ORDER BY inserted_at DESC, position DESC LIMIT 1";

std::string posting_id(const std::string& entry_id, std::int64_t seq) {
  // jen_<rest> -> pst_<rest>_<seq>: derived, so that no posting stores an id of its own.
  const std::size_t underscore = entry_id.find('_');
  return "pst_" + entry_id.substr(underscore == std::string::npos ? 0 : underscore + 1) + "_" +
         std::to_string(seq);
}

}  // namespace

Result<PageOf<StatementEntry>> list_entries(store::Tx& tx, const std::string& tenant_id,
                                            const std::string& account_id, Surface surface,
                                            const StatementFilter& filter, std::int64_t offset,
                                            std::int64_t limit) {
  // The core surface's statements are those of its accounts and of cards' prepaid balances.
  const bool core = surface == Surface::core;
  const store::Value first_surface(std::string(core ? "core" : "participant"));
  const store::Value second_surface(std::string(core ? "card" : "participant"));
  // Positions are consecutive and in the order of the instants: the matches are the positions
  // between the first at or after `from` and the last at or before `to` (an index seek each),
  // or, without a filter, all the account counts. One statement reads the page with its total
  // (one round trip, one snapshot); a page with no rows needs a second to tell an account with
  // none from no account.
  std::string where = " WHERE p.tenant_id = ? AND p.account_id = ?";
  std::string first_position = "1";
  std::string last_position = "a.postings_count";
  const std::string from = filter.created_from ? time::iso(*filter.created_from) : "";
  const std::string to = filter.created_to ? time::iso(*filter.created_to) : "";
  if (filter.created_from) {
    where += " AND p.inserted_at >= ?";
    first_position = std::string("(") + k_first_at_or_after + ")";
  }
  if (filter.created_to) {
    where += " AND p.inserted_at <= ?";
    last_position = std::string("(") + k_last_at_or_before + ")";
  }
  // The account's own row joins the page, so that another tenant's account (or one of another
  // surface) answers no rows. The page size is in the text (10 to 500: a few hundred texts at
  // most), and the first page has no OFFSET: PostgreSQL's plan for a prepared statement, once
  // generic, does not know a parameter's value, and with an unknown LIMIT it plans for a tenth
  // of the account's history (a parallel scan, compiled by JIT: about 100 ms on a million
  // postings, where the backward index scan that the first page needs reads ten rows).
  const std::string sql =
      "SELECT p.entry_id, p.seq, p.amount, p.currency, p.balance_after, p.inserted_at, "
      "e.description, e.reference_type, e.reference_id, " +
      last_position + " - " + first_position +
      " + 1 FROM ledger_accounts a JOIN postings p ON p.tenant_id = a.tenant_id "
      "AND p.account_id = a.id JOIN journal_entries e ON e.tenant_id = p.tenant_id "
      "AND e.id = p.entry_id" + where + " AND a.surface IN (?, ?)"
      " ORDER BY p.inserted_at DESC, p.position DESC LIMIT " + std::to_string(limit) +
      (offset > 0 ? " OFFSET ?" : "");
  // In the order of the text: the select list's subqueries, then the WHERE.
  store::Params ordered;
  if (filter.created_to) {
    ordered.emplace_back(tenant_id);
    ordered.emplace_back(account_id);
    ordered.emplace_back(to);
  }
  if (filter.created_from) {
    ordered.emplace_back(tenant_id);
    ordered.emplace_back(account_id);
    ordered.emplace_back(from);
  }
  ordered.emplace_back(tenant_id);
  ordered.emplace_back(account_id);
  if (filter.created_from) ordered.emplace_back(from);
  if (filter.created_to) ordered.emplace_back(to);
  ordered.push_back(first_surface);
  ordered.push_back(second_surface);
  if (offset > 0) ordered.emplace_back(offset);
  PageOf<StatementEntry> page;
  const store::Rows rows = tx.query(sql, ordered);
  for (const store::Row& row : rows) {
    StatementEntry entry;
    entry.journal_entry_id = row.text(0);
    entry.id = posting_id(entry.journal_entry_id, row.integer(1));
    entry.amount_minor = row.integer(2);
    entry.currency = row.text(3);
    entry.balance_after_minor = row.integer(4);
    entry.created_at = row.text(5);
    entry.description = row.text(6);
    // Written by every entry since the statements exist, and by the migration for those before
    // (`tesoro verify` reports an entry without one).
    entry.reference_type = row.optional_text(7).value_or("");
    entry.reference_id = row.optional_text(8).value_or("");
    page.items.push_back(std::move(entry));
  }
  if (!rows.empty()) {
    page.total_items = rows.front().integer(9);
    return page;
  }
  // No rows: no such account, or a page past the matches (whose total is still answered).
  auto account = tx.query_one(
      "SELECT postings_count FROM ledger_accounts WHERE tenant_id = ? AND id = ? "
      "AND surface IN (?, ?)",
      {tenant_id, account_id, first_surface, second_surface});
  if (!account) {
    return core ? errors::item_not_found("account")
                : errors::of(ErrorCode::tenant_account_not_found);
  }
  std::int64_t first = 1;
  std::int64_t last = account->integer(0);
  auto position_at = [&](const char* sql_text, const std::string& bound) -> std::int64_t {
    auto row = tx.query_one(sql_text, {tenant_id, account_id, bound});
    return row ? row->integer(0) : -1;
  };
  if (filter.created_from) first = position_at(k_first_at_or_after, from);
  if (filter.created_to) last = position_at(k_last_at_or_before, to);
  page.total_items = first > 0 && last >= first ? last - first + 1 : 0;
  return page;
}

Account as_of(Account account, store::Tx& tx, const std::string& tenant_id, time::Micros at) {
  auto last = tx.query_one(
      "SELECT balance_after, inserted_at FROM postings WHERE tenant_id = ? AND account_id = ? "
      "AND inserted_at <= ? ORDER BY inserted_at DESC, position DESC LIMIT 1",
      {tenant_id, account.id, time::iso(at)});
  account.balance_minor = last ? last->integer(0) : 0;
  account.held_minor = 0;
  account.balance_updated_at = last ? last->text(1) : std::min(account.inserted_at, time::iso(at));
  return account;
}

}  // namespace tesoro::ledger
