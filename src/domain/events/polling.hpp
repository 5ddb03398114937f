#pragma once
// Reading the events outbox for polling (GET /v1/events, GET /api/v1/events and their
// /{id}): what a tenant uses to catch up on what its webhook endpoints missed, or instead of
// webhooks altogether. Only positioned events are read (events.hpp: an event is visible once
// the sequencer gave it a position), so paging by position never skips one.
//
// Two ways to page:
// - list_events: newest first (position descending), page_number / page_size like every list;
// - list_after: oldest first, the events positioned after a cursor the consumer keeps (the
//   last position it processed): each event is read exactly once across calls, however many
//   events are emitted in between.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/page.hpp"
#include "core/result.hpp"
#include "core/time.hpp"
#include "domain/events/events.hpp"
#include "store/store.hpp"

namespace tesoro::events {

struct EventFilter {
  // An exact event type, or `<prefix>.*` for every type that starts with `<prefix>.`
  // (validated against webhooks::event_types() by the caller).
  std::optional<std::string> type;
  // inserted_at (the tenant clock) within [from, to], both inclusive.
  std::optional<time::Micros> from;
  std::optional<time::Micros> to;
  // true: a webhook delivery of the event succeeded (a webhook_deliveries row in state
  // `delivered`, replays included) to `endpoint_id`, or to any endpoint of the tenant without
  // it; false: none did.
  std::optional<bool> delivery_success;
  std::optional<std::string> endpoint_id;  // whe_; only with delivery_success
};

// Newest first; `offset` and `limit` from the page. The caller has checked that the tenant has
// the filter's endpoint: "events that endpoint has not received" would otherwise be every event.
Result<PageOf<Event>> list_events(store::Tx& tx, const std::string& tenant_id,
                                  const EventFilter& filter, std::int64_t offset,
                                  std::int64_t limit);

// Oldest first: up to `limit` events positioned after `after_position` that match the filter.
Result<std::vector<Event>> list_after(store::Tx& tx, const std::string& tenant_id,
                                      const EventFilter& filter, std::int64_t after_position,
                                      std::int64_t limit);

// item_not_found for an unknown id, another tenant's event, or one not positioned yet.
Result<Event> get_event(store::Tx& tx, const std::string& tenant_id, const std::string& id);

// The event as the API shows it: {"id","type","position","timestamp","data"}, the body a
// webhook delivery POSTs ({"id","type","timestamp","data"}) plus the position. `data` is
// written as is: the readers above return it rendered (events.hpp, events by reference).
std::string event_text(const Event& event);

}  // namespace tesoro::events
