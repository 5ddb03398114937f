#pragma once
// The composition root: wires config, store, routes and the request pipeline
// (request id -> route -> auth -> rate limit -> idempotency -> handler -> log and metrics).
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <optional>
#include <mutex>
#include <thread>

#include "api/context.hpp"
#include "app/auth_failures.hpp"
#include "app/config.hpp"
#include "app/credential_cache.hpp"
#include "app/rate_limiter.hpp"
#include "http/message.hpp"
#include "http/router.hpp"
#include "core/clock.hpp"
#include "core/crypto.hpp"
#include "core/limits.hpp"
#include "http/client.hpp"
#include "store/store.hpp"
#include "workers/runner.hpp"

namespace tesoro::app {

class App {
 public:
  // `card_numbers`: the sealer of the card-number key (app/card_key.hpp).
  App(Config config, std::unique_ptr<store::Store> store, crypto::Sealer card_numbers);
  ~App();

  // Never throws: every failure becomes an envelope.
  http::Response handle(http::Request& request);
  http::Response render_transport_error(const Error& error, const http::Request& request);
  // handle(request) on the calling I/O thread (http::Handlers::handle_inline) for a request
  // that never waits long: one that only reads memory (health, metrics, no route), and on
  // SQLite a GET or HEAD, whose reads are WAL snapshots that never wait for the writer, when an
  // idle reader can be held for it (never waiting for one). nullopt otherwise: writes wait for
  // their group commit and PostgreSQL reads for the network, so the request goes to a worker.
  std::optional<http::Response> handle_inline(http::Request& request);
  // Whether the request's route takes a batch of items (api::RouteSpec::bulk:
  // http::Handlers::is_bulk).
  bool is_bulk(const http::Request& request) const;
  // The background workers (workers::Runner): the sweeper of expired idempotency records and
  // tokens, the event sequencer, and each module's job workers.
  void start_background(std::function<void()> thread_started = {});
  // Stops the workers, then the store: a write after this answers 503 at once.
  void stop_background();
  workers::Runner& runner() { return runner_; }
  // Called once the listener is bound, before any request: without --public-url, the base of
  // the urls the server hands out is the address it listens on, with the port it got (--listen
  // may ask for port 0).
  void listening_on(const std::string& host, unsigned short port);

 private:
  // Whether handling the request reads the database (a route that touches the store, the
  // console's API); memory-only requests (health, metrics, no route, console pages) do not.
  bool reads_store(const http::Request& request) const;
  http::Response dispatch(api::Context& context, const api::RouteSpec& route);
  // The request's principal (context.principal), or why it is refused. With `kept` (a store
  // whose units carry checks), a credential the cache keeps is not looked up: `check` is armed
  // with its lookup instead, which the request's first unit sends (credential_cache.hpp).
  std::optional<Error> authenticate(api::Context& context, const api::RouteSpec& route,
                                    std::optional<store::ArmedCheck>& check, bool kept);
  // The answer once the credential is known: the handler, under its idempotency key if any.
  http::Response respond(api::Context& context, const api::RouteSpec& route,
                         const std::optional<Error>& denied);
  // Requests under /console/api: the session's cookie, the Origin and, on state changes, the
  // CSRF token; the principal is the session's tenant with every scope of the route's surface.
  std::optional<Error> authenticate_console(api::Context& context, const api::RouteSpec& route);
  http::Response run_idempotent(api::Context& context, const api::RouteSpec& route,
                                const std::string& key);
  // The webhook fan-out and delivery workers (domain/webhooks/dispatcher.hpp).
  void add_webhook_workers();
  Config config_;
  std::unique_ptr<store::Store> store_;
  time::SystemClock clock_;  // before services_, which refers to it
  crypto::Sealer card_numbers_;  // likewise
  api::InFlightKeys in_flight_;
  CredentialCache credentials_;
  // Requests to tenants' authorization endpoints, on a thread of their own
  // (domain/cards/authorization_decisions.hpp).
  http_client::AsyncClient authorization_requests_{limits::k_authorization_requests_in_flight_max};
  api::Services services_;
  RateLimiter rate_limiter_;
  AuthFailureGuard auth_failures_;
  http::Router router_;
  api::Routes routes_;
  workers::Runner runner_;  // after store_: stopped and destroyed before it
  // Requests that may write (any method but GET and HEAD) being handled, from routing to their
  // answer: the network processor gives way to them (limits::k_transfer_processor_yield_factor).
  std::atomic<int> writing_requests_{0};
  // Set when the workers stop: webhook requests in flight are dropped instead of awaited.
  std::atomic<bool> stopping_{false};
};

}  // namespace tesoro::app
