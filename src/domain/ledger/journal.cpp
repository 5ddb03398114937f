#include "domain/ledger/journal.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <map>

#include "core/ids.hpp"
#include "core/money.hpp"
#include "domain/events/events.hpp"

namespace tesoro::ledger {
namespace {

struct LockedAccount {
  std::string currency;
  std::int64_t balance;
  bool may_go_negative;
  bool exists;
};

std::string event_data(const std::string& account_id, const std::string& entry_id,
                       std::int64_t amount, std::int64_t balance, const std::string& currency) {
  namespace json = boost::json;
  return json::serialize(json::object{
      {"account_id", account_id},
      {"entry_id", entry_id},
      {"amount", json::object{{"amount", amount}, {"currency", currency}}},
      {"balance", json::object{{"amount", balance}, {"currency", currency}}}});
}

}  // namespace

const char* to_string(SystemRole role) {
  switch (role) {
    case SystemRole::external_funding: return "external_funding";
    case SystemRole::network_settlement: return "network_settlement";
    case SystemRole::card_network: return "card_network";
  }
  return "external_funding";
}

std::string system_account(store::Tx& tx, const std::string& tenant_id, SystemRole role,
                           const std::string& currency, time::Micros now) {
  const std::string name = std::string("system:") + to_string(role) + ":" + currency;
  auto found = tx.query_one(
      "SELECT id FROM ledger_accounts WHERE tenant_id = ? AND surface = 'system' AND name = ?",
      {tenant_id, name});
  if (found) return found->text(0);
  std::string id = ids::generate("acc");
  std::string at = time::iso(now);
  // The number doubles as a unique name: two concurrent first uses cannot both create one.
  tx.exec("INSERT INTO ledger_accounts (tenant_id, id, surface, name, number, type, currency, "
          "state, balance, balance_updated_at, inserted_at, updated_at) "
          "VALUES (?, ?, 'system', ?, ?, 'system', ?, 'active', 0, ?, ?, ?) "
          "ON CONFLICT (tenant_id, number) DO NOTHING",
          {tenant_id, id, name, name, currency, at, at, at});
  return tx.query_one("SELECT id FROM ledger_accounts WHERE tenant_id = ? AND number = ?",
                      {tenant_id, name})->text(0);
}

Result<EntryResult> post_entry(store::Tx& tx, const std::string& tenant_id,
                               const std::string& kind, const std::string& description,
                               const std::vector<Posting>& postings, time::Micros now) {
  // Balanced per currency, with checked sums: an unbalanced entry is a bug, never data.
  if (postings.size() < 2) return errors::internal();
  std::map<std::string, std::int64_t> sums;
  for (const Posting& posting : postings) {
    if (posting.amount_minor == 0) return errors::internal();
    auto sum = money::add(sums[posting.currency], posting.amount_minor);
    if (!sum) return errors::make(422, "balance_overflow", "amount too large", "amount.amount");
    sums[posting.currency] = *sum;
  }
  for (const auto& [currency, sum] : sums) {
    if (sum != 0) return errors::internal();
  }

  // Lock every account once, in id order, so concurrent entries never deadlock.
  std::vector<std::string> ids_in_order;
  for (const Posting& posting : postings) ids_in_order.push_back(posting.account_id);
  std::sort(ids_in_order.begin(), ids_in_order.end());
  ids_in_order.erase(std::unique(ids_in_order.begin(), ids_in_order.end()), ids_in_order.end());
  std::map<std::string, LockedAccount> accounts;
  for (const std::string& id : ids_in_order) {
    auto row = tx.query_one(std::string("SELECT currency, balance, surface FROM ledger_accounts "
                                        "WHERE tenant_id = ? AND id = ?") +
                                std::string(tx.lock_rows()),
                            {tenant_id, id});
    if (!row) return errors::item_not_found("account");
    accounts[id] = {row->text(0), row->integer(1), row->text(2) == "system", true};
  }

  EntryResult result;
  result.entry_id = ids::generate("jen");
  for (const Posting& posting : postings) {
    LockedAccount& account = accounts[posting.account_id];
    if (account.currency != posting.currency) {
      return errors::make(422, "currency_mismatch",
                          "the amount's currency is not the account's currency (" +
                              account.currency + ")",
                          "amount.currency");
    }
    auto balance = money::add(account.balance, posting.amount_minor);
    if (!balance) {
      return errors::make(422, "balance_overflow", "the balance would overflow", "amount.amount");
    }
    if (*balance < 0 && !account.may_go_negative) {
      return errors::make(422, "insufficient_funds", "the account's available balance is too low",
                          "amount.amount");
    }
    account.balance = *balance;
    result.balances_after.push_back(*balance);
  }

  const std::string at = time::iso(now);
  tx.exec("INSERT INTO journal_entries (tenant_id, id, kind, description, inserted_at) "
          "VALUES (?, ?, ?, ?, ?)",
          {tenant_id, result.entry_id, kind, description, at});
  for (std::size_t i = 0; i < postings.size(); ++i) {
    const Posting& posting = postings[i];
    tx.exec("INSERT INTO postings (tenant_id, entry_id, seq, account_id, currency, amount, "
            "balance_after, inserted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            {tenant_id, result.entry_id, static_cast<std::int64_t>(i), posting.account_id,
             posting.currency, posting.amount_minor, result.balances_after[i], at});
    if (!accounts[posting.account_id].may_go_negative) {
      // The type says the direction; the amount is a Money like everywhere else (positive).
      bool credit = posting.amount_minor > 0;
      // Never INT64_MIN here: a debit that large could not have left a customer account.
      std::int64_t magnitude = credit ? posting.amount_minor : *money::negate(posting.amount_minor);
      events::emit(tx, tenant_id, credit ? "account.credited" : "account.debited",
                   event_data(posting.account_id, result.entry_id, magnitude,
                              result.balances_after[i], posting.currency));
    }
  }
  for (const auto& [id, account] : accounts) {
    tx.exec("UPDATE ledger_accounts SET balance = ?, balance_updated_at = ?, updated_at = ? "
            "WHERE tenant_id = ? AND id = ?",
            {account.balance, at, at, tenant_id, id});
  }
  return result;
}

