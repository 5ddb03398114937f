#include "store/migrations/migrations.hpp"

namespace tesoro::store {

const std::vector<Migration>& migrations() {
  static const std::vector<Migration> k_migrations = {
      {1,
       "foundation",
       {
           "CREATE TABLE tenants (id TEXT PRIMARY KEY, name TEXT NOT NULL, "
           "environment TEXT NOT NULL, inserted_at TEXT NOT NULL)",
           "CREATE TABLE api_keys (tenant_id TEXT NOT NULL REFERENCES tenants (id), "
           "id TEXT NOT NULL, key_hash TEXT NOT NULL, key_prefix TEXT NOT NULL, "
           "scopes TEXT NOT NULL, environment TEXT NOT NULL, inserted_at TEXT NOT NULL, "
           "revoked_at TEXT, PRIMARY KEY (tenant_id, id))",
           "CREATE UNIQUE INDEX api_keys_by_hash ON api_keys (key_hash)",
           "CREATE UNIQUE INDEX api_keys_by_id ON api_keys (id)",
           "CREATE TABLE oauth_clients (tenant_id TEXT NOT NULL REFERENCES tenants (id), "
           "client_id TEXT NOT NULL, secret_hash TEXT NOT NULL, scopes TEXT NOT NULL, "
           "environment TEXT NOT NULL, inserted_at TEXT NOT NULL, revoked_at TEXT, "
           "PRIMARY KEY (tenant_id, client_id))",
           "CREATE UNIQUE INDEX oauth_clients_by_id ON oauth_clients (client_id)",
           "CREATE TABLE oauth_tokens (tenant_id TEXT NOT NULL REFERENCES tenants (id), "
           "token_hash TEXT NOT NULL, kind TEXT NOT NULL, client_id TEXT NOT NULL, "
           "scopes TEXT NOT NULL, environment TEXT NOT NULL, expires_at BIGINT NOT NULL, "
           "inserted_at TEXT NOT NULL, revoked_at TEXT, PRIMARY KEY (tenant_id, token_hash))",
           "CREATE UNIQUE INDEX oauth_tokens_by_hash ON oauth_tokens (token_hash)",
           "CREATE INDEX oauth_tokens_by_expiry ON oauth_tokens (expires_at)",
           "CREATE TABLE idempotency_keys (tenant_id TEXT NOT NULL, "
           "idempotency_key TEXT NOT NULL, request_hash TEXT NOT NULL, status INTEGER NOT NULL, "
           "content_type TEXT NOT NULL, body TEXT NOT NULL, inserted_at TEXT NOT NULL, "
           "expires_at BIGINT NOT NULL, PRIMARY KEY (tenant_id, idempotency_key))",
           "CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at)",
           "CREATE TABLE events (tenant_id TEXT NOT NULL, id TEXT NOT NULL, type TEXT NOT NULL, "
           "data TEXT NOT NULL, inserted_at TEXT NOT NULL, PRIMARY KEY (tenant_id, id))",
           "CREATE INDEX events_by_time ON events (tenant_id, inserted_at, id)",
       },
       {}},
      {2,
       "account_holders",
       {
           "CREATE TABLE account_holders (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
           "external_id TEXT NOT NULL, address TEXT NOT NULL, person TEXT NOT NULL, email TEXT, "
           "phone_number TEXT, metadata TEXT, state TEXT NOT NULL, state_reason TEXT, "
           "state_reason_detail TEXT, type TEXT NOT NULL, inserted_at TEXT NOT NULL, "
           "updated_at TEXT NOT NULL, PRIMARY KEY (tenant_id, id), "
           "UNIQUE (tenant_id, external_id))",
           "CREATE INDEX account_holders_by_time ON account_holders (tenant_id, inserted_at, id)",
       },
       {}},
      {3,
       "jobs",
       {
           "CREATE TABLE jobs (tenant_id TEXT NOT NULL, id TEXT NOT NULL, kind TEXT NOT NULL, "
           "payload TEXT NOT NULL, run_at BIGINT NOT NULL, attempts INTEGER NOT NULL, "
           "claimed_by TEXT, lease_until BIGINT, inserted_at TEXT NOT NULL, "
           "PRIMARY KEY (tenant_id, id))",
           "CREATE INDEX jobs_due ON jobs (kind, run_at)",
       },
       {}},
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
           "CREATE INDEX postings_by_account ON postings (tenant_id, account_id)",
       },
       {}},
  };
  return k_migrations;
}

}  // namespace tesoro::store
