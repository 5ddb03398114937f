#pragma once
// Token bucket per credential, in this process. Each node of a fleet limits on its own: with N
// nodes behind a balancer a credential gets at most N times the rate (docs/scaling.md).
#include <chrono>
#include <mutex>
#include <string>
#include <unordered_map>

namespace tesoro::app {

class RateLimiter {
 public:
  RateLimiter(double per_second, double burst) : per_second_(per_second), burst_(burst) {}

  // What the RateLimit header fields say (IETF draft-ietf-httpapi-ratelimit-headers): the bucket
  // is described as a quota of `limit` requests per window of `window_seconds`, the time a
  // drained bucket takes to fill again, so the four values never contradict one another.
  struct Decision {
    bool allowed = true;
    long limit = 0;           // the bucket size: the quota of one window
    long window_seconds = 0;  // seconds to refill an empty bucket, rounded up (at least 1)
    long remaining = 0;       // whole tokens left after this request
    // Allowed: seconds until the bucket is full again (at most window_seconds). Refused: seconds
    // until the next request is allowed, the same moment as retry_after_seconds.
    long reset_seconds = 0;
    long retry_after_seconds = 0;  // refused only: seconds until one token is back, at least 1
  };

  bool enabled() const { return per_second_ > 0; }
  Decision take(const std::string& key, std::chrono::steady_clock::time_point now);
  // Seconds until `key`'s bucket has a whole token, without taking one: 0 when it has one now.
  long wait_seconds(const std::string& key, std::chrono::steady_clock::time_point now);

 private:
  struct Bucket {
    double tokens;
    std::chrono::steady_clock::time_point updated;
  };
  static constexpr std::size_t k_shards = 16;
  struct Shard {
    std::mutex mutex;
    std::unordered_map<std::string, Bucket> buckets;
  };
  // Whole seconds (rounded up) the bucket takes to gain `tokens`.
  long seconds_until(double tokens) const;

  double per_second_;
  double burst_;
  Shard shards_[k_shards];
};

}  // namespace tesoro::app
