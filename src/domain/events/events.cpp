#include "domain/events/events.hpp"

#include <algorithm>
#include <map>
#include <mutex>

#include "core/ids.hpp"
#include "core/log.hpp"

namespace tesoro::events {

namespace {

// On SQLite the one writer runs a group's units one after the other and commits them together,
// so a position taken inside a unit is already in commit order: events get theirs as they are
// written, and the sequencer's extra update of every event row (about an eighth of the
// writer's work per durable POST, by callgrind) is not needed. The position of the last event
// is read once per statement; the writer's transaction makes it exclusive. PostgreSQL, whose
// transactions commit in another order than they write, leaves it to the sequencer.
bool positions_on_insert(const store::Tx& tx) { return tx.engine() == store::Engine::sqlite; }

constexpr char k_reference_mark = '@';

// The renderers by kind, registered during static initialisation and read by every reader
// thread afterwards; the lock keeps a registration made later (a test's) safe as well.
struct Renderers {
  std::mutex mutex;
  std::map<std::string, Renderer, std::less<>> by_kind;
};
Renderers& renderers() {
  static Renderers instance;
  return instance;
}

Renderer renderer_of(std::string_view kind) {
  Renderers& all = renderers();
  std::lock_guard lock(all.mutex);
  auto found = all.by_kind.find(kind);
  return found == all.by_kind.end() ? nullptr : found->second;
}

// Wakes the sequencer, or, where events were positioned as they were written, their readers.
void notify_emitted(store::Tx& tx) {
  tx.notify(std::string(positions_on_insert(tx) ? k_sequenced_topic : k_emitted_topic));
}

}  // namespace

std::string_view table(const store::Tx& tx) {
  return rows_keep_events(tx) ? "all_events" : "events";
}

std::int64_t last_position(store::Tx& tx) {
  if (!rows_keep_events(tx)) {
    return tx.query_one("SELECT COALESCE(MAX(position), 0) FROM events")->integer(0);
  }
  // Each through its own index: the view's MAX would read both tables whole.
  return tx
      .query_one("SELECT MAX(COALESCE((SELECT MAX(position) FROM events), 0), "
                 "COALESCE((SELECT MAX(created_position) FROM outgoing_transfers WHERE " +
                 std::string(k_row_event_kept_sql) + "), 0))")
      ->integer(0);
}

bool rows_keep_events(const store::Tx& tx) { return positions_on_insert(tx); }

bool type_matches(const std::vector<std::string>& patterns, std::string_view type) {
  if (patterns.empty()) return true;
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& wanted) {
    if (wanted.ends_with(".*")) {
      std::string_view prefix = std::string_view(wanted).substr(0, wanted.size() - 1);  // "x."
      return type.starts_with(prefix);
    }
    return wanted == type;
  });
}

std::int64_t row_positions(store::Tx& tx, std::size_t count) {
  const std::int64_t first = last_position(tx) + 1;
  if (count > 0) notify_emitted(tx);
  return first;
}

Event event_of(const store::Row& row) {
  return {row.integer(0), row.text(1), row.text(2), row.text(3), row.text(4)};
}

std::optional<Event> find(store::Tx& tx, const std::string& tenant_id, const std::string& id) {
  const std::string columns(k_event_columns);
  auto row = tx.query_one(
      "SELECT " + columns + " FROM events WHERE tenant_id = ? AND id = ? AND position IS NOT NULL",
      {tenant_id, id});
  // A created event kept by a batch's transfer has the transfer's characters
  // after evt_: its row is found by the transfer's key (the view would compute every id).
  constexpr std::string_view k_prefix = "evt_";
  if (!row && rows_keep_events(tx) && id.starts_with(k_prefix)) {
    row = tx.query_one(
        "SELECT " + columns +
            " FROM all_events WHERE tenant_id = ? AND id = ? AND position = "
            "(SELECT created_position FROM outgoing_transfers WHERE tenant_id = ? AND id = ?)",
        {tenant_id, id, tenant_id, "bbot_" + id.substr(k_prefix.size())});
  }
  if (!row) return std::nullopt;
  return event_of(*row);
}

