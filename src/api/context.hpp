#pragma once
// What a handler gets: the request, its path parameters, the authenticated principal and the
// services. Handlers decode, call one domain function through read()/write(), and encode.
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "api/json.hpp"
#include "core/clock.hpp"
#include "core/crypto.hpp"
#include "core/limits.hpp"
#include "core/outbound_http.hpp"
#include "domain/auth/credentials.hpp"
#include "domain/console/sessions.hpp"
#include "domain/webhooks/endpoints.hpp"
#include "http/client.hpp"
#include "http/message.hpp"
#include "http/router.hpp"
#include "store/idempotency.hpp"
#include "store/store.hpp"

namespace tesoro::api {

// Idempotency keys whose first request is still running on this node.
class InFlightKeys {
 public:
  bool try_claim(const std::string& key);
  void release(const std::string& key);

 private:
  std::mutex mutex_;
  std::unordered_set<std::string> keys_;
};

// What handlers may know of the server's configuration; the app fills it from its flags (whose
// defaults live in app::Config).
struct Settings {
  std::string environment;                   // sandbox | production, fixed at start
  std::vector<std::string> currencies;       // ISO 4217 codes of the ledger endpoints
  std::vector<std::string> card_currencies;  // ISO 4217 codes of the card endpoints
  // Where clients reach this server, without a trailing slash (http://host:port, or a proxy's
  // https://... with an optional path): the base of the urls the server hands out (activation
  // links).
  std::string public_url;
  // The most one outgoing transfer or payout may carry, in minor units (`--transfer-max-amount`).
  std::int64_t transfer_max_amount_minor = limits::k_transfer_max_amount_minor_default;
  // Where webhook endpoints may point (`--webhook-allowed-hosts` and the environment).
  webhooks::Destinations webhook_destinations;

  bool is_sandbox() const { return environment == "sandbox"; }
};

// The one place handlers reach shared services. An aggregate: the app builds it in one
// expression, and a new service is one more member.
struct Services {
  store::Store& store;
  Settings settings;
  InFlightKeys& in_flight;
  const time::Clock& clock;  // real time; a tenant's time is Context::now()
  // Seals card numbers for storage and opens them (the card-number key, loaded once at start:
  // app/card_key.hpp). Seal with aad = tenant_id + ":" + card_id, so a sealed number opens only
  // on its own card.
  const crypto::Sealer& card_numbers;
  // The same key seals webhook signing secrets (webhooks::seal_secret binds each to its
  // endpoint), so one key file or TESORO_CARD_KEY covers every secret the database holds.
  const crypto::Sealer& secrets;
  // Requests to tenants' authorization endpoints, answered on the client's thread
  // (domain/cards/authorization_decisions.hpp): nothing waits for them but an http::Later.
  http_client::AsyncClient& authorization_requests;
  // Name resolution and requests for code that does no I/O of its own (core/outbound_http.hpp):
  // the authorization endpoint's host is resolved and checked through it
  // (webhooks::pin_destination), as the webhook dispatcher's are.
  const outbound_http::Transport& transport;
};

struct IdempotencyClaim {
  std::string key;
  std::string fingerprint;
};

class Context {
 public:
  Context(const http::Request& request, std::string path, std::string query,
          http::PathParams params, Services& services, std::string request_id)
      : request(request),
        path(std::move(path)),
        query(std::move(query)),
        params(std::move(params)),
        services(services),
        request_id(std::move(request_id)) {}

  const http::Request& request;
  std::string path;
  std::string query;
  http::PathParams params;
  Services& services;
  std::string request_id;
  std::optional<auth::Principal> principal;
  std::optional<IdempotencyClaim> idempotency;
  // The console (docs/console.md): `via_console` marks a request of /console/api/v1/... or
  // /console/api/api/v1/... routed to the public API's route of the same path; a request
  // authenticated by a console session carries that session and its CSRF token (never the
  // session's token).
  bool via_console = false;
  std::optional<console::Session> console_session;
  std::string console_csrf_token;
  // Set by a handler whose answer carries a secret shown once (a webhook endpoint's secret, an
  // activation link's url):
  // write() then keeps the idempotency record's body sealed with services.secrets, so that the
  // secret is never stored in clear, and answer_stored() opens it for the replay.
  bool response_has_secret = false;

  std::string_view param(std::string_view name) const;
  std::string tenant_id() const { return principal ? principal->tenant_id : std::string(); }
  // The authenticated tenant's time (its sandbox clock): what records, expiries and due times
  // of this request use. Real time before authentication.
  time::Micros now() const {
    return services.clock.now() + (principal ? principal->clock_offset_micros : 0);
  }
  http::Response error(const Error& error) const;
  // The stored response of an earlier request with this key (byte for byte, marked replayed),
  // or 409 idempotency_key_reused when the key came with a different request.
  http::Response answer_stored(const idempotency::Found& found) const;

