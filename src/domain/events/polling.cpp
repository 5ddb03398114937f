#include "domain/events/polling.hpp"

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "domain/webhooks/endpoints.hpp"
#include "store/pages.hpp"

namespace tesoro::events {
namespace {

constexpr std::string_view k_columns = "position, id, type, data, inserted_at";

Event from_row(const store::Row& row) {
  return {row.integer(0), row.text(1), row.text(2), row.text(3), row.text(4)};
}

// " FROM events WHERE ..." with the filter's conditions, and their parameters. Fails when the
// filter names an endpoint the tenant does not have: "events that endpoint has not received"
// would otherwise be every event, a wrong answer rather than an empty one.
Result<std::string> from_where(store::Tx& tx, const std::string& tenant_id,
                               const EventFilter& filter, store::Params& params) {
  std::string where = " FROM events WHERE tenant_id = ? AND position IS NOT NULL";
  params.emplace_back(tenant_id);
  if (filter.type && filter.type->ends_with(".*")) {
    // A range rather than LIKE, whose `_` would be a wildcard in `card_transaction.%`: types
    // that start with "<prefix>." sort from it up to "<prefix>/" ('/' follows '.').
    std::string prefix = filter.type->substr(0, filter.type->size() - 1);
    where += " AND type >= ? AND type < ?";
    params.emplace_back(prefix);
    params.emplace_back(prefix.substr(0, prefix.size() - 1) + "/");
  } else {
    store::where_equal(where, params, "type", filter.type);
  }
  if (filter.from) {
    // Timestamps are fixed-width ISO text: string order is time order.
    where += " AND inserted_at >= ?";
    params.emplace_back(time::iso(*filter.from));
  }
  if (filter.to) {
    where += " AND inserted_at <= ?";
    params.emplace_back(time::iso(*filter.to));
  }
  if (filter.delivery_success) {
    where += *filter.delivery_success ? " AND EXISTS" : " AND NOT EXISTS";
    where +=
        " (SELECT 1 FROM webhook_deliveries d WHERE d.tenant_id = events.tenant_id "
        "AND d.event_id = events.id AND d.state = 'delivered'";
    if (filter.endpoint_id) {
      auto endpoint = webhooks::get_endpoint(tx, tenant_id, *filter.endpoint_id);
      if (!endpoint) {
        return errors::of(ErrorCode::item_not_found, "endpoint_id", "webhook endpoint not found");
      }
      where += " AND d.endpoint_id = ?";
      params.emplace_back(*filter.endpoint_id);
    }
    where += ")";
  }
  return where;
}

}  // namespace

Result<PageOf<Event>> list_events(store::Tx& tx, const std::string& tenant_id,
                                  const EventFilter& filter, std::int64_t offset,
                                  std::int64_t limit) {
  store::Params params;
  auto where = from_where(tx, tenant_id, filter, params);
  if (!where) return std::move(where).error();
  PageOf<Event> page = store::query_page<Event>(tx, k_columns, where.value(), params,
                                                "position DESC", offset, limit, from_row);
  render_references(tx, tenant_id, page.items);
  return page;
}

Result<std::vector<Event>> list_after(store::Tx& tx, const std::string& tenant_id,
                                      const EventFilter& filter, std::int64_t after_position,
                                      std::int64_t limit) {
  store::Params params;
  auto where = from_where(tx, tenant_id, filter, params);
  if (!where) return std::move(where).error();
  params.emplace_back(after_position);
  params.emplace_back(limit);
  std::vector<Event> events;
  for (const store::Row& row :
       tx.query("SELECT " + std::string(k_columns) + where.value() +
                    " AND position > ? ORDER BY position LIMIT ?",
                params)) {
    events.push_back(from_row(row));
  }
  render_references(tx, tenant_id, events);
  return events;
}

Result<Event> get_event(store::Tx& tx, const std::string& tenant_id, const std::string& id) {
  auto row = tx.query_one("SELECT " + std::string(k_columns) +
                              " FROM events WHERE tenant_id = ? AND id = ? "
                              "AND position IS NOT NULL",
                          {tenant_id, id});
  if (!row) return errors::item_not_found("event");
  std::vector<Event> one{from_row(*row)};
  render_references(tx, tenant_id, one);
  return std::move(one.front());
}

std::string event_text(const Event& event) {
  json_text::Writer out(160 + event.data_json.size());
  out.begin_object();
  out.key("id").string(event.id);
  out.key("type").string(event.type);
  out.key("position").integer(event.position);
  out.key("timestamp").string(event.inserted_at);
  out.key("data").raw(event.data_json);
  out.end_object();
  return out.take();
}

}  // namespace tesoro::events
