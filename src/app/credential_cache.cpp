#include "app/credential_cache.hpp"

#include "core/limits.hpp"

namespace tesoro::app {

std::optional<auth::Principal> CredentialCache::find(const std::string& key_hash) const {
  std::lock_guard lock(mutex_);
  auto found = principals_.find(key_hash);
  if (found == principals_.end()) return std::nullopt;
  return found->second;
}

void CredentialCache::keep(const std::string& key_hash, const auth::Principal& principal) {
  std::lock_guard lock(mutex_);
  if (principals_.size() >= limits::k_credential_cache_entries) principals_.clear();
  principals_.insert_or_assign(key_hash, principal);
}

void CredentialCache::forget(const std::string& key_hash) {
  std::lock_guard lock(mutex_);
  principals_.erase(key_hash);
}

}  // namespace tesoro::app