std::vector<std::string> verify(store::Tx& tx) {
  std::vector<std::string> violations;
  for (const store::Row& row : tx.query(
           "SELECT a.tenant_id, a.id, a.balance, COALESCE(SUM(p.amount), 0) FROM ledger_accounts a "
           "LEFT JOIN postings p ON p.tenant_id = a.tenant_id AND p.account_id = a.id "
           "GROUP BY a.tenant_id, a.id, a.balance HAVING a.balance <> COALESCE(SUM(p.amount), 0)")) {
    violations.push_back("account " + row.text(1) + " of tenant " + row.text(0) + ": stored balance " +
                         row.text(2) + " but postings sum to " + row.text(3));
  }
  for (const store::Row& row : tx.query(
           "SELECT tenant_id, entry_id, currency, SUM(amount), COUNT(*) FROM postings "
           "GROUP BY tenant_id, entry_id, currency HAVING SUM(amount) <> 0")) {
    violations.push_back("entry " + row.text(1) + " of tenant " + row.text(0) + ": " +
                         row.text(2) + " postings sum to " + row.text(3));
  }
  for (const store::Row& row : tx.query(
           "SELECT e.tenant_id, e.id FROM journal_entries e WHERE (SELECT COUNT(*) FROM postings p "
           "WHERE p.tenant_id = e.tenant_id AND p.entry_id = e.id) < 2")) {
    violations.push_back("entry " + row.text(1) + " of tenant " + row.text(0) +
                         ": fewer than two postings");
  }
  for (const store::Row& row : tx.query(
           "SELECT tenant_id, id, balance FROM ledger_accounts WHERE surface <> 'system' "
           "AND balance < 0")) {
    violations.push_back("customer account " + row.text(1) + " of tenant " + row.text(0) +
                         " is negative: " + row.text(2));
  }
  for (const store::Row& row : tx.query(
           "SELECT p.tenant_id, p.entry_id, p.account_id FROM postings p JOIN ledger_accounts a "
           "ON a.tenant_id = p.tenant_id AND a.id = p.account_id WHERE a.currency <> p.currency")) {
    violations.push_back("entry " + row.text(1) + " of tenant " + row.text(0) + " posts to " +
                         row.text(2) + " in another currency");
  }
  for (const store::Row& row : tx.query(
           "SELECT p.tenant_id, p.entry_id, p.account_id FROM postings p LEFT JOIN ledger_accounts a "
           "ON a.tenant_id = p.tenant_id AND a.id = p.account_id WHERE a.id IS NULL")) {
    violations.push_back("entry " + row.text(1) + " of tenant " + row.text(0) +
                         " posts to unknown account " + row.text(2));
  }
  return violations;
}

}  // namespace tesoro::ledger
