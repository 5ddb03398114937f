// The handlers' thread pool: work runs on many threads at once, goes to the thread that waited
// last, every queued piece runs before join() returns, and a thread idle for a while calls its
// idle hook once until it works again.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "http/worker_pool.hpp"

using namespace std::chrono_literals;
using tesoro::http::WorkerPool;

namespace {

constexpr auto k_never = std::chrono::hours(1);  // an idle time no test reaches
constexpr auto k_deadline = 10s;                  // how long a test waits for what must happen

// Waits until `done()` holds, at most k_deadline; false when it never did.
bool eventually(const std::function<bool()>& done) {
  const auto until = std::chrono::steady_clock::now() + k_deadline;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// Blocks its callers until open() is called.
class Gate {
 public:
  void wait() {
    std::unique_lock lock(mutex_);
    opened_.wait(lock, [this] { return open_; });
  }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    opened_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable opened_;
  bool open_ = false;
};

}  // namespace

TEST(WorkerPoolTest, RunsPostedWorkOnAsManyThreadsAtOnce) {
  WorkerPool pool(4, k_never, {});
  ASSERT_TRUE(eventually([&] { return pool.waiting_threads() == 4; }));
  Gate gate;
  std::atomic<int> running{0};
  std::mutex mutex;
  std::set<std::thread::id> threads;
  for (int i = 0; i < 4; ++i) {
    pool.post([&] {
      {
        std::lock_guard lock(mutex);
        threads.insert(std::this_thread::get_id());
      }
      ++running;
      gate.wait();  // each holds its thread: the four run together or the test times out
    });
  }
  EXPECT_TRUE(eventually([&] { return running.load() == 4; }));
  gate.open();
  pool.join();
  EXPECT_EQ(threads.size(), 4u);
}

TEST(WorkerPoolTest, GivesWorkToTheThreadThatWaitedLast) {
  WorkerPool pool(8, k_never, {});
  ASSERT_TRUE(eventually([&] { return pool.waiting_threads() == 8; }));
  std::set<std::thread::id> threads;
  for (int i = 0; i < 20; ++i) {
    std::atomic<bool> done{false};
    pool.post([&] {
      threads.insert(std::this_thread::get_id());  // one piece at a time: no race
      done = true;
    });
    ASSERT_TRUE(eventually([&] { return done.load() && pool.waiting_threads() == 8; }));
  }
  // Twenty pieces, one after another: all on one thread, the others left asleep.
  EXPECT_EQ(threads.size(), 1u);
}

TEST(WorkerPoolTest, JoinRunsWhatWasQueuedAndDropsWhatComesAfter) {
  WorkerPool pool(1, k_never, {});
  Gate gate;
  std::atomic<int> ran{0};
  pool.post([&] {
    gate.wait();
    ++ran;
  });
  for (int i = 0; i < 10; ++i) pool.post([&] { ++ran; });  // queued behind the first
  std::thread joiner([&] { pool.join(); });
  gate.open();
  joiner.join();
  EXPECT_EQ(ran.load(), 11);
  pool.post([&] { ++ran; });
  pool.join();  // a second join returns at once
  EXPECT_EQ(ran.load(), 11);
}

TEST(WorkerPoolTest, AnIdleThreadCallsTheHookOnceUntilItWorksAgain) {
  std::atomic<int> idle_calls{0};
  WorkerPool pool(2, 10ms, [&] { ++idle_calls; });
  // Both threads wait 10 ms for work, then call the hook, once each.
  ASSERT_TRUE(eventually([&] { return idle_calls.load() == 2; }));
  std::this_thread::sleep_for(100ms);  // ten idle times more: no second call
  EXPECT_EQ(idle_calls.load(), 2);
  EXPECT_EQ(pool.waiting_threads(), 2);  // after the hook they wait on, without a deadline

  std::atomic<bool> done{false};
  pool.post([&] { done = true; });
  ASSERT_TRUE(eventually([&] { return done.load(); }));
  // The thread that worked is idle again 10 ms later: one more call.
  EXPECT_TRUE(eventually([&] { return idle_calls.load() == 3; }));
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(idle_calls.load(), 3);
  pool.join();
}

TEST(WorkerPoolTest, ASteadyLoadNeverCallsTheHook) {
  std::atomic<int> idle_calls{0};
  WorkerPool pool(1, 150ms, [&] { ++idle_calls; });
  // Work every few milliseconds for twice the idle time or more: the thread never waits 150 ms.
  for (int i = 0; i < 60; ++i) {
    std::atomic<bool> done{false};
    pool.post([&] { done = true; });
    ASSERT_TRUE(eventually([&] { return done.load(); }));
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(idle_calls.load(), 0);
  pool.join();
}
