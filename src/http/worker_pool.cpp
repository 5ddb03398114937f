#include "http/worker_pool.hpp"

#include <algorithm>
#include <utility>

namespace tesoro::http {

WorkerPool::WorkerPool(int threads, std::chrono::milliseconds idle_after,
                       std::function<void()> on_idle)
    : idle_after_(idle_after), on_idle_(std::move(on_idle)) {
  threads_.reserve(static_cast<std::size_t>(std::max(threads, 1)));
  for (int i = 0; i < std::max(threads, 1); ++i) threads_.emplace_back([this] { run(); });
}

WorkerPool::~WorkerPool() { join(); }

void WorkerPool::post(std::function<void()> work) {
  std::lock_guard lock(mutex_);
  if (stopping_) return;
  if (waiting_.empty()) {
    queued_.push_back(std::move(work));
    return;
  }
  Waiter* waiter = waiting_.back();
  waiting_.pop_back();
  waiter->work = std::move(work);
  waiter->wake.notify_one();
}

void WorkerPool::join() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (Waiter* waiter : waiting_) {
      waiter->stop = true;
      waiter->wake.notify_one();
    }
    waiting_.clear();
  }
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

int WorkerPool::waiting_threads() {
  std::lock_guard lock(mutex_);
  return static_cast<int>(waiting_.size());
}

void WorkerPool::run() {
  Waiter self;
  bool idle_called = false;
  std::unique_lock lock(mutex_);
  for (;;) {
    std::function<void()> work;
    if (!queued_.empty()) {
      work = std::move(queued_.front());
      queued_.pop_front();
    } else if (stopping_) {
      return;
    } else {
      waiting_.push_back(&self);
      const auto handed = [&self] { return self.work || self.stop; };
      if (idle_called) {
        self.wake.wait(lock, handed);
      } else if (!self.wake.wait_for(lock, idle_after_, handed)) {
        // Still in waiting_ (post() and join() take a waiter out before they wake it).
        waiting_.erase(std::find(waiting_.begin(), waiting_.end(), &self));
        idle_called = true;
        if (on_idle_) {
          lock.unlock();
          on_idle_();
          lock.lock();
        }
        continue;
      }
      if (!self.work) return;  // stopped
      work = std::move(self.work);
      self.work = nullptr;
    }
    lock.unlock();
    work();
    idle_called = false;
    lock.lock();
  }
}

}  // namespace tesoro::http
