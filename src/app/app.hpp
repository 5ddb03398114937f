#pragma once
// The composition root: wires config, store, routes and the request pipeline
// (request id -> route -> auth -> rate limit -> idempotency -> handler -> log and metrics).
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "api/context.hpp"
#include "app/config.hpp"
#include "app/rate_limiter.hpp"
#include "http/message.hpp"
#include "http/router.hpp"
#include "store/store.hpp"

namespace tesoro::app {

class App {
 public:
  App(Config config, std::unique_ptr<store::Store> store);
  ~App();

  // Never throws: every failure becomes an envelope.
  http::Response handle(http::Request& request);
  http::Response render_transport_error(const Error& error, const http::Request& request);
  // Background sweepers (expired idempotency records and tokens).
  void start_background();
  void stop_background();

 private:
  http::Response dispatch(api::Context& context, const api::RouteSpec& route);
  std::optional<Error> authenticate(api::Context& context, const api::RouteSpec& route);
  http::Response run_idempotent(api::Context& context, const api::RouteSpec& route,
                                const std::string& key);
  void sweep_loop();

  Config config_;
  std::unique_ptr<store::Store> store_;
  api::InFlightKeys in_flight_;
  api::Services services_;
  RateLimiter rate_limiter_;
  http::Router router_;
  api::Routes routes_;
  std::mutex sweep_mutex_;
  std::condition_variable sweep_wake_;
  bool sweep_stop_ = false;
  std::thread sweeper_;
};

}  // namespace tesoro::app
