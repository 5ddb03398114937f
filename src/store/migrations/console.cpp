// The console (dashboard): its users, their sessions and the failed sign-ins the rate limit
// counts. Design: domain/console, docs/console.md.
#include "store/migrations/migrations.hpp"

namespace tesoro::store {

std::vector<Migration> console_migrations() {
  return {
      {16,
       "console",
       {
           // A person who signs in to one tenant's console (cusr_). email: lower case, unique
           // across the server (an email signs in to one tenant). password_hash: scrypt in the
           // PHC string format with its parameters and salt (domain/console/passwords.hpp).
           "CREATE TABLE console_users (tenant_id TEXT NOT NULL REFERENCES tenants (id), "
           "id TEXT NOT NULL, email TEXT NOT NULL, password_hash TEXT NOT NULL, "
           "inserted_at TEXT NOT NULL, PRIMARY KEY (tenant_id, id))",
           "CREATE UNIQUE INDEX console_users_by_email ON console_users (email)",
           "CREATE UNIQUE INDEX console_users_by_id ON console_users (id)",
           // A signed-in browser (cses_). token_hash: sha256 of the cookie's token, the only
           // form the token is kept in. expires_at_micros: real time; revoked_at: sign-out.
           "CREATE TABLE console_sessions (tenant_id TEXT NOT NULL REFERENCES tenants (id), "
           "id TEXT NOT NULL, token_hash TEXT NOT NULL, user_id TEXT NOT NULL, "
           "inserted_at TEXT NOT NULL, expires_at_micros BIGINT NOT NULL, revoked_at TEXT, "
           "PRIMARY KEY (tenant_id, id))",
           "CREATE UNIQUE INDEX console_sessions_by_hash ON console_sessions (token_hash)",
           "CREATE INDEX console_sessions_by_expiry ON console_sessions (expires_at_micros)",
           // One failed sign-in (csf_), kept for the rate limit's window: counted by the email
           // tried (lower case, known or not) and by the caller's address. Global, like the
           // credential lookups: the email may name no tenant's user.
           "CREATE TABLE console_sign_in_failures (id TEXT PRIMARY KEY, email TEXT NOT NULL, "
           "remote_address TEXT NOT NULL, failed_at_micros BIGINT NOT NULL)",
           "CREATE INDEX console_sign_in_failures_by_email ON console_sign_in_failures "
           "(email, failed_at_micros)",
           "CREATE INDEX console_sign_in_failures_by_address ON console_sign_in_failures "
           "(remote_address, failed_at_micros)",
           "CREATE INDEX console_sign_in_failures_by_time ON console_sign_in_failures "
           "(failed_at_micros)",
       }},
  };
}

}  // namespace tesoro::store
