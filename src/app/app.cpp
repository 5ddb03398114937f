#include "app/app.hpp"

#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>

#include "api/console.hpp"
#include "api/error_status.hpp"
#include "api/route_groups.hpp"
#include "core/ids.hpp"
#include "core/log.hpp"
#include "core/metrics.hpp"
#include "domain/cards/card_transactions.hpp"
#include "domain/collections/attempts.hpp"
#include "domain/collections/collections.hpp"
#include "domain/console/sessions.hpp"
#include "domain/events/events.hpp"
#include "domain/tenant_clock/tenant_clock.hpp"
#include "domain/transfers/outgoing_transfers.hpp"
#include "domain/transfers/processor.hpp"
#include "domain/webhooks/dispatcher.hpp"
#include "http/later.hpp"
#include "store/idempotency.hpp"

namespace tesoro::app {
namespace {

double default_rate(const Config& config) {
  if (config.rate_per_second >= 0) return config.rate_per_second;
  return config.is_sandbox() ? limits::k_sandbox_rate_per_second
                             : limits::k_production_rate_per_second;
}

double default_burst(const Config& config) {
  if (config.rate_burst > 0) return config.rate_burst;
  if (config.rate_per_second > 0) return config.rate_per_second * 2;
  return config.is_sandbox() ? limits::k_sandbox_rate_burst : limits::k_production_rate_burst;
}

api::Settings api_settings(const Config& config) {
  std::string public_url = config.public_url.empty() ? "http://" + config.listen : config.public_url;
  while (public_url.ends_with('/')) public_url.pop_back();
  return {config.environment, config.currencies, config.card_currencies, public_url,
          config.transfer_max_amount_minor,
          webhooks::Destinations{config.is_sandbox(), config.webhook_allowed_hosts}};
}

const std::string k_get = "GET";

// Metrics labels come from a fixed set: a client must not be able to mint new series.
const char* method_label(std::string_view method) {
  for (const char* known : {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}) {
    if (method == known) return known;
  }
  return "OTHER";
}

bool is_mutating(std::string_view method) {
  return method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE";
}

auth::Level level_for(std::string_view method) {
  if (method == "GET" || method == "HEAD") return auth::Level::read;
  if (method == "DELETE") return auth::Level::admin;
  return auth::Level::write;
}

// A client-supplied request id is echoed when it is short printable text; else we make one.
std::string request_id_for(const http::Request& request) {
  if (const std::string* given = request.header("x-request-id")) {
    bool clean = !given->empty() && given->size() <= 128;
    for (char c : *given) clean = clean && c > 0x20 && c < 0x7f;
    if (clean) return *given;
  }
  return ids::generate("req");
}

// RateLimit-Policy states the quota and its window (`50;w=2`: the burst, and the seconds an empty
// bucket takes to refill at the rate), so Limit, Remaining and Reset read against one window.
void add_rate_headers(http::Response& response, const RateLimiter::Decision& decision) {
  response.set_header("RateLimit-Policy", std::to_string(decision.limit) +
                                              ";w=" + std::to_string(decision.window_seconds));
  response.set_header("RateLimit-Limit", std::to_string(decision.limit));
  response.set_header("RateLimit-Remaining", std::to_string(decision.remaining));
  response.set_header("RateLimit-Reset", std::to_string(decision.reset_seconds));
}

// Releases an in-flight idempotency claim however the handler leaves.
struct ClaimGuard {
  api::InFlightKeys& keys;
  std::string claim;
  ~ClaimGuard() { keys.release(claim); }
};

// Counts itself in `count` (when given) for as long as it lives.
class CountedWhile {
 public:
  explicit CountedWhile(std::atomic<int>* count) : count_(count) {
    if (count_) count_->fetch_add(1);
  }
  ~CountedWhile() {
    if (count_) count_->fetch_sub(1);
  }
  CountedWhile(const CountedWhile&) = delete;
  CountedWhile& operator=(const CountedWhile&) = delete;

