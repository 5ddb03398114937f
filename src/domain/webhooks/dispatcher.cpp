#include "domain/webhooks/dispatcher.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <deque>
#include <future>
#include <map>
#include <memory>

#include "core/ids.hpp"
#include "core/json_writer.hpp"
#include "core/limits.hpp"
#include "core/log.hpp"
#include "core/metrics.hpp"
#include "domain/tenant_clock/tenant_clock.hpp"
#include "domain/events/events.hpp"
#include "domain/webhooks/destinations.hpp"
#include "domain/webhooks/secrets.hpp"
#include "store/bulk.hpp"
#include "store/pages.hpp"

namespace tesoro::webhooks {
namespace {

constexpr time::Micros k_second = time::k_micros_per_second;
constexpr time::Micros k_longest_delay = limits::k_webhook_retry_after_max_seconds * k_second;

}  // namespace

std::optional<time::Micros> retry_delay_micros(int attempt) {
  const auto& delays = limits::k_webhook_retry_delay_seconds;
  if (attempt < 2 || attempt > static_cast<int>(delays.size()) + 1) return std::nullopt;
  return delays[static_cast<std::size_t>(attempt - 2)] * k_second;
}

std::optional<time::Micros> next_retry_delay_micros(int attempt,
                                                    std::optional<time::Micros> retry_after) {
  std::optional<time::Micros> delay = retry_delay_micros(attempt);
  if (!delay) return std::nullopt;
  if (retry_after) return std::max(*delay, std::min(*retry_after, k_longest_delay));
  return delay;
}

std::string payload(std::string_view event_id, std::string_view type,
                    std::string_view inserted_at, std::string_view data_json) {
  json_text::Writer out(96 + data_json.size());
  out.begin_object()
      .key("id").string(event_id)
      .key("type").string(type)
      .key("timestamp").string(inserted_at)
      .key("data").raw(data_json)
      .end_object();
  return out.take();
}

// ---------------------------------------------------------------------------------------------
// Fan-out

namespace {

struct Subscriber {
  std::string endpoint_id;
  std::vector<std::string> event_types;
  std::int64_t start_position = 0;
};

struct TenantSubscribers {
  time::Micros now = 0;  // the tenant's clock
  std::vector<Subscriber> endpoints;
};

// The enabled endpoints of every tenant with an event in (after, last].
std::map<std::string, TenantSubscribers> subscribers_of(store::Tx& tx, std::int64_t after,
                                                        std::int64_t last,
                                                        time::Micros real_now) {
  std::map<std::string, TenantSubscribers> by_tenant;
  for (const store::Row& row : tx.query(
           "SELECT e.tenant_id, e.id, e.event_types, e.start_position, t.clock_offset_micros "
           "FROM webhook_endpoints e JOIN tenants t ON t.id = e.tenant_id "
           "WHERE e.enabled = 1 AND e.tenant_id IN "
           "(SELECT DISTINCT tenant_id FROM " + std::string(events::table(tx)) +
           " WHERE position > ? AND position <= ?) ORDER BY e.tenant_id, e.id",
           {after, last})) {
    TenantSubscribers& tenant = by_tenant[row.text(0)];
    tenant.now = real_now + row.integer(4);
    tenant.endpoints.push_back({row.text(1), decode_event_types(row.text(2)), row.integer(3)});
  }
  return by_tenant;
}

}  // namespace

std::int64_t fan_out(store::Tx& tx, const time::Clock& clock, std::int64_t limit) {
  // The cursor's row lock is the one lock across nodes: READ COMMITTED gives the statements
  // after it a snapshot that has every delivery the previous holder made.
  const std::int64_t cursor =
      tx.query_one("SELECT position FROM webhook_fanout WHERE id = 1" +
                   std::string(tx.lock_rows()))->integer(0);
  const time::Micros real_now = clock.now();  // after the lock (dispatcher.hpp)
  // With no endpoint enabled that receives events, no event past the cursor has a delivery to
  // make (an endpoint made or enabled later starts at the events then committed, as one read
  // now would find it absent): the cursor moves past them all without reading them, which a
  // node without endpoints otherwise did for every event it wrote, on SQLite on its one
  // writer. An endpoint that only decides card authorizations receives no event.
  if (!tx.query_one("SELECT 1 FROM webhook_endpoints WHERE enabled = 1 AND event_types <> '" +
                    encode_event_types({std::string(k_authorization_request_type)}) +
                    "' LIMIT 1")) {
    const std::int64_t last = events::last_position(tx);
    if (last > cursor) tx.exec("UPDATE webhook_fanout SET position = ? WHERE id = 1", {last});
    return 0;
  }
  store::Rows events = tx.query(
      "SELECT position, tenant_id, id, type FROM " + std::string(events::table(tx)) +
          " WHERE position > ? ORDER BY position LIMIT ?",
      {cursor, limit});
  if (events.empty()) return 0;
  const std::int64_t last = events.back().integer(0);
  std::map<std::string, TenantSubscribers> subscribers =
      subscribers_of(tx, cursor, last, real_now);
  store::Params rows;
  std::size_t count = 0;
  for (const store::Row& event : events) {
    auto tenant = subscribers.find(event.text(1));
    if (tenant == subscribers.end()) continue;
    const std::int64_t position = event.integer(0);
    const std::string type = event.text(3);
    const std::string now = time::iso(tenant->second.now);
    for (const Subscriber& endpoint : tenant->second.endpoints) {
      if (endpoint.start_position >= position || !events::type_matches(endpoint.event_types, type)) {
        continue;  // (an endpoint's events only: the authorization request is not an event)
      }
      for (store::Value value : std::initializer_list<store::Value>{
               event.text(1), ids::generate("whq"), endpoint.endpoint_id, event.text(2), position,
               type, std::string("pending"), std::int64_t{0}, tenant->second.now, std::int64_t{0},
               now, now}) {
        rows.push_back(std::move(value));
      }
      ++count;
    }
  }
  if (count > 0) {
    tx.append_rows("webhook_deliveries (tenant_id, id, endpoint_id, event_id, "
                   "event_position, event_type, state, attempts, next_attempt_at_micros, "
                   "replay, inserted_at, updated_at)",
                   12, rows);
    tx.notify(std::string(k_deliveries_topic));
  }
  tx.exec("UPDATE webhook_fanout SET position = ? WHERE id = 1", {last});
  return static_cast<std::int64_t>(events.size());
}

void release_all_leases(store::Tx& tx) {
  tx.exec("UPDATE webhook_endpoints SET lease_owner = NULL WHERE lease_owner IS NOT NULL");
}

// ---------------------------------------------------------------------------------------------
// Delivery

namespace {

struct Due {  // one due delivery of a leased endpoint
  std::string id;
  std::string event_id;
  std::string event_type;
  int attempts = 0;
  bool replay = false;
  std::string body;
};

struct Leased {
  std::string tenant_id;
  std::string endpoint_id;
  std::string url;
  std::vector<std::string> secrets;
  std::deque<Due> queue;
  std::vector<std::string> pinned;     // the allowed addresses of its host
  std::optional<std::string> refused;  // why it cannot be connected to
  bool lost = false;                   // its lease was taken over: deliver nothing more
  long long sent_timestamp = 0;        // webhook-timestamp of the request in flight
};

struct Lease {
  std::string token;  // lease_owner: this node and this pass
  time::Micros micros = 0;
};

time::Micros lease_micros(const DispatcherOptions& options) {
  return options.lease_micros > 0 ? options.lease_micros
                                  : limits::k_webhook_lease_seconds * k_second;
}

std::int64_t timeout_ms(const DispatcherOptions& options) {
  return options.timeout_ms > 0 ? options.timeout_ms : limits::k_webhook_timeout_ms;
}

// Cheap and read-only: the usual pass, where nothing is due, writes nothing.
bool any_due(store::Store& store, time::Micros real_now) {
  return store
      .read<bool>([&](store::Tx& tx) -> Result<bool> {
        return tx.query_one(
                   "SELECT 1 FROM webhook_deliveries d "
                   "JOIN webhook_endpoints e ON e.tenant_id = d.tenant_id AND e.id = d.endpoint_id "
                   "JOIN tenants t ON t.id = d.tenant_id WHERE d.state = 'pending' "
                   "AND e.enabled = 1 AND (e.lease_owner IS NULL OR e.lease_until_micros < ?) "
                   "AND d.next_attempt_at_micros <= ? + t.clock_offset_micros LIMIT 1",
                   {real_now, real_now})
            .has_value();
      })
      .value();
}

// Leases up to endpoints_per_pass endpoints with due deliveries and no live lease, those served
// least recently first (a released lease keeps its end time).
std::vector<Leased> take_leases(store::Store& store, const DispatcherOptions& options,
                                const Lease& lease, time::Micros real_now) {
  const std::string skip_locked =
      store.engine() == store::Engine::postgres ? " FOR UPDATE OF e SKIP LOCKED" : "";
  auto rows = store.write<store::Rows>([&](store::Tx& tx) -> Result<store::Rows> {
    return tx.query(
        "UPDATE webhook_endpoints SET lease_owner = ?, lease_until_micros = ? "
        "WHERE (tenant_id, id) IN (SELECT e.tenant_id, e.id FROM webhook_endpoints e "
        "JOIN tenants t ON t.id = e.tenant_id WHERE e.enabled = 1 "
        "AND (e.lease_owner IS NULL OR e.lease_until_micros < ?) "
        "AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = e.id "
        "AND d.state = 'pending' AND d.tenant_id = e.tenant_id "
        "AND d.next_attempt_at_micros <= ? + t.clock_offset_micros) "
        "ORDER BY COALESCE(e.lease_until_micros, 0), e.id LIMIT ?" +
            skip_locked + ") RETURNING tenant_id, id, url",
        {lease.token, real_now + lease.micros, real_now, real_now,
         std::int64_t{options.endpoints_per_pass}});
  });
  std::vector<Leased> leased;
  for (const store::Row& row : rows.value()) {
    leased.push_back({row.text(0), row.text(1), row.text(2)});
  }
  return leased;
}

// Each leased endpoint's secrets and due deliveries, in position order, with their bodies.
void load_due(store::Store& store, const crypto::Sealer& sealer,
              const DispatcherOptions& options, std::vector<Leased>& leased,
              time::Micros real_now) {
  static_cast<void>(store.read<Unit>([&](store::Tx& tx) -> Result<Unit> {
    for (Leased& endpoint : leased) {
      endpoint.secrets =
          signing_secrets(tx, sealer, endpoint.tenant_id, endpoint.endpoint_id, real_now);
      // Unsigned deliveries would be refused by every receiver: log the attempts instead.
      if (endpoint.secrets.empty()) endpoint.refused = "signing secret unavailable";
      const time::Micros tenant_now = tenant_clock::now(tx, endpoint.tenant_id, real_now);
      const std::size_t first = endpoint.queue.size();
      const store::Rows due = tx.query(
          "SELECT id, event_id, event_type, attempts, replay, event_position "
          "FROM webhook_deliveries WHERE endpoint_id = ? AND state = 'pending' "
          "AND tenant_id = ? AND next_attempt_at_micros <= ? "
          "ORDER BY event_position, id LIMIT ?",
          {endpoint.endpoint_id, endpoint.tenant_id, tenant_now,
           std::int64_t{options.deliveries_per_endpoint}});
      // Their events by position (unique across tenants), in a statement of their own: a join
      // with SQLite's view of events (events::table) would read the view whole, and so would
      // its planner with the tenant in the condition.
      std::vector<std::int64_t> positions;
      for (const store::Row& row : due) positions.push_back(row.integer(5));
      std::map<std::int64_t, events::Event> by_position;
      store::query_in(
          tx,
          "SELECT " + std::string(events::k_event_columns) + ", tenant_id FROM " +
              std::string(events::table(tx)) + " WHERE position",
          {}, positions, "", [&](const store::Row& row) {
            if (row.text(5) != endpoint.tenant_id) return;
            by_position.emplace(row.integer(0), events::event_of(row));
          });
      std::vector<events::Event> due_events;
      for (const store::Row& row : due) {
        auto event = by_position.find(row.integer(5));
        if (event == by_position.end() || event->second.id != row.text(1)) continue;
        endpoint.queue.push_back({row.text(0), row.text(1), row.text(2),
                                  static_cast<int>(row.integer(3)), row.integer(4) == 1, ""});
        due_events.push_back(event->second);
        due_events.back().type = row.text(2);
      }
      events::render_references(tx, endpoint.tenant_id, due_events);
      for (std::size_t i = 0; i < due_events.size(); ++i) {
        const events::Event& event = due_events[i];
        endpoint.queue[first + i].body =
            payload(event.id, event.type, event.inserted_at, event.data_json);
      }
    }
    return Unit{};
  }));
}

// The addresses each endpoint may be connected to, resolved concurrently (a slow resolver of
// one tenant's host must not hold the others).
void resolve_hosts(std::vector<Leased>& leased, const Destinations& destinations,
                   const outbound_http::Transport& transport) {
  std::vector<std::future<Pinned>> lookups(leased.size());
  for (std::size_t i = 0; i < leased.size(); ++i) {
    if (leased[i].queue.empty() || leased[i].refused) continue;
    lookups[i] = std::async(std::launch::async, [&url = leased[i].url, &destinations, &transport] {
      return pin_destination(url, destinations, transport);
    });
  }
  for (std::size_t i = 0; i < leased.size(); ++i) {
    if (!lookups[i].valid()) continue;
    Pinned pinned = lookups[i].get();
    leased[i].pinned = std::move(pinned.addresses);
    leased[i].refused = std::move(pinned.refused);
  }
}

outbound_http::Request request_for(Leased& endpoint, const DispatcherOptions& options,
                                   time::Micros real_now) {
  const Due& due = endpoint.queue.front();
  endpoint.sent_timestamp = real_now / k_second;
  outbound_http::Request request;
  request.url = endpoint.url;
  request.body = due.body;
  request.headers = {
      "content-type: application/json",
      "user-agent: Tesoro-Webhooks/1",
      "webhook-id: " + due.event_id,
      "webhook-timestamp: " + std::to_string(endpoint.sent_timestamp),
      "webhook-signature: " + signature_header(endpoint.secrets, due.event_id,
                                               endpoint.sent_timestamp, due.body),
  };
  request.pinned_addresses = endpoint.pinned;
  request.timeout_ms = timeout_ms(options);
  request.body_max_bytes = static_cast<std::size_t>(limits::k_webhook_response_body_max_bytes);
  return request;
}

// What an attempt's response makes of its delivery.
struct Outcome {
  bool delivered = false;
  bool gone = false;  // 410: the endpoint is disabled
  std::optional<int> status_code;
  std::optional<std::string> error;
  std::optional<time::Micros> retry_after;
  std::int64_t latency_ms = 0;
};

Outcome outcome_of(const outbound_http::Response& response, time::Micros real_now) {
  Outcome outcome;
  outcome.status_code = response.status;
  outcome.latency_ms = response.latency_ms;
  if (!response.status) {
    outcome.error = response.error.value_or("no response");
    return outcome;
  }
  const int status = *response.status;
  outcome.delivered = status >= 200 && status <= 299;
  outcome.gone = status == 410;
  if (outcome.delivered) return outcome;
  std::string error = "HTTP " + std::to_string(status);
  if (outcome.gone) error += " Gone: endpoint disabled";
  std::string body = outbound_http::printable_text(
      response.body, static_cast<std::size_t>(limits::k_webhook_response_body_max_bytes));
  if (!body.empty()) error += ": " + body;
  outcome.error = std::move(error);
  if (response.retry_after) {
    outcome.retry_after = outbound_http::parse_retry_after(*response.retry_after, real_now);
  }
  return outcome;
}

// One attempt's outcome, waiting to be written.
struct Recorded {
  std::size_t endpoint = 0;  // index into the pass's leased endpoints
  Due due;
  Outcome outcome;
  long long webhook_timestamp = 0;
  time::Micros real_now = 0;  // when the response came
};

// Writes one attempt and its delivery's new state, fenced by the lease (renewed by the same
// statement). Returns false when the lease was lost (or the endpoint deleted): nothing written.
bool record(store::Tx& tx, const Lease& lease, const Leased& endpoint, const Recorded& done) {
  const Due& due = done.due;
  const Outcome& outcome = done.outcome;
  if (tx.exec("UPDATE webhook_endpoints SET lease_until_micros = ? "
              "WHERE tenant_id = ? AND id = ? AND lease_owner = ?",
              {done.real_now + lease.micros, endpoint.tenant_id, endpoint.endpoint_id,
               lease.token}) == 0) {
    return false;
  }
  const time::Micros tenant_now = tenant_clock::now(tx, endpoint.tenant_id, done.real_now);
  const int attempt = due.attempts + 1;
  std::string state = "pending";
  std::optional<time::Micros> next_attempt_at;
  if (outcome.delivered) {
    state = "delivered";
  } else if (outcome.gone) {
    next_attempt_at = tenant_now;  // due as soon as the endpoint is enabled again
  } else if (auto delay = next_retry_delay_micros(attempt + 1, outcome.retry_after)) {
    next_attempt_at = tenant_now + *delay;
  } else {
    state = "failed";
  }
  const std::string now = time::iso(tenant_now);
  store::Value next_micros = nullptr;
  if (next_attempt_at) next_micros = *next_attempt_at;
  if (tx.exec("UPDATE webhook_deliveries SET state = ?, attempts = ?, "
              "next_attempt_at_micros = ?, updated_at = ? "
              "WHERE tenant_id = ? AND id = ? AND state = 'pending' AND attempts = ?",
              {state, std::int64_t{attempt}, next_micros, now, endpoint.tenant_id, due.id,
               std::int64_t{due.attempts}}) == 0) {
    return true;  // changed meanwhile (a replay never is): the newer state stands
  }
  // A 410 sets no retry time in the log: the next attempt waits for the endpoint, not a time.
  std::optional<std::string> next_text;
  if (next_attempt_at && !outcome.gone) next_text = time::iso(*next_attempt_at);
  log_attempt(tx, endpoint.tenant_id,
              {due.id, endpoint.endpoint_id, due.event_id, due.event_type, attempt, due.replay,
               outcome.delivered, outcome.status_code, outcome.latency_ms, outcome.error,
               std::move(next_text), done.webhook_timestamp, now, std::nullopt});
  if (outcome.gone) {
    tx.exec("UPDATE webhook_endpoints SET enabled = 0, disabled_reason = 'gone', "
            "updated_at = ? WHERE tenant_id = ? AND id = ?",
            {now, endpoint.tenant_id, endpoint.endpoint_id});
    refresh_authorization_endpoints(tx, endpoint.tenant_id);
  }
  return true;
}

// Writes the waiting outcomes in one unit (one commit for many attempts); an endpoint whose
// lease was lost is marked so, and delivers nothing more in this pass.
void record_all(store::Store& store, const Lease& lease, std::vector<Leased>& leased,
                std::vector<Recorded>& waiting) {
  if (waiting.empty()) return;
  std::vector<std::size_t> lost;
  static_cast<void>(store.write<Unit>([&](store::Tx& tx) -> Result<Unit> {
    lost.clear();  // a retried unit starts over
    for (const Recorded& done : waiting) {
      if (std::find(lost.begin(), lost.end(), done.endpoint) != lost.end()) continue;
      if (!record(tx, lease, leased[done.endpoint], done)) lost.push_back(done.endpoint);
    }
    return Unit{};
  }));
  for (std::size_t endpoint : lost) leased[endpoint].lost = true;
  for (const Recorded& done : waiting) {
    metrics::count_worker_run("webhooks.attempt", !done.outcome.delivered);
  }
  waiting.clear();
}

void release_leases(store::Store& store, const Lease& lease, const std::vector<Leased>& leased,
                    time::Micros real_now) {
  static_cast<void>(store.write<Unit>([&](store::Tx& tx) -> Result<Unit> {
    for (const Leased& endpoint : leased) {
      // The end time stays: it orders endpoints least recently served first.
      tx.exec("UPDATE webhook_endpoints SET lease_owner = NULL, lease_until_micros = ? "
              "WHERE tenant_id = ? AND id = ? AND lease_owner = ?",
              {real_now, endpoint.tenant_id, endpoint.endpoint_id, lease.token});
    }
    return Unit{};
  }));
}

bool stopping(const DispatcherOptions& options) {
  return options.stopping != nullptr && options.stopping->load();
}

// Sends every leased endpoint's due deliveries: endpoints concurrently, each one's in order,
// one at a time. An endpoint's next request goes as soon as the previous one succeeded; outcomes
// are written in units of up to limits::k_webhook_attempts_per_unit (and whenever nothing is in
// flight), so a fast receiver is not held to one commit per event. A crash before an outcome is written sends that
// event again: at least once. Returns how many attempts it made.
std::int64_t deliver(store::Store& store, const DispatcherOptions& options, const Lease& lease,
                     std::vector<Leased>& leased, const time::Clock& clock,
                     const outbound_http::Transport& transport) {
  // No request starts after one timeout's length: a slow receiver cannot hold the pass, and the
  // endpoints waiting for the next one, much longer than two timeouts.
  const time::Micros last_start = clock.now() + timeout_ms(options) * 1000;
  std::int64_t attempts = 0;
  std::vector<Recorded> waiting;
  const std::unique_ptr<outbound_http::Requests> requests = transport.open(leased.size());
  for (std::size_t i = 0; i < leased.size(); ++i) {
    Leased& endpoint = leased[i];
    if (endpoint.queue.empty()) continue;
    if (endpoint.refused) {  // an attempt without a request: retried on the schedule
      Outcome refused;
      refused.error = endpoint.refused;
      const time::Micros real_now = clock.now();
      waiting.push_back({i, endpoint.queue.front(), refused, real_now / k_second, real_now});
      ++attempts;
      continue;
    }
    requests->start(i, request_for(endpoint, options, clock.now()));
  }
  while (requests->running() > 0) {
    if (stopping(options)) {
      requests->abandon_all();  // unrecorded: still pending, sent again after the restart
      break;
    }
    for (auto& [slot, response] : requests->poll(limits::k_webhook_dispatch_poll_ms)) {
      Leased& endpoint = leased[slot];
      const time::Micros real_now = clock.now();
      Recorded done{slot, std::move(endpoint.queue.front()), outcome_of(response, real_now),
                    endpoint.sent_timestamp, real_now};
      endpoint.queue.pop_front();
      ++attempts;
      // A failure ends the endpoint's turn (a 410 disables it).
      if (done.outcome.delivered && !endpoint.lost && !endpoint.queue.empty() &&
          !stopping(options) && real_now <= last_start) {
        requests->start(slot, request_for(endpoint, options, clock.now()));
      }
      waiting.push_back(std::move(done));
    }
    if (waiting.size() >= limits::k_webhook_attempts_per_unit || requests->running() == 0) {
      record_all(store, lease, leased, waiting);
    }
  }
  record_all(store, lease, leased, waiting);  // what came back before a stop is kept
  return attempts;
}

}  // namespace

bool deliver_pass(store::Store& store, const crypto::Sealer& sealer,
                  const DispatcherOptions& options, const time::Clock& clock,
                  const outbound_http::Transport& transport) {
  const time::Micros real_now = clock.now();
  if (stopping(options) || !any_due(store, real_now)) return false;
  const Lease lease{options.node_id + "/" + ids::generate("wls"), lease_micros(options)};
  std::vector<Leased> leased = take_leases(store, options, lease, real_now);
  if (leased.empty()) return false;
  load_due(store, sealer, options, leased, real_now);
  resolve_hosts(leased, options.destinations, transport);
  std::int64_t attempts = 0;
  try {
    attempts = deliver(store, options, lease, leased, clock, transport);
  } catch (...) {
    release_leases(store, lease, leased, clock.now());
    throw;
  }
  release_leases(store, lease, leased, clock.now());
  if (attempts > 0) {
    log::write(log::Level::debug, "webhooks.delivered",
               {{"endpoints", static_cast<std::int64_t>(leased.size())}, {"attempts", attempts}});
  }
  return attempts > 0;
}

// ---------------------------------------------------------------------------------------------
// The log and replays

void log_attempt(store::Tx& tx, const std::string& tenant_id, const LoggedAttempt& line) {
  store::Value status = nullptr;
  if (line.status_code) status = std::int64_t{*line.status_code};
  tx.exec("INSERT INTO webhook_attempts (tenant_id, id, delivery_id, endpoint_id, event_id, "
          "event_type, attempt, replay, delivered, status_code, latency_ms, error, "
          "next_attempt_at, webhook_timestamp, attempted_at, outcome) "
          "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          {tenant_id, ids::generate("whd"), line.delivery_id, line.endpoint_id, line.event_id,
           line.event_type, std::int64_t{line.attempt}, std::int64_t{line.replay ? 1 : 0},
           std::int64_t{line.delivered ? 1 : 0}, status, line.latency_ms,
           store::optional_value(line.error), store::optional_value(line.next_attempt_at),
           static_cast<std::int64_t>(line.webhook_timestamp), line.attempted_at,
           store::optional_value(line.outcome)});
}

