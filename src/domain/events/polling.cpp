#include "domain/events/polling.hpp"

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "store/pages.hpp"

namespace tesoro::events {
namespace {

// Where a filter's events are read from, as the conditions below name its columns.
struct Source {
  std::string from;        // " FROM <table> AS events"
  std::string positioned;  // the condition of its rows that are events with a position
  std::string id;          // the event id's expression
  // The one type every event of the source has, or none (then the column `type`).
  std::optional<std::string_view> type;
};

// The events' table (the view on SQLite: events::table). Of every type: from_where always gives
// its conditions.
Source every_event(const store::Tx& tx) {
  return {" FROM " + std::string(table(tx)) + " AS events", "position IS NOT NULL", "events.id",
          {}};
}
// On SQLite, the two parts of the view counted apart (the view's count reads every row of it):
// the events' rows, and the created events a batch's transfers keep.
Source event_rows() {
  return {" FROM events AS events", "position IS NOT NULL", "events.id", {}};
}
Source row_events() {
  return {" FROM outgoing_transfers AS events", std::string(k_row_event_kept_sql),
          std::string(k_row_event_id_sql), k_row_event_type};
}

// The source's FROM and WHERE with the filter's conditions (its endpoint checked), and their
// parameters; nullopt when no event of the source passes the filter.
std::optional<std::string> from_where(const store::Tx& tx, const std::string& tenant_id,
                                      const EventFilter& filter, const Source& source,
                                      store::Params& params) {
  std::string where =
      source.from + " WHERE tenant_id = ? AND " + source.positioned;
  params.emplace_back(tenant_id);
  if (source.type) {
    // The filter's type (exact, or `<prefix>.*`) read as an endpoint's event types are.
    if (filter.type && !type_matches({*filter.type}, *source.type)) return std::nullopt;
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
      where += " AND d.endpoint_id = ?";
      params.emplace_back(*filter.endpoint_id);
    }
    where += ")";
  }
  return where;
}

// How many of the source's events pass the filter.
std::int64_t count_of(store::Tx& tx, const std::string& tenant_id, const EventFilter& filter,
                      const Source& source) {
  store::Params params;
  const std::optional<std::string> where = from_where(tx, tenant_id, filter, source, params);
  if (!where) return 0;
  return tx.query_one("SELECT COUNT(*)" + *where, params)->integer(0);
}

}  // namespace

Result<PageOf<Event>> list_events(store::Tx& tx, const std::string& tenant_id,
                                  const EventFilter& filter, std::int64_t offset,
                                  std::int64_t limit) {
  store::Params params;
  const std::string where = *from_where(tx, tenant_id, filter, every_event(tx), params);
  PageOf<Event> page;
  if (!rows_keep_events(tx)) {
    // The page and its count in one statement (one round trip on PostgreSQL).
    page = store::query_page<Event>(tx, k_event_columns, where, params, "position DESC",
                                    offset, limit, event_of);
  } else {
    // The page through the view (both parts read in order and merged); the count as the sum of
    // the parts' counts, each through its own index.
    params.emplace_back(limit);
    params.emplace_back(offset);
    for (const store::Row& row : tx.query("SELECT " + std::string(k_event_columns) + where +
                                              " ORDER BY position DESC LIMIT ? OFFSET ?",
                                          params)) {
      page.items.push_back(event_of(row));
    }
    for (const Source& part : {event_rows(), row_events()}) {
      page.total_items += count_of(tx, tenant_id, filter, part);
    }
  }
  render_references(tx, tenant_id, page.items);
  return page;
}

Result<std::vector<Event>> list_after(store::Tx& tx, const std::string& tenant_id,
                                      const EventFilter& filter, std::int64_t after_position,
                                      std::int64_t limit) {
  store::Params params;
  const std::string where = *from_where(tx, tenant_id, filter, every_event(tx), params);
  params.emplace_back(after_position);
  params.emplace_back(limit);
  std::vector<Event> events;
  for (const store::Row& row :
       tx.query("SELECT " + std::string(k_event_columns) + where +
                    " AND position > ? ORDER BY position LIMIT ?",
                params)) {
    events.push_back(event_of(row));
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
