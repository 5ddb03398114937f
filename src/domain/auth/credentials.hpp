#pragma once
// Tenants and their credentials: core API keys (sk_<environment>_<random>, stored as sha256),
// OAuth clients of the participant API and the tokens they obtain. Secrets are returned once, at
// creation, and never stored or logged in clear.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "core/time.hpp"
#include "store/store.hpp"

namespace tesoro::auth {

enum class CredentialKind { api_key, oauth_token };

struct Principal {
  std::string tenant_id;
  std::string credential_id;  // api key id, or OAuth client id
  CredentialKind kind = CredentialKind::api_key;
  std::vector<std::string> scopes;
  std::string environment;
  std::string key_prefix;  // an API key's display prefix (sk_sandbox_AbCd); empty for tokens
  // The tenant's clock offset (domain/tenant_clock), read with the credential: one lookup, no more.
  time::Micros clock_offset_micros = 0;
  // Whether the tenant may have an endpoint deciding its card authorizations, read with the
  // credential (tenants.authorization_endpoints): false lets an authorization skip looking for
  // one. True where it was not read (the endpoint is then looked up).
  bool may_have_authorization_endpoint = true;

  bool operator==(const Principal&) const = default;
};

enum class Level { read = 1, write = 2, admin = 3 };
std::string_view level_name(Level level);

// The two authenticated surfaces: /v1 takes API keys, /api/v1 OAuth access tokens.
enum class Surface { core, participant };

// Core scopes: "<group>:<level>", groups ledger, cards, spending_controls, payouts, webhooks.
const std::vector<std::string>& core_groups();
bool is_core_scope(std::string_view scope);
// Every core group at admin: what `tesoro init` keys and console sessions hold.
std::vector<std::string> all_core_admin_scopes();
// Participant scopes: collections, collections:readonly, ... webhooks.
const std::vector<std::string>& participant_scopes();
bool is_participant_scope(std::string_view scope);

bool core_allows(const Principal& principal, std::string_view group, Level needed);
// A full scope includes its ":readonly" form.
bool participant_allows(const Principal& principal, std::string_view scope);

std::vector<std::string> split_scopes(std::string_view text, char separator);
std::string join_scopes(const std::vector<std::string>& scopes, char separator);

struct CreatedKey {
  std::string id;
  std::string api_key;  // the secret, shown once
  std::vector<std::string> scopes;
  std::string key_prefix;  // what lists show of it (KeySummary)
  std::string environment;
};

struct CreatedClient {
  std::string client_id;
  std::string client_secret;  // shown once
  std::vector<std::string> scopes;
};

struct KeySummary {
  std::string id;
  std::string key_prefix;  // first characters, enough to recognise a key, useless to an attacker
  std::vector<std::string> scopes;
  std::string environment;
  std::string inserted_at;
  std::optional<std::string> revoked_at;
};

struct ClientSummary {
  std::string client_id;
  std::vector<std::string> scopes;
  std::string environment;
  std::string inserted_at;
  std::optional<std::string> revoked_at;
};

struct TenantSummary {
  std::string id;
  std::string name;
  std::string environment;
  std::string inserted_at;
};

struct TokenGrant {
  std::string access_token;
  std::string refresh_token;
  std::int64_t expires_in_seconds = 0;
  std::vector<std::string> scopes;
};

// `now` (real time, from the caller's Clock) stamps inserted_at and revoked_at.
Result<std::string> create_tenant(store::Tx& tx, std::string_view name,
                                  std::string_view environment, time::Micros now);
bool tenant_exists(store::Tx& tx, std::string_view tenant_id);
// Every tenant, oldest first (an operator's read: `tesoro tenant list`).
std::vector<TenantSummary> list_tenants(store::Tx& tx);
// Whether any tenant exists, answered so that concurrent write units asking it are serialised
// until they commit: `tesoro init` creates the first tenant only when there is none, and on
// PostgreSQL READ COMMITTED alone would let two concurrent inits both see none, so this takes a
// transaction-scoped advisory lock first. (SQLite has one writer already.)
bool has_tenants_locked(store::Tx& tx);
Result<CreatedKey> create_api_key(store::Tx& tx, std::string_view tenant_id,
                                  const std::vector<std::string>& scopes, time::Micros now);
Result<std::vector<KeySummary>> list_api_keys(store::Tx& tx, std::string_view tenant_id);
// Revoking twice keeps the first revoked_at. item_not_found for an unknown id, and, when
// `tenant_id` is given, for another tenant's key (the console revokes only its own tenant's; the
// operator's command any). Returns the key as it now is.
Result<KeySummary> revoke_api_key(store::Tx& tx, std::string_view key_id, time::Micros now,
                                  std::string_view tenant_id = {});
Result<CreatedClient> create_client(store::Tx& tx, std::string_view tenant_id,
                                    const std::vector<std::string>& scopes, time::Micros now);
// A tenant's OAuth clients, oldest first; item_not_found for an unknown tenant.
Result<std::vector<ClientSummary>> list_clients(store::Tx& tx, std::string_view tenant_id);
// Every token request, refresh and authenticated request joins the client's revoked_at, so its
// tokens stop working from the next request on. Revoking twice keeps the first revoked_at;
// item_not_found for an unknown id and, when `tenant_id` is given, for another tenant's client.
// Returns the client as it now is.
Result<ClientSummary> revoke_client(store::Tx& tx, std::string_view client_id, time::Micros now,
                                    std::string_view tenant_id = {});

// Authentication answers (RFC 6750). Codes as the contract says: expired_token, or on the
// participant surface missing_authorization_header when the header is absent;
// not_authorized. Each names its reason in the item's message, carries WWW-Authenticate
// (`error="invalid_token"` only when a bearer credential was sent; RFC 6750 section 3.1), and
// gives its log line the reason and the credential's public id or prefix, never the secret.
//
// Why a request is not authenticated: each has its message and its word in the log.
enum class Refusal {
  no_header,          // no Authorization header
  other_scheme,       // Authorization with another scheme than Bearer (Basic, ...)
  malformed,          // Bearer with nothing, or with text of no credential's shape
  unknown,            // the shape of a credential, but none has that secret
  revoked,            // a revoked API key, access token, or OAuth client
  expired,            // an access token past its lifetime
  wrong_surface,      // an API key on /api/v1, an access token on /v1
  other_environment,  // a credential of another environment than the server's
};
// The refusal of `refusal` (expired_token, or missing_authorization_header); `credential` is what
// the log may name it by (never the secret).
Error unauthenticated(Surface surface, Refusal refusal, std::string credential);
// Text fit for a log field: every byte outside printable ASCII becomes '?'.
std::string printable(std::string_view text);
// What a credential's principal is read with: one statement and its one parameter, the
// credential's hash; or the refusal of a credential refused by its form alone (the other surface's,
// or not one at all). With principal_of, the API checks that a principal it kept still holds
// (app/credential_cache.hpp).
struct CredentialLookup {
  const char* sql;
  std::string key_hash;
};
Result<CredentialLookup> lookup_of(Surface surface, std::string_view credential);
// The principal of an API key (core) or an access token (participant), or the refusal naming why
// not: unknown, revoked, expired, the other surface's credential, another environment's. The
// second form reads with a lookup already made (one hash of the credential per request).
Result<Principal> authenticate(store::Tx& tx, Surface surface, std::string_view credential,
                               std::string_view environment, time::Micros now);
Result<Principal> authenticate(store::Tx& tx, Surface surface, std::string_view credential,
                               const CredentialLookup& lookup, std::string_view environment,
                               time::Micros now);
// The principal the lookup's row gives (nullopt: no row), or the refusal authenticate() answers.
Result<Principal> principal_of(Surface surface, std::string_view credential,
                               const std::optional<store::Row>& row, std::string_view environment,
                               time::Micros now);
// not_authorized naming the scope the route needs (`ledger:write`, `outgoing_transfers`).
Error insufficient_scope(const Principal& principal, const std::string& needed_scope);
// What a credential is called in logs: its first characters, at most the scheme prefix
// (`sk_sandbox_`, `at_`) and 4 more.
std::string credential_hint(std::string_view credential);

// Token endpoint. Errors carry the RFC 6749 `error` and `error_description` fields.
Result<TokenGrant> grant_client_credentials(store::Tx& tx, std::string_view client_id,
                                            std::string_view client_secret,
                                            const std::optional<std::string>& scope,
                                            std::string_view environment, time::Micros now);
Result<TokenGrant> grant_refresh_token(store::Tx& tx, std::string_view refresh_token,
                                       const std::optional<std::string>& scope,
                                       std::string_view environment, time::Micros now);
// An OAuth error of the catalog (invalid_client, invalid_request, invalid_grant, invalid_scope,
// unsupported_grant_type) with RFC 6749's `error` and `error_description`.
Error oauth_error(ErrorCode code, std::string description);
// Deletes at most `limit` tokens that expired more than a day ago (a chunk, like
// idempotency::sweep_expired).
std::int64_t sweep_expired_tokens(store::Tx& tx, time::Micros now, std::int64_t limit);

}  // namespace tesoro::auth
