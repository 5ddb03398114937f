#include "domain/jobs/jobs.hpp"

#include "core/ids.hpp"

namespace tesoro::jobs {

std::string topic(std::string_view kind) { return "jobs:" + std::string(kind); }

std::string enqueue(store::Tx& tx, std::string_view tenant_id, std::string_view kind,
                    std::string_view payload, time::Micros run_at, time::Micros now) {
  std::string id = ids::generate("job");
  tx.exec_later("INSERT INTO jobs (tenant_id, id, kind, payload, run_at, attempts, inserted_at) "
                "VALUES (?, ?, ?, ?, ?, 0, ?)",
                {std::string(tenant_id), id, std::string(kind), std::string(payload), run_at,
                 time::iso(now)});
  tx.notify(topic(kind));
  return id;
}

std::vector<Job> claim(store::Tx& tx, std::string_view kind, std::string_view worker_id,
                       std::int64_t limit, time::Micros real_now, time::Micros lease_micros) {
  // SQLite has one writer, so the inner SELECT cannot race; PostgreSQL skips rows another
  // transaction holds instead of waiting for them (and never returns them twice). Due-ness is
  // judged on each job's tenant clock: real time plus the tenant's offset.
  std::string skip_locked =
      tx.engine() == store::Engine::postgres ? " FOR UPDATE OF j SKIP LOCKED" : "";
  std::string token = ids::generate("clm");
  store::Rows rows = tx.query(
      "UPDATE jobs SET claimed_by = ?, claim_token = ?, lease_until = ?, attempts = attempts + 1 "
      "WHERE (tenant_id, id) IN (SELECT j.tenant_id, j.id FROM jobs j "
      "LEFT JOIN tenants t ON t.id = j.tenant_id WHERE j.kind = ? AND j.failed_at IS NULL "
      "AND j.run_at <= ? + COALESCE(t.clock_offset_micros, 0) "
      "AND (j.lease_until IS NULL OR j.lease_until < ?) ORDER BY j.run_at, j.id LIMIT ?" +
          skip_locked + ") RETURNING tenant_id, id, kind, payload, attempts, run_at",
      {std::string(worker_id), token, real_now + lease_micros, std::string(kind), real_now,
       real_now, limit});
  std::vector<Job> claimed;
  claimed.reserve(rows.size());
  for (const store::Row& row : rows) {
    claimed.push_back(
        {row.text(0), row.text(1), row.text(2), row.text(3), row.integer(4), row.integer(5), token});
  }
  return claimed;
}

bool complete(store::Tx& tx, const Job& job) {
  return tx.exec("DELETE FROM jobs WHERE tenant_id = ? AND id = ? AND claim_token = ?",
                 {job.tenant_id, job.id, job.claim_token}) == 1;
}

bool reschedule(store::Tx& tx, const Job& job, time::Micros run_at) {
  return tx.exec("UPDATE jobs SET run_at = ?, attempts = 0, lease_until = NULL, claimed_by = NULL, "
                 "claim_token = NULL, last_error = NULL "
                 "WHERE tenant_id = ? AND id = ? AND claim_token = ?",
                 {run_at, job.tenant_id, job.id, job.claim_token}) == 1;
}

bool fail(store::Tx& tx, const Job& job, std::string_view error,
          std::optional<time::Micros> retry_at, time::Micros now) {
  store::Value failed_at = retry_at ? store::Value(nullptr) : store::Value(time::iso(now));
  return tx.exec("UPDATE jobs SET run_at = ?, lease_until = NULL, claimed_by = NULL, "
                 "claim_token = NULL, last_error = ?, failed_at = ? "
                 "WHERE tenant_id = ? AND id = ? AND claim_token = ?",
                 {retry_at.value_or(job.run_at), std::string(error), failed_at, job.tenant_id,
                  job.id, job.claim_token}) == 1;
}

}  // namespace tesoro::jobs
