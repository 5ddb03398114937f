#include "http/later.hpp"

namespace tesoro::http {

void Later::begin(std::function<void(std::function<void()>)> run_on_worker,
                  std::function<void(Response)> send) {
  run_on_worker_ = std::move(run_on_worker);
  send_ = std::move(send);
  Start start = std::move(start_);
  start(*this);
}

void Later::resume(Work work) {
  // The Later lives until its work has run: the worker holds it.
  run_on_worker_([self = shared_from_this(), work = std::move(work)] {
    self->finish(self->guard_ ? self->guard_(work) : work());
  });
}

void Later::finish(Response response) {
  for (const auto& step : steps_) step(response);
  steps_.clear();  // what the steps hold (an idempotency claim) is let go now
  send_(std::move(response));
}

}  // namespace tesoro::http
