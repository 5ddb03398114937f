#pragma once
// Console sessions (docs/console.md, docs/adr/0005-console-sessions.md): a sign-in with email
// and password gives a random token, sent back by the browser in an HttpOnly cookie and stored
// only as its SHA-256. A session lasts limits::k_console_session_ttl_seconds of real time, can
// be revoked (sign-out), and stands for its user's tenant with every scope of either surface.
// Its CSRF token is derived from its token (HMAC-SHA256), so nothing more is stored.
//
// Failed sign-ins are rows in the database, so every node counts the same ones: after
// k_console_failures_per_email_max for one email from one address, or
// k_console_failures_per_address_max from one address, within k_console_failure_window_seconds,
// each further attempt from that address waits 2^(failures - max) seconds after the newest failure
// (1, 2, 4, ... at most the window), refused meanwhile (rate_limit_exceeded). Never per email
// alone: a stranger failing with a user's email elsewhere cannot keep the user out. Refused
// attempts are not counted, and a success clears its email's failures from its address. Nothing
// here logs a password, a token or a CSRF token.
#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"
#include "core/time.hpp"
#include "domain/auth/credentials.hpp"
#include "store/store.hpp"

namespace tesoro::console {

struct Session {
  std::string id;  // cses_...: what logs and rate limits name it by
  std::string tenant_id;
  std::string tenant_name;
  std::string environment;  // the tenant's
  std::string user_id;
  std::string user_email;
  time::Micros expires_at = 0;           // real time
  time::Micros clock_offset_micros = 0;  // the tenant's sandbox clock, read with the session
};

struct SignedIn {
  Session session;
  std::string token;  // the cookie's value: shown once, stored only as its hash
};

struct SignInAttempt {
  std::string email;
  std::string password;
  std::string remote_address;
};

// Checks the password outside any write unit (scrypt takes tens of milliseconds), then records
// the failure or creates the session in one. `environment`: the server's; a user of a tenant of
// the other environment cannot sign in here. Errors: invalid_credentials (a wrong email or
// password, or a tenant of the other environment: one answer, no hint which),
// rate_limit_exceeded with Retry-After.
Result<SignedIn> sign_in(store::Store& store, const SignInAttempt& attempt,
                         std::string_view environment, time::Micros now);
// The live session of a cookie token, or expired_token: no such session, signed out,
// expired, or of a tenant of another environment than the server's. One statement (read_single).
Result<Session> find_session(store::Tx& tx, std::string_view token, std::string_view environment,
                             time::Micros now);
// Revokes the session (every node refuses it from the next request on). Revoking twice keeps
// the first revoked_at.
Status sign_out(store::Tx& tx, const Session& session, time::Micros now);
// The session's CSRF token: base64url of HMAC-SHA256 keyed by the session token.
std::string csrf_token(std::string_view session_token);
// The principal a session stands for on one surface: its tenant holding every scope of that
// surface (core: every group at admin), named by the session's id.
auth::Principal principal(const Session& session, auth::Surface surface);
// Deletes at most `limit` rows of each kind that no longer count: failures out of the window,
// and sessions that expired more than limits::k_console_session_retention_seconds ago (a revoked
// one goes with them: every session expires).
std::int64_t sweep(store::Tx& tx, time::Micros now, std::int64_t limit);

}  // namespace tesoro::console
