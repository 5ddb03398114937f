#include "domain/ledger/journal.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <map>
#include <optional>

#include "core/check.hpp"
#include "core/ids.hpp"
#include "core/limits.hpp"
#include "core/money.hpp"
#include "domain/events/events.hpp"
#include "store/bulk.hpp"

namespace tesoro::ledger {
namespace {

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

Error currency_mismatch(const std::string& account_currency) {
  return errors::of(ErrorCode::currency_mismatch, "amount.currency",
                    "the amount's currency is not the account's currency (" + account_currency +
                        ")");
}

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

struct Journal::Checked {
  EntryResult result;
  std::map<AccountKey, Locked> accounts;  // locked accounts this entry changes, as it leaves them
};

Status Journal::lock(std::vector<AccountKey> accounts) {
  std::sort(accounts.begin(), accounts.end());
  accounts.erase(std::unique(accounts.begin(), accounts.end()), accounts.end());
  std::erase_if(accounts, [&](const AccountKey& key) {
    return locked_.contains(key) || system_.contains(key);
  });
  // Locks are taken in key order across calls too (what keeps two units from a deadlock).
  const std::optional<AccountKey> highest =
      locked_.empty() ? std::nullopt : std::optional<AccountKey>(locked_.rbegin()->first);
  if (accounts.size() == 1) {
    // One account (a card's, a payout's): its locking read alone, the plainest statement (the
    // statement below costs PostgreSQL about half as much again), and the system read only when
    // it is a system account.
    const AccountKey& key = accounts.front();
    auto row = tx_.query_one(std::string("SELECT currency, state, balance, held, postings_count, "
                                         "last_posted_at FROM ledger_accounts "
                                         "WHERE tenant_id = ? AND id = ? AND surface <> 'system'") +
                                 std::string(tx_.lock_rows()),
                             {key.tenant_id, key.id});
    if (row) {
      if (highest && key < *highest) return errors::internal();
      locked_[key] = {row->text(0),    row->text(1),    row->integer(2),
                      row->integer(3), row->integer(4), row->optional_text(5).value_or("")};
      return ok_status();
    }
    auto system = tx_.query_one("SELECT currency FROM ledger_accounts "
                                "WHERE tenant_id = ? AND id = ? AND surface = 'system'",
                                {key.tenant_id, key.id});
    if (!system) return errors::item_not_found("account");
    system_[key] = system->text(0);
    return ok_status();
  }
  // Several accounts: a tenant's in one statement per chunk, customer accounts locked (in byte
  // order whatever the database's collation), system accounts (which every settlement touches)
  // only read, so they are never locked. One round trip for an entry's accounts, not one or two
  // per account.
  const std::string lock_in_order = tx_.engine() == store::Engine::postgres
                                        ? " ORDER BY id COLLATE \"C\" FOR UPDATE"
                                        : "";  // SQLite's one writer takes no row locks
  auto next = accounts.begin();
  while (next != accounts.end()) {
    const std::string& tenant_id = next->tenant_id;
    auto end = std::find_if(next, accounts.end(),
                            [&](const AccountKey& key) { return key.tenant_id != tenant_id; });
    std::vector<std::string> ids;
    for (auto it = next; it != end; ++it) ids.push_back(it->id);
    Status status = ok_status();
    store::for_each_chunk(ids.size(), [&](std::size_t first, std::size_t count) {
      if (!status) return;
      const std::string in = store::in_list(count);
      store::Params params{tenant_id};
      params.insert(params.end(), ids.begin() + static_cast<std::ptrdiff_t>(first),
                    ids.begin() + static_cast<std::ptrdiff_t>(first + count));
      params.push_back(tenant_id);
      params.insert(params.end(), ids.begin() + static_cast<std::ptrdiff_t>(first),
                    ids.begin() + static_cast<std::ptrdiff_t>(first + count));
      const store::Rows rows = tx_.query(
          "WITH locked AS (SELECT id, currency, state, balance, held, postings_count, "
          "last_posted_at FROM ledger_accounts WHERE tenant_id = ? AND id IN " + in +
              " AND surface <> 'system'" + lock_in_order +
              ") SELECT 0, id, currency, state, balance, held, postings_count, last_posted_at "
              "FROM locked UNION ALL SELECT 1, id, currency, '', 0, 0, 0, NULL "
              "FROM ledger_accounts WHERE tenant_id = ? AND id IN " + in +
              " AND surface = 'system'",
          params);
      std::size_t found = 0;
      for (const store::Row& row : rows) {
        AccountKey key{tenant_id, row.text(1)};
        ++found;
        if (row.integer(0) == 1) {
          system_[key] = row.text(2);
          continue;
        }
        if (highest && key < *highest) status = errors::internal();
        locked_[key] = {row.text(2),    row.text(3),    row.integer(4),
                        row.integer(5), row.integer(6), row.optional_text(7).value_or("")};
      }
      if (found < count) status = errors::item_not_found("account");
    });
    if (!status) return status;
    next = end;
  }
  return ok_status();
}

Result<Journal::Checked> Journal::check(const std::string& tenant_id,
                                        const std::vector<Posting>& postings) {
  // Balanced per currency, with checked sums: an unbalanced entry is a bug, never data.
  if (postings.size() < 2) return errors::internal();
  std::map<std::string, std::int64_t> sums;
  for (const Posting& posting : postings) {
    if (posting.amount_minor == 0) return errors::internal();
    auto sum = money::add(sums[posting.currency], posting.amount_minor);
    if (!sum) return errors::of(ErrorCode::balance_overflow, "amount.amount");
    sums[posting.currency] = *sum;
  }
  for (const auto& [currency, sum] : sums) {
    if (sum != 0) return errors::internal();
  }
  Checked checked;
  checked.result.entry_id = ids::generate("jen");
  checked.result.posted_at.resize(postings.size());
  for (const Posting& posting : postings) {
    AccountKey key{tenant_id, posting.account_id};
    if (auto system = system_.find(key); system != system_.end()) {
      if (system->second != posting.currency) {
        return currency_mismatch(system->second);
      }
      checked.result.balances_after.push_back(0);
      checked.result.positions.push_back(0);
      continue;
    }
    auto locked = locked_.find(key);
    if (locked == locked_.end()) return errors::internal();  // the caller did not lock it first
    const Locked& account = locked->second;
    const bool debit = posting.amount_minor < 0;
    if ((debit && account.state != "active") || account.state == "closed") {
      return errors::of(ErrorCode::account_invalid_state, std::nullopt,
                        "account " + posting.account_id + " is " + account.state +
                              (debit ? ": it cannot be debited" : ": it cannot be credited"));
    }
    if (account.currency != posting.currency) {
      return currency_mismatch(account.currency);
    }
    auto [it, first] = checked.accounts.try_emplace(key, account);
    Locked& after = it->second;
    auto balance = money::add(after.balance, posting.amount_minor);
    if (!balance || *balance > limits::k_amount_max_minor) {
      return errors::of(ErrorCode::balance_overflow, "amount.amount");
    }
    // What holds keep cannot be spent: a debit may take only the available balance.
    if (*balance < (debit ? account.held : 0)) {
      return errors::of(ErrorCode::insufficient_funds, "amount.amount");
    }
    after.balance = *balance;
    checked.result.balances_after.push_back(*balance);
    checked.result.positions.push_back(++after.postings_count);
    // Dated in the order applied: a unit whose clock read came before the last posting's
    // commit takes that posting's instant (ISO texts of one width compare as instants).
    if (after.last_posted_at > at_) {
      checked.result.posted_at[checked.result.positions.size() - 1] = after.last_posted_at;
    } else {
      after.last_posted_at = at_;
    }
  }
  return checked;
}

void Journal::store_balance(const AccountKey& key) {
  const Locked& account = locked_[key];
  // A customer balance never goes below what it holds (nor below zero), nor past the API's
  // largest amount: check() refused every posting that would, so this is a bug if it fails.
  TESORO_CHECK(account.balance >= account.held && account.held >= 0 &&
                   account.balance <= limits::k_amount_max_minor,
               "account " + key.id + " of tenant " + key.tenant_id + ": balance " +
                   std::to_string(account.balance) + ", held " + std::to_string(account.held));
  tx_.exec_later("UPDATE ledger_accounts SET balance = ?, balance_updated_at = ?, updated_at = ?, "
                 "postings_count = ?, last_posted_at = ? WHERE tenant_id = ? AND id = ?",
                 {account.balance, at_, at_, account.postings_count, account.last_posted_at,
                  key.tenant_id, key.id});
}

Result<EntryResult> Journal::post(const std::string& tenant_id, const std::string& kind,
                                  const std::string& description,
                                  const std::vector<Posting>& postings,
                                  const Reference& reference) {
  auto checked = check(tenant_id, postings);
  if (!checked) return std::move(checked).error();
  write(tenant_id, kind, {{description, postings, reference}}, {checked->result});
  for (auto& [key, account] : checked->accounts) {
    locked_[key] = std::move(account);
    store_balance(key);
  }
  return std::move(checked->result);
}

Result<std::vector<EntryResult>> Journal::post_all(const std::string& tenant_id,
                                                   const std::string& kind,
                                                   const std::vector<NewEntry>& entries) {
  // Checked one after the other against the accounts as the entries before left them; put back
  // as they were when one fails.
  std::map<AccountKey, Locked> before;
  std::vector<EntryResult> results;
  results.reserve(entries.size());
  for (const NewEntry& entry : entries) {
    auto checked = check(tenant_id, entry.postings);
    if (!checked) {
      for (auto& [key, account] : before) locked_[key] = std::move(account);
      return std::move(checked).error();
    }
    for (auto& [key, account] : checked->accounts) {
      before.try_emplace(key, locked_[key]);
      locked_[key] = std::move(account);
    }
    results.push_back(std::move(checked->result));
  }
  write(tenant_id, kind, entries, results);
  for (const auto& [key, ignored] : before) store_balance(key);
  return results;
}

void Journal::store_held(const std::string& tenant_id, const std::string& account_id,
                         std::int64_t held) {
  const Locked& account = locked_[{tenant_id, account_id}];
  TESORO_CHECK(held >= 0 && held <= account.balance,
               "account " + account_id + " of tenant " + tenant_id + ": held " +
                   std::to_string(held) + " of a balance of " + std::to_string(account.balance));
  // The available balance changed: so did the balance's updated_at.
  tx_.exec_later("UPDATE ledger_accounts SET held = ?, balance_updated_at = ? "
                 "WHERE tenant_id = ? AND id = ?",
                 {held, at_, tenant_id, account_id});
}

Status Journal::hold(const std::string& tenant_id, const std::string& account_id,
                     std::int64_t amount_minor, const std::string& currency) {
  auto locked = locked_.find({tenant_id, account_id});
  if (locked == locked_.end() || amount_minor <= 0) return errors::internal();
  Locked& account = locked->second;
  if (account.state != "active") {
    return errors::of(ErrorCode::account_invalid_state, std::nullopt,
                      "account " + account_id + " is " + account.state + ": it cannot be held");
  }
  if (account.currency != currency) return currency_mismatch(account.currency);
  auto held = money::add(account.held, amount_minor);
  if (!held) return errors::of(ErrorCode::balance_overflow, "amount.amount");
  if (*held > account.balance) return errors::of(ErrorCode::insufficient_funds, "amount.amount");
  account.held = *held;
  store_held(tenant_id, account_id, account.held);
  return ok_status();
}

Status Journal::release(const std::string& tenant_id, const std::string& account_id,
                        std::int64_t amount_minor) {
  auto locked = locked_.find({tenant_id, account_id});
  if (locked == locked_.end() || amount_minor < 0 || amount_minor > locked->second.held) {
    return errors::internal();
  }
  if (amount_minor == 0) return ok_status();
  Locked& account = locked->second;
  account.held -= amount_minor;
  store_held(tenant_id, account_id, account.held);
  return ok_status();
}

std::optional<Journal::Balance> Journal::balance_of(const std::string& tenant_id,
                                                    const std::string& account_id) const {
  auto locked = locked_.find({tenant_id, account_id});
  if (locked == locked_.end()) return std::nullopt;
  const Locked& account = locked->second;
  return Balance{account.balance, account.held, account.currency, account.state};
}

void Journal::write(const std::string& tenant_id, const std::string& kind,
                    const std::vector<NewEntry>& entries,
                    const std::vector<EntryResult>& results) {
  const std::string& at = at_;
  store::Params entry_rows;
  store::Params posting_rows;
  std::vector<events::Emission> emissions;
  for (std::size_t e = 0; e < entries.size(); ++e) {
    const EntryResult& result = results[e];
    // Double entry: the postings written balance per currency (check() made sure; this is the
    // last look before the rows exist). An entry has a few postings: summed in place, with no
    // allocation on the write path.
    for (const Posting& posting : entries[e].postings) {
      std::optional<std::int64_t> sum = 0;
      for (const Posting& other : entries[e].postings) {
        if (sum && other.currency == posting.currency) sum = money::add(*sum, other.amount_minor);
      }
      TESORO_CHECK(sum == 0, "entry " + result.entry_id + " of tenant " + tenant_id +
                                 " does not balance in " + posting.currency);
    }
    const Reference& reference = entries[e].reference;
    for (store::Value value :
         {store::Value(tenant_id), store::Value(result.entry_id), store::Value(kind),
          store::Value(entries[e].description), store::Value(at), store::Value(reference.type),
          store::Value(reference.id.empty() ? result.entry_id : reference.id)}) {
      entry_rows.push_back(std::move(value));
    }
    const std::vector<Posting>& postings = entries[e].postings;
    for (std::size_t i = 0; i < postings.size(); ++i) {
      const Posting& posting = postings[i];
      const bool system = system_.contains({tenant_id, posting.account_id});
      for (store::Value value :
           {store::Value(tenant_id), store::Value(result.entry_id),
            store::Value(static_cast<std::int64_t>(i)), store::Value(posting.account_id),
            store::Value(posting.currency), store::Value(posting.amount_minor),
            system ? store::Value(nullptr) : store::Value(result.balances_after[i]),
            system ? store::Value(nullptr) : store::Value(result.positions[i]),
            store::Value(result.posted_at[i].empty() ? at : result.posted_at[i])}) {
        posting_rows.push_back(std::move(value));
      }
      if (system) continue;
      // The type says the direction; the amount is a Money like everywhere else (positive).
      bool credit = posting.amount_minor > 0;
      // Never INT64_MIN here: a debit that large could not have left a customer account.
      std::int64_t magnitude = credit ? posting.amount_minor : *money::negate(posting.amount_minor);
      emissions.push_back({tenant_id, credit ? "account.credited" : "account.debited",
                           event_data(posting.account_id, result.entry_id, magnitude,
                                      result.balances_after[i], posting.currency),
                           now_});
    }
  }
  tx_.append_rows("journal_entries (tenant_id, id, kind, description, inserted_at, "
                  "reference_type, reference_id)",
                  7, entry_rows);
  tx_.append_rows("postings (tenant_id, entry_id, seq, account_id, currency, amount, "
                  "balance_after, position, inserted_at)",
                  9, posting_rows);
  events::emit_many(tx_, emissions);
}

Result<EntryResult> post_entry(store::Tx& tx, const std::string& tenant_id,
                               const std::string& kind, const std::string& description,
                               const std::vector<Posting>& postings, const Reference& reference,
                               time::Micros now) {
  Journal journal(tx, now);
  std::vector<AccountKey> keys;
  for (const Posting& posting : postings) keys.push_back({tenant_id, posting.account_id});
  if (Status locked = journal.lock(std::move(keys)); !locked) return std::move(locked).error();
  return journal.post(tenant_id, kind, description, postings, reference);
}

std::vector<std::string> verify(store::Tx& tx) {
  std::vector<std::string> violations;
  // System accounts keep no stored balance: theirs is the sum of their postings. Every entry
  // balancing (checked below) is what keeps it exact: a tenant's books then sum to zero per
  // currency, so a system balance is minus the sum of the others. (A sum over all of a tenant's
  // postings is not run: a system account's may pass 2^63, which SQLite's SUM refuses.)
  for (const store::Row& row : tx.query(
           "SELECT a.tenant_id, a.id, a.balance, COALESCE(SUM(p.amount), 0) FROM ledger_accounts a "
           "LEFT JOIN postings p ON p.tenant_id = a.tenant_id AND p.account_id = a.id "
           "WHERE a.surface <> 'system' "
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
           "SELECT tenant_id, id, balance FROM ledger_accounts WHERE surface = 'system' "
           "AND balance <> 0")) {
    violations.push_back("system account " + row.text(1) + " of tenant " + row.text(0) +
                         " has a stored balance (" + row.text(2) + "); system balances are "
                         "derived from postings");
  }
  for (const store::Row& row : tx.query(
           "SELECT p.tenant_id, p.entry_id, p.account_id FROM postings p JOIN ledger_accounts a "
           "ON a.tenant_id = p.tenant_id AND a.id = p.account_id WHERE "
           "(a.surface = 'system' AND (p.balance_after IS NOT NULL OR p.position IS NOT NULL)) OR "
           "(a.surface <> 'system' AND (p.balance_after IS NULL OR p.position IS NULL))")) {
    violations.push_back("entry " + row.text(1) + " of tenant " + row.text(0) + ": posting to " +
                         row.text(2) + " has a balance_after or position where it should not, "
                         "or none where it should");
  }
  // Statements: each customer account's postings, by position, are 1, 2, ... with no gap, each
  // starting from the balance the one before it left (the first from 0: the last then leaves the
  // stored balance, whose sum is checked above), dated no earlier than the one before it; the
  // account knows its last position.
  for (const store::Row& row : tx.query(
           "SELECT tenant_id, account_id, entry_id, position FROM (SELECT tenant_id, account_id, "
           "entry_id, position, amount, balance_after, inserted_at, "
           "LAG(balance_after, 1, 0) OVER w AS balance_before, "
           "LAG(position, 1, 0) OVER w AS position_before, "
           "LAG(inserted_at, 1, '') OVER w AS inserted_before FROM postings "
           "WHERE position IS NOT NULL "
           "WINDOW w AS (PARTITION BY tenant_id, account_id ORDER BY position)) chain "
           "WHERE balance_after - amount <> balance_before OR position <> position_before + 1 "
           "OR inserted_at < inserted_before")) {
    violations.push_back("account " + row.text(1) + " of tenant " + row.text(0) + ": posting " +
                         row.text(3) + " (entry " + row.text(2) + ") does not follow the one "
                         "before it (its running balance, position or instant)");
  }
  for (const store::Row& row : tx.query(
           "SELECT tenant_id, id FROM journal_entries WHERE reference_type IS NULL "
           "OR reference_id IS NULL")) {
    violations.push_back("entry " + row.text(1) + " of tenant " + row.text(0) +
                         " names nothing that caused it (no reference)");
  }
  for (const store::Row& row : tx.query(
           "SELECT a.tenant_id, a.id, a.postings_count, COUNT(p.position) FROM ledger_accounts a "
           "LEFT JOIN postings p ON p.tenant_id = a.tenant_id AND p.account_id = a.id "
           "WHERE a.surface <> 'system' GROUP BY a.tenant_id, a.id, a.postings_count "
           "HAVING a.postings_count <> COUNT(p.position)")) {
    violations.push_back("account " + row.text(1) + " of tenant " + row.text(0) + " counts " +
                         row.text(2) + " postings but has " + row.text(3));
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
           "SELECT tenant_id, id, balance, held FROM ledger_accounts "
           "WHERE held < 0 OR held > balance OR (surface = 'system' AND held <> 0)")) {
    violations.push_back("account " + row.text(1) + " of tenant " + row.text(0) + " holds " +
                         row.text(3) + " of a balance of " + row.text(2));
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
