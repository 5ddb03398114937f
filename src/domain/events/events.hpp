#pragma once
// The events outbox. Modules call emit() inside the transaction of the change the event
// describes, so an event exists exactly when its change does.
//
// Positions. Readers (polling, webhook delivery) page by `position`, and need this promise: a
// reader that has consumed every event up to position P never later finds a committed event
// below P. Ids and sequences drawn inside transactions cannot give it on PostgreSQL, where
// transactions commit in another order than they started. So an event is written without a
// position (on PostgreSQL into event_outbox), and the sequencer (assign_positions, run by a
// background worker after commits) gives committed events positions above every position given
// before, under one lock across nodes (on PostgreSQL moving them into `events` as it does):
// positions are handed out in commit order of the sequencer's own units, and an event is
// visible to readers only once it has one. Inside one transaction events keep the order in
// which they were emitted. On SQLite, whose one writer commits units in the order it runs them,
// emit() gives the position itself and the sequencer only positions rows an earlier version
// left without one.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/time.hpp"
#include "store/store.hpp"

namespace tesoro::events {

// The topic raised after a unit that emitted events commits (wakes the sequencer), and the one
// raised after events got positions (wakes their readers; on SQLite raised by the emitting unit).
inline constexpr std::string_view k_emitted_topic = "events";
inline constexpr std::string_view k_sequenced_topic = "events.sequenced";

// `data_json` is the serialised JSON object of the event; `now` the tenant's time. Returns the
// event id (evt_...).
std::string emit(store::Tx& tx, std::string_view tenant_id, std::string_view type,
                 std::string_view data_json, time::Micros now);

// Many events at once (a batch of transfers, a processor's chunk): the same rows as emit() for
// each, in the order given, written a few hundred per statement.
struct Emission {
  std::string tenant_id;
  std::string type;
  std::string data_json;
  time::Micros at = 0;  // the tenant's time
};
void emit_many(store::Tx& tx, const std::vector<Emission>& emissions);

// Events of one tenant and type at one time whose ids (evt_) and data were made before the
// write unit (a batch's outgoing_transfer.created, made while it is prepared): the same rows as
// emit_many's, bound where they are, so that the one writer makes none of them.
struct MadeEvent {
  const std::string* id;
  const std::string* data_json;
};
void emit_made(store::Tx& tx, const std::string& tenant_id, const std::string& type,
               time::Micros at, const std::vector<MadeEvent>& events);

// Where events are read from: on SQLite the view all_events (the events' rows and
// the created events a batch's transfers keep in their own rows), on PostgreSQL the table
// `events`. Same columns: tenant_id, id, type, data, inserted_at, position. Readers query it
// by position or by tenant and position; an event by its id is found with find().
std::string_view table(const store::Tx& tx);

// Whether `type` is among `patterns`: event types, or `<prefix>.*` for every type that starts
// with `<prefix>.` (`collection.*` matches every collection event). An empty list matches every
// type. How an endpoint's event_types and the events list's `type` filter read.
bool type_matches(const std::vector<std::string>& patterns, std::string_view type);

// The last position given (0 before the first event).
std::int64_t last_position(store::Tx& tx);

// Whether events that other rows keep (row_positions) exist on this engine: on SQLite, whose
// one writer gives positions as it writes, a batch's transfers keep their created events in
// their own rows; PostgreSQL positions events after commit (the sequencer) and writes rows.
bool rows_keep_events(const store::Tx& tx);
// What the view shows of a created event a transfer's row keeps (the view's second
// part, written here as well for the readers that query that part alone): its id, from the
// row's `events.id` (the transfer's), and its type.
inline constexpr std::string_view k_row_event_id_sql =
    "CAST('evt_' || substr(events.id, 6) AS TEXT)";
inline constexpr std::string_view k_row_event_type = "outgoing_transfer.created";
// Which rows keep one: created_position is their rowid, negative in the rows
// that keep none (a rowid is never NULL), and the view's index of a tenant's is partial on it.
inline constexpr std::string_view k_row_event_kept_sql = "created_position > 0";
// The first of `count` consecutive positions, after every position given, for events a table
// keeps in its own rows (rows_keep_events; the positions are the rows'): their readers are
// woken after the commit as for emitted events.
std::int64_t row_positions(store::Tx& tx, std::size_t count);

// Gives positions to at most `limit` committed events that have none, oldest emitted first.
// Returns how many it positioned.
std::int64_t assign_positions(store::Tx& tx, std::int64_t limit);

struct Event {
  std::int64_t position = 0;
  std::string id;
  std::string type;
  std::string data_json;
  std::string inserted_at;
};

// The columns an Event is read from (of `events` or events::table), in event_of's order.
inline constexpr std::string_view k_event_columns = "position, id, type, data, inserted_at";
Event event_of(const store::Row& row);

// The tenant's positioned event with this id, its data as stored (a reference not rendered).
std::optional<Event> find(store::Tx& tx, const std::string& tenant_id, const std::string& id);

// Events whose data is kept by reference. A module whose rows keep everything an event's data
// shows (fields that never change once the event is written, and the state and times that the
// event itself dates) may emit reference(kind, subject_id) as the data instead: the events of
// the network processor's chunks and of a batch of transfers were most of the bytes those units
// wrote (about 1.3 KB per event, six per transfer). Readers render the data as of the event
// (render_references) with the renderer the module registered for its kind; what they show is
// the same JSON the module would have stored. The stored text is "@<kind>:<subject_id>" (stored
// data that is JSON never starts with '@').
std::string reference(std::string_view kind, std::string_view subject_id);

// One event by reference to render: its subject, type and inserted_at (the tenant's time).
struct Referenced {
  std::string subject_id;
  std::string type;
  std::string inserted_at;
};
// The data of each event (same order), or nullopt when its subject is gone.
using Renderer = std::vector<std::optional<std::string>> (*)(store::Tx& tx,
                                                             const std::string& tenant_id,
                                                             const std::vector<Referenced>& events);
// Registers the renderer of `kind` (once, by the module that emits it, at static
// initialisation). Returns true, for that initialisation.
bool register_renderer(std::string_view kind, Renderer renderer);

// Replaces the data of every event by reference among `events` (all of the tenant) with its
// rendered data, a statement per kind. Data whose subject is gone, or of a kind nobody
// registered, becomes null (and is logged): never a reference.
void render_references(store::Tx& tx, const std::string& tenant_id, std::vector<Event>& events);

}  // namespace tesoro::events