std::string emit(store::Tx& tx, std::string_view tenant_id, std::string_view type,
                 std::string_view data_json, time::Micros now) {
  std::string id = ids::generate("evt");
  store::Params values{std::string(tenant_id), id, std::string(type), std::string(data_json),
                       time::iso(now)};
  if (positions_on_insert(tx)) {
    values.emplace_back(last_position(tx) + 1);
    tx.exec("INSERT INTO events (tenant_id, id, type, data, inserted_at, position) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            values);
  } else {
    tx.exec_later("INSERT INTO event_outbox (tenant_id, id, type, data, inserted_at) "
                  "VALUES (?, ?, ?, ?, ?)",
                  values);
  }
  notify_emitted(tx);
  return id;
}

namespace {
// Inserts `count` events, a few hundred per statement, in order: `add(i, values)` appends the
// i-th one's tenant_id, id, type, data and inserted_at. On SQLite each takes the next position.
template <class Add>
void insert_events(store::Tx& tx, std::size_t count, Add&& add) {
  if (count == 0) return;
  const bool positioned = positions_on_insert(tx);
  const std::size_t width = positioned ? 6 : 5;
  std::int64_t position = positioned ? last_position(tx) : 0;
  store::Params values;
  values.reserve(count * width);
  for (std::size_t i = 0; i < count; ++i) {
    add(i, values);
    if (positioned) values.emplace_back(++position);
  }
  // The rows take their emitted_seq in this order (INSERT's VALUES, COPY's lines).
  tx.append_rows(positioned ? "events (tenant_id, id, type, data, inserted_at, position)"
                            : "event_outbox (tenant_id, id, type, data, inserted_at)",
                 width, values);
  notify_emitted(tx);
}
}  // namespace

void emit_many(store::Tx& tx, const std::vector<Emission>& emissions) {
  // The emissions' texts are bound where they are (store::TextRef), and a time is written once
  // for a run of emissions at that time (a unit's mostly share one). `times` never grows past
  // its reserve, so the texts bound from it stay where they are.
  std::vector<std::string> times;
  times.reserve(emissions.size());
  insert_events(tx, emissions.size(), [&](std::size_t i, store::Params& values) {
    const Emission& emission = emissions[i];
    if (i == 0 || emission.at != emissions[i - 1].at) times.push_back(time::iso(emission.at));
    values.emplace_back(store::TextRef(emission.tenant_id));
    values.emplace_back(ids::generate("evt"));
    values.emplace_back(store::TextRef(emission.type));
    values.emplace_back(store::TextRef(emission.data_json));
    values.emplace_back(store::TextRef(times.back()));
  });
}

void emit_made(store::Tx& tx, const std::string& tenant_id, const std::string& type,
               time::Micros at, const std::vector<MadeEvent>& events) {
  const std::string inserted_at = time::iso(at);
  insert_events(tx, events.size(), [&](std::size_t i, store::Params& values) {
    values.emplace_back(store::TextRef(tenant_id));
    values.emplace_back(store::TextRef(*events[i].id));
    values.emplace_back(store::TextRef(type));
    values.emplace_back(store::TextRef(*events[i].data_json));
    values.emplace_back(store::TextRef(inserted_at));
  });
}

std::int64_t assign_positions(store::Tx& tx, std::int64_t limit) {
  if (tx.engine() == store::Engine::postgres) {
    // One sequencer at a time across nodes. READ COMMITTED gives each statement below a fresh
    // snapshot taken after the lock: it sees every position the previous holder committed.
    tx.query("SELECT pg_advisory_xact_lock(7303)");
  }
  const std::int64_t last = last_position(tx);
  std::int64_t positioned = 0;
  if (tx.engine() == store::Engine::postgres) {
    // PostgreSQL writes an event into event_outbox and the sequencer moves it
    // into `events` with its position, so that an event row is written once, positioned, instead
    // of a second time by an UPDATE that put a new version of it in every index of `events`.
    // The oldest emitted leave the outbox, positioned in emission order. They are named by their
    // range of emitted_seq, both ends found in one walk of the key from its start (where the
    // entries of events moved by passes still visible to other snapshots lie, each a heap
    // visit): with one row of bounds the planner reads that range through the key, also before
    // the table has statistics (`IN (... LIMIT ?)`, planned on an empty table's estimates, read
    // the whole outbox again for every event it moved).
    positioned = tx.exec(
        "WITH oldest AS (SELECT MIN(emitted_seq) AS first, MAX(emitted_seq) AS last FROM "
        "(SELECT emitted_seq FROM event_outbox ORDER BY emitted_seq LIMIT ?) AS o), "
        "moved AS (DELETE FROM event_outbox x USING oldest WHERE x.emitted_seq BETWEEN "
        "oldest.first AND oldest.last RETURNING x.*) "
        "INSERT INTO events (tenant_id, id, type, data, inserted_at, emitted_seq, position) "
        "SELECT tenant_id, id, type, data, inserted_at, emitted_seq, "
        "? + ROW_NUMBER() OVER (ORDER BY emitted_seq) FROM moved",
        {limit, last});
  } else {
    positioned = tx.exec(
        "UPDATE events SET position = ? + ranked.n FROM (SELECT tenant_id, id, "
        "ROW_NUMBER() OVER (ORDER BY emitted_seq) AS n FROM events WHERE position IS NULL "
        "ORDER BY emitted_seq LIMIT ?) AS ranked "
        "WHERE events.tenant_id = ranked.tenant_id AND events.id = ranked.id",
        {last, limit});
  }
  if (positioned > 0) tx.notify(std::string(k_sequenced_topic));
  return positioned;
}

std::string reference(std::string_view kind, std::string_view subject_id) {
  std::string text;
  text.reserve(2 + kind.size() + subject_id.size());
  text.push_back(k_reference_mark);
  text.append(kind).push_back(':');
  text.append(subject_id);
  return text;
}

bool register_renderer(std::string_view kind, Renderer renderer) {
  Renderers& all = renderers();
  std::lock_guard lock(all.mutex);
  all.by_kind.insert_or_assign(std::string(kind), renderer);
  return true;
}

void render_references(store::Tx& tx, const std::string& tenant_id, std::vector<Event>& events) {
  // The events by reference, grouped by kind, in the order they come.
  std::map<std::string, std::vector<Event*>, std::less<>> by_kind;
  for (Event& event : events) {
    if (event.data_json.empty() || event.data_json.front() != k_reference_mark) continue;
    const std::size_t colon = event.data_json.find(':');
    if (colon == std::string::npos) continue;  // never written so; left for the log below
    by_kind[event.data_json.substr(1, colon - 1)].push_back(&event);
  }
  for (auto& [kind, of_kind] : by_kind) {
    std::vector<Referenced> asked;
    asked.reserve(of_kind.size());
    for (const Event* event : of_kind) {
      asked.push_back({event->data_json.substr(kind.size() + 2), event->type, event->inserted_at});
    }
    const Renderer renderer = renderer_of(kind);
    std::vector<std::optional<std::string>> rendered;
    if (renderer) rendered = renderer(tx, tenant_id, asked);
    rendered.resize(of_kind.size());
    for (std::size_t i = 0; i < of_kind.size(); ++i) {
      if (rendered[i]) {
        of_kind[i]->data_json = std::move(*rendered[i]);
        continue;
      }
      log::write(log::Level::error, "events.reference_unresolved",
                 {{"event_id", of_kind[i]->id}, {"reference", of_kind[i]->data_json}});
      of_kind[i]->data_json = "null";
    }
  }
}

}  // namespace tesoro::events
