#pragma once
// Background jobs in the database, so that workers on several nodes share one queue. A job is
// due when its `run_at` (the tenant's clock: a sandbox clock advance makes jobs due sooner) has
// come. A worker claims due jobs with a lease in real time (FOR UPDATE SKIP LOCKED on PostgreSQL,
// so two nodes never claim the same job); a job whose worker died is claimable again once its
// lease ends. Each claim draws a fresh claim token: completing, rescheduling or failing a job is
// fenced by it, so a worker whose lease ran out cannot finish what another has taken over.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/time.hpp"
#include "store/store.hpp"

namespace tesoro::jobs {

struct Job {
  std::string tenant_id;
  std::string id;
  std::string kind;
  std::string payload;
  std::int64_t attempts = 0;  // claims since the job last made progress
  time::Micros run_at = 0;    // tenant clock
  std::string claim_token;
};

// The topic tx.notify() raises for a job kind: the runner wakes the kind's worker on it.
std::string topic(std::string_view kind);

// Queues a job due at `run_at` (tenant clock); `now` is the tenant's time of enqueueing. Wakes
// the kind's worker after commit.
std::string enqueue(store::Tx& tx, std::string_view tenant_id, std::string_view kind,
                    std::string_view payload, time::Micros run_at, time::Micros now);
// Claims at most `limit` due jobs of `kind` for `lease_micros` of real time.
std::vector<Job> claim(store::Tx& tx, std::string_view kind, std::string_view worker_id,
                       std::int64_t limit, time::Micros real_now, time::Micros lease_micros);
// Each returns false when the claim was lost (the lease ended and another worker claimed the job
// since): the caller must then undo what it did for the job.
// Done: the job leaves the queue.
bool complete(store::Tx& tx, const Job& job);
// Done for now, to run again at `run_at` (tenant clock): a job that moves through steps.
bool reschedule(store::Tx& tx, const Job& job, time::Micros run_at);
// This attempt failed: run again at `retry_at` (tenant clock), or, without one, keep the job as
// failed (never claimed again) with its last error for the operator.
bool fail(store::Tx& tx, const Job& job, std::string_view error,
          std::optional<time::Micros> retry_at, time::Micros now);

}  // namespace tesoro::jobs
