// Webhooks: the endpoints tenants register, the deliveries of events to them (one row per event
// and endpoint, the retry state machine) and the log of every attempt. Design: domain/webhooks.
#include "store/migrations/migrations.hpp"

namespace tesoro::store {

std::vector<Migration> webhook_migrations() {
  return {
      {15,
       "webhooks",
       {
           // An endpoint (whe_). event_types: JSON array of event types, [] for every type.
           // enabled: 0/1; disabled_reason: NULL, `gone` (it answered 410) or `disabled` (a
           // PATCH). secret_sealed: the signing secret (`whsec_...`) sealed with the server's
           // data key (aad: tenant_id:id); previous_secret_sealed signs too until
           // previous_secret_expires_at_micros (real time), 24 h after a rotation.
           // start_position: the events position when it was created; it receives events
           // positioned after it. lease_owner / lease_until_micros (real time): the node
           // delivering to it now (one at a time, so its deliveries go in position order and
           // two nodes never send the same event).
           "CREATE TABLE webhook_endpoints (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
           "url TEXT NOT NULL, description TEXT, event_types TEXT NOT NULL, "
           "enabled INTEGER NOT NULL, disabled_reason TEXT, secret_sealed TEXT NOT NULL, "
           "previous_secret_sealed TEXT, previous_secret_expires_at_micros BIGINT, "
           "start_position BIGINT NOT NULL, lease_owner TEXT, lease_until_micros BIGINT, "
           "inserted_at TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (tenant_id, id))",
           "CREATE INDEX webhook_endpoints_by_time ON webhook_endpoints "
           "(tenant_id, inserted_at, id)",
           // The fan-out cursor: the last event position whose deliveries were created. One
           // row (id = 1), advanced in the transaction that creates the deliveries.
           "CREATE TABLE webhook_fanout (id INTEGER PRIMARY KEY, position BIGINT NOT NULL)",
           "INSERT INTO webhook_fanout (id, position) VALUES (1, 0)",
           // One event to deliver to one endpoint (whq_). state: pending | delivered | failed
           // (every attempt of the schedule failed, or the endpoint was deleted).
           // next_attempt_at_micros: tenant time of the next attempt while pending, else NULL.
           // attempts: how many were made. replay: 1 for a manual replay.
           "CREATE TABLE webhook_deliveries (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
           "endpoint_id TEXT NOT NULL, event_id TEXT NOT NULL, event_position BIGINT NOT NULL, "
           "event_type TEXT NOT NULL, state TEXT NOT NULL, attempts INTEGER NOT NULL, "
           "next_attempt_at_micros BIGINT, replay INTEGER NOT NULL, "
           "inserted_at TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (tenant_id, id))",
           // What the dispatcher reads: an endpoint's pending deliveries in position order.
           "CREATE INDEX webhook_deliveries_pending ON webhook_deliveries "
           "(endpoint_id, event_position) WHERE state = 'pending'",
           "CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries "
           "(tenant_id, event_id, endpoint_id)",
           // One HTTP attempt of a delivery (whd_): the log GET .../deliveries shows.
           // status_code: NULL when no response came (error says why). latency_ms: request
           // sent to response read. next_attempt_at: ISO tenant time of the retry it scheduled
           // (NULL when delivered or the schedule is exhausted). webhook_timestamp: the
           // webhook-timestamp header sent (real Unix seconds). attempted_at: tenant time.
           "CREATE TABLE webhook_attempts (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
           "delivery_id TEXT NOT NULL, endpoint_id TEXT NOT NULL, event_id TEXT NOT NULL, "
           "event_type TEXT NOT NULL, attempt INTEGER NOT NULL, replay INTEGER NOT NULL, "
           "delivered INTEGER NOT NULL, status_code INTEGER, latency_ms BIGINT NOT NULL, "
           "error TEXT, next_attempt_at TEXT, webhook_timestamp BIGINT NOT NULL, "
           "attempted_at TEXT NOT NULL, PRIMARY KEY (tenant_id, id))",
           "CREATE INDEX webhook_attempts_by_endpoint ON webhook_attempts "
           "(tenant_id, endpoint_id, attempted_at, id)",
       }},
      // Authorization decisioning by the tenant (domain/cards/authorization_decisions.hpp):
      // how long an endpoint subscribed to card_authorization.request is waited for, and what
      // a timeout or an error decides (`decline` | `approve`). A request to it is logged as an
      // attempt whose delivery_id and event_id are the request's id (adr_), event_type
      // `card_authorization.request`, with `outcome` (webhook_approved | webhook_declined |
      // webhook_timeout | webhook_error); NULL on the attempts of events.
      {26,
       "webhook_authorization_decisions",
       {
           "ALTER TABLE webhook_endpoints ADD COLUMN authorization_timeout_ms INTEGER NOT NULL "
           "DEFAULT 2000",
           "ALTER TABLE webhook_endpoints ADD COLUMN authorization_fallback TEXT NOT NULL "
           "DEFAULT 'decline'",
           "ALTER TABLE webhook_attempts ADD COLUMN outcome TEXT",
       }},
      // How many enabled endpoints of the tenant list card_authorization.request, kept by every
      // change of an endpoint (webhooks::refresh_authorization_endpoints) and read with the
      // credential: a tenant with none pays no lookup per card authorization.
      {28,
       "tenant_authorization_endpoints",
       {
           "ALTER TABLE tenants ADD COLUMN authorization_endpoints INTEGER NOT NULL DEFAULT 0",
           "UPDATE tenants SET authorization_endpoints = (SELECT COUNT(*) FROM webhook_endpoints e "
           "WHERE e.tenant_id = tenants.id AND e.enabled = 1 "
           "AND e.event_types LIKE '%\"card_authorization.request\"%')",
       }},
  };
}

}  // namespace tesoro::store