 private:
  std::atomic<int>* count_;
};

// A worker that moves what came due on tenant clocks, a bounded chunk per write unit, every
// interval (real time) and at once when a sandbox clock advance wakes it, so that an advance
// expires things at once. `expire(tx, real_now, chunk)` returns how many it moved.
// `topics` wake it besides the clock advance. `shared_chunk` (0: none) is its chunk while units
// of others were queued during its last pass (Store::writer_units: requests on SQLite's one
// writer, which runs units in turn), so that they wait less behind it.
workers::PeriodicWorker expiry_worker(std::string name, std::string log_event, int interval_ms,
                                      std::int64_t chunk,
                                      std::int64_t (*expire)(store::Tx&, time::Micros,
                                                             std::int64_t),
                                      std::vector<std::string> topics = {},
                                      std::int64_t shared_chunk = 0) {
  topics.emplace_back(tenant_clock::k_advanced_topic);
  auto others_wrote = std::make_shared<bool>(false);  // during the last pass
  return workers::PeriodicWorker{
      name, std::chrono::milliseconds(interval_ms), std::move(topics),
      [name, log_event, chunk, shared_chunk, expire, others_wrote](store::Store& store,
                                                                   time::Micros real_now) {
        const std::int64_t size = shared_chunk > 0 && *others_wrote ? shared_chunk : chunk;
        const std::uint64_t queued_before = store.writer_units();
        auto expired = store.write<std::int64_t>(
            [&](store::Tx& tx) -> Result<std::int64_t> { return expire(tx, real_now, size); });
        *others_wrote = store.writer_units() > queued_before + 1;  // more than its own unit
        if (expired.value() > 0) {
          log::write(log::Level::info, log_event, {{"count", expired.value()}});
          metrics::count_worker_run(name, false);
        }
        return expired.value() >= size;
      }};
}

// What every answer gets on its way out (App::handle): its request id, the console's headers, a
// count and a log line. Views of the request's strings.
struct AnswerNote {
  std::string_view request_id;
  std::string_view method;
  std::string_view target;
  std::string_view path;
  std::string_view route;
  std::string_view tenant_id;
  std::string_view remote;
  bool console_request = false;
  bool console_page = false;
  std::chrono::steady_clock::time_point started;
};

void finish_answer(const AnswerNote& note, http::Response& answer) {
  answer.set_header("X-Request-Id", std::string(note.request_id));
  if (note.console_request) api::add_console_headers(answer, !note.console_page);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - note.started).count();
  metrics::count_request(note.route, method_label(note.method), answer.status, seconds);
  if (log::enabled(log::Level::info)) {
    log::write(log::Level::info, "request",
               {{"request_id", note.request_id},
                {"method", note.method},
                {"path", api::loggable_path(note.path)},  // no secret of a path (tokens)
                {"route", note.route},
                {"status", answer.status},
                {"duration_ms", std::round(seconds * 1e6) / 1e3},  // microsecond precision
                {"tenant_id", note.tenant_id},
                {"remote", note.remote}});
  }
}

// An AnswerNote that owns its strings, for an answer that comes after the request's call.
class OwnedNote {
 public:
  explicit OwnedNote(const AnswerNote& note)
      : strings_{std::string(note.request_id), std::string(note.method), std::string(note.target),
                 std::string(note.path),       std::string(note.route),  std::string(note.tenant_id),
                 std::string(note.remote)},
        note_(note) {}
  OwnedNote(const OwnedNote& other) : strings_(other.strings_), note_(other.note_) {}
  AnswerNote note() const {
    AnswerNote out = note_;
    out.request_id = strings_[0];
    out.method = strings_[1];
    out.target = strings_[2];
    out.path = strings_[3];
    out.route = strings_[4];
    out.tenant_id = strings_[5];
    out.remote = strings_[6];
    return out;
  }

 private:
  std::array<std::string, 7> strings_;
  AnswerNote note_;  // its views are replaced by strings_'s in note()
};

// The answer to the exception being handled (call it in a catch block): 503 when the store is
// unavailable, else 500; the failure is logged, the client sees no detail of it.
http::Response failure_response(const api::ErrorScope& scope) {
  try {
    throw;
  } catch (const store::StoreError& failure) {
    log::write(log::Level::error, "store.failure",
               {{"request_id", scope.request_id}, {"what", failure.what()}});
    return api::render_error(failure.unavailable() ? errors::unavailable() : errors::internal(),
                             scope);
  } catch (const std::exception& failure) {
    log::write(log::Level::error, "request.exception",
               {{"request_id", scope.request_id}, {"what", failure.what()}});
  } catch (...) {
    log::write(log::Level::error, "request.exception", {{"request_id", scope.request_id}});
  }
  return api::render_error(errors::internal(), scope);
}

}  // namespace