  // Runs fn as one durable write unit. The response it produces (or the envelope of the
  // business error it returns) is stored with the idempotency key in the same transaction.
  http::Response write(const std::function<Result<http::Response>(store::Tx&)>& fn);
  // write() without waiting, where the store queues its writes (store::Store::write_queued) and
  // no idempotency record is to be kept with the unit: `then` gets, on the writer's thread, a
  // call that returns the response write() would have (the effect's, or its error's envelope)
  // or throws what write() would have thrown. The context must outlive the unit (`then` holds
  // its DetachedContext). False, queueing nothing, otherwise: write() on a worker then.
  bool write_queued(std::function<Result<http::Response>(store::Tx&)> fn,
                    std::function<void(std::function<http::Response()>)> then);
  // A write whose response is costly to make from what the unit made (a QR code's image):
  // `unit` makes a T, `respond` turns it into the response. Without an idempotency key, respond
  // runs after the commit, outside the unit (on SQLite: off the one writer thread, so other
  // units do not wait for it); with a key, in the unit, whose response is recorded with the key.
  template <class T>
  http::Response write_then(const std::function<Result<T>(store::Tx&)>& unit,
                            const std::function<Result<http::Response>(T&)>& respond) {
    if (idempotency) {
      return write([&](store::Tx& tx) -> Result<http::Response> {
        auto made = unit(tx);
        if (!made) return std::move(made).error();
        return respond(made.value());
      });
    }
    std::optional<T> made;
    http::Response answered = write([&](store::Tx& tx) -> Result<http::Response> {
      made.reset();  // the unit may run again (a PostgreSQL retry): its last run counts
      auto outcome = unit(tx);
      if (!outcome) return std::move(outcome).error();
      made = std::move(outcome).value();
      return http::Response{};  // replaced by respond's once committed
    });
    if (!made) return answered;  // the business error's envelope
    auto response = respond(*made);
    return response.ok() ? std::move(response).value() : error(response.error());
  }
  // Runs fn in a read snapshot; an Error becomes its envelope.
  http::Response read(const std::function<Result<http::Response>(store::Tx&)>& fn);
  // The same for an fn that runs one statement, which is its own snapshot: on PostgreSQL
  // without BEGIN and COMMIT around it.
  http::Response read_single(const std::function<Result<http::Response>(store::Tx&)>& fn);
};

// A Context that owns a copy of its request, for work that runs after the handler's call has
// returned (an answer that comes later: http/later.hpp). Everything the request's handling
// knew comes along: the principal, the idempotency claim, the console session.
struct DetachedContext {
  explicit DetachedContext(const Context& from);
  http::Request request;
  Context context;
};

// none: no credential; core: an API key (/v1); participant: an OAuth access token (/api/v1);
// console: a console session's cookie (the console's own routes under /console/api/), with the
// CSRF token on every state change.
enum class AuthKind { none, core, participant, console };

// The bearer credential of an Authorization header's value (nullptr: no header), or the 401
// when there is none: no header, another scheme (Basic, ...: no credential for RFC 6750), or
// an empty or oversized one.
Result<std::string> bearer_credential(const std::string* authorization_header,
                                      auth::Surface surface);
using Handler = http::Response (*)(Context&);

struct RouteSpec {
  std::string method;
  std::string pattern;
  AuthKind auth = AuthKind::none;
  // core: the scope group (ledger, cards, ...); participant: the scope needed. Empty: any valid
  // credential of the surface (the sandbox clock).
  std::string scope;
  Handler handler = nullptr;
  bool sandbox_only = false;
  // Operations endpoints (health, metrics) are probed by machines and are not rate limited.
  bool rate_limited = true;
  // False for handlers that answer from memory alone (health, metrics): they run on the I/O
  // thread on every engine (App::handle_inline). A GET handler only ever reads: on SQLite every
  // GET runs there when an idle reader can be held for it.
  bool touches_store = true;
  // A request of up to limits::k_batch_items_max items (a batch): handled on threads of its own
  // (App::is_bulk), which on SQLite run behind the store's writer.
  bool bulk = false;
};
using Routes = std::vector<RouteSpec>;
// Each endpoint group has one `void add_<group>_routes(Routes&)`, listed in route_groups.cpp.
using AddRoutes = void (*)(Routes& routes);

}  // namespace tesoro::api
