#include "domain/console/sessions.hpp"

#include "core/crypto.hpp"
#include "core/ids.hpp"
#include "core/limits.hpp"
#include "domain/console/passwords.hpp"
#include "domain/console/users.hpp"

namespace tesoro::console {
namespace {

constexpr std::string_view k_token_prefix = "cst_";
constexpr std::string_view k_csrf_label = "tesoro console csrf v1";

constexpr time::Micros seconds(std::int64_t count) { return count * time::k_micros_per_second; }

// The user a sign-in names, read before the password is checked.
struct Candidate {
  std::string user_id;
  std::string tenant_id;
  std::string password_hash;
  std::string environment;
};

// When sign-ins are refused (rate_limit_exceeded): the seconds until they are allowed again, or
// nullopt. Past `max` failures in the window, each further attempt waits 2^(failures - max) seconds
// after the newest failure (1, 2, 4, ... at most the window): guessing slows down at once and more
// with every failure, while a person who mistyped waits a second.
std::optional<long> seconds_refused(store::Tx& tx, const std::string& condition,
                                    const store::Params& values, std::int64_t max,
                                    time::Micros now) {
  const time::Micros window = seconds(limits::k_console_failure_window_seconds);
  store::Params params = values;
  params.push_back(now - window);
  auto counted = tx.query_one(
      "SELECT COUNT(*), MAX(failed_at_micros) FROM console_sign_in_failures WHERE " + condition +
          " AND failed_at_micros > ?",
      params);
  const std::int64_t failures = counted ? counted->integer(0) : 0;
  if (failures < max) return std::nullopt;
  const std::int64_t doublings = std::min<std::int64_t>(failures - max, 30);
  const time::Micros delay = std::min(seconds(std::int64_t{1} << doublings), window);
  const time::Micros allowed_at = counted->integer(1) + delay;
  if (now >= allowed_at) return std::nullopt;
  return std::max<long>(1, static_cast<long>((allowed_at - now + seconds(1) - 1) / seconds(1)));
}

// The later of the two limits, or nullopt when neither refuses. Failures count per email and
// address together, and per address: never per email alone, so that nobody can keep a user out
// by failing with their email from elsewhere.
std::optional<long> refusal(store::Tx& tx, const std::string& email, const std::string& address,
                            time::Micros now) {
  auto by_email = seconds_refused(tx, "email = ? AND remote_address = ?", {email, address},
                                  limits::k_console_failures_per_email_max, now);
  auto by_address = seconds_refused(tx, "remote_address = ?", {address},
                                    limits::k_console_failures_per_address_max, now);
  if (!by_email) return by_address;
  if (!by_address) return by_email;
  return std::max(*by_email, *by_address);
}

Error too_many_attempts(long retry_after_seconds) {
  Error error = errors::rate_limited(retry_after_seconds);
  error.errors.front().message =
      "too many failed sign-ins; try again in " + std::to_string(retry_after_seconds) + " seconds";
  error.log_fields.emplace_back("auth_reason", "console_sign_in_limited");
  return error;
}

Error wrong_credentials(std::string reason) {
  Error error = errors::of(ErrorCode::invalid_credentials);
  error.log_fields.emplace_back("auth_reason", std::move(reason));
  return error;
}

Error no_session(std::string reason) {
  Error error =
      errors::of(ErrorCode::expired_token, std::nullopt, "no live console session: sign in again");
  error.message = "no live console session";  // the code's summary speaks of a header
  error.log_fields.emplace_back("auth_reason", std::move(reason));
  return error;
}

// What the write unit of a sign-in decided.
struct Outcome {
  std::optional<SignedIn> signed_in;
  std::optional<long> refused_for_seconds;
};

Outcome record(store::Tx& tx, const std::optional<Candidate>& candidate, bool password_ok,
               const std::string& email, const std::string& address, time::Micros now) {
  // PostgreSQL: one sign-in of a user at a time, so parallel guesses see each other's failures.
  if (candidate) {
    tx.query(std::string("SELECT id FROM console_users WHERE id = ?") + std::string(tx.lock_rows()),
             {candidate->user_id});
  }
  if (auto refused = refusal(tx, email, address, now)) return {std::nullopt, refused};
  if (!password_ok) {
    tx.exec(
        "INSERT INTO console_sign_in_failures (id, email, remote_address, failed_at_micros) "
        "VALUES (?, ?, ?, ?)",
        {ids::generate("csf"), email, address, now});
    return {};
  }
  tx.exec("DELETE FROM console_sign_in_failures WHERE email = ? AND remote_address = ?",
          {email, address});
  SignedIn signed_in;
  signed_in.token =
      std::string(k_token_prefix) + crypto::random_token(limits::k_console_session_token_bytes);
  auto tenant = tx.query_one("SELECT name, clock_offset_micros FROM tenants WHERE id = ?",
                             {candidate->tenant_id});
  Session& session = signed_in.session;
  session = {ids::generate("cses"),
             candidate->tenant_id,
             tenant->text(0),
             candidate->environment,
             candidate->user_id,
             email,
             now + seconds(limits::k_console_session_ttl_seconds),
             tenant->integer(1)};
  tx.exec(
      "INSERT INTO console_sessions (tenant_id, id, token_hash, user_id, inserted_at, "
      "expires_at_micros) VALUES (?, ?, ?, ?, ?, ?)",
      {session.tenant_id, session.id, crypto::sha256_hex(signed_in.token), session.user_id,
       time::iso(now), session.expires_at});
  return {std::move(signed_in), std::nullopt};
}

// A token of our shape: the prefix and the base64url of k_console_session_token_bytes.
bool well_formed(std::string_view token) {
  return token.starts_with(k_token_prefix) &&
         crypto::is_random_token(token.substr(k_token_prefix.size()),
                                 limits::k_console_session_token_bytes);
}

}  // namespace

Result<SignedIn> sign_in(store::Store& store, const SignInAttempt& attempt,
                         std::string_view environment, time::Micros now) {
  const std::string email = normalise_email(attempt.email);
  const std::string& address = attempt.remote_address;
  struct Found {
    std::optional<Candidate> candidate;
    std::optional<long> refused_for_seconds;
  };
  auto found = store.read<Found>([&](store::Tx& tx) -> Result<Found> {
    Found out;
    out.refused_for_seconds = refusal(tx, email, address, now);
    auto row = tx.query_one(
        "SELECT u.id, u.tenant_id, u.password_hash, t.environment FROM console_users u "
        "JOIN tenants t ON t.id = u.tenant_id WHERE u.email = ?",
        {email});
    if (row) out.candidate = Candidate{row->text(0), row->text(1), row->text(2), row->text(3)};
    return out;
  });
  if (!found) return std::move(found).error();
  if (found->refused_for_seconds) return too_many_attempts(*found->refused_for_seconds);
  const std::optional<Candidate>& candidate = found->candidate;
  // An unknown email costs the same hash as a known one: the answer's time says nothing.
  bool password_ok =
      verify_password(attempt.password, candidate ? candidate->password_hash : decoy_hash()) &&
      candidate && candidate->environment == environment;
  auto outcome = store.write<Outcome>([&](store::Tx& tx) -> Result<Outcome> {
    return record(tx, candidate, password_ok, email, address, now);
  });
  if (!outcome) return std::move(outcome).error();
  if (outcome->refused_for_seconds) return too_many_attempts(*outcome->refused_for_seconds);
  if (!outcome->signed_in) {
    if (!candidate) return wrong_credentials("console_unknown_email");
    if (candidate->environment != environment) {
      return wrong_credentials("console_other_environment " + candidate->user_id);
    }
    return wrong_credentials("console_wrong_password " + candidate->user_id);
  }
  return std::move(*outcome->signed_in);
}

Result<Session> find_session(store::Tx& tx, std::string_view token, std::string_view environment,
                             time::Micros now) {
  if (!well_formed(token)) return no_session("console_malformed_token");
  auto row = tx.query_one(
      "SELECT s.id, s.tenant_id, t.name, t.environment, s.user_id, u.email, "
      "s.expires_at_micros, t.clock_offset_micros, s.revoked_at FROM console_sessions s "
      "JOIN console_users u ON u.id = s.user_id JOIN tenants t ON t.id = s.tenant_id "
      "WHERE s.token_hash = ?",
      {crypto::sha256_hex(token)});
  if (!row) return no_session("console_unknown_session");
  Session session{row->text(0), row->text(1), row->text(2),    row->text(3),
                  row->text(4), row->text(5), row->integer(6), row->integer(7)};
  if (!row->is_null(8)) return no_session("console_signed_out " + session.id);
  if (session.expires_at <= now) return no_session("console_expired " + session.id);
  if (session.environment != environment) {
    return no_session("console_other_environment " + session.id);
  }
  return session;
}

Status sign_out(store::Tx& tx, const Session& session, time::Micros now) {
  tx.exec(
      "UPDATE console_sessions SET revoked_at = ? WHERE tenant_id = ? AND id = ? "
      "AND revoked_at IS NULL",
      {time::iso(now), session.tenant_id, session.id});
  return ok_status();
}

std::string csrf_token(std::string_view session_token) {
  return crypto::base64url(crypto::hmac_sha256(session_token, k_csrf_label));
}

auth::Principal principal(const Session& session, auth::Surface surface) {
  auth::Principal out;
  out.tenant_id = session.tenant_id;
  out.credential_id = session.id;
  out.environment = session.environment;
  out.clock_offset_micros = session.clock_offset_micros;
  if (surface == auth::Surface::core) {
    out.kind = auth::CredentialKind::api_key;
    out.scopes = auth::all_core_admin_scopes();
  } else {
    out.kind = auth::CredentialKind::oauth_token;
    out.scopes = auth::participant_scopes();
  }
  return out;
}

std::int64_t sweep(store::Tx& tx, time::Micros now, std::int64_t limit) {
  std::int64_t removed = tx.exec(
      "DELETE FROM console_sign_in_failures WHERE id IN (SELECT id FROM "
      "console_sign_in_failures WHERE failed_at_micros < ? LIMIT ?)",
      {now - seconds(limits::k_console_failure_window_seconds), limit});
  removed += tx.exec(
      "DELETE FROM console_sessions WHERE (tenant_id, id) IN (SELECT tenant_id, id FROM "
      "console_sessions WHERE expires_at_micros < ? LIMIT ?)",
      {now - seconds(limits::k_console_session_retention_seconds), limit});
  return removed;
}

}  // namespace tesoro::console
