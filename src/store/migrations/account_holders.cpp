// Third-party account holders of the ledger.
#include "store/migrations/migrations.hpp"

namespace tesoro::store {

std::vector<Migration> account_holder_migrations() {
  const char* k_by_time =
      "CREATE INDEX account_holders_by_time ON account_holders (tenant_id, inserted_at, id)";
  // external_id may be null (the contract: "string or null, required key"); NULLs never clash
  // in a unique constraint, on either engine.
  std::vector<Statement> nullable_external_id = drop_not_null(
      "account_holders", "external_id",
      "CREATE TABLE account_holders_new (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
      "external_id TEXT, address TEXT NOT NULL, person TEXT NOT NULL, email TEXT, "
      "phone_number TEXT, metadata TEXT, state TEXT NOT NULL, state_reason TEXT, "
      "state_reason_detail TEXT, type TEXT NOT NULL, inserted_at TEXT NOT NULL, "
      "updated_at TEXT NOT NULL, PRIMARY KEY (tenant_id, id), UNIQUE (tenant_id, external_id))",
      {k_by_time});
  return {
      {2,
       "account_holders",
       {
           "CREATE TABLE account_holders (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
           "external_id TEXT NOT NULL, address TEXT NOT NULL, person TEXT NOT NULL, email TEXT, "
           "phone_number TEXT, metadata TEXT, state TEXT NOT NULL, state_reason TEXT, "
           "state_reason_detail TEXT, type TEXT NOT NULL, inserted_at TEXT NOT NULL, "
           "updated_at TEXT NOT NULL, PRIMARY KEY (tenant_id, id), "
           "UNIQUE (tenant_id, external_id))",
           k_by_time,
       }},
      {6, "account_holders_null_external_id", std::move(nullable_external_id)},
  };
}

}  // namespace tesoro::store
