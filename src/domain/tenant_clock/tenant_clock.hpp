#pragma once
// Each tenant's clock: real time plus an offset kept on the tenant's row, so that every node
// agrees on it. The offset starts at 0 and only grows: in the sandbox a tenant may move its
// clock forward (to see a 30-day expiry or an 8-hour retry schedule in seconds), never back.
// Everything time-dependent a module does for a tenant (expiries, velocity windows, transfer
// processing, webhook retries, the timestamps of its records) reads this clock. Credential and
// idempotency lifetimes, rate limits and webhook-timestamp headers keep real time.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "core/time.hpp"
#include "store/store.hpp"

namespace tesoro::tenant_clock {

// Raised after an advance commits: jobs that came due on the tenant's clock run at once.
inline constexpr std::string_view k_advanced_topic = "clock.advanced";

// The tenant's offset from real time; 0 for a tenant that does not exist.
time::Micros offset(store::Tx& tx, std::string_view tenant_id);
time::Micros now(store::Tx& tx, std::string_view tenant_id, time::Micros real_now);

// Moves the tenant's clock forward by `seconds` (1 to limits::k_clock_advance_max_seconds) and
// returns the tenant's new time. clock_limit_reached when the offset would pass
// limits::k_clock_offset_max_seconds; item_not_found for an unknown tenant.
Result<time::Micros> advance(store::Tx& tx, std::string_view tenant_id, std::int64_t seconds,
                             time::Micros real_now);

// Rows that came due on their own tenant's clock, for the expiry workers (card holds,
// collections) that look every second. `table` is read under the alias `x`; `open_condition`
// (on x) selects the rows that may still expire and should match a partial index on
// `due_column` (tenant time in micros), so that the usual pass, where nothing is due, costs two
// index reads: the earliest due time against the clock of the tenant furthest ahead.
struct DueQuery {
  std::string_view table;
  std::string_view due_column;
  std::string_view open_condition;
};
struct DueRow {
  std::string tenant_id;
  std::string id;
  time::Micros tenant_now;  // the row's tenant clock at real_now
};
// At most `limit` due rows, earliest due first (rows due at the same time in no set order).
std::vector<DueRow> due_rows(store::Tx& tx, const DueQuery& query, time::Micros real_now,
                             std::int64_t limit);

}  // namespace tesoro::tenant_clock
