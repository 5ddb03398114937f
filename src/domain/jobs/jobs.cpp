#include "domain/jobs/jobs.hpp"

#include "core/ids.hpp"

namespace tesoro::jobs {

std::string enqueue(store::Tx& tx, std::string_view tenant_id, std::string_view kind,
                    std::string_view payload, time::Micros run_at) {
  std::string id = ids::generate("job");
  tx.exec("INSERT INTO jobs (tenant_id, id, kind, payload, run_at, attempts, inserted_at) "
          "VALUES (?, ?, ?, ?, ?, 0, ?)",
          {std::string(tenant_id), id, std::string(kind), std::string(payload), run_at,
           time::iso_now()});
  return id;
}

std::vector<Job> claim(store::Tx& tx, std::string_view kind, std::string_view worker_id,
                       std::int64_t limit, time::Micros now, time::Micros lease_micros) {
  // SQLite has one writer, so the inner SELECT cannot race; PostgreSQL skips rows another
  // transaction holds instead of waiting for them (and never returns them twice).
  std::string skip_locked = tx.engine() == store::Engine::postgres ? " FOR UPDATE SKIP LOCKED" : "";
  store::Rows rows = tx.query(
      "UPDATE jobs SET claimed_by = ?, lease_until = ?, attempts = attempts + 1 "
      "WHERE (tenant_id, id) IN (SELECT tenant_id, id FROM jobs WHERE kind = ? AND run_at <= ? "
      "AND (lease_until IS NULL OR lease_until < ?) ORDER BY run_at, id LIMIT ?" +
          skip_locked + ") RETURNING tenant_id, id, kind, payload, attempts",
      {std::string(worker_id), now + lease_micros, std::string(kind), now, now, limit});
  std::vector<Job> claimed;
  claimed.reserve(rows.size());
  for (const store::Row& row : rows) {
    claimed.push_back({row.text(0), row.text(1), row.text(2), row.text(3), row.integer(4)});
  }
  return claimed;
}

// A claim is fenced by who holds it and which attempt it is.
bool complete(store::Tx& tx, const Job& job, std::string_view worker_id) {
  return tx.exec("DELETE FROM jobs WHERE tenant_id = ? AND id = ? AND claimed_by = ? AND attempts = ?",
                 {job.tenant_id, job.id, std::string(worker_id), job.attempts}) == 1;
}

bool retry_at(store::Tx& tx, const Job& job, std::string_view worker_id, time::Micros run_at) {
  return tx.exec("UPDATE jobs SET run_at = ?, lease_until = NULL, claimed_by = NULL "
                 "WHERE tenant_id = ? AND id = ? AND claimed_by = ? AND attempts = ?",
                 {run_at, job.tenant_id, job.id, std::string(worker_id), job.attempts}) == 1;
}

}  // namespace tesoro::jobs