App::App(Config config, std::unique_ptr<store::Store> store, crypto::Sealer card_numbers)
    : config_(std::move(config)),
      store_(std::move(store)),
      card_numbers_(std::move(card_numbers)),
      services_{*store_,         api_settings(config_), in_flight_,
                clock_,          card_numbers_,         card_numbers_,
                authorization_requests_, http_client::transport()},
      rate_limiter_(default_rate(config_), default_burst(config_)),
      auth_failures_(rate_limiter_.enabled() ? config_.auth_failure_rate : 0,
                     config_.auth_failure_burst),
      runner_(*store_, clock_) {
  api::Routes all;
  for (api::AddRoutes add_group : api::route_groups()) add_group(all);
  for (api::RouteSpec& route : all) {
    if (route.sandbox_only && !config_.is_sandbox()) continue;  // 404 in production
    router_.add(route.method, route.pattern);
    routes_.push_back(std::move(route));
  }
}

App::~App() { stop_background(); }

void App::listening_on(const std::string& host, unsigned short port) {
  if (!config_.public_url.empty()) return;
  services_.settings.public_url = "http://" + host + ":" + std::to_string(port);
}

http::Response App::handle(http::Request& request) {
  auto started = std::chrono::steady_clock::now();
  std::string request_id = request_id_for(request);
  std::string path(request.path());
  std::string query =
      path.size() == request.target.size() ? "" : request.target.substr(path.size() + 1);
  // HEAD is GET without a body (the server drops the body); routes name GET only.
  const std::string& route_method = request.method == "HEAD" ? k_get : request.method;
  // The console (docs/console.md): its pages and assets, its own API, and /console/api/v1/...
  // and /console/api/api/v1/..., which are the public routes of the same path after the prefix.
  const bool console_request = api::is_console_path(path);
  const bool console_page = console_request && !api::is_console_api_path(path);
  const std::optional<std::string> proxied = api::console_proxied_path(path);
  http::RouteMatch match =
      console_page ? http::RouteMatch{} : router_.match(route_method, proxied ? *proxied : path);
  api::Context context(request, path, query, match.params, services_, request_id);
  context.via_console = proxied.has_value();
  std::string route_label = "unmatched";
  http::Response response;
  try {
    if (console_page) {
      route_label = "/console";  // files are served from memory: no credential, no limit
      response = api::console_page(context);
    } else if (match.outcome == http::RouteMatch::Outcome::found) {
      route_label = (proxied ? "/console/api" : "") + routes_[match.route_index].pattern;
      const CountedWhile writing(route_method == k_get ? nullptr : &writing_requests_);
      response = dispatch(context, routes_[match.route_index]);
    } else {
      std::optional<RateLimiter::Decision> decision;
      if (rate_limiter_.enabled()) {
        decision = rate_limiter_.take("ip:" + request.remote_address, std::chrono::steady_clock::now());
      }
      if (decision && !decision->allowed) {
        response = context.error(errors::rate_limited(decision->retry_after_seconds));
      } else if (match.outcome == http::RouteMatch::Outcome::method_not_allowed) {
        response = context.error(errors::method_not_allowed());
        response.set_header("Allow", match.allow);
      } else {
        response = context.error(errors::route_not_found());
      }
      if (decision) add_rate_headers(response, *decision);
    }
  } catch (...) {
    response = failure_response({request_id, request.method, request.target, context.tenant_id()});
  }
  const std::string tenant_id = context.tenant_id();
  const AnswerNote note{request_id, request.method, request.target,         path,
                        route_label, tenant_id,      request.remote_address, console_request,
                        console_page, started};
  if (response.later) {
    // An answer that comes later (http/later.hpp) gets the same when it comes, and its work the
    // same catch as here.
    response.later->then([kept = OwnedNote(note)](http::Response& answer) {
      finish_answer(kept.note(), answer);
    });
    response.later->guard([kept = OwnedNote(note)](const http::Later::Work& work) {
      try {
        return work();
      } catch (...) {
        const AnswerNote& at = kept.note();
        return failure_response({at.request_id, at.method, at.target, at.tenant_id});
      }
    });
    return response;
  }
  finish_answer(note, response);
  return response;
}

