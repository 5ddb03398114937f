#include "domain/ledger/accounts.hpp"

#include <boost/json.hpp>

#include "core/crypto.hpp"
#include "core/ids.hpp"
#include "core/limits.hpp"
#include "core/money.hpp"
#include "domain/ledger/journal.hpp"
#include "store/bulk.hpp"
#include "store/pages.hpp"

namespace tesoro::ledger {
namespace {

namespace json = boost::json;


constexpr const char* k_columns =
    "id, surface, name, number, type, currency, state, account_holder_id, role, beneficiary, "
    "balance, balance_updated_at, inserted_at, updated_at, held";

const char* surface_name(Surface surface) {
  switch (surface) {
    case Surface::core: return "core";
    case Surface::participant: return "participant";
    case Surface::card: return "card";
  }
  return "core";
}

// Ten digits, each uniform.
std::string random_number() { return crypto::random_string("0123456789", 10); }

std::string encode_beneficiary(const Beneficiary& b) {
  return json::serialize(json::object{{"document_number", b.document_number},
                                      {"document_type", b.document_type},
                                      {"full_name", b.full_name},
                                      {"type", b.type}});
}

Beneficiary decode_beneficiary(const std::string& text) {
  json::value value = json::parse(text);
  const json::object& o = value.as_object();
  auto field = [&](const char* key) { return std::string(o.at(key).as_string()); };
  return {field("document_number"), field("document_type"), field("full_name"), field("type")};
}

Account from_row(const store::Row& row) {
  Account account;
  account.id = row.text(0);
  const std::string surface = row.text(1);
  account.surface = surface == "participant" ? Surface::participant
                    : surface == "card"      ? Surface::card
                                             : Surface::core;
  account.name = row.text(2);
  account.number = row.text(3);
  account.type = row.text(4);
  account.currency = row.text(5);
  account.state = row.text(6);
  account.account_holder_id = row.optional_text(7);
  account.role = row.optional_text(8);
  if (auto beneficiary = row.optional_text(9)) account.beneficiary = decode_beneficiary(*beneficiary);
  account.balance_minor = row.integer(10);
  account.balance_updated_at = row.text(11);
  account.inserted_at = row.text(12);
  account.updated_at = row.text(13);
  account.held_minor = row.integer(14);
  return account;
}

Result<Account> insert_account(store::Tx& tx, const std::string& tenant_id, Account account) {
  for (int attempt = 0; attempt < limits::k_random_number_attempts; ++attempt) {
    account.number = random_number();
    std::int64_t inserted = tx.exec(
        "INSERT INTO ledger_accounts (tenant_id, id, surface, name, number, type, currency, state, "
        "account_holder_id, role, beneficiary, balance, balance_updated_at, inserted_at, "
        "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?) "
        "ON CONFLICT (tenant_id, number) DO NOTHING",
        {tenant_id, account.id, std::string(surface_name(account.surface)), account.name,
         account.number, account.type, account.currency, account.state,
         account.account_holder_id ? store::Value(*account.account_holder_id) : store::Value(nullptr),
         account.role ? store::Value(*account.role) : store::Value(nullptr),
         account.beneficiary ? store::Value(encode_beneficiary(*account.beneficiary))
                             : store::Value(nullptr),
         account.balance_updated_at, account.inserted_at, account.updated_at});
    if (inserted == 1) return account;
  }
  return errors::internal();
}

}  // namespace

Result<Account> open_account(store::Tx& tx, const std::string& tenant_id, const NewAccount& input,
                             time::Micros now) {
  if (input.account_holder_id) {
    auto holder = tx.query_one("SELECT 1 FROM account_holders WHERE tenant_id = ? AND id = ?",
                               {tenant_id, *input.account_holder_id});
    if (!holder) {
      return errors::of(ErrorCode::item_not_found, "account_holder_id", "account holder not found");
    }
  }
  Account account;
  account.id = ids::generate("acc");
  account.surface = Surface::core;
  account.name = input.name;
  account.type = input.type;
  account.currency = input.currency;
  account.state = "active";
  account.account_holder_id = input.account_holder_id;
  account.balance_updated_at = account.inserted_at = account.updated_at = time::iso(now);
  return insert_account(tx, tenant_id, std::move(account));
}

Result<Account> open_tenant_account(store::Tx& tx, const std::string& tenant_id,
                                    const NewTenantAccount& input, time::Micros now) {
  Account account;
  account.id = ids::generate("bbtacc");
  account.surface = Surface::participant;
  account.name = input.role + " account";
  account.type = input.type;
  account.currency = input.currency;
  account.state = "active";
  account.role = input.role;
  account.beneficiary = input.beneficiary;
  account.balance_updated_at = account.inserted_at = account.updated_at = time::iso(now);
  return insert_account(tx, tenant_id, std::move(account));
}

Result<Account> open_card_account(store::Tx& tx, const std::string& tenant_id,
                                  const std::string& card_id, const std::string& currency,
                                  time::Micros now) {
  Account account;
  account.id = ids::generate("acc");
  account.surface = Surface::card;
  account.name = "prepaid balance of " + card_id;
  account.type = "prepaid_card";
  account.currency = currency;
  account.state = "active";
  account.balance_updated_at = account.inserted_at = account.updated_at = time::iso(now);
  return insert_account(tx, tenant_id, std::move(account));
}

Result<Account> get_account(store::Tx& tx, const std::string& tenant_id, const std::string& id,
                            Surface surface) {
  auto row = tx.query_one(std::string("SELECT ") + k_columns +
                              " FROM ledger_accounts WHERE tenant_id = ? AND id = ? AND surface = ?",
                          {tenant_id, id, std::string(surface_name(surface))});
  if (!row) {
    return surface == Surface::participant ? errors::of(ErrorCode::tenant_account_not_found)
                                           : errors::item_not_found("account");
  }
  return from_row(*row);
}

Result<Account> get_core_or_card_account(store::Tx& tx, const std::string& tenant_id,
                                         const std::string& id) {
  auto row = tx.query_one(std::string("SELECT ") + k_columns +
                              " FROM ledger_accounts WHERE tenant_id = ? AND id = ? "
                              "AND surface IN ('core', 'card')",
                          {tenant_id, id});
  if (!row) return errors::item_not_found("account");
  return from_row(*row);
}

std::map<std::string, Account> get_accounts(store::Tx& tx, const std::string& tenant_id,
                                            const std::vector<std::string>& ids, Surface surface) {
  std::map<std::string, Account> found;
  store::query_in(tx,
                  std::string("SELECT ") + k_columns +
                      " FROM ledger_accounts WHERE tenant_id = ? AND surface = ? AND id",
                  {tenant_id, std::string(surface_name(surface))}, ids, "",
                  [&](const store::Row& row) {
                    Account account = from_row(row);
                    std::string id = account.id;
                    found.emplace(std::move(id), std::move(account));
                  });
  return found;
}

Result<PageOf<Account>> list_accounts(store::Tx& tx, const std::string& tenant_id,
                                      const std::optional<std::string>& account_holder_id,
                                      std::int64_t offset, std::int64_t limit) {
  if (account_holder_id) {
    return store::query_page<Account>(
        tx, k_columns,
        " FROM ledger_accounts WHERE tenant_id = ? AND surface = 'core' AND account_holder_id = ?",
        {tenant_id, *account_holder_id}, "inserted_at DESC, id DESC", offset, limit, from_row);
  }
  return store::query_page<Account>(tx, k_columns,
                                    " FROM ledger_accounts WHERE tenant_id = ? AND surface = 'core'",
                                    {tenant_id}, "inserted_at DESC, id DESC", offset, limit,
                                    from_row);
}

Result<std::vector<Account>> list_tenant_accounts(store::Tx& tx, const std::string& tenant_id,
                                                  const TenantAccountFilter& filter) {
  std::string sql = std::string("SELECT ") + k_columns +
                    " FROM ledger_accounts WHERE tenant_id = ? AND surface = 'participant'";
  store::Params params = {tenant_id};
  if (filter.type) {
    sql += " AND type = ?";
    params.emplace_back(*filter.type);
  }
  if (filter.number) {
    sql += " AND number = ?";
    params.emplace_back(*filter.number);
  }
  if (filter.role && *filter.role != "all") {
    sql += " AND role = ?";
    params.emplace_back(*filter.role);
  }
  if (filter.state) {
    sql += " AND state = ?";
    params.emplace_back(*filter.state);
  }
  sql += " ORDER BY inserted_at DESC, id DESC";
  std::vector<Account> accounts;
  for (const store::Row& row : tx.query(sql, params)) accounts.push_back(from_row(row));
  return accounts;
}

Result<Account> fund_account(store::Tx& tx, const std::string& tenant_id, const std::string& id,
                             Surface surface, std::int64_t amount_minor,
                             const std::string& currency, const std::string& description,
                             time::Micros now) {
  auto account = get_account(tx, tenant_id, id, surface);
  if (!account) return account;
  if (account->currency != currency) {
    return currency_mismatch(account->currency);
  }
  auto debit = money::negate(amount_minor);
  if (amount_minor <= 0 || !debit) {
    return errors::validation("must be a positive amount", "amount.amount");
  }
  std::string funding = system_account(tx, tenant_id, SystemRole::external_funding, currency, now);
  // A funding is no object of its own: its entry names it.
  auto entry = post_entry(tx, tenant_id, "sandbox_funding", description,
                          {{funding, *debit, currency}, {id, amount_minor, currency}},
                          {"sandbox_funding", ""}, now);
  if (!entry) return std::move(entry).error();
  // What post_entry wrote to the row: its balance after the credit, stamped now.
  account->balance_minor = entry->balances_after[1];
  account->balance_updated_at = account->updated_at = time::iso(now);
  return account;
}

}  // namespace tesoro::ledger
