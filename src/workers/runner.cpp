#include "workers/runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/ids.hpp"
#include "core/limits.hpp"
#include "core/log.hpp"
#include "core/metrics.hpp"
#include "core/thread_priority.hpp"
#include "domain/tenant_clock/tenant_clock.hpp"

namespace tesoro::workers {
namespace {

constexpr std::string_view k_claim_lost = "job_claim_lost";

std::string node_identity() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return std::string(host) + ":" + std::to_string(::getpid()) + ":" + ids::generate("node");
}

}  // namespace

struct Runner::Slot {
  std::string name;
  std::vector<std::string> topics;
  std::chrono::milliseconds interval;
  std::function<bool()> pass;
  std::function<bool()> yield_while;  // PeriodicWorker's
  int yield_factor = 0;
  std::chrono::milliseconds gather{0};  // PeriodicWorker's
  std::mutex mutex;
  std::condition_variable wake;
  bool woken = false;
  bool stopping = false;
  std::thread thread;
};

time::Micros backoff_micros(std::int64_t attempt) {
  std::int64_t seconds = limits::k_job_backoff_first_seconds;
  for (std::int64_t i = 1; i < attempt && seconds < limits::k_job_backoff_max_seconds; ++i) {
    seconds *= 2;
  }
  return std::min(seconds, limits::k_job_backoff_max_seconds) * time::k_micros_per_second;
}

Runner::Runner(store::Store& store, const time::Clock& clock)
    : store_(store), clock_(clock), node_id_(node_identity()) {}

Runner::~Runner() { stop(); }

void Runner::add(JobWorker worker) {
  auto slot = std::make_unique<Slot>();
  slot->name = worker.kind;
  // New jobs of its kind, and a clock advance that may have made queued ones due.
  slot->topics = {jobs::topic(worker.kind), std::string(tenant_clock::k_advanced_topic)};
  slot->interval = worker.poll;
  std::string worker_id = node_id_ + "/" + worker.kind;
  slot->pass = [this, worker = std::move(worker), worker_id] { return job_pass(worker, worker_id); };
  slots_.push_back(std::move(slot));
}

void Runner::add(PeriodicWorker worker) {
  auto slot = std::make_unique<Slot>();
  slot->name = worker.name;
  slot->topics = worker.topics;
  slot->interval = worker.interval;
  slot->pass = [this, run = std::move(worker.run)] { return run(store_, clock_.now()); };
  slot->yield_while = std::move(worker.yield_while);
  slot->yield_factor = worker.yield_factor;
  slot->gather = worker.gather;
  slots_.push_back(std::move(slot));
}

void Runner::start(std::function<void()> thread_started) {
  store_.set_listener([this](const std::string& topic) { notify(topic); });
  for (auto& slot : slots_) {
    slot->thread = std::thread([this, raw = slot.get(), thread_started] {
      thread_priority::name_this_thread("worker");
      if (thread_started) thread_started();
      loop(*raw);
    });
    log::write(log::Level::info, "worker.started", {{"worker", slot->name}});
  }
  started_ = true;
}

void Runner::stop() {
  if (!started_) return;
  started_ = false;
  for (auto it = slots_.rbegin(); it != slots_.rend(); ++it) {
    Slot& slot = **it;
    {
      std::lock_guard lock(slot.mutex);
      slot.stopping = true;
    }
    slot.wake.notify_all();
    if (slot.thread.joinable()) slot.thread.join();
    log::write(log::Level::info, "worker.stopped", {{"worker", slot.name}});
  }
}

void Runner::notify(const std::string& topic) {
  for (auto& slot : slots_) {
    if (std::find(slot->topics.begin(), slot->topics.end(), topic) == slot->topics.end()) continue;
    {
      std::lock_guard lock(slot->mutex);
      slot->woken = true;
    }
    slot->wake.notify_one();
  }
}

bool Runner::run_once(std::string_view name) {
  for (auto& slot : slots_) {
    if (slot->name == name) return slot->pass();
  }
  return false;
}

