// The background job queue shared by every node.
#include "store/migrations/migrations.hpp"

namespace tesoro::store {

std::vector<Migration> job_migrations() {
  return {
      {3,
       "jobs",
       {
           "CREATE TABLE jobs (tenant_id TEXT NOT NULL, id TEXT NOT NULL, kind TEXT NOT NULL, "
           "payload TEXT NOT NULL, run_at BIGINT NOT NULL, attempts INTEGER NOT NULL, "
           "claimed_by TEXT, lease_until BIGINT, inserted_at TEXT NOT NULL, "
           "PRIMARY KEY (tenant_id, id))",
           "CREATE INDEX jobs_due ON jobs (kind, run_at)",
       }},
      {7,
       "job_runner",
       {
           // A fresh token per claim fences completion: a worker whose lease ran out cannot
           // finish a job another worker has taken over since.
           "ALTER TABLE jobs ADD COLUMN claim_token TEXT",
           "ALTER TABLE jobs ADD COLUMN last_error TEXT",
           // Set when a job ran out of attempts: kept for the operator, never claimed again.
           "ALTER TABLE jobs ADD COLUMN failed_at TEXT",
       }},
  };
}

}  // namespace tesoro::store