std::optional<Error> App::authenticate_console(api::Context& context,
                                              const api::RouteSpec& route) {
  // Through the console only the routes that take a credential: not the token endpoint.
  if (context.via_console && route.auth == api::AuthKind::none) return errors::route_not_found();
  const http::Request& request = context.request;
  const bool mutating = is_mutating(request.method);
  if (mutating) {
    if (auto refused = api::console_origin_refusal(request, services_.settings.public_url)) {
      return refused;
    }
  }
  if (route.auth == api::AuthKind::none) return std::nullopt;  // sign-in: no session yet
  // No cookie: the lookup refuses the empty token without reading the database.
  const std::string token = api::console_cookie_token(request).value_or("");
  const std::string& environment = config_.environment;
  auto session = store_->read_single<console::Session>([&](store::Tx& tx) {
    return console::find_session(tx, token, environment, clock_.now());
  });
  if (!session) return session.error();
  context.console_csrf_token = console::csrf_token(token);
  if (mutating) {
    if (auto refused = api::console_csrf_refusal(request, context.console_csrf_token)) {
      return refused;
    }
  }
  // Every scope of the route's surface: nothing more to check.
  context.principal = console::principal(session.value(), route.auth == api::AuthKind::participant
                                                              ? auth::Surface::participant
                                                              : auth::Surface::core);
  context.console_session = std::move(session).value();
  return std::nullopt;
}

bool App::reads_store(const http::Request& request) const {
  const std::string_view path = request.path();
  // Console pages are served from memory; the console's API reads its session first.
  if (api::is_console_path(path)) return api::is_console_api_path(path);
  http::RouteMatch match = router_.match(k_get, path);
  return match.outcome == http::RouteMatch::Outcome::found &&
         routes_[match.route_index].touches_store;
}

std::optional<http::Response> App::handle_inline(http::Request& request) {
  if (request.method != "GET" && request.method != "HEAD") return std::nullopt;
  if (!reads_store(request)) return handle(request);
  if (store_->engine() != store::Engine::sqlite) return std::nullopt;
  // Every reader busy (the workers' and the batches' reads): a worker waits for one instead.
  store::HeldReader reader(*store_);
  if (!reader) return std::nullopt;
  return handle(request);
}

bool App::is_bulk(const http::Request& request) const {
  http::RouteMatch match = router_.match(request.method, request.path());
  return match.outcome == http::RouteMatch::Outcome::found && routes_[match.route_index].bulk;
}

std::optional<Error> App::authenticate(api::Context& context, const api::RouteSpec& route,
                                       std::optional<store::ArmedCheck>& check, bool kept) {
  if (api::is_console_api_path(context.path)) return authenticate_console(context, route);
  if (route.auth == api::AuthKind::none) return std::nullopt;
  auth::Surface surface =
      route.auth == api::AuthKind::participant ? auth::Surface::participant : auth::Surface::core;
  auto credential = api::bearer_credential(context.request.header("authorization"), surface);
  if (!credential) return credential.error();
  const std::string& environment = config_.environment;
  auto lookup = auth::lookup_of(surface, credential.value());
  if (!lookup) return lookup.error();
  std::optional<auth::Principal> known =
      kept ? credentials_.find(lookup->key_hash) : std::nullopt;
  if (known) {
    // The row must still give this principal, read in the first unit's round trip; when it
    // does not, the request runs again from a lookup (dispatch), which answers what it gives.
    check.emplace(store::Check{
        lookup->sql, {lookup->key_hash},
        [this, surface, environment, key_hash = lookup->key_hash,
         known = *known](const std::optional<store::Row>& row) {
          auto now = auth::principal_of(surface, "", row, environment, clock_.now());
          if (now.ok() && now.value() == known) return true;
          credentials_.forget(key_hash);
          return false;
        }});
    context.principal = std::move(known);
  } else {
    auto principal = store_->read_single<auth::Principal>([&](store::Tx& tx) {
      return auth::authenticate(tx, surface, credential.value(), lookup.value(), environment,
                                clock_.now());
    });
    if (!principal) return principal.error();
    context.principal = std::move(principal).value();
    if (kept) credentials_.keep(lookup->key_hash, *context.principal);
  }
  if (route.scope.empty()) return std::nullopt;
  if (surface == auth::Surface::participant) {
    if (auth::participant_allows(*context.principal, route.scope)) return std::nullopt;
    return auth::insufficient_scope(*context.principal, route.scope);
  }
  auth::Level needed = level_for(context.request.method);
  if (auth::core_allows(*context.principal, route.scope, needed)) return std::nullopt;
  return auth::insufficient_scope(*context.principal,
                                  route.scope + ":" + std::string(auth::level_name(needed)));
}

