#pragma once
// The background worker runner. Named workers, each on a thread of its own, started in the
// order they were added and stopped in reverse order (each finishes what it is doing first).
//
// - A job worker serves one kind of the `jobs` queue (domain/jobs): it claims due jobs with a
//   lease (so with several nodes on PostgreSQL each job runs on one of them, and a job whose
//   worker died is taken over when its lease ends), runs each job in a write unit of its own
//   together with the job's completion (fenced by the claim, so a worker that lost its lease
//   changes nothing), and on failure retries it with backoff on the tenant clock, at most
//   limits::k_job_attempts_max times, after which the job is kept as failed.
// - A periodic worker runs a pass every interval (sweeps, the event sequencer); a pass that says
//   it did work runs again at once, so a large sweep goes in bounded chunks without waiting.
// Both wake early on the store's after-commit notifications for their topics; polling covers
// what other nodes committed. Metrics per worker: runs, failures and the lag of the last job.
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.hpp"
#include "core/limits.hpp"
#include "core/result.hpp"
#include "domain/jobs/jobs.hpp"
#include "store/store.hpp"

namespace tesoro::workers {

struct JobRun {
  const jobs::Job& job;
  time::Micros tenant_now;  // the job's tenant clock at the start of this run
};

// Done (nullopt), or run again at this tenant time (a job that moves through steps). An Error is
// a failed attempt: every effect of the run is rolled back and the job retried with backoff.
using JobHandler =
    std::function<Result<std::optional<time::Micros>>(store::Tx&, const JobRun&)>;

struct JobWorker {
  std::string kind;  // the job kind it serves, and its name in logs and metrics
  JobHandler handle;
  int batch = limits::k_jobs_claimed_per_pass;
  int attempts_max = limits::k_job_attempts_max;
  time::Micros lease_micros = limits::k_job_lease_seconds * time::k_micros_per_second;
  std::chrono::milliseconds poll{limits::k_worker_poll_ms};
};

struct PeriodicWorker {
  std::string name;
  std::chrono::milliseconds interval;
  std::vector<std::string> topics;  // after-commit notifications that wake it early
  // One pass; true when it did work and should run again at once.
  std::function<bool(store::Store&, time::Micros real_now)> run;
  // Giving way (yield_factor 0: never): after a pass, while yield_while() holds, the next pass
  // waits up to yield_factor times the length of the last one. Work that can lag behind requests
  // (the sandbox network's steps) then takes at most 1 / (1 + yield_factor) of the time while
  // they keep coming, and none of theirs once they stop.
  std::function<bool()> yield_while;
  int yield_factor = 0;
  // Gathering (0: none): woken by a notification, the pass waits this long first, so that the
  // units committing meanwhile are taken by one pass instead of a pass each. For work a
  // notification starts per unit at a few hundred units a second (the event sequencer and the
  // webhook fan-out: docs/scaling.md); polls and passes that follow a busy one do not wait.
  std::chrono::milliseconds gather{0};
};

// Delay before retry `attempt` (1-based) of a failed job: 1 s, 2 s, 4 s ... at most an hour.
time::Micros backoff_micros(std::int64_t attempt);

class Runner {
 public:
  Runner(store::Store& store, const time::Clock& clock);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  void add(JobWorker worker);
  void add(PeriodicWorker worker);
  // Listens to the store's notifications and starts every worker, in the order added. Each
  // worker's thread is named "worker" and runs thread_started (when given) before its work.
  void start(std::function<void()> thread_started = {});
  // Stops the workers in reverse order; each finishes its current pass. Idempotent.
  void stop();
  // Wakes the workers that listen to `topic`.
  void notify(const std::string& topic);
  // One pass of the named worker on the calling thread, as its own thread would make it: for
  // tests that drive a worker step by step. Returns true when it did work.
  bool run_once(std::string_view name);

 private:
  struct Slot;
  bool job_pass(const JobWorker& worker, const std::string& worker_id);
  void run_job(const JobWorker& worker, const std::string& worker_id, const jobs::Job& job,
               time::Micros real_now);
  void loop(Slot& slot);
  // After a pass of a worker that gives way (PeriodicWorker::yield_factor): waits while requests
  // write, up to yield_factor times `last_pass`, or until stop(). `lock` holds slot's mutex.
  void give_way(Slot& slot, std::unique_lock<std::mutex>& lock,
                std::chrono::steady_clock::duration last_pass);

  store::Store& store_;
  const time::Clock& clock_;
  std::string node_id_;
  std::vector<std::unique_ptr<Slot>> slots_;
  bool started_ = false;
};

}  // namespace tesoro::workers
