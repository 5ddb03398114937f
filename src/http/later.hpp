#pragma once
// An answer that comes later. A handler that must wait on the network (a tenant's endpoint
// deciding a card authorization: domain/cards/authorization_decisions.hpp) returns a Response
// whose `later` is set instead of waiting: no thread is held while the network answers.
//
//   1. The handler makes a Later with the work that starts the wait, and returns.
//   2. Each layer the Response passes on its way out (the app's idempotency claim, its rate
//      headers, its log line) adds, with then(), what it would have done to the answer.
//   3. The server installs where work runs and where the answer goes (begin()), then starts it.
//   4. When the wait ends, on whatever thread it ends on, the work calls resume() with what
//      remains to do (a write unit, which may block on the database: it runs on a worker), or
//      finish() with the answer itself. The steps of 2 run on it, in order, and it is sent.
#include <functional>
#include <memory>

#include "http/message.hpp"

namespace tesoro::http {

class Later : public std::enable_shared_from_this<Later> {
 public:
  using Start = std::function<void(Later&)>;
  using Work = std::function<Response()>;
  using Guard = std::function<Response(const Work&)>;

  explicit Later(Start start) : start_(std::move(start)) {}

  // Before begin() only (the layers add theirs while the handler's call returns).
  void then(std::function<void(Response&)> step) { steps_.push_back(std::move(step)); }
  // Wraps every resumed work (the app turns an exception into an error answer there).
  void guard(Guard guard) { guard_ = std::move(guard); }

  // The server's part: `run_on_worker` runs work where it may block; `send` writes the answer.
  // Then the start runs (on the calling thread).
  void begin(std::function<void(std::function<void()>)> run_on_worker,
             std::function<void(Response)> send);

  // Runs `work` on a worker; its answer is the request's.
  void resume(Work work);
  // The request's answer. Once only.
  void finish(Response response);

 private:
  Start start_;
  std::vector<std::function<void(Response&)>> steps_;
  Guard guard_;
  std::function<void(std::function<void()>)> run_on_worker_;
  std::function<void(Response)> send_;
};

}  // namespace tesoro::http
