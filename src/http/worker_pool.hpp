#pragma once
// The threads that run the server's handlers. Work goes to the thread that became idle last, and
// a thread idle for a while calls `on_idle` once (the server gives its allocator's cache back
// there, docs/scaling.md "The allocator"): under a light load the same few threads take every
// request, their memory warm, while the others stay asleep and hold nothing.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tesoro::http {

class WorkerPool {
 public:
  // `threads` threads start at once. `on_idle` (may be empty) runs on a thread that has waited
  // `idle_after` for work, once until that thread runs work again.
  WorkerPool(int threads, std::chrono::milliseconds idle_after, std::function<void()> on_idle);
  ~WorkerPool();  // join()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Runs `work` on a pool thread: the one idle for the shortest time, else the first to finish
  // what it runs. Work must not throw.
  void post(std::function<void()> work);
  // Runs what was posted, then stops and joins the threads. Work posted after this is dropped.
  void join();
  // Threads waiting for work now (what the tests wait for).
  int waiting_threads();

 private:
  // A thread waiting for work: post() hands it work directly.
  struct Waiter {
    std::condition_variable wake;
    std::function<void()> work;
    bool stop = false;
  };
  void run();

  const std::chrono::milliseconds idle_after_;
  const std::function<void()> on_idle_;
  std::mutex mutex_;
  std::deque<std::function<void()>> queued_;  // posted while no thread waited
  std::vector<Waiter*> waiting_;               // the thread that waited last at the back
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace tesoro::http