http::Response App::dispatch(api::Context& context, const api::RouteSpec& route) {
  // Credentials first (one indexed read), then one token: from the credential's bucket once
  // known, else from the caller's address. A valid credential is never refused because others
  // behind the same address (a balancer, a NAT) failed; a guesser runs out of tokens and gets
  // 429 instead of 401. An address that failed too often is refused before any lookup
  // (AuthFailureGuard), unless its credential worked from there lately.
  const auto now = std::chrono::steady_clock::now();
  const std::string& address = context.request.remote_address;
  const bool guarded =
      auth_failures_.enabled() && route.rate_limited && !api::is_console_api_path(context.path);
  const std::string* authorization = context.request.header("authorization");
  const std::string_view presented = authorization ? std::string_view(*authorization) : "";
  std::optional<Error> denied;
  std::optional<store::ArmedCheck> check;
  if (const long wait = guarded ? auth_failures_.wait_seconds(address, presented, now) : 0) {
    denied = errors::rate_limited(wait);
    denied->errors.front().message = "too many failed authentications from this address; try "
                                     "again in " + std::to_string(wait) + " seconds";
    denied->log_fields.emplace_back("auth_reason", "auth_failures_limited");
  } else {
    denied = authenticate(context, route, check, store_->carries_checks());
  }
  std::optional<RateLimiter::Decision> decision;
  if (rate_limiter_.enabled() && route.rate_limited && !(denied && denied->code == ErrorCode::rate_limit_exceeded)) {
    decision = rate_limiter_.take(context.principal
                                      ? "credential:" + context.principal->credential_id
                                      : "ip:" + context.request.remote_address,
                                  std::chrono::steady_clock::now());
    if (!decision->allowed) denied = errors::rate_limited(decision->retry_after_seconds);
  }
  http::Response response;
  try {
    response = respond(context, route, denied);
    // A kept principal is checked before anything is answered, even where no unit ran.
    if (check) store_->send_pending_check();
  } catch (const store::CheckFailed&) {
    // The kept principal no longer holds, and nothing of the request was done: answer it as if
    // the principal had never been kept, from a lookup.
    check.reset();
    context.principal.reset();
    denied = authenticate(context, route, check, false);
    if (decision && !decision->allowed) {
      denied = errors::rate_limited(decision->retry_after_seconds);
    }
    response = respond(context, route, denied);
  }
  if (decision && response.later) {
    response.later->then([decision](http::Response& answer) { add_rate_headers(answer, *decision); });
  } else if (decision) {
    add_rate_headers(response, *decision);
  }
  if (guarded && response.status == 401) {
    auth_failures_.failed(address, now);
  } else if (guarded && context.principal) {
    auth_failures_.succeeded(address, presented, now);
  }
  return response;
}

http::Response App::respond(api::Context& context, const api::RouteSpec& route,
                            const std::optional<Error>& denied) {
  const std::string* key = context.request.header("x-idempotency-key");
  if (denied) return context.error(*denied);
  if (key && is_mutating(context.request.method) && route.auth != api::AuthKind::none &&
      !idempotency::is_valid_key(*key)) {
    return context.error(errors::validation("must be a UUID such as "
                                            "123e4567-e89b-42d3-a456-426614174000",
                                            "x-idempotency-key"));
  }
  if (key && is_mutating(context.request.method) && context.principal) {
    // A UUID in upper or lower case is the same key.
    std::string normalised = *key;
    for (char& c : normalised) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return run_idempotent(context, route, normalised);
  }
  return route.handler(context);
}

