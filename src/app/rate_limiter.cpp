#include "app/rate_limiter.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "core/limits.hpp"

namespace tesoro::app {

long RateLimiter::seconds_until(double tokens) const {
  return std::max(0L, static_cast<long>(std::ceil(tokens / per_second_)));
}

RateLimiter::Decision RateLimiter::take(const std::string& key,
                                        std::chrono::steady_clock::time_point now) {
  Shard& shard = shards_[std::hash<std::string>{}(key) % k_shards];
  std::lock_guard lock(shard.mutex);
  if (shard.buckets.size() >= limits::k_rate_buckets_max / k_shards) {
    // Forget buckets that have refilled: they carry no state a new bucket would not.
    std::erase_if(shard.buckets, [&](const auto& entry) {
      double elapsed = std::chrono::duration<double>(now - entry.second.updated).count();
      return entry.second.tokens + elapsed * per_second_ >= burst_;
    });
  }
  auto [it, inserted] = shard.buckets.try_emplace(key, Bucket{burst_, now});
  Bucket& bucket = it->second;
  double elapsed = std::chrono::duration<double>(now - bucket.updated).count();
  bucket.tokens = std::min(burst_, bucket.tokens + elapsed * per_second_);
  bucket.updated = now;

  Decision decision;
  decision.limit = static_cast<long>(burst_);
  decision.window_seconds = seconds_until(burst_);
  if (bucket.tokens >= 1.0) {
    bucket.tokens -= 1.0;
    decision.reset_seconds = seconds_until(burst_ - bucket.tokens);
  } else {
    decision.allowed = false;
    decision.retry_after_seconds = std::max(1L, seconds_until(1.0 - bucket.tokens));
    // Retry-After and RateLimit-Reset name the same moment on a 429, as the draft asks.
    decision.reset_seconds = decision.retry_after_seconds;
  }
  decision.remaining = static_cast<long>(std::floor(bucket.tokens));
  return decision;
}

long RateLimiter::wait_seconds(const std::string& key, std::chrono::steady_clock::time_point now) {
  Shard& shard = shards_[std::hash<std::string>{}(key) % k_shards];
  std::lock_guard lock(shard.mutex);
  auto found = shard.buckets.find(key);
  if (found == shard.buckets.end()) return 0;  // a bucket not seen is full
  double elapsed = std::chrono::duration<double>(now - found->second.updated).count();
  double tokens = std::min(burst_, found->second.tokens + elapsed * per_second_);
  if (tokens >= 1.0) return 0;
  return std::max(1L, seconds_until(1.0 - tokens));
}

}  // namespace tesoro::app