void Runner::loop(Slot& slot) {
  while (true) {
    bool busy = false;
    const auto started = std::chrono::steady_clock::now();
    try {
      busy = slot.pass();
    } catch (const std::exception& failure) {
      // The store is away or the pass has a bug: count it and try again after the interval.
      metrics::count_worker_run(slot.name, true);
      log::write(log::Level::warn, "worker.pass_failed",
                 {{"worker", slot.name}, {"what", failure.what()}});
    }
    std::unique_lock lock(slot.mutex);
    if (slot.stopping) return;
    give_way(slot, lock, std::chrono::steady_clock::now() - started);
    if (slot.stopping) return;
    if (busy) continue;
    const bool woken =
        slot.wake.wait_for(lock, slot.interval, [&] { return slot.woken || slot.stopping; });
    if (woken && slot.gather.count() > 0 && !slot.stopping) {
      slot.wake.wait_for(lock, slot.gather, [&] { return slot.stopping; });
    }
    slot.woken = false;
    if (slot.stopping) return;
  }
}

void Runner::give_way(Slot& slot, std::unique_lock<std::mutex>& lock,
                      std::chrono::steady_clock::duration last_pass) {
  if (slot.yield_factor <= 0 || !slot.yield_while) return;
  const auto until = std::chrono::steady_clock::now() + last_pass * slot.yield_factor;
  // Whether requests still write is polled: they do not wake the worker when they end.
  while (!slot.stopping && slot.yield_while()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= until) return;
    const auto look_every = std::chrono::milliseconds(limits::k_give_way_poll_ms);
    slot.wake.wait_until(lock, std::min(until, now + look_every), [&] { return slot.stopping; });
  }
}

bool Runner::job_pass(const JobWorker& worker, const std::string& worker_id) {
  const time::Micros real_now = clock_.now();
  auto claimed = store_.write<std::vector<jobs::Job>>(
      [&](store::Tx& tx) -> Result<std::vector<jobs::Job>> {
        return jobs::claim(tx, worker.kind, worker_id, worker.batch, real_now,
                           worker.lease_micros);
      });
  if (!claimed) return false;
  for (const jobs::Job& job : claimed.value()) run_job(worker, worker_id, job, real_now);
  return !claimed->empty();
}

void Runner::run_job(const JobWorker& worker, const std::string& worker_id, const jobs::Job& job,
                     time::Micros real_now) {
  std::string failure;
  try {
    auto ran = store_.write<Unit>([&](store::Tx& tx) -> Status {
      const time::Micros tenant_now = tenant_clock::now(tx, job.tenant_id, real_now);
      auto decided = worker.handle(tx, {job, tenant_now});
      if (!decided) return std::move(decided).error();
      bool held = decided.value() ? jobs::reschedule(tx, job, *decided.value())
                                  : jobs::complete(tx, job);
      // Another worker took the job over: undo this run's effects, leave the job to it.
      if (!held) return errors::make(std::string(k_claim_lost), "the job's lease was lost");
      // A metric is an outside effect: it follows the commit, once, whatever the retries.
      const double lag_seconds =
          static_cast<double>(std::max<time::Micros>(0, tenant_now - job.run_at)) /
          time::k_micros_per_second;
      tx.after_commit([&worker, lag_seconds] { metrics::set_worker_lag(worker.kind, lag_seconds); });
      return ok_status();
    });
    if (ran) {
      metrics::count_worker_run(worker.kind, false);
      return;
    }
    if (ran.error().first_code() == k_claim_lost) {
      log::write(log::Level::warn, "worker.claim_lost",
                 {{"worker", worker.kind}, {"job_id", job.id}, {"worker_id", worker_id}});
      return;
    }
    failure = ran.error().first_code() + ": " + ran.error().message;
  } catch (const std::exception& thrown) {
    failure = thrown.what();
  }
  metrics::count_worker_run(worker.kind, true);
  const bool give_up = job.attempts >= worker.attempts_max;
  log::write(give_up ? log::Level::error : log::Level::warn, "worker.job_failed",
             {{"worker", worker.kind}, {"job_id", job.id}, {"tenant_id", job.tenant_id},
              {"attempt", job.attempts}, {"what", failure}});
  try {
    static_cast<void>(store_.write<bool>([&](store::Tx& tx) -> Result<bool> {
      const time::Micros tenant_now = tenant_clock::now(tx, job.tenant_id, real_now);
      std::optional<time::Micros> retry_at;
      if (!give_up) retry_at = tenant_now + backoff_micros(job.attempts);
      return jobs::fail(tx, job, failure, retry_at, tenant_now);
    }));
  } catch (const std::exception&) {
    // Unrecorded: the lease runs out and the job is claimed again, attempts counted.
  }
}

}  // namespace tesoro::workers
