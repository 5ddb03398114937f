// Background work on both engines: the tenant clock moves due times, the runner runs, retries
// and gives up on jobs, a job whose worker died is taken over, and workers wake on commits.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "api/error_status.hpp"
#include "core/metrics.hpp"
#include "domain/auth/credentials.hpp"
#include "domain/tenant_clock/tenant_clock.hpp"
#include "domain/jobs/jobs.hpp"
#include "manual_clock.hpp"
#include "test_stores.hpp"
#include "workers/runner.hpp"

using namespace tesoro;
using test_stores::TempStore;

namespace {

constexpr time::Micros k_second = time::k_micros_per_second;

using test_clock::ManualClock;

class WorkersTest : public test_stores::EngineStoreTest {
 protected:
  void SetUp() override {
    EngineStoreTest::SetUp();
    if (IsSkipped()) return;
    tenant = temp->store->write<std::string>([&](store::Tx& tx) {
      return auth::create_tenant(tx, "clock test", "sandbox", clock.now());
    }).value();
  }

  std::string enqueue(const std::string& kind, time::Micros run_at) {
    return temp->store->write<std::string>([&](store::Tx& tx) -> Result<std::string> {
      return jobs::enqueue(tx, tenant, kind, "{}", run_at, clock.now());
    }).value();
  }

  Result<time::Micros> advance(std::int64_t seconds) {
    return temp->store->write<time::Micros>([&](store::Tx& tx) {
      return tenant_clock::advance(tx, tenant, seconds, clock.now());
    });
  }

  std::optional<store::Row> job_row(const std::string& id) {
    return temp->store->read<std::optional<store::Row>>(
        [&](store::Tx& tx) -> Result<std::optional<store::Row>> {
          return tx.query_one("SELECT attempts, last_error, failed_at, run_at FROM jobs WHERE id = ?", {id});
        }).value();
  }

  ManualClock clock{time::now_micros()};
  std::string tenant;
};

}  // namespace

TEST_P(WorkersTest, TenantClockOnlyMovesForwardWithinItsLimits) {
  auto moved = advance(3600);
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(moved.value(), clock.now() + 3600 * k_second);
  EXPECT_EQ(advance(0).error().first_code(), "validation_error");
  EXPECT_EQ(advance(-5).error().first_code(), "validation_error");
  EXPECT_EQ(advance(limits::k_clock_advance_max_seconds + 1).error().first_code(), "validation_error");
  // A hundred years ahead is the end of the road; what was there stays.
  for (int i = 0; i < 99; ++i) ASSERT_TRUE(advance(limits::k_clock_advance_max_seconds).ok());
  auto too_far = advance(limits::k_clock_advance_max_seconds);
  ASSERT_FALSE(too_far.ok());
  EXPECT_EQ(too_far.error().first_code(), "clock_limit_reached");
  auto offset = temp->store->read<time::Micros>([&](store::Tx& tx) -> Result<time::Micros> {
    return tenant_clock::offset(tx, tenant);
  }).value();
  EXPECT_EQ(offset, (3600 + 99 * limits::k_clock_advance_max_seconds) * k_second);
  auto unknown = temp->store->write<time::Micros>([&](store::Tx& tx) {
    return tenant_clock::advance(tx, "ten_unknown", 5, clock.now());
  });
  EXPECT_EQ(tesoro::api::http_status(unknown.error()), 404);
}

TEST_P(WorkersTest, ClockAdvanceMakesADueJobRun) {
  std::atomic<int> ran{0};
  workers::Runner runner(*temp->store, clock);
  runner.add(workers::JobWorker{"expire", [&](store::Tx&, const workers::JobRun& run)
                                              -> Result<std::optional<time::Micros>> {
    EXPECT_GE(run.tenant_now, run.job.run_at);
    ++ran;
    return std::optional<time::Micros>{};
  }});
  std::string id = enqueue("expire", clock.now() + 30LL * 86400 * k_second);  // in 30 days
  EXPECT_FALSE(runner.run_once("expire"));
  EXPECT_EQ(ran.load(), 0);
  ASSERT_TRUE(advance(30 * 86400).ok());  // the tenant's clock, not real time, moves
  EXPECT_TRUE(runner.run_once("expire"));
  EXPECT_EQ(ran.load(), 1);
  EXPECT_FALSE(job_row(id).has_value());  // done: out of the queue
}

