// GET /v1/events and GET /api/v1/events (polling the events outbox), GET .../events/{id}.
// The same handlers on both surfaces: the core API with the scope group `webhooks` (read), the
// participant API with the scope `webhooks`.
#include "api/context.hpp"
#include "api/lists.hpp"
#include "api/validation/readers.hpp"
#include "core/json_writer.hpp"
#include "core/limits.hpp"
#include "domain/events/polling.hpp"
#include "domain/webhooks/endpoints.hpp"

namespace tesoro::api {
namespace {

events::EventFilter read_filter(QueryReader& query, Problems& problems) {
  events::EventFilter filter;
  // A type of the catalogue or `<prefix>.*` of one, as an endpoint's event_types take them: a
  // filter that can never match is a mistake worth a 400, not an empty list.
  filter.type = query.string("type");
  if (filter.type && webhooks::check_event_types({*filter.type})) {
    problems.invalid("type", "must be an event type Tesoro emits (such as collection.paid) or "
                             "<prefix>.* (such as collection.*)");
  }
  filter.from = query.timestamp("timestamp[gte]");
  filter.to = query.timestamp("timestamp[lte]");
  auto success = query.string("delivery_success");
  if (success == "true" || success == "false") {
    filter.delivery_success = success == "true";
  } else if (success) {
    problems.invalid("delivery_success", "must be true or false");
  }
  filter.endpoint_id = query.string("endpoint_id");
  if (filter.endpoint_id) {
    check_path_id(*filter.endpoint_id, "whe", "a webhook endpoint", problems, "endpoint_id");
    if (!success) problems.invalid("endpoint_id", "applies only with delivery_success");
  }
  return filter;
}

// 404 item_not_found (path `endpoint_id`) when the filter names an endpoint the tenant does not
// have: "events that endpoint has not received" would otherwise be every event, a wrong answer
// rather than an empty one.
Status check_endpoint(store::Tx& tx, const std::string& tenant_id, const events::EventFilter& filter) {
  if (filter.delivery_success && filter.endpoint_id &&
      !webhooks::get_endpoint(tx, tenant_id, *filter.endpoint_id)) {
    return errors::of(ErrorCode::item_not_found, "endpoint_id", "webhook endpoint not found");
  }
  return ok_status();
}

// ?after=<position>: oldest first, {events, next_after, has_more}; next_after is the position
// of the last event returned (the cursor to send next), or `after` itself when none came.
http::Response list_past_cursor(Context& context, const events::EventFilter& filter,
                                std::int64_t after, std::int64_t page_size) {
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    if (Status checked = check_endpoint(tx, context.tenant_id(), filter); !checked) {
      return std::move(checked).error();
    }
    // One more than asked tells whether more are waiting.
    auto found = events::list_after(tx, context.tenant_id(), filter, after, page_size + 1);
    if (!found) return std::move(found).error();
    std::vector<events::Event>& items = found.value();
    const bool has_more = static_cast<std::int64_t>(items.size()) > page_size;
    if (has_more) items.pop_back();
    json_text::Writer out(256 + 512 * items.size());
    out.begin_object().key("events").begin_array();
    for (const events::Event& event : items) out.raw(events::event_text(event));
    out.end_array();
    out.key("next_after").integer(items.empty() ? after : items.back().position);
    out.key("has_more").raw(has_more ? "true" : "false");
    out.end_object();
    return json_text_response(200, out.take());
  });
}

http::Response list(Context& context) {
  Problems problems;
  QueryReader query(context.query, problems);
  const bool paged_by_number = query.present("page_number");
  Page page = read_page(query);
  auto after = query.integer("after", 0, limits::k_event_position_max);
  events::EventFilter filter = read_filter(query, problems);
  query.reject_unknown();
  if (after && paged_by_number) {
    problems.invalid("page_number", "not with after: a list after a position pages by position");
  }
  if (!problems.empty()) return context.error(problems.to_error());
  if (after) return list_past_cursor(context, filter, *after, page.size);
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    if (Status checked = check_endpoint(tx, context.tenant_id(), filter); !checked) {
      return std::move(checked).error();
    }
    auto found =
        events::list_events(tx, context.tenant_id(), filter, page.offset(), page.size);
    if (!found) return std::move(found).error();
    return paginated_text("events", page, found.value(), events::event_text);
  });
}

http::Response show(Context& context) {
  Problems problems;
  std::string id = check_path_id(context.param("id"), "evt", "an event", problems);
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto event = events::get_event(tx, context.tenant_id(), id);
    if (!event) return std::move(event).error();
    return json_text_response(200, events::event_text(event.value()));
  });
}

}  // namespace

void add_event_routes(Routes& routes) {
  routes.push_back({"GET", "/v1/events", AuthKind::core, "webhooks", list});
  routes.push_back({"GET", "/v1/events/{id}", AuthKind::core, "webhooks", show});
  routes.push_back({"GET", "/api/v1/events", AuthKind::participant, "webhooks", list});
  routes.push_back({"GET", "/api/v1/events/{id}", AuthKind::participant, "webhooks", show});
}

}  // namespace tesoro::api
