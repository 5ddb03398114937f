#pragma once
// Every event written, positioned or not, as a table named `events` for a test's query. On
// PostgreSQL an event waits in event_outbox until the sequencer moves it into `events` with its
// position (events::assign_positions), in one statement, so a query sees each event in exactly
// one of the two tables; SQLite positions an event as it writes it.
#include <string>

namespace emitted_events {

inline std::string table(bool postgres) {
  // SQLite positions every event as it writes it, and keeps a batch's created events in its
  // transfers' rows (the view all_events, migration 23): emission order is position order.
  if (!postgres) {
    return "(SELECT tenant_id, id, type, data, inserted_at, position AS emitted_seq, position "
           "FROM all_events) AS events";
  }
  return "(SELECT tenant_id, id, type, data, inserted_at, emitted_seq, position FROM events "
         "UNION ALL SELECT tenant_id, id, type, data, inserted_at, emitted_seq, NULL FROM "
         "event_outbox) AS events";
}

}  // namespace emitted_events
