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

  struct Decision {
    bool allowed = true;
    long limit = 0;
    long remaining = 0;
    long reset_seconds = 0;        // until the bucket is full again
    long retry_after_seconds = 0;  // until one request is allowed (when refused)
  };

  bool enabled() const { return per_second_ > 0; }
  Decision take(const std::string& key, std::chrono::steady_clock::time_point now);


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
  double per_second_;
  double burst_;
  Shard shards_[k_shards];
};

}  // namespace tesoro::app
