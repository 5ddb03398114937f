#pragma once
// Background jobs in the database, so that workers on several nodes share one queue. A worker
// claims due jobs with a lease (FOR UPDATE SKIP LOCKED on PostgreSQL, so two nodes never claim
// the same job); a job whose worker died is claimable again once its lease ends.
#include <cstdint>
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
  std::int64_t attempts = 0;
};

std::string enqueue(store::Tx& tx, std::string_view tenant_id, std::string_view kind,
                    std::string_view payload, time::Micros run_at);
std::vector<Job> claim(store::Tx& tx, std::string_view kind, std::string_view worker_id,
                       std::int64_t limit, time::Micros now, time::Micros lease_micros);
// Done: the job leaves the queue. Both return false when the claim was lost (the lease ended and
// another worker claimed the job since): the caller must then drop its result.
bool complete(store::Tx& tx, const Job& job, std::string_view worker_id);
// Failed this time: released for another try at run_at.
bool retry_at(store::Tx& tx, const Job& job, std::string_view worker_id, time::Micros run_at);

}  // namespace tesoro::jobs
