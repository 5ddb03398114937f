#pragma once
// The principals of credentials this node authenticated lately, by the credential's hash, for a
// store whose units carry checks (store::Store::carries_checks(): PostgreSQL). A request whose
// credential is kept starts with the kept principal and arms a check (store::ArmedCheck): the
// credential's lookup, sent in the round trip of the request's first statement instead of one
// of its own. When the row no longer gives the same principal (revoked on any node, expired, the
// tenant's clock or authorization endpoint changed), nothing of the unit commits, the entry is
// forgotten and the request runs again from a lookup (App::dispatch). So a revoked credential is
// refused from the next request on, on every node, as without the cache.
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "domain/auth/credentials.hpp"

namespace tesoro::app {

class CredentialCache {
 public:
  std::optional<auth::Principal> find(const std::string& key_hash) const;
  // At most limits::k_credential_cache_entries: a full cache is emptied (its entries are one
  // lookup away).
  void keep(const std::string& key_hash, const auth::Principal& principal);
  void forget(const std::string& key_hash);

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::string, auth::Principal> principals_;
};

}  // namespace tesoro::app
