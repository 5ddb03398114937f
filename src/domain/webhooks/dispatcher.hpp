#pragma once
// Delivering events to webhook endpoints (Standard Webhooks v1; secrets.hpp), run by the
// background workers, never inside a request.
//
// 1. Fan-out (fan_out): under one lock across nodes, reads events positioned after the
//    webhook_fanout cursor, creates a `pending` delivery (whq_) for every enabled endpoint of the
//    event's tenant that is subscribed to its type and was created before it
//    (start_position < position), due at once, and advances the cursor, all in one unit.
// 2. Delivery (deliver_pass): leases endpoints that have due pending deliveries (their tenant
//    clock has reached next_attempt_at_micros) and no live lease, so with several nodes one node
//    delivers to an endpoint at a time; for each, sends its due deliveries in event position
//    order, one at a time, POSTing {"id","type","timestamp","data"} with webhook-id (the event
//    id, the same on every attempt and replay), webhook-timestamp (real Unix seconds of this
//    attempt) and webhook-signature; a 15 s timeout. Each attempt is logged (webhook_attempts)
//    and its delivery updated in one unit after the response (a unit holds the attempts of up
//    to 32 responses, so that the next request need not wait for a commit):
//    - 2xx: delivered;
//    - 410: the endpoint is disabled (disabled_reason `gone`); the delivery stays pending, and
//      goes once the endpoint is enabled again;
//    - anything else (other status, timeout, refused address, connection error): retried on the
//      schedule below, not before a Retry-After the response gave; after the last attempt the
//      delivery is `failed`.
//    A pass starts no request after one timeout's length, so it ends within about two.
//    A failed attempt ends the endpoint's turn in this pass (a dead endpoint costs one timeout
//    per pass, not one per due delivery); its later due deliveries go in the next pass. A
//    delivery waiting for its retry does not hold back later events: order is kept for first
//    attempts, and a retried event may arrive after later ones (receivers order by the data).
//    Each recorded attempt renews the lease and is fenced by it: a node whose lease was taken
//    over writes nothing. A node killed mid-delivery leaves the lease to expire (on SQLite a
//    starting server ends them at once); the delivery is still pending and is sent again (same
//    webhook-id): at least once, never skipped.
// Retry schedule (decisions.md), on the tenant clock: attempt 1 at once, then 5 s, 5 min,
// 30 min, 2 h, 5 h, 10 h, 10 h after the previous failure: 8 attempts in all.
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.hpp"
#include "core/crypto.hpp"
#include "core/limits.hpp"
#include "core/outbound_http.hpp"
#include "core/page.hpp"
#include "core/result.hpp"
#include "core/time.hpp"
#include "domain/webhooks/endpoints.hpp"
#include "store/store.hpp"