TEST_P(WorkersTest, FailedJobsRetryWithBackoffThenAreKeptAsFailed) {
  workers::Runner runner(*temp->store, clock);
  workers::JobWorker worker{"flaky", [&](store::Tx& tx, const workers::JobRun&)
                                         -> Result<std::optional<time::Micros>> {
    // The run's effects are undone with its failure.
    tx.exec("INSERT INTO events (tenant_id, id, type, data, inserted_at) VALUES ('t', 'flaky-effect', 'x', '{}', 'now')");
    return errors::make("network_down", "the network did not answer");
  }};
  worker.attempts_max = 3;
  runner.add(std::move(worker));
  std::string id = enqueue("flaky", clock.now());
  EXPECT_TRUE(runner.run_once("flaky"));
  auto row = job_row(id);
  ASSERT_TRUE(row);
  EXPECT_EQ(row->integer(0), 1);
  EXPECT_NE(row->text(1).find("network_down"), std::string::npos);
  EXPECT_TRUE(row->is_null(2));
  EXPECT_FALSE(runner.run_once("flaky"));  // backing off: due again in 1 s of tenant time
  ASSERT_TRUE(advance(1).ok());
  EXPECT_TRUE(runner.run_once("flaky"));
  EXPECT_FALSE(runner.run_once("flaky"));  // then 2 s
  ASSERT_TRUE(advance(2).ok());
  EXPECT_TRUE(runner.run_once("flaky"));
  row = job_row(id);
  ASSERT_TRUE(row);
  EXPECT_EQ(row->integer(0), 3);
  EXPECT_FALSE(row->is_null(2)) << "kept as failed after its last attempt";
  ASSERT_TRUE(advance(3600).ok());
  EXPECT_FALSE(runner.run_once("flaky"));  // never claimed again
  auto events = temp->store->read<std::int64_t>([](store::Tx& tx) -> Result<std::int64_t> {
    return tx.query_one("SELECT COUNT(*) FROM events")->integer(0);
  }).value();
  EXPECT_EQ(events, 0);
  EXPECT_EQ(workers::backoff_micros(1), 1 * k_second);
  EXPECT_EQ(workers::backoff_micros(4), 8 * k_second);
  EXPECT_EQ(workers::backoff_micros(40), limits::k_job_backoff_max_seconds * k_second);
}

// A worker that dies mid-job (its process killed: it never completes) loses the job when its
// lease ends; another node's worker takes it over, and the dead one's late completion is refused.
TEST_P(WorkersTest, AJobOfAWorkerKilledMidJobIsTakenOver) {
  std::string id = enqueue("deliver", clock.now());
  auto dead_claim = temp->store->write<std::vector<jobs::Job>>(
      [&](store::Tx& tx) -> Result<std::vector<jobs::Job>> {
        return jobs::claim(tx, "deliver", "node-a/deliver", 10, clock.now(), 30 * k_second);
      }).value();
  ASSERT_EQ(dead_claim.size(), 1u);

  auto other_node = temp->open_again();
  workers::Runner survivor(*other_node, clock);
  std::atomic<int> ran{0};
  survivor.add(workers::JobWorker{"deliver", [&](store::Tx&, const workers::JobRun& run)
                                                 -> Result<std::optional<time::Micros>> {
    EXPECT_EQ(run.job.attempts, 2);
    ++ran;
    return std::optional<time::Micros>{};
  }});
  EXPECT_FALSE(survivor.run_once("deliver"));  // the lease still holds
  clock.advance(31 * k_second);                // real time: leases are not simulated
  EXPECT_TRUE(survivor.run_once("deliver"));
  EXPECT_EQ(ran.load(), 1);
  EXPECT_FALSE(job_row(id).has_value());
  EXPECT_FALSE(temp->store->write<bool>([&](store::Tx& tx) -> Result<bool> {
    return jobs::complete(tx, dead_claim[0]);
  }).value());
}

TEST_P(WorkersTest, AWorkerThatLostItsLeaseUndoesItsRun) {
  std::string id = enqueue("slow", clock.now());
  auto other_node = temp->open_again();
  workers::Runner slow(*temp->store, clock);
  slow.add(workers::JobWorker{"slow", [&](store::Tx& tx, const workers::JobRun&)
                                          -> Result<std::optional<time::Micros>> {
    tx.exec("INSERT INTO events (tenant_id, id, type, data, inserted_at) VALUES ('t', 'slow-effect', 'x', '{}', 'now')");
    // Meanwhile its lease ran out and another node claimed the job.
    clock.advance(31 * k_second);
    auto taken = other_node->write<std::vector<jobs::Job>>([&](store::Tx& other) -> Result<std::vector<jobs::Job>> {
      return jobs::claim(other, "slow", "node-b/slow", 10, clock.now(), 30 * k_second);
    });
    EXPECT_EQ(taken.value().size(), 1u);
    return std::optional<time::Micros>{};
  }});
  if (GetParam() == store::Engine::sqlite) {
    GTEST_SKIP() << "one SQLite writer: the other node's claim would wait for this unit";
  }
  EXPECT_TRUE(slow.run_once("slow"));
  auto effects = temp->store->read<std::int64_t>([](store::Tx& tx) -> Result<std::int64_t> {
    return tx.query_one("SELECT COUNT(*) FROM events")->integer(0);
  }).value();
  EXPECT_EQ(effects, 0) << "the run that lost its claim must leave nothing behind";
  EXPECT_TRUE(job_row(id).has_value());  // still there, for node b
}

