#include "domain/ledger/statements.hpp"

#include <algorithm>

namespace tesoro::ledger {
namespace {

// The bounds of the filter as stored instants: ISO texts of one width, which compare as the
// instants they name. No bound: the text below or above every instant.
std::string lower_bound_of(const std::optional<time::Micros>& at) {
  return at ? time::iso(*at) : std::string();
}
std::string upper_bound_of(const std::optional<time::Micros>& at) {
  return at ? time::iso(*at) : std::string("~");
}

std::string posting_id(const std::string& entry_id, std::int64_t seq) {
  // jen_<rest> -> pst_<rest>_<seq>: derived, so that no posting stores an id of its own.
  const std::size_t underscore = entry_id.find('_');
  return "pst_" + entry_id.substr(underscore == std::string::npos ? 0 : underscore + 1) + "_" +
         std::to_string(seq);
}

}  // namespace

Result<Account> get_core_or_card_account(store::Tx& tx, const std::string& tenant_id,
                                         const std::string& id) {
  auto account = get_account(tx, tenant_id, id, Surface::core);
  if (account) return account;
  auto prepaid = get_account(tx, tenant_id, id, Surface::card);
  if (prepaid) return prepaid;
  return account;
}

Result<PageOf<StatementEntry>> list_entries(store::Tx& tx, const std::string& tenant_id,
                                            const std::string& account_id, Surface surface,
                                            const StatementFilter& filter, std::int64_t offset,
                                            std::int64_t limit) {
  // The core surface's statements are those of its accounts and of cards' prepaid balances.
  const bool core = surface == Surface::core;
  auto account = tx.query_one(
      "SELECT postings_count FROM ledger_accounts WHERE tenant_id = ? AND id = ? "
      "AND surface IN (?, ?)",
      {tenant_id, account_id, std::string(core ? "core" : "participant"),
       std::string(core ? "card" : "participant")});
  if (!account) {
    return core ? errors::item_not_found("account") : errors::of(ErrorCode::tenant_account_not_found);
  }
  const std::string from = lower_bound_of(filter.created_from);
  const std::string to = upper_bound_of(filter.created_to);
  PageOf<StatementEntry> page;
  // Positions are consecutive and in the order of the instants: the matches are the positions
  // between the first at or after `from` and the last at or before `to` (without a filter, all
  // of the account's: as many as it counts).
  auto position_at = [&](const char* sql, const std::string& bound) -> std::optional<std::int64_t> {
    auto row = tx.query_one(sql, {tenant_id, account_id, bound});
    if (!row) return std::nullopt;
    return row->integer(0);
  };
  const std::int64_t count = account->integer(0);
  std::optional<std::int64_t> first = count > 0 ? std::optional<std::int64_t>(1) : std::nullopt;
  std::optional<std::int64_t> last = count > 0 ? std::optional<std::int64_t>(count) : std::nullopt;
  if (filter.created_from && first) {
    first = position_at(
        "SELECT position FROM postings WHERE tenant_id = ? AND account_id = ? AND inserted_at >= ? "
        "ORDER BY inserted_at, position LIMIT 1",
        from);
  }
  if (filter.created_to && last) {
    last = position_at(
        "SELECT position FROM postings WHERE tenant_id = ? AND account_id = ? AND inserted_at <= ? "
        "ORDER BY inserted_at DESC, position DESC LIMIT 1",
        to);
  }
  if (!first || !last || *last < *first) return page;
  page.total_items = *last - *first + 1;
  for (const store::Row& row : tx.query(
           "SELECT p.entry_id, p.seq, p.amount, p.currency, p.balance_after, p.position, "
           "p.inserted_at, e.description, e.reference_type, e.reference_id FROM postings p "
           "JOIN journal_entries e ON e.tenant_id = p.tenant_id AND e.id = p.entry_id "
           "WHERE p.tenant_id = ? AND p.account_id = ? AND p.inserted_at >= ? "
           "AND p.inserted_at <= ? ORDER BY p.inserted_at DESC, p.position DESC LIMIT ? OFFSET ?",
           {tenant_id, account_id, from, to, limit, offset})) {
    StatementEntry entry;
    entry.journal_entry_id = row.text(0);
    entry.id = posting_id(entry.journal_entry_id, row.integer(1));
    entry.amount_minor = row.integer(2);
    entry.currency = row.text(3);
    entry.balance_after_minor = row.integer(4);
    entry.position = row.integer(5);
    entry.created_at = row.text(6);
    entry.description = row.text(7);
    // Written by every entry since the statements exist, and by the migration for those before.
    entry.reference_type = row.optional_text(8).value_or("journal_entry");
    entry.reference_id = row.optional_text(9).value_or(entry.journal_entry_id);
    page.items.push_back(std::move(entry));
  }
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
