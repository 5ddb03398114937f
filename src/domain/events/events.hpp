#pragma once
// The events outbox. Modules call emit() inside the transaction of the change the event
// describes, so an event exists exactly when its change does.
//
// Positions. Readers (polling, webhook delivery) page by `position`, and need this promise: a
// reader that has consumed every event up to position P never later finds a committed event
// below P. Ids and sequences drawn inside transactions cannot give it on PostgreSQL, where
// transactions commit in another order than they started. So an event is written without a
// position, and the sequencer (assign_positions, run by a background worker after commits)
// gives committed events positions above every position given before, under one lock across
// nodes: positions are handed out in commit order of the sequencer's own units, and an event
// is visible to readers only once it has one. Inside one transaction events keep the order in
// which they were emitted. On SQLite, whose one writer commits units in the order it runs them,
// emit() gives the position itself and the sequencer only positions rows an earlier version
// left without one.
#include <cstdint>
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

// The tenant's positioned events after `after_position`, in position order.
std::vector<Event> read_after(store::Tx& tx, std::string_view tenant_id,
                              std::int64_t after_position, std::int64_t limit);

}  // namespace tesoro::events
