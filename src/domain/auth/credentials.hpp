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
};

enum class Level { read = 1, write = 2, admin = 3 };

// Core scopes: "<group>:<level>", groups ledger, cards, spending_controls, payouts.
const std::vector<std::string>& core_groups();
bool is_core_scope(std::string_view scope);
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

struct TokenGrant {
  std::string access_token;
  std::string refresh_token;
  std::int64_t expires_in_seconds = 0;
  std::vector<std::string> scopes;
};

Result<std::string> create_tenant(store::Tx& tx, std::string_view name,
                                  std::string_view environment);
bool tenant_exists(store::Tx& tx, std::string_view tenant_id);
Result<CreatedKey> create_api_key(store::Tx& tx, std::string_view tenant_id,
                                  const std::vector<std::string>& scopes);
Result<std::vector<KeySummary>> list_api_keys(store::Tx& tx, std::string_view tenant_id);
Status revoke_api_key(store::Tx& tx, std::string_view key_id);
Result<CreatedClient> create_client(store::Tx& tx, std::string_view tenant_id,
                                    const std::vector<std::string>& scopes);

// 401 expired_token when the key is malformed, unknown, revoked or of another environment.
Result<Principal> authenticate_api_key(store::Tx& tx, std::string_view api_key,
                                       std::string_view environment);
Result<Principal> authenticate_access_token(store::Tx& tx, std::string_view token,
                                            std::string_view environment, time::Micros now);

// Token endpoint. Errors carry the RFC 6749 `error` and `error_description` fields.
Result<TokenGrant> grant_client_credentials(store::Tx& tx, std::string_view client_id,
                                            std::string_view client_secret,
                                            const std::optional<std::string>& scope,
                                            std::string_view environment, time::Micros now);
Result<TokenGrant> grant_refresh_token(store::Tx& tx, std::string_view refresh_token,
                                       const std::optional<std::string>& scope,
                                       std::string_view environment, time::Micros now);
Error oauth_error(int status, std::string_view error, std::string description);
// Deletes at most `limit` tokens that expired more than a day ago (a chunk, like
// idempotency::sweep_expired).
std::int64_t sweep_expired_tokens(store::Tx& tx, time::Micros now, std::int64_t limit);

}  // namespace tesoro::auth
