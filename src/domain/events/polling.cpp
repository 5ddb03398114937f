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

// Where a filter's events are read from, as the conditions below name its columns.
struct Source {
  std::string from;      // " FROM <table> AS events"
  std::string position;  // the position's column
  std::string id;        // the event id's expression
  // The one type every event of the source has, or none (then the column `type`).
  std::optional<std::string_view> type;
};

// The events' table (the view on SQLite: events::table).
Source every_event(const store::Tx& tx) {
  return {" FROM " + std::string(table(tx)) + " AS events", "position", "events.id", {}};
}
// On SQLite, the two parts of the view counted apart (the view's count reads every row of it):
// the events' rows, and the created events a batch's transfers keep.
Source event_rows() { return {" FROM events AS events", "position", "events.id", {}}; }
Source row_events() {
  return {" FROM outgoing_transfers AS events", "created_position",
          std::string(k_row_event_id_sql), k_row_event_type};
}

// Whether `type` (an event type) passes the filter's type: exact, or `<prefix>.*`.
bool type_matches(std::string_view type, const EventFilter& filter) {
  if (!filter.type) return true;
  if (!filter.type->ends_with(".*")) return type == *filter.type;
  return type.starts_with(std::string_view(*filter.type).substr(0, filter.type->size() - 1));
}

// The source's FROM and WHERE with the filter's conditions, and their parameters; nullopt
// when no event of the source passes the filter. Fails when the filter names an endpoint the
// tenant does not have: "events that endpoint has not received" would otherwise be every event,
// a wrong answer rather than an empty one.
Result<std::optional<std::string>> from_where(store::Tx& tx, const std::string& tenant_id,
                                              const EventFilter& filter, const Source& source,
                                              store::Params& params) {
  std::string where =
      source.from + " WHERE tenant_id = ? AND " + source.position + " IS NOT NULL";
  params.emplace_back(tenant_id);
  if (source.type) {
    if (!type_matches(*source.type, filter)) return std::optional<std::string>();
  } else if (filter.type && filter.type->ends_with(".*")) {
    // A range rather than LIKE, whose `_` would be a wildcard in `card_transaction.%`: types
    // that start with "<prefix>." sort from it up to "<prefix>/" ('/' follows '.').
    std::string prefix = filter.type->substr(0, filter.type->size() - 1);
    where += " AND type >= ? AND type < ?";
    params.emplace_back(prefix);
    params.emplace_back(prefix.substr(0, prefix.size() - 1) + "/");
  } else {
    store::where_equal(where, params, "type", filter.type);
  }
  // Timestamps are fixed-width ISO text: string order is time order. The range is checked on
  // the rows read by position (docs/decisions.md); on SQLite `+` keeps the planner from reading
  // the transfers' part of the view by their time index instead, and sorting it.
  const std::string inserted_at =
      tx.engine() == store::Engine::sqlite ? "+inserted_at" : "inserted_at";
  if (filter.from) {
    where += " AND " + inserted_at + " >= ?";
    params.emplace_back(time::iso(*filter.from));
  }
  if (filter.to) {
    where += " AND " + inserted_at + " <= ?";
    params.emplace_back(time::iso(*filter.to));
  }
  if (filter.delivery_success) {
    where += *filter.delivery_success ? " AND EXISTS" : " AND NOT EXISTS";
    where += " (SELECT 1 FROM webhook_deliveries d WHERE d.tenant_id = events.tenant_id "
             "AND d.event_id = " + source.id + " AND d.state = 'delivered'";
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
  return std::optional<std::string>(std::move(where));
}

// How many of the source's events pass the filter.
Result<std::int64_t> count_of(store::Tx& tx, const std::string& tenant_id,
                              const EventFilter& filter, const Source& source) {
  store::Params params;
  auto where = from_where(tx, tenant_id, filter, source, params);
  if (!where) return std::move(where).error();
  if (!where.value()) return std::int64_t{0};
  return tx.query_one("SELECT COUNT(*)" + *where.value(), params)->integer(0);
}

}  // namespace

Result<PageOf<Event>> list_events(store::Tx& tx, const std::string& tenant_id,
                                  const EventFilter& filter, std::int64_t offset,
                                  std::int64_t limit) {
  store::Params params;
  auto where = from_where(tx, tenant_id, filter, every_event(tx), params);
  if (!where) return std::move(where).error();
  PageOf<Event> page;
  if (!rows_keep_events(tx)) {
    // The page and its count in one statement (one round trip on PostgreSQL).
    page = store::query_page<Event>(tx, k_columns, *where.value(), params, "position DESC",
                                    offset, limit, from_row);
  } else {
    // The page through the view (both parts read in order and merged); the count as the sum of
    // the parts' counts, each through its own index.
    params.emplace_back(limit);
    params.emplace_back(offset);
    for (const store::Row& row : tx.query("SELECT " + std::string(k_columns) + *where.value() +
                                              " ORDER BY position DESC LIMIT ? OFFSET ?",
                                          params)) {
      page.items.push_back(from_row(row));
    }
    for (const Source& part : {event_rows(), row_events()}) {
      auto count = count_of(tx, tenant_id, filter, part);
      if (!count) return std::move(count).error();
      page.total_items += count.value();
    }
  }
  render_references(tx, tenant_id, page.items);
  return page;
}

Result<std::vector<Event>> list_after(store::Tx& tx, const std::string& tenant_id,
                                      const EventFilter& filter, std::int64_t after_position,
                                      std::int64_t limit) {
  store::Params params;
  auto where = from_where(tx, tenant_id, filter, every_event(tx), params);
  if (!where) return std::move(where).error();
  params.emplace_back(after_position);
  params.emplace_back(limit);
  std::vector<Event> events;
  for (const store::Row& row :
       tx.query("SELECT " + std::string(k_columns) + *where.value() +
                    " AND position > ? ORDER BY position LIMIT ?",
                params)) {
    events.push_back(from_row(row));
  }
  render_references(tx, tenant_id, events);
  return events;
}

Result<Event> get_event(store::Tx& tx, const std::string& tenant_id, const std::string& id) {
  std::optional<Event> found = find(tx, tenant_id, id);
  if (!found) return errors::item_not_found("event");
  std::vector<Event> one{std::move(*found)};
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
