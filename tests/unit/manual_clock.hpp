#pragma once
// Real time that only the test moves: a time::Clock for tests of what runs "later" (workers,
// leases, due times) without sleeping.
#include <atomic>

#include "core/clock.hpp"

namespace tesoro::test_clock {

class ManualClock final : public time::Clock {
 public:
  explicit ManualClock(time::Micros start) : now_(start) {}
  time::Micros now() const override { return now_.load(); }
  void advance(time::Micros by) { now_ += by; }

 private:
  std::atomic<time::Micros> now_;
};

}  // namespace tesoro::test_clock