TEST_P(WorkersTest, StartedWorkersWakeOnCommitAndStopGracefully) {
  std::atomic<int> ran{0};
  time::SystemClock real;
  workers::Runner runner(*temp->store, real);
  workers::JobWorker worker{"wake", [&](store::Tx&, const workers::JobRun&)
                                        -> Result<std::optional<time::Micros>> {
    ++ran;
    return std::optional<time::Micros>{};
  }};
  worker.poll = std::chrono::milliseconds(60'000);  // only the after-commit notification wakes it
  runner.add(std::move(worker));
  runner.start();
  static_cast<void>(temp->store->write<std::string>([&](store::Tx& tx) -> Result<std::string> {
    return jobs::enqueue(tx, tenant, "wake", "{}", real.now(), real.now());
  }));
  for (int i = 0; i < 500 && ran.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(ran.load(), 1);
  runner.stop();
  EXPECT_NE(metrics::render_prometheus().find("tesoro_worker_runs_total{worker=\"wake\"}"),
            std::string::npos);
}

// Stop is graceful: a job being handled finishes (and commits) before stop() returns.
TEST_P(WorkersTest, StopLetsTheRunningJobFinish) {
  time::SystemClock real;
  workers::Runner runner(*temp->store, real);
  std::promise<void> handler_started;
  std::promise<void> release_handler;
  auto released = release_handler.get_future().share();
  runner.add(workers::JobWorker{"slow", [&](store::Tx&, const workers::JobRun&)
                                            -> Result<std::optional<time::Micros>> {
    handler_started.set_value();
    released.wait();
    return std::optional<time::Micros>{};
  }});
  std::string id = enqueue("slow", real.now());
  runner.start();
  handler_started.get_future().wait();
  auto stopped = std::async(std::launch::async, [&] { runner.stop(); });
  EXPECT_EQ(stopped.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
      << "stop() returned while a job was still being handled";
  release_handler.set_value();
  stopped.get();
  EXPECT_FALSE(job_row(id).has_value()) << "the running job finished and committed";
}

namespace {

// A periodic worker for the giving-way tests: each pass takes about `pass_ms` (work that a
// real pass would do), says it is busy (so without giving way the next would start at once),
// and reports when it starts.
struct CountedPasses {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::chrono::steady_clock::time_point> starts;
  std::vector<std::chrono::steady_clock::duration> lengths;

  workers::PeriodicWorker worker(std::string name, int pass_ms, std::function<bool()> yield_while,
                                 int yield_factor) {
    workers::PeriodicWorker out{std::move(name), std::chrono::milliseconds(60'000), {},
                                [this, pass_ms](store::Store&, time::Micros) {
                                  const auto started = std::chrono::steady_clock::now();
                                  std::this_thread::sleep_for(std::chrono::milliseconds(pass_ms));
                                  std::lock_guard lock(mutex);
                                  starts.push_back(started);
                                  lengths.push_back(std::chrono::steady_clock::now() - started);
                                  changed.notify_all();
                                  return true;
                                }};
    out.yield_while = std::move(yield_while);
    out.yield_factor = yield_factor;
    return out;
  }

  // Waits at most `limit` for the count of passes to reach `count`.
  bool reached(std::size_t count, std::chrono::milliseconds limit) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, limit, [&] { return starts.size() >= count; });
  }
};

}  // namespace

// While requests write, a worker that gives way waits yield_factor times its last pass's length
// before the next pass, instead of running again at once.
TEST_P(WorkersTest, AWorkerGivesWayWhileRequestsWrite) {
  time::SystemClock real;
  workers::Runner runner(*temp->store, real);
  CountedPasses passes;
  runner.add(passes.worker("giving way", 30, [] { return true; }, 3));
  runner.start();
  ASSERT_TRUE(passes.reached(2, std::chrono::seconds(10)));
  runner.stop();
  std::lock_guard lock(passes.mutex);
  const auto first_ended = passes.starts[0] + passes.lengths[0];
  EXPECT_GE(passes.starts[1] - first_ended, 3 * passes.lengths[0])
      << "the second pass started before three times the first one's length had passed";
}

// Once requests stop writing, the worker goes on at once instead of waiting out its pause; with
// nobody writing it never waits.
TEST_P(WorkersTest, AWorkerGoesOnOnceRequestsStopWriting) {
  time::SystemClock real;
  workers::Runner runner(*temp->store, real);
  std::atomic<bool> writing{true};
  CountedPasses passes;
  // A pause of 1000 passes of 20 ms: 20 s, far beyond the waits below.
  runner.add(passes.worker("goes on", 20, [&] { return writing.load(); }, 1000));
  runner.start();
  ASSERT_TRUE(passes.reached(1, std::chrono::seconds(10)));
  EXPECT_FALSE(passes.reached(2, std::chrono::milliseconds(300)))
      << "the worker ran again while requests were writing";
  writing = false;
  EXPECT_TRUE(passes.reached(2, std::chrono::seconds(5)))
      << "the worker kept waiting after requests stopped writing";
  EXPECT_TRUE(passes.reached(4, std::chrono::seconds(5))) << "busy passes follow one another";
  runner.stop();
}

// stop() ends a worker's pause at once: it does not wait out the pause.
TEST_P(WorkersTest, StopEndsAWorkersPause) {
  time::SystemClock real;
  workers::Runner runner(*temp->store, real);
  CountedPasses passes;
  runner.add(passes.worker("stopped while giving way", 20, [] { return true; }, 1000));
  runner.start();
  ASSERT_TRUE(passes.reached(1, std::chrono::seconds(10)));
  auto stopped = std::async(std::launch::async, [&] { runner.stop(); });
  EXPECT_EQ(stopped.wait_for(std::chrono::seconds(5)), std::future_status::ready)
      << "stop() waited for the pause (20 s) to end";
  stopped.get();
  std::lock_guard lock(passes.mutex);
  EXPECT_EQ(passes.starts.size(), 1U);
}

// A gathering worker woken by notifications waits before its pass, so that notifications
// arriving meanwhile are served by that one pass, not one pass each; stop() ends the wait.
TEST_P(WorkersTest, AGatheringWorkerServesTheNotificationsOfItsWaitInOnePass) {
  time::SystemClock real;
  workers::Runner runner(*temp->store, real);
  std::atomic<int> notified{0};
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<int> seen;  // notifications sent when each pass ran
  workers::PeriodicWorker worker{"gathering", std::chrono::milliseconds(60'000), {"gathered"},
                                 [&](store::Store&, time::Micros) {
                                   std::lock_guard lock(mutex);
                                   seen.push_back(notified.load());
                                   changed.notify_all();
                                   return false;
                                 }};
  worker.gather = std::chrono::milliseconds(1000);
  runner.add(std::move(worker));
  runner.start();
  const auto passes_reach = [&](std::size_t count, std::chrono::milliseconds limit) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, limit, [&] { return seen.size() >= count; });
  };
  ASSERT_TRUE(passes_reach(1, std::chrono::seconds(10)));  // the first pass, at start
  for (int i = 0; i < 3; ++i) {  // apart, so that without gathering each has its pass
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ++notified;
    runner.notify("gathered");
  }
  ASSERT_TRUE(passes_reach(2, std::chrono::seconds(10)));
  EXPECT_FALSE(passes_reach(3, std::chrono::milliseconds(800)))
      << "each notification had a pass of its own";
  {
    std::lock_guard lock(mutex);
    EXPECT_EQ(seen[1], 3) << "the pass ran before the notifications of its wait had come";
  }
  runner.stop();
}

// stop() ends a gathering worker's wait at once, and the pass it waited for does not run.
TEST_P(WorkersTest, StopEndsAGatheringWorkersWait) {
  time::SystemClock real;
  workers::Runner runner(*temp->store, real);
  std::atomic<int> passes{0};
  workers::PeriodicWorker worker{"gathering long", std::chrono::milliseconds(60'000),
                                 {"gathered"}, [&](store::Store&, time::Micros) {
                                   ++passes;
                                   return false;
                                 }};
  worker.gather = std::chrono::milliseconds(60'000);
  runner.add(std::move(worker));
  runner.start();
  for (int i = 0; i < 500 && passes.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(passes.load(), 1);  // the first pass, at start
  runner.notify("gathered");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto stopped = std::async(std::launch::async, [&] { runner.stop(); });
  EXPECT_EQ(stopped.wait_for(std::chrono::seconds(5)), std::future_status::ready)
      << "stop() waited for the gathering wait (60 s) to end";
  stopped.get();
  EXPECT_EQ(passes.load(), 1);
}

TESORO_ON_BOTH_ENGINES(WorkersTest);
