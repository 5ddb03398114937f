#include "domain/clock/tenant_clock.hpp"

#include "core/limits.hpp"

namespace tesoro::tenant_clock {

time::Micros offset(store::Tx& tx, std::string_view tenant_id) {
  auto row = tx.query_one("SELECT clock_offset_micros FROM tenants WHERE id = ?",
                          {std::string(tenant_id)});
  return row ? row->integer(0) : 0;
}

time::Micros now(store::Tx& tx, std::string_view tenant_id, time::Micros real_now) {
  return real_now + offset(tx, tenant_id);
}

Result<time::Micros> advance(store::Tx& tx, std::string_view tenant_id, std::int64_t seconds,
                             time::Micros real_now) {
  if (seconds < 1 || seconds > limits::k_clock_advance_max_seconds) {
    return errors::validation("must be between 1 and " +
                                  std::to_string(limits::k_clock_advance_max_seconds),
                              "seconds");
  }
  const time::Micros step = seconds * time::k_micros_per_second;
  const time::Micros ceiling = limits::k_clock_offset_max_seconds * time::k_micros_per_second;
  // One statement: concurrent advances add up instead of one overwriting the other.
  auto row = tx.query_one(
      "UPDATE tenants SET clock_offset_micros = clock_offset_micros + ? "
      "WHERE id = ? AND clock_offset_micros <= ? RETURNING clock_offset_micros",
      {step, std::string(tenant_id), ceiling - step});
  if (row) {
    tx.notify(std::string(k_advanced_topic));
    return real_now + row->integer(0);
  }
  auto tenant = tx.query_one("SELECT 1 FROM tenants WHERE id = ?", {std::string(tenant_id)});
  if (!tenant) return errors::item_not_found("tenant");
  return errors::of(ErrorCode::clock_limit_reached, "seconds",
                    "the sandbox clock may run at most " +
                        std::to_string(limits::k_clock_offset_max_seconds / (365 * 86400)) +
                        " years ahead of real time");
}

}  // namespace tesoro::tenant_clock
