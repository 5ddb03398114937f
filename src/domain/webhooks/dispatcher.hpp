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
//    and its delivery updated in one unit after the response:
//    - 2xx: delivered;
//    - 410: the endpoint is disabled (disabled_reason `gone`); the delivery stays pending, and
//      goes once the endpoint is enabled again;
//    - anything else (other status, timeout, refused address, connection error): retried on the
//      schedule below, not before a Retry-After the response gave; after the last attempt the
//      delivery is `failed`.
//    A node killed mid-delivery leaves the lease to expire; the delivery is still pending and is
//    sent again (same webhook-id): at least once, never skipped.
// Retry schedule (decisions.md), on the tenant clock: attempt 1 at once, then 5 s, 5 min,
// 30 min, 2 h, 5 h, 10 h, 10 h after the previous failure: 8 attempts in all.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/crypto.hpp"
#include "core/result.hpp"
#include "core/time.hpp"
#include "domain/webhooks/endpoints.hpp"
#include "store/store.hpp"

namespace tesoro::webhooks {

// Delay before attempt `attempt` (2-based: the first retry is attempt 2); nullopt when
// `attempt` is past the schedule.
std::optional<time::Micros> retry_delay_micros(int attempt);

// Creates the deliveries of up to `limit` events past the cursor. Returns how many events it
// fanned out (the worker runs again at once while it is > 0).
std::int64_t fan_out(store::Tx& tx, std::int64_t limit);

struct DispatcherOptions {
  Destinations destinations;
  std::string node_id;
  int endpoints_per_pass = 16;  // endpoints delivered to concurrently
  int deliveries_per_endpoint = 50;
  time::Micros lease_micros = 0;  // default limits::k_webhook_lease_seconds
  std::int64_t timeout_ms = 0;    // default limits::k_webhook_timeout_ms (15 s)
};

// One pass: leases endpoints with due deliveries and delivers to them. Returns true when it
// delivered or attempted anything (the worker runs again at once).
bool deliver_pass(store::Store& store, const crypto::Sealer& sealer,
                  const DispatcherOptions& options, time::Micros real_now);

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
};

// A manual replay of one event to one endpoint: a new pending delivery due now on the tenant
// clock (replay = 1), whatever became of earlier ones. 404 item_not_found for an unknown
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
