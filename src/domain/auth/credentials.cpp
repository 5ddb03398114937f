#include "domain/auth/credentials.hpp"

#include <algorithm>

#include "core/crypto.hpp"
#include "core/ids.hpp"
#include "core/limits.hpp"

namespace tesoro::auth {
namespace {

bool has_scope(const std::vector<std::string>& scopes, std::string_view scope) {
  return std::find(scopes.begin(), scopes.end(), scope) != scopes.end();
}

std::optional<Level> parse_level(std::string_view text) {
  if (text == "read") return Level::read;
  if (text == "write") return Level::write;
  if (text == "admin") return Level::admin;
  return std::nullopt;
}

// A client may ask for any of its scopes, or the :readonly form of one of them.
bool client_may_request(const std::vector<std::string>& granted, std::string_view scope) {
  if (has_scope(granted, scope)) return true;
  constexpr std::string_view k_readonly = ":readonly";
  if (scope.size() > k_readonly.size() && scope.ends_with(k_readonly)) {
    return has_scope(granted, scope.substr(0, scope.size() - k_readonly.size()));
  }
  return false;
}

Result<TokenGrant> issue_tokens(store::Tx& tx, std::string_view tenant_id,
                                std::string_view client_id, std::vector<std::string> scopes,
                                std::string_view environment, time::Micros now) {
  TokenGrant grant;
  grant.access_token = "at_" + crypto::random_token(limits::k_secret_bytes);
  grant.refresh_token = "rt_" + crypto::random_token(limits::k_secret_bytes);
  grant.expires_in_seconds = limits::k_access_token_ttl_seconds;
  grant.scopes = std::move(scopes);
  const std::string scope_text = join_scopes(grant.scopes, ' ');
  const std::string inserted_at = time::iso(now);
  const char* insert =
      "INSERT INTO oauth_tokens (tenant_id, token_hash, kind, client_id, scopes, environment, "
      "expires_at, inserted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
  tx.exec(insert, {std::string(tenant_id), crypto::sha256_hex(grant.access_token),
                   std::string("access"), std::string(client_id), scope_text,
                   std::string(environment),
                   now + limits::k_access_token_ttl_seconds * time::k_micros_per_second,
                   inserted_at});
  tx.exec(insert, {std::string(tenant_id), crypto::sha256_hex(grant.refresh_token),
                   std::string("refresh"), std::string(client_id), scope_text,
                   std::string(environment),
                   now + limits::k_refresh_token_ttl_seconds * time::k_micros_per_second,
                   inserted_at});
  return grant;
}

// Narrows `available` to the requested space-separated scopes; no request means all of them.
Result<std::vector<std::string>> requested_scopes(const std::vector<std::string>& available,
                                                  const std::optional<std::string>& scope) {
  if (!scope) return available;
  std::vector<std::string> wanted = split_scopes(*scope, ' ');
  if (wanted.empty()) return oauth_error(ErrorCode::invalid_scope, "scope is empty");
  for (const std::string& one : wanted) {
    if (!is_participant_scope(one) || !client_may_request(available, one)) {
      return oauth_error(ErrorCode::invalid_scope, "scope not granted to this client: " + one);
    }
  }
  return wanted;
}

}  // namespace

const std::vector<std::string>& core_groups() {
  static const std::vector<std::string> k_groups = {"ledger", "cards", "spending_controls",
                                                    "payouts", "webhooks"};
  return k_groups;
}

bool is_core_scope(std::string_view scope) {
  auto colon = scope.find(':');
  if (colon == std::string_view::npos) return false;
  return has_scope(core_groups(), scope.substr(0, colon)) &&
         parse_level(scope.substr(colon + 1)).has_value();
}

std::vector<std::string> all_core_admin_scopes() {
  std::vector<std::string> scopes;
  for (const std::string& group : core_groups()) scopes.push_back(group + ":admin");
  return scopes;
}

const std::vector<std::string>& participant_scopes() {
  static const std::vector<std::string> k_scopes = {
      "collections",         "collections:readonly",        "outgoing_transfers",
      "outgoing_transfers:readonly", "target_resolutions",  "target_resolutions:readonly",
      "tenant_accounts",     "tenant_accounts:readonly",    "webhooks"};
  return k_scopes;
}

std::string_view level_name(Level level) {
  switch (level) {
    case Level::read: return "read";
    case Level::write: return "write";
    case Level::admin: return "admin";
  }
  return "admin";
}

bool is_participant_scope(std::string_view scope) { return has_scope(participant_scopes(), scope); }

bool core_allows(const Principal& principal, std::string_view group, Level needed) {
  if (principal.kind != CredentialKind::api_key) return false;
  for (const std::string& scope : principal.scopes) {
    auto colon = scope.find(':');
    if (colon == std::string::npos || std::string_view(scope).substr(0, colon) != group) continue;
    auto level = parse_level(std::string_view(scope).substr(colon + 1));
    if (level && *level >= needed) return true;
  }
  return false;
}

bool participant_allows(const Principal& principal, std::string_view scope) {
  if (principal.kind != CredentialKind::oauth_token) return false;
  return client_may_request(principal.scopes, scope);
}

std::vector<std::string> split_scopes(std::string_view text, char separator) {
  std::vector<std::string> scopes;
  std::size_t at = 0;
  while (at <= text.size()) {
    std::size_t end = text.find(separator, at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view one = text.substr(at, end - at);
    while (!one.empty() && one.front() == ' ') one.remove_prefix(1);
    while (!one.empty() && one.back() == ' ') one.remove_suffix(1);
    if (!one.empty() && !has_scope(scopes, one)) scopes.emplace_back(one);
    at = end + 1;
  }
  return scopes;
}

std::string join_scopes(const std::vector<std::string>& scopes, char separator) {
  std::string out;
  for (const std::string& scope : scopes) {
    if (!out.empty()) out += separator;
    out += scope;
  }
  return out;
}

Result<std::string> create_tenant(store::Tx& tx, std::string_view name,
                                  std::string_view environment, time::Micros now) {
  if (name.empty() || name.size() > limits::k_string_max_chars) {
    return errors::validation(
        "tenant name must have 1 to " + std::to_string(limits::k_string_max_chars) + " characters",
        "name");
  }
  if (environment != "sandbox" && environment != "production") {
    return errors::validation("environment must be sandbox or production", "environment");
  }
  std::string id = ids::generate("ten");
  tx.exec("INSERT INTO tenants (id, name, environment, inserted_at) VALUES (?, ?, ?, ?)",
          {id, std::string(name), std::string(environment), time::iso(now)});
  return id;
}

bool tenant_exists(store::Tx& tx, std::string_view tenant_id) {
  return tx.query_one("SELECT 1 FROM tenants WHERE id = ?", {std::string(tenant_id)}).has_value();
}

std::vector<TenantSummary> list_tenants(store::Tx& tx) {
  std::vector<TenantSummary> tenants;
  for (const store::Row& row : tx.query(
           "SELECT id, name, environment, inserted_at FROM tenants ORDER BY inserted_at, id")) {
    tenants.push_back({row.text(0), row.text(1), row.text(2), row.text(3)});
  }
  return tenants;
}

bool has_tenants_locked(store::Tx& tx) {
  if (tx.engine() == store::Engine::postgres) tx.query("SELECT pg_advisory_xact_lock(7302)");
  return tx.query_one("SELECT COUNT(*) FROM tenants")->integer(0) > 0;
}

Result<CreatedKey> create_api_key(store::Tx& tx, std::string_view tenant_id,
                                  const std::vector<std::string>& scopes, time::Micros now) {
  auto tenant = tx.query_one("SELECT environment FROM tenants WHERE id = ?",
                             {std::string(tenant_id)});
  if (!tenant) return errors::item_not_found("tenant");
  if (scopes.empty()) return errors::validation("at least one scope is required", "scopes");
  for (const std::string& scope : scopes) {
    if (!is_core_scope(scope)) {
      return errors::validation("unknown scope " + scope + " (want <group>:<read|write|admin>)",
                                "scopes");
    }
  }
  std::string environment = tenant->text(0);
  CreatedKey key;
  key.id = ids::generate("key");
  std::string random = crypto::random_token(limits::k_secret_bytes);
  key.api_key = "sk_" + environment + "_" + random;
  key.scopes = scopes;
  key.key_prefix = "sk_" + environment + "_" + random.substr(0, 4);
  key.environment = environment;
  tx.exec("INSERT INTO api_keys (tenant_id, id, key_hash, key_prefix, scopes, environment, "
          "inserted_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
          {std::string(tenant_id), key.id, crypto::sha256_hex(key.api_key), key.key_prefix,
           join_scopes(scopes, ','), environment, time::iso(now)});
  return key;
}

namespace {

constexpr const char* k_key_columns =
    "id, key_prefix, scopes, environment, inserted_at, revoked_at";

KeySummary key_summary(const store::Row& row) {
  return {row.text(0), row.text(1), split_scopes(row.text(2), ','), row.text(3), row.text(4),
          row.optional_text(5)};
}

constexpr const char* k_client_columns =
    "client_id, scopes, environment, inserted_at, revoked_at";

ClientSummary client_summary(const store::Row& row) {
  return {row.text(0), split_scopes(row.text(1), ' '), row.text(2), row.text(3),
          row.optional_text(4)};
}

// `table`'s row of `id_column` = id, within `tenant_id` unless it is empty.
std::optional<store::Row> find_credential(store::Tx& tx, const char* table, const char* columns,
                                          const char* id_column, std::string_view id,
                                          std::string_view tenant_id) {
  std::string sql = std::string("SELECT ") + columns + " FROM " + table + " WHERE " + id_column +
                    " = ?";
  store::Params params = {std::string(id)};
  if (!tenant_id.empty()) {
    sql += " AND tenant_id = ?";
    params.emplace_back(std::string(tenant_id));
  }
  return tx.query_one(sql, params);
}

}  // namespace

Result<std::vector<KeySummary>> list_api_keys(store::Tx& tx, std::string_view tenant_id) {
  if (!tenant_exists(tx, tenant_id)) return errors::item_not_found("tenant");
  std::vector<KeySummary> keys;
  for (const store::Row& row :
       tx.query(std::string("SELECT ") + k_key_columns +
                    " FROM api_keys WHERE tenant_id = ? ORDER BY inserted_at, id",
                {std::string(tenant_id)})) {
    keys.push_back(key_summary(row));
  }
  return keys;
}

Result<KeySummary> revoke_api_key(store::Tx& tx, std::string_view key_id, time::Micros now,
                                  std::string_view tenant_id) {
  auto found = find_credential(tx, "api_keys", k_key_columns, "id", key_id, tenant_id);
  if (!found) return errors::item_not_found("api key");
  KeySummary key = key_summary(*found);
  if (!key.revoked_at) {
    key.revoked_at = time::iso(now);
    tx.exec("UPDATE api_keys SET revoked_at = ? WHERE id = ?", {*key.revoked_at, key.id});
  }
  return key;
}

Result<CreatedClient> create_client(store::Tx& tx, std::string_view tenant_id,
                                    const std::vector<std::string>& scopes, time::Micros now) {
  auto tenant = tx.query_one("SELECT environment FROM tenants WHERE id = ?",
                             {std::string(tenant_id)});
  if (!tenant) return errors::item_not_found("tenant");
  if (scopes.empty()) return errors::validation("at least one scope is required", "scopes");
  for (const std::string& scope : scopes) {
    if (!is_participant_scope(scope)) {
      return errors::validation("unknown participant scope " + scope, "scopes");
    }
  }
  CreatedClient client;
  client.client_id = ids::generate("cli");
  client.client_secret = "cs_" + crypto::random_token(limits::k_secret_bytes);
  client.scopes = scopes;
  tx.exec("INSERT INTO oauth_clients (tenant_id, client_id, secret_hash, scopes, environment, "
          "inserted_at) VALUES (?, ?, ?, ?, ?, ?)",
          {std::string(tenant_id), client.client_id, crypto::sha256_hex(client.client_secret),
           join_scopes(scopes, ' '), tenant->text(0), time::iso(now)});
  return client;
}

Result<std::vector<ClientSummary>> list_clients(store::Tx& tx, std::string_view tenant_id) {
  if (!tenant_exists(tx, tenant_id)) return errors::item_not_found("tenant");
  std::vector<ClientSummary> clients;
  for (const store::Row& row :
       tx.query(std::string("SELECT ") + k_client_columns +
                    " FROM oauth_clients WHERE tenant_id = ? ORDER BY inserted_at, client_id",
                {std::string(tenant_id)})) {
    clients.push_back(client_summary(row));
  }
  return clients;
}

Result<ClientSummary> revoke_client(store::Tx& tx, std::string_view client_id, time::Micros now,
                                    std::string_view tenant_id) {
  auto found =
      find_credential(tx, "oauth_clients", k_client_columns, "client_id", client_id, tenant_id);
  if (!found) return errors::item_not_found("OAuth client");
  ClientSummary client = client_summary(*found);
  if (!client.revoked_at) {
    client.revoked_at = time::iso(now);
    tx.exec("UPDATE oauth_clients SET revoked_at = ? WHERE client_id = ?",
            {*client.revoked_at, client.client_id});
  }
  return client;
}

namespace {

struct RefusalText {
  const char* log_reason;
  const char* core_message;
  const char* participant_message;
};

const RefusalText& refusal_text(Refusal refusal) {
  static const RefusalText k_texts[] = {
      {"no_header", "no credential: send Authorization: Bearer <API key>",
       "no credential: send Authorization: Bearer <access token>"},
      {"other_scheme", "no bearer credential: send Authorization: Bearer <API key>",
       "no bearer credential: send Authorization: Bearer <access token>"},
      {"malformed", "the credential is not an API key (sk_<environment>_...)",
       "the credential is not an access token (at_...)"},
      {"unknown", "unknown API key", "unknown access token"},
      {"revoked", "the API key was revoked", "the access token or its OAuth client was revoked"},
      {"expired", "the API key expired", "the access token expired; request a new one"},
      {"wrong_surface",
       "an OAuth access token is for the participant API (/api/v1); the core API takes an API key",
       "an API key is for the core API (/v1); the participant API takes an OAuth access token"},
      {"other_environment", "the API key belongs to another environment than this server's",
       "the access token belongs to another environment than this server's"},
  };
  return k_texts[static_cast<std::size_t>(refusal)];
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  }
  return out;
}

Error unauthenticated(Surface surface, Refusal refusal, std::string credential) {
  const RefusalText& text = refusal_text(refusal);
  bool participant = surface == Surface::participant;
  Error error = errors::of(participant && refusal == Refusal::no_header
                               ? ErrorCode::missing_authorization_header
                               : ErrorCode::expired_token,
                           std::nullopt,
                           participant ? text.participant_message : text.core_message);
  // RFC 6750 section 3.1: no error code when the request carried no bearer credential at all.
  bool sent_bearer = refusal != Refusal::no_header && refusal != Refusal::other_scheme;
  error.challenge =
      Challenge{Challenge::Scheme::bearer,
                sent_bearer ? Challenge::TokenError::invalid_token : Challenge::TokenError::none,
                ""};
  error.log_fields.emplace_back("auth_reason", text.log_reason);
  if (!credential.empty()) error.log_fields.emplace_back("credential", std::move(credential));
  return error;
}

namespace {

constexpr const char* k_api_key_lookup =
    "SELECT k.tenant_id, k.id, k.scopes, k.environment, k.revoked_at, k.key_prefix, "
    "t.clock_offset_micros, t.authorization_endpoints FROM api_keys k "
    "JOIN tenants t ON t.id = k.tenant_id WHERE k.key_hash = ?";

constexpr const char* k_access_token_lookup =
    "SELECT t.tenant_id, t.client_id, t.scopes, t.environment, t.expires_at, t.revoked_at, "
    "c.revoked_at, n.clock_offset_micros FROM oauth_tokens t JOIN oauth_clients c "
    "ON c.tenant_id = t.tenant_id AND c.client_id = t.client_id "
    "JOIN tenants n ON n.id = t.tenant_id WHERE t.token_hash = ? AND t.kind = 'access'";

// The refusal of a credential before any lookup: the other surface's, or not one at all.
std::optional<Error> refused_by_form(Surface surface, std::string_view credential) {
  const bool core = surface == Surface::core;
  const std::string_view own = core ? "sk_" : "at_";
  const std::string_view other = core ? "at_" : "sk_";
  if (credential.starts_with(other)) {
    return unauthenticated(surface, Refusal::wrong_surface, credential_hint(credential));
  }
  if (!credential.starts_with(own)) {
    return unauthenticated(surface, Refusal::malformed, credential_hint(credential));
  }
  return std::nullopt;
}

Result<Principal> api_key_principal(const std::optional<store::Row>& row,
                                    std::string_view api_key, std::string_view environment) {
  auto refuse = [](Refusal refusal, std::string credential) {
    return unauthenticated(Surface::core, refusal, std::move(credential));
  };
  if (!row) return refuse(Refusal::unknown, credential_hint(api_key));
  std::string known = row->text(1) + " " + row->text(5);  // key id and display prefix
  if (row->text(3) != environment) return refuse(Refusal::other_environment, known);
  if (!row->is_null(4)) return refuse(Refusal::revoked, known);
  return Principal{row->text(0),         row->text(1), CredentialKind::api_key,
                   split_scopes(row->text(2), ','), row->text(3), row->text(5),
                   row->integer(6),       row->integer(7) > 0};
}

Result<Principal> access_token_principal(const std::optional<store::Row>& row,
                                         std::string_view token, std::string_view environment,
                                         time::Micros now) {
  auto refuse = [](Refusal refusal, std::string credential) {
    return unauthenticated(Surface::participant, refusal, std::move(credential));
  };
  if (!row) return refuse(Refusal::unknown, credential_hint(token));
  std::string client_id = row->text(1);
  if (row->text(3) != environment) return refuse(Refusal::other_environment, client_id);
  if (!row->is_null(5) || !row->is_null(6)) return refuse(Refusal::revoked, client_id);
  if (row->integer(4) <= now) return refuse(Refusal::expired, client_id);
  return Principal{row->text(0), client_id,    CredentialKind::oauth_token,
                   split_scopes(row->text(2), ' '), row->text(3), "", row->integer(7)};
}

}  // namespace

std::string credential_hint(std::string_view credential) {
  // The scheme prefix: sk_<environment>_ for API keys, at_ and the like for tokens.
  std::size_t prefix = 0;
  std::size_t first = credential.find('_');
  if (first != std::string_view::npos && first <= 3) {
    prefix = first + 1;
    std::size_t second = credential.find('_', prefix);
    if (credential.starts_with("sk_") && second != std::string_view::npos && second <= 16) {
      prefix = second + 1;
    }
  }
  return printable(credential.substr(0, prefix + 4));
}

Result<CredentialLookup> lookup_of(Surface surface, std::string_view credential) {
  if (auto refused = refused_by_form(surface, credential)) return *refused;
  return CredentialLookup{surface == Surface::core ? k_api_key_lookup : k_access_token_lookup,
                          crypto::sha256_hex(credential)};
}

Result<Principal> principal_of(Surface surface, std::string_view credential,
                               const std::optional<store::Row>& row, std::string_view environment,
                               time::Micros now) {
  return surface == Surface::core ? api_key_principal(row, credential, environment)
                                  : access_token_principal(row, credential, environment, now);
}

Result<Principal> authenticate(store::Tx& tx, Surface surface, std::string_view credential,
                               std::string_view environment, time::Micros now) {
  auto lookup = lookup_of(surface, credential);
  if (!lookup) return lookup.error();
  return authenticate(tx, surface, credential, lookup.value(), environment, now);
}

Result<Principal> authenticate(store::Tx& tx, Surface surface, std::string_view credential,
                               const CredentialLookup& lookup, std::string_view environment,
                               time::Micros now) {
  return principal_of(surface, credential, tx.query_one(lookup.sql, {lookup.key_hash}),
                      environment, now);
}

Error insufficient_scope(const Principal& principal, const std::string& needed_scope) {
  Error error =
      errors::of(ErrorCode::not_authorized, std::nullopt, "requires scope " + needed_scope);
  error.challenge = Challenge{Challenge::Scheme::bearer, Challenge::TokenError::insufficient_scope,
                              needed_scope};
  error.log_fields.emplace_back("auth_reason", "insufficient_scope");
  error.log_fields.emplace_back("credential",
                                principal.key_prefix.empty()
                                    ? principal.credential_id
                                    : principal.credential_id + " " + principal.key_prefix);
  return error;
}

Error oauth_error(ErrorCode code, std::string description) {
  Error result = errors::of(code, std::nullopt, std::move(description));
  result.oauth = true;
  // The one code of a client that failed to authenticate: it is asked for its Basic credentials
  // (RFC 6749 section 5.2).
  if (code == ErrorCode::invalid_client) result.challenge = Challenge{Challenge::Scheme::basic, {}, ""};
  return result;
}

Result<TokenGrant> grant_client_credentials(store::Tx& tx, std::string_view client_id,
                                            std::string_view client_secret,
                                            const std::optional<std::string>& scope,
                                            std::string_view environment, time::Micros now) {
  auto row = tx.query_one(
      "SELECT tenant_id, secret_hash, scopes, environment, revoked_at FROM oauth_clients "
      "WHERE client_id = ?",
      {std::string(client_id)});
  if (!row || !row->is_null(4) || row->text(3) != environment ||
      !crypto::constant_time_equal(row->text(1), crypto::sha256_hex(client_secret))) {
    return oauth_error(ErrorCode::invalid_client, "client authentication failed");
  }
  auto scopes = requested_scopes(split_scopes(row->text(2), ' '), scope);
  if (!scopes) return std::move(scopes).error();
  return issue_tokens(tx, row->text(0), client_id, std::move(scopes).value(), environment, now);
}

Result<TokenGrant> grant_refresh_token(store::Tx& tx, std::string_view refresh_token,
                                       const std::optional<std::string>& scope,
                                       std::string_view environment, time::Micros now) {
  std::string hash = crypto::sha256_hex(refresh_token);
  auto row = tx.query_one(
      "SELECT t.tenant_id, t.client_id, t.scopes, t.environment, t.expires_at, t.revoked_at, "
      "c.revoked_at FROM oauth_tokens t JOIN oauth_clients c "
      "ON c.tenant_id = t.tenant_id AND c.client_id = t.client_id "
      "WHERE t.token_hash = ? AND t.kind = 'refresh'",
      {hash});
  if (!row || row->text(3) != environment || row->integer(4) <= now || !row->is_null(5) ||
      !row->is_null(6)) {
    return oauth_error(ErrorCode::invalid_grant, "refresh token is invalid, expired or revoked");
  }
  auto scopes = requested_scopes(split_scopes(row->text(2), ' '), scope);
  if (!scopes) return std::move(scopes).error();
  // Rotation: a refresh token works once; the conditional update makes a concurrent second use
  // of the same token fail instead of minting two pairs.
  if (tx.exec("UPDATE oauth_tokens SET revoked_at = ? WHERE tenant_id = ? AND token_hash = ? "
              "AND revoked_at IS NULL",
              {time::iso(now), row->text(0), hash}) != 1) {
    return oauth_error(ErrorCode::invalid_grant, "refresh token is invalid, expired or revoked");
  }
  return issue_tokens(tx, row->text(0), row->text(1), std::move(scopes).value(), environment, now);
}

std::int64_t sweep_expired_tokens(store::Tx& tx, time::Micros now, std::int64_t limit) {
  return tx.exec(
      "DELETE FROM oauth_tokens WHERE (tenant_id, token_hash) IN (SELECT tenant_id, token_hash "
      "FROM oauth_tokens WHERE expires_at < ? LIMIT ?)",
      {now - 24 * 3600 * time::k_micros_per_second, limit});
}

}  // namespace tesoro::auth
