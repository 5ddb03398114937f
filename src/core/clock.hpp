#pragma once
// The one source of real time. Domain and API code take time from a Clock (reached through the
// handler's services, or handed in as a `now` parameter), never from the system clock directly,
// so that the sandbox can move a tenant's time (domain/tenant_clock) and tests can govern it.
#include "core/time.hpp"

namespace tesoro::time {

class Clock {
 public:
  virtual ~Clock() = default;
  // Real time (UTC microseconds). Tenant time is this plus the tenant's offset.
  virtual Micros now() const = 0;
};

class SystemClock final : public Clock {
 public:
  Micros now() const override { return now_micros(); }
};

}  // namespace tesoro::time
