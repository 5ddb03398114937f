#pragma once
// Failed authentications limited per client address (docs/decisions.md, Rate limits): guessing
// API keys, tokens or client secrets from one address stops after limits::k_auth_failure_burst
// failures and goes on at limits::k_auth_failure_rate_per_second. While an address's budget is
// spent its requests are refused (429) before their credential is looked up, so a guess tells
// nothing, except those whose credential authenticated from that address lately: clients with
// working credentials behind the same address (a NAT, a proxy) keep working. Only a hash of a
// presented credential is kept, in memory, never logged. In this process: each node counts its
// own, like the rate limiter.
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "app/rate_limiter.hpp"

namespace tesoro::app {

class AuthFailureGuard {
 public:
  using Clock = std::chrono::steady_clock;
  AuthFailureGuard(double per_second, double burst);

  bool enabled() const { return failures_.enabled(); }
  // Seconds `address` must wait before trying `credential` (what it presented; may be empty):
  // 0 when it may go on now.
  long wait_seconds(const std::string& address, std::string_view credential, Clock::time_point now);
  void failed(const std::string& address, Clock::time_point now);
  void succeeded(const std::string& address, std::string_view credential, Clock::time_point now);

 private:
  struct KnownGood {
    std::uint64_t hash;
    Clock::time_point at;
  };
  // A presented credential as it is kept: a 64-bit hash, never the text.
  static std::uint64_t hash_of(std::string_view credential);

  RateLimiter failures_;
  std::mutex mutex_;
  std::unordered_map<std::string, std::vector<KnownGood>> known_good_;
};

}  // namespace tesoro::app