Result<PageOf<Attempt>> list_attempts(store::Tx& tx, const std::string& tenant_id,
                                      const std::string& endpoint_id, std::int64_t offset,
                                      std::int64_t limit) {
  auto endpoint = get_endpoint(tx, tenant_id, endpoint_id);
  if (!endpoint) return std::move(endpoint).error();
  return store::query_page<Attempt>(
      tx,
      "id, event_id, event_type, attempt, replay, delivered, status_code, latency_ms, error, "
      "next_attempt_at, attempted_at, outcome",
      " FROM webhook_attempts WHERE tenant_id = ? AND endpoint_id = ?", {tenant_id, endpoint_id},
      "attempted_at DESC, id DESC", offset, limit, [](const store::Row& row) {
        Attempt attempt;
        attempt.id = row.text(0);
        attempt.event_id = row.text(1);
        attempt.event_type = row.text(2);
        attempt.attempt = static_cast<int>(row.integer(3));
        attempt.replay = row.integer(4) == 1;
        attempt.delivered = row.integer(5) == 1;
        if (auto status = row.optional_integer(6)) attempt.status_code = static_cast<int>(*status);
        attempt.latency_ms = row.integer(7);
        attempt.error = row.optional_text(8);
        attempt.next_attempt_at = row.optional_text(9);
        attempt.attempted_at = row.text(10);
        attempt.outcome = row.optional_text(11);
        return attempt;
      });
}

Result<Replay> replay(store::Tx& tx, const std::string& tenant_id, const std::string& endpoint_id,
                      const std::string& event_id, time::Micros now) {
  auto endpoint = get_endpoint(tx, tenant_id, endpoint_id);
  if (!endpoint) return std::move(endpoint).error();
  // Only positioned events exist for readers (domain/events).
  std::optional<events::Event> event = events::find(tx, tenant_id, event_id);
  if (!event) return errors::item_not_found("event");
  Replay made{ids::generate("whq"), endpoint_id, event_id, "pending", time::iso(now)};
  tx.exec("INSERT INTO webhook_deliveries (tenant_id, id, endpoint_id, event_id, event_position, "
          "event_type, state, attempts, next_attempt_at_micros, replay, inserted_at, updated_at) "
          "VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, 1, ?, ?)",
          {tenant_id, made.delivery_id, endpoint_id, event_id, event->position, event->type, now,
           made.next_attempt_at, made.next_attempt_at});
  tx.notify(std::string(k_deliveries_topic));
  return made;
}

}  // namespace tesoro::webhooks