namespace tesoro::webhooks {

// Raised after a unit that made deliveries due now (fan-out, a replay, an endpoint enabled
// again): wakes the delivery worker.
inline constexpr std::string_view k_deliveries_topic = "webhooks.deliveries";

// Delay before attempt `attempt` (2-based: the first retry is attempt 2); nullopt when
// `attempt` is past the schedule.
std::optional<time::Micros> retry_delay_micros(int attempt);
// When attempt `attempt` (2-based) follows a failure whose response asked for `retry_after`
// (parsed Retry-After): the schedule's delay, or the Retry-After when longer, which counts up to
// the schedule's longest step; nullopt past the schedule.
std::optional<time::Micros> next_retry_delay_micros(int attempt,
                                                    std::optional<time::Micros> retry_after);

// The body POSTed for an event: {"id","type","timestamp","data"}, `data_json` written as is.
std::string payload(std::string_view event_id, std::string_view type,
                    std::string_view inserted_at, std::string_view data_json);

// Creates the deliveries of up to `limit` events past the cursor, due at once on each tenant's
// clock. Returns how many events it fanned out (the worker runs again at once while it is
// `limit`). With no endpoint enabled it moves the cursor past every event and returns 0: none
// has a delivery to make. The time they are due is read from `clock` once the cursor's lock is
// held: a pass that waited for another node's pass then dates its deliveries after that pass's,
// so an endpoint's first attempts fall due in the order of their events (a time read before the
// wait dated later events' deliveries before earlier ones', and a dispatcher pass between the
// two times sent the later event first).
std::int64_t fan_out(store::Tx& tx, const time::Clock& clock, std::int64_t limit);

struct DispatcherOptions {
  Destinations destinations;
  std::string node_id;
  int endpoints_per_pass = limits::k_webhook_endpoints_per_pass;  // delivered to concurrently
  int deliveries_per_endpoint = limits::k_webhook_deliveries_per_endpoint;
  time::Micros lease_micros = 0;  // default limits::k_webhook_lease_seconds
  std::int64_t timeout_ms = 0;    // default limits::k_webhook_timeout_ms (15 s)
  // Set when the server stops: requests in flight are dropped unrecorded (still pending, so
  // sent again later with the same webhook-id) instead of holding the shutdown.
  const std::atomic<bool>* stopping = nullptr;
};

// One pass: leases endpoints with due deliveries and delivers to them, resolving their hosts
// and sending their requests through `transport` (the dispatcher does no I/O of its own).
// Returns true when it delivered or attempted anything (the worker runs again at once). `clock`
// is real time: the lease, and the webhook-timestamp of each attempt.
bool deliver_pass(store::Store& store, const crypto::Sealer& sealer,
                  const DispatcherOptions& options, const time::Clock& clock,
                  const outbound_http::Transport& transport);

// Ends every lease. Only where one process owns the data (SQLite), when it starts: a lease left
// by a killed process would otherwise hold its endpoints until it expired.
void release_all_leases(store::Tx& tx);

// Writes one line of an endpoint's delivery log (webhook_attempts): an attempt of a delivery, or
// a card_authorization.request (domain/cards/authorization_decisions.hpp: its id as delivery
// and event, its outcome).
struct LoggedAttempt {
  std::string delivery_id;
  std::string endpoint_id;
  std::string event_id;
  std::string event_type;
  int attempt = 1;
  bool replay = false;
  bool delivered = false;
  std::optional<int> status_code;
  std::int64_t latency_ms = 0;
  std::optional<std::string> error;
  std::optional<std::string> next_attempt_at;  // ISO, tenant time
  long long webhook_timestamp = 0;              // real Unix seconds sent
  std::string attempted_at;                     // ISO, tenant time
  std::optional<std::string> outcome;
};
void log_attempt(store::Tx& tx, const std::string& tenant_id, const LoggedAttempt& line);

// The delivery log of an endpoint (GET .../webhook_endpoints/{id}/deliveries): attempts,
// newest first, paginated.
struct Attempt {
  std::string id;  // whd_
  std::string event_id;
  std::string event_type;
  int attempt = 1;
  bool replay = false;
  bool delivered = false;
  std::optional<int> status_code;
  std::int64_t latency_ms = 0;
  std::optional<std::string> error;
  std::optional<std::string> next_attempt_at;
  std::string attempted_at;
  // A card_authorization.request's outcome (webhook_approved, webhook_declined, webhook_timeout,
  // webhook_error); nullopt for an event's delivery.
  std::optional<std::string> outcome;
};
// item_not_found for an unknown endpoint (or another tenant's).
Result<PageOf<Attempt>> list_attempts(store::Tx& tx, const std::string& tenant_id,
                                      const std::string& endpoint_id, std::int64_t offset,
                                      std::int64_t limit);

// A manual replay of one event to one endpoint: a new pending delivery due now on the tenant
// clock (replay = 1), whatever became of earlier ones. item_not_found for an unknown
// endpoint or event (or another tenant's).
struct Replay {
  std::string delivery_id;  // whq_
  std::string endpoint_id;
  std::string event_id;
  std::string state;  // pending
  std::string next_attempt_at;
};
Result<Replay> replay(store::Tx& tx, const std::string& tenant_id, const std::string& endpoint_id,
                      const std::string& event_id, time::Micros now);

}  // namespace tesoro::webhooks
