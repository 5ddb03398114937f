// The double-entry ledger: accounts, journal entries and their postings.
#include "store/migrations/migrations.hpp"

namespace tesoro::store {

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
  };
}

}  // namespace tesoro::store