http::Response App::run_idempotent(api::Context& context, const api::RouteSpec& route,
                                   const std::string& key) {
  std::string fingerprint = idempotency::fingerprint(context.request.method,
                                                     context.request.target, context.request.body);
  std::string tenant_id = context.tenant_id();
  auto find = [&](store::Tx& tx) -> Result<std::optional<idempotency::Found>> {
    return idempotency::find(tx, tenant_id, key, fingerprint, clock_.now());
  };
  auto found = store_->read_single<std::optional<idempotency::Found>>(find);
  if (found.ok() && found.value()) {
    // A replay acknowledges the write: answered from a unit that waits for the standbys.
    found = store_->write<std::optional<idempotency::Found>>(
        [&](store::Tx& tx) -> Result<std::optional<idempotency::Found>> {
          return idempotency::find_for_replay(tx, tenant_id, key, fingerprint, clock_.now());
        });
    if (found.ok() && found.value()) return context.answer_stored(*found.value());
  }
  std::string claim = tenant_id + "\n" + key;
  if (!in_flight_.try_claim(claim)) return context.error(errors::idempotency_key_in_use());
  std::shared_ptr<ClaimGuard> guard(new ClaimGuard{in_flight_, std::move(claim)});
  context.idempotency = api::IdempotencyClaim{key, fingerprint};
  http::Response response = route.handler(context);
  // An answer that comes later keeps the key claimed until it is known.
  if (response.later) response.later->then([guard](http::Response&) {});
  return response;
}

http::Response App::render_transport_error(const Error& error, const http::Request& request) {
  std::string request_id = ids::generate("req");
  http::Response response =
      api::render_error(error, {request_id, request.method, request.target, ""});
  response.set_header("X-Request-Id", request_id);
  metrics::count_request("unmatched", method_label(request.method), api::http_status(error), 0);
  return response;
}

void App::start_background(std::function<void()> thread_started) {
  // Expired idempotency records, tokens, console sessions and sign-in failures, a bounded chunk
  // per unit.
  runner_.add(workers::PeriodicWorker{
      "sweeper", std::chrono::milliseconds(limits::k_idempotency_sweep_interval_ms), {},
      [](store::Store& store, time::Micros real_now) {
        auto swept = store.write<std::int64_t>([&](store::Tx& tx) -> Result<std::int64_t> {
          return idempotency::sweep_expired(tx, real_now, limits::k_sweep_chunk_rows) +
                 auth::sweep_expired_tokens(tx, real_now, limits::k_sweep_chunk_rows) +
                 console::sweep(tx, real_now, limits::k_sweep_chunk_rows);
        });
        if (swept.value() > 0) {
          log::write(log::Level::info, "sweeper.removed", {{"rows", swept.value()}});
        }
        metrics::count_worker_run("sweeper", false);
        return swept.value() >= limits::k_sweep_chunk_rows;
      }});
  // Positions for committed events, woken by every unit that emitted some.
  workers::PeriodicWorker sequencer{
      "events.sequencer", std::chrono::milliseconds(limits::k_worker_poll_ms),
      {std::string(events::k_emitted_topic)},
      [](store::Store& store, time::Micros) {
        auto positioned = store.write<std::int64_t>([](store::Tx& tx) -> Result<std::int64_t> {
          return events::assign_positions(tx, limits::k_event_sequence_batch_max);
        });
        if (positioned.value() > 0) metrics::count_worker_run("events.sequencer", false);
        return positioned.value() >= limits::k_event_sequence_batch_max;
      }};
  sequencer.gather = std::chrono::milliseconds(limits::k_event_gather_ms);
  runner_.add(std::move(sequencer));
  // Card authorizations whose hold ran out, and collections whose expires_at passed, on their
  // tenant's clock.
  runner_.add(expiry_worker("cards.authorization_expiry", "cards.authorizations_expired",
                            limits::k_authorization_expiry_interval_ms,
                            limits::k_authorization_expiry_chunk_rows, cards::expire_due));
  runner_.add(expiry_worker("collections.expiry", "collections.expired",
                            limits::k_collection_expiry_interval_ms,
                            limits::k_collection_expiry_chunk_rows, collections::expire_due));
  // The sandbox network: outgoing transfers (and payout legs) through the steps that came due on
  // their tenant's clock; woken by new transfers and by clock advances. While requests write it
  // gives way to them after each pass, and on SQLite a pass takes a quarter of its chunk
  // (docs/scaling.md).
  workers::PeriodicWorker processor = expiry_worker(
      "network.processor", "transfers.moved", limits::k_transfer_processor_interval_ms,
      limits::k_transfer_processor_chunk_rows, transfers::process_due,
      {std::string(transfers::k_moving_topic)}, limits::k_transfer_processor_shared_chunk_rows);
  processor.yield_while = [this] { return writing_requests_.load() > 0; };
  processor.yield_factor = limits::k_transfer_processor_yield_factor;
  runner_.add(std::move(processor));
  add_webhook_workers();
  // Sandbox attempts that asked for an `error`: failed with it once their unit has committed.
  runner_.add(workers::JobWorker{
      std::string(collections::k_attempt_failure_job),
      [](store::Tx& tx, const workers::JobRun& run) -> Result<std::optional<time::Micros>> {
        auto failed = collections::fail_requested_attempt(tx, run.job.tenant_id, run.job.payload,
                                                          run.tenant_now);
        if (!failed) return failed.error();
        return std::optional<time::Micros>();
      }});
  runner_.start(std::move(thread_started));
}

