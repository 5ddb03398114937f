#include "domain/tenant_clock/tenant_clock.hpp"

#include <limits>
#include <optional>

#include "core/limits.hpp"
#include "core/money.hpp"

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

namespace {

// The latest tenant clock (the clock of the tenant furthest ahead) when a row may be due: its
// earliest due time is not after it. Nothing when no row can be due, or without tenants; the
// largest time when unsure (an offset past the int64 range).
std::optional<time::Micros> latest_now_if_due(store::Tx& tx, const DueQuery& query,
                                               time::Micros real_now) {
  auto earliest =
      tx.query_one("SELECT MIN(x." + std::string(query.due_column) + ") FROM " +
                   std::string(query.table) + " x WHERE " + std::string(query.open_condition));
  if (!earliest || earliest->is_null(0)) return std::nullopt;
  auto latest_offset = tx.query_one("SELECT MAX(clock_offset_micros) FROM tenants");
  if (!latest_offset || latest_offset->is_null(0)) return std::nullopt;
  auto latest_now = money::add(real_now, latest_offset->integer(0));
  if (!latest_now) return std::numeric_limits<time::Micros>::max();
  if (earliest->integer(0) > *latest_now) return std::nullopt;
  return *latest_now;
}

}  // namespace

std::vector<DueRow> due_rows(store::Tx& tx, const DueQuery& query, time::Micros real_now,
                             std::int64_t limit) {
  std::vector<DueRow> due;
  const std::optional<time::Micros> latest_now = latest_now_if_due(tx, query, real_now);
  if (!latest_now) return due;
  const std::string column = "x." + std::string(query.due_column);
  // The bound by the latest clock lets the due-time index stop where nothing can be due, and
  // the order is the index's alone: the engines then read the index in order and stop at the
  // limit. Ordering ties by id as well would make PostgreSQL read and sort every due row
  // (docs/scaling.md).
  for (const store::Row& row :
       tx.query("SELECT x.tenant_id, x.id, t.clock_offset_micros FROM " + std::string(query.table) +
                    " x JOIN tenants t ON t.id = x.tenant_id WHERE " +
                    std::string(query.open_condition) + " AND " + column + " <= ? AND " + column +
                    " <= ? + t.clock_offset_micros ORDER BY " + column + " LIMIT ?",
                {*latest_now, real_now, limit})) {
    due.push_back({row.text(0), row.text(1), real_now + row.integer(2)});
  }
  return due;
}

}  // namespace tesoro::tenant_clock
