// Tenants, credentials, idempotency records, and the sandbox clock of each tenant.
#include "store/migrations/migrations.hpp"

namespace tesoro::store {

std::vector<Migration> foundation_migrations() {
  return {
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
       }},
      {5,
       "sandbox_clock",
       {
           // The tenant's clock is real time plus this offset, which only grows (sandbox
           // clock advances); production tenants keep 0.
           "ALTER TABLE tenants ADD COLUMN clock_offset_micros BIGINT NOT NULL DEFAULT 0",
       }},
  };
}

}  // namespace tesoro::store