void App::add_webhook_workers() {
  // One process owns a SQLite data folder: a lease found at start was left by a killed process.
  // On PostgreSQL other nodes may hold theirs; a dead node's leases expire.
  if (store_->engine() == store::Engine::sqlite) {
    static_cast<void>(store_->write<Unit>([](store::Tx& tx) -> Result<Unit> {
      webhooks::release_all_leases(tx);
      return Unit{};
    }));
  }
  // Deliveries for newly positioned events, woken by the sequencer.
  workers::PeriodicWorker fanout{
      "webhooks.fanout", std::chrono::milliseconds(limits::k_worker_poll_ms),
      {std::string(events::k_sequenced_topic)},
      [this](store::Store& store, time::Micros /*real_now: read once the cursor is held*/) {
        auto fanned = store.write<std::int64_t>([&](store::Tx& tx) -> Result<std::int64_t> {
          return webhooks::fan_out(tx, clock_, limits::k_webhook_fanout_batch_max);
        });
        if (fanned.value() > 0) metrics::count_worker_run("webhooks.fanout", false);
        return fanned.value() >= limits::k_webhook_fanout_batch_max;
      }};
  fanout.gather = std::chrono::milliseconds(limits::k_event_gather_ms);
  runner_.add(std::move(fanout));
  // HTTP outside any write unit, on a thread of its own: woken by new due deliveries (fan-out,
  // replays, an endpoint enabled again) and by clock advances that make retries due.
  webhooks::DispatcherOptions options;
  options.destinations = services_.settings.webhook_destinations;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  options.node_id = std::string(host) + ":" + std::to_string(::getpid());
  options.lease_micros = config_.webhook_lease_seconds * time::k_micros_per_second;
  options.timeout_ms = config_.webhook_timeout_ms;
  options.stopping = &stopping_;
  runner_.add(workers::PeriodicWorker{
      "webhooks.delivery", std::chrono::milliseconds(limits::k_worker_poll_ms),
      {std::string(webhooks::k_deliveries_topic), std::string(tenant_clock::k_advanced_topic)},
      [this, options](store::Store& store, time::Micros) {
        return webhooks::deliver_pass(store, services_.secrets, options, clock_,
                                      services_.transport);
      }});
}

void App::stop_background() {
  stopping_ = true;
  authorization_requests_.stop();  // what waits on an endpoint is answered as its fallback says
  runner_.stop();
  store_->stop();
}

}  // namespace tesoro::app
