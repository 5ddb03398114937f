#include "app/auth_failures.hpp"

#include <algorithm>
#include <functional>

#include "core/limits.hpp"

namespace tesoro::app {

namespace {

constexpr std::chrono::seconds k_known_good_for{limits::k_auth_known_good_seconds};

std::string bucket_of(const std::string& address) { return "auth-failures:" + address; }

}  // namespace

AuthFailureGuard::AuthFailureGuard(double per_second, double burst)
    : failures_(per_second, burst) {}

std::uint64_t AuthFailureGuard::hash_of(std::string_view credential) {
  return std::hash<std::string_view>{}(credential);
}

long AuthFailureGuard::wait_seconds(const std::string& address, std::string_view credential,
                                    Clock::time_point now) {
  const long wait = failures_.wait_seconds(bucket_of(address), now);
  if (wait == 0 || credential.empty()) return wait;
  const std::uint64_t hash = hash_of(credential);
  std::lock_guard lock(mutex_);
  auto found = known_good_.find(address);
  if (found == known_good_.end()) return wait;
  for (const KnownGood& good : found->second) {
    if (good.hash == hash && now - good.at < k_known_good_for) return 0;
  }
  return wait;
}

void AuthFailureGuard::failed(const std::string& address, Clock::time_point now) {
  failures_.take(bucket_of(address), now);
}

void AuthFailureGuard::succeeded(const std::string& address, std::string_view credential,
                                 Clock::time_point now) {
  if (credential.empty()) return;
  const std::uint64_t hash = hash_of(credential);
  std::lock_guard lock(mutex_);
  if (known_good_.size() >= limits::k_rate_buckets_max) {
    std::erase_if(known_good_, [&](const auto& entry) {
      return std::all_of(entry.second.begin(), entry.second.end(),
                         [&](const KnownGood& good) { return now - good.at >= k_known_good_for; });
    });
  }
  std::vector<KnownGood>& goods = known_good_[address];
  for (KnownGood& good : goods) {
    if (good.hash == hash) {
      good.at = now;
      return;
    }
  }
  if (goods.size() >= limits::k_auth_known_good_per_address) {
    goods.erase(std::min_element(goods.begin(), goods.end(),
                                 [](const KnownGood& a, const KnownGood& b) { return a.at < b.at; }));
  }
  goods.push_back({hash, now});
}

}  // namespace tesoro::app
