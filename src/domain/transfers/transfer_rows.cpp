#include "domain/transfers/transfer_rows.hpp"

#include <boost/json.hpp>

#include <array>
#include <functional>
#include <set>

#include "core/json_writer.hpp"
#include "domain/events/events.hpp"
#include "store/json_columns.hpp"
#include "store/bulk.hpp"

namespace tesoro::transfers::rows {
namespace {

namespace json = boost::json;

constexpr const char* k_insert_columns =
    "outgoing_transfers (tenant_id, id, batch_id, payout_id, external_id, "
    "tenant_account_id, amount, currency, description, end_to_end_id, payment_id, payer_name, "
    "resolution_request_id, target_id, key_type, key_value, target, query, expected_creditor, "
    "metadata, state, state_reason, sandbox_failure, timemarks, held, next_step_at_micros, "
    "creditor_tenant_id, creditor_collection_id, attempt_id, entry_id, inserted_at, updated_at, "
    "created_position)";
constexpr std::size_t k_insert_width = 33;
// A packed row (pack) holds the columns between tenant_id and created_position, id first.
constexpr std::size_t k_packed_width = k_insert_width - 2;
constexpr std::size_t k_packed_id = 0;
// About what a transfer's texts take (ids, times, its Target of some 190 bytes), with room.
constexpr std::size_t k_packed_text_bytes = 768;

// The flow, in order: each state's successor is the next one.
constexpr std::array<std::string_view, 6> k_flow = {
    "created", "processing", "target_resolved", "held", "sent_to_breb_provider", "successful"};

std::optional<std::string> query_text(const std::optional<Query>& query) {
  if (!query) return std::nullopt;
  json_text::Writer out(64);
  out.begin_object().key("format").string(query->format).key("value").string(query->value);
  out.end_object();
  return out.take();
}

std::optional<std::string> creditor_text(const std::optional<ExpectedCreditor>& creditor) {
  if (!creditor) return std::nullopt;
  json_text::Writer out(64);
  out.begin_object().key("document_number").string(creditor->document_number);
  out.key("document_type").string(creditor->document_type).end_object();
  return out.take();
}

store::Value optional_integer(const std::optional<std::int64_t>& value) {
  if (!value) return nullptr;
  return *value;
}

}  // namespace

const char* const k_columns =
    "id, batch_id, payout_id, external_id, tenant_account_id, amount, currency, description, "
    "end_to_end_id, payment_id, payer_name, resolution_request_id, target_id, key_type, "
    "key_value, target, query, expected_creditor, metadata, state, state_reason, "
    "sandbox_failure, timemarks, held, next_step_at_micros, creditor_tenant_id, "
    "creditor_collection_id, attempt_id, entry_id, inserted_at, updated_at";

Transfer from_row(const store::Row& row) {
  Transfer t;
  t.id = row.text(0);
  t.batch_id = row.optional_text(1);
  t.payout_id = row.optional_text(2);
  t.external_id = row.optional_text(3);
  t.tenant_account_id = row.text(4);
  t.amount_minor = row.integer(5);
  t.currency = row.text(6);
  t.description = row.optional_text(7);
  t.end_to_end_id = row.text(8);
  t.payment_id = row.text(9);
  t.payer_name = row.text(10);
  t.resolution_request_id = row.text(11);
  t.target_id = row.text(12);
  t.key_type = row.text(13);
  t.key_value = row.text(14);
  t.stored_target = row.text(15);
  if (auto text = row.optional_text(16)) {
    const json::value parsed = json::parse(*text);
    t.query = Query{json_columns::text(parsed.as_object(), "format"),
                    json_columns::text(parsed.as_object(), "value")};
  }
  if (auto text = row.optional_text(17)) {
    const json::value parsed = json::parse(*text);
    t.expected_creditor = ExpectedCreditor{json_columns::text(parsed.as_object(), "document_number"),
                                           json_columns::text(parsed.as_object(), "document_type")};
  }
  t.metadata = ledger::decode_metadata(row.text(18));
  t.state = row.text(19);
  t.state_reason = row.optional_text(20);
  t.sandbox_failure = row.optional_text(21);
  t.timemarks_json = row.text(22);
  t.held_minor = row.integer(23);
  t.next_step_at_micros = row.optional_integer(24);
  t.creditor_tenant_id = row.optional_text(25);
  t.creditor_collection_id = row.optional_text(26);
  t.attempt_id = row.optional_text(27);
  t.entry_id = row.optional_text(28);
  t.inserted_at = row.text(29);
  t.updated_at = row.text(30);
  return t;
}

store::PackedRows packed_rows(std::size_t count) {
  store::PackedRows rows(k_packed_width);
  rows.reserve(count, k_packed_text_bytes);
  return rows;
}

void pack(store::PackedRows& rows, const Transfer& t) {
  rows.text(t.id).optional_text(t.batch_id).optional_text(t.payout_id);
  rows.optional_text(t.external_id).text(t.tenant_account_id).integer(t.amount_minor);
  rows.text(t.currency).optional_text(t.description).text(t.end_to_end_id).text(t.payment_id);
  rows.text(t.payer_name).text(t.resolution_request_id).text(t.target_id).text(t.key_type);
  rows.text(t.key_value).text(t.stored_target).optional_text(query_text(t.query));
  rows.optional_text(creditor_text(t.expected_creditor));
  rows.text(ledger::encode_metadata(t.metadata)).text(t.state).optional_text(t.state_reason);
  rows.optional_text(t.sandbox_failure).text(t.timemarks_json).integer(t.held_minor);
  rows.optional_integer(t.next_step_at_micros).optional_text(t.creditor_tenant_id);
  rows.optional_text(t.creditor_collection_id).optional_text(t.attempt_id);
  rows.optional_text(t.entry_id).text(t.inserted_at).text(t.updated_at);
}

std::vector<bool> insert(store::Tx& tx, const std::string& tenant_id,
                         const std::vector<const Transfer*>& transfers,
                         std::optional<std::int64_t> first_created_position) {
  store::PackedRows packed = packed_rows(transfers.size());
  std::vector<std::size_t> which;
  which.reserve(transfers.size());
  for (const Transfer* t : transfers) {
    which.push_back(which.size());
    pack(packed, *t);
  }
  return insert(tx, tenant_id, packed, which, first_created_position);
}

std::string_view packed_id(const store::PackedRows& rows, std::size_t row) {
  return rows.text_at(row, k_packed_id);
}

std::vector<bool> insert(store::Tx& tx, const std::string& tenant_id,
                         const store::PackedRows& packed, const std::vector<std::size_t>& which,
                         std::optional<std::int64_t> first_created_position) {
  store::Params values;
  values.reserve(which.size() * k_insert_width);
  std::optional<std::int64_t> created_position = first_created_position;
  std::int64_t step = 1;
  if (!created_position && events::rows_keep_events(tx)) {
    // created_position is the rowid on SQLite: rows that keep no event take
    // negative ones, below every one taken (the rowid's MIN is one B-tree descent).
    created_position = tx.query_one("SELECT MIN(COALESCE((SELECT MIN(created_position) FROM "
                                    "outgoing_transfers), 0), 0) - 1")
                           ->integer(0);
    step = -1;
  }
  for (std::size_t row : which) {
    values.emplace_back(store::TextRef(tenant_id));
    packed.append_row(row, values);
    values.push_back(optional_integer(created_position));
    if (created_position) *created_position += step;
  }
  if (tx.engine() == store::Engine::postgres) {
    // COPY first (Tx::append_rows: a quarter less of PostgreSQL's CPU a row), in a savepoint:
    // it fails whole on an external id that another unit committed since this one's read, and
    // then the INSERT below skips that transfer. (SQLite's one writer runs that INSERT: there
    // the statement's cost is the same either way.)
    try {
      (void)tx.nested<bool>([&](store::Tx& inner) -> Result<bool> {
        inner.append_rows(k_insert_columns, k_insert_width, values);
        return true;
      });
      return std::vector<bool>(which.size(), true);
    } catch (const store::StoreError& failure) {
      if (!failure.duplicate_row()) throw;
    }
  }
  // A transfer whose external_id the tenant has is not inserted.
  const std::int64_t inserted = store::exec_many(
      tx, std::string("INSERT INTO ") + k_insert_columns, k_insert_width,
      "ON CONFLICT (tenant_id, external_id) DO NOTHING", values);
  if (inserted == static_cast<std::int64_t>(which.size())) {
    return std::vector<bool>(which.size(), true);
  }
  // Some were not: the ids are new (ids::generate), so a row with one is the one just written.
  std::vector<std::string> ids;
  ids.reserve(which.size());
  for (std::size_t row : which) ids.emplace_back(packed_id(packed, row));
  std::set<std::string> written;
  for (Transfer& t : by_ids(tx, tenant_id, ids, false)) written.insert(std::move(t.id));
  std::vector<bool> outcome;
  outcome.reserve(which.size());
  for (const std::string& id : ids) outcome.push_back(written.contains(id));
  return outcome;
}

void save_progress(store::Tx& tx, const std::string& tenant_id,
                   const std::vector<const Transfer*>& transfers) {
  store::Params values;
  values.reserve(transfers.size() * 13);
  for (const Transfer* t : transfers) {
    for (store::Value value :
         {store::Value(tenant_id), store::Value(t->id), store::Value(t->state),
          store::optional_value(t->state_reason), store::optional_value(t->sandbox_failure),
          store::Value(t->timemarks_json), store::Value(t->held_minor),
          optional_integer(t->next_step_at_micros), store::optional_value(t->creditor_tenant_id),
          store::optional_value(t->creditor_collection_id), store::optional_value(t->attempt_id),
          store::optional_value(t->entry_id), store::Value(t->updated_at)}) {
      values.push_back(std::move(value));
    }
  }
  // VALUES columns are column1, column2, ... on both engines; PostgreSQL reads parameters there
  // as text, hence the casts of the integers.
  store::exec_many(
      tx,
      "UPDATE outgoing_transfers SET state = v.column3, state_reason = v.column4, "
      "sandbox_failure = v.column5, timemarks = v.column6, held = CAST(v.column7 AS BIGINT), "
      "next_step_at_micros = CAST(v.column8 AS BIGINT), creditor_tenant_id = v.column9, "
      "creditor_collection_id = v.column10, attempt_id = v.column11, entry_id = v.column12, "
      "updated_at = v.column13 FROM (",
      13,
      ") AS v WHERE outgoing_transfers.tenant_id = v.column1 "
      "AND outgoing_transfers.id = v.column2",
      std::move(values));
}

namespace {

// Every row of the tenant's transfers with these ids, a statement per chunk: `columns` of each,
// locked when `lock`.
void for_each_by_id(store::Tx& tx, const std::string& tenant_id,
                    const std::vector<std::string>& ids, std::string_view columns, bool lock,
                    const std::function<void(const store::Row&)>& each) {
  // On SQLite the id alone is unique, and its planner, which keeps no statistics
  // here, takes a tenant's equality for about ten rows: against a long list of ids it read the
  // tenant's transfers through their time index instead (the processor's reads four times as
  // costly). There the tenant is compared without an index (`+`, a no-op on the value).
  const char* tenant = tx.engine() == store::Engine::sqlite ? "+tenant_id" : "tenant_id";
  store::query_in(tx,
                  "SELECT " + std::string(columns) + " FROM outgoing_transfers WHERE " + tenant +
                      " = ? AND id",
                  {tenant_id}, ids, lock ? tx.lock_rows() : "", each);
}

}  // namespace

std::vector<Transfer> by_ids(store::Tx& tx, const std::string& tenant_id,
                             const std::vector<std::string>& ids, bool lock) {
  std::vector<Transfer> found;
  found.reserve(ids.size());
  for_each_by_id(tx, tenant_id, ids, k_columns, lock,
                 [&](const store::Row& row) { found.push_back(from_row(row)); });
  return found;
}

std::vector<std::pair<std::string, std::string>> lock_versions(
    store::Tx& tx, const std::string& tenant_id, const std::vector<std::string>& ids) {
  std::vector<std::pair<std::string, std::string>> versions;
  versions.reserve(ids.size());
  for_each_by_id(tx, tenant_id, ids, "id, updated_at", /*lock=*/true,
                 [&](const store::Row& row) { versions.emplace_back(row.text(0), row.text(1)); });
  return versions;
}

std::string_view next_state(std::string_view state) {
  for (std::size_t i = 0; i + 1 < k_flow.size(); ++i) {
    if (k_flow[i] == state) return k_flow[i + 1];
  }
  return "";
}

bool is_final(std::string_view state) { return state == "successful" || state == "failed"; }

bool before_target_resolved(std::string_view state) {
  for (std::string_view step : k_flow) {
    if (step == "target_resolved") return false;
    if (step == state) return true;
  }
  return false;
}

std::string with_timemark(const std::string& timemarks_json, std::string_view mark,
                          time::Micros at) {
  // The column is always an object this module wrote: `{}` or `{"T110":"...",...}`.
  std::string out = timemarks_json.substr(0, timemarks_json.rfind('}'));
  if (out.size() > 1) out += ',';
  json_text::Writer value(40);
  value.string(time::iso_local(at));
  out += '"';
  out += mark;
  out += "\":";
  out += value.text();
  out += '}';
  return out;
}

std::string event_reference(const Transfer& transfer) {
  return events::reference(k_event_kind, transfer.id);
}

std::string timemarks_until(const std::string& timemarks_json, std::string_view at) {
  // Marks are written as time::iso_local (no zone) and `at` as time::iso: both fixed-width, so
  // comparing the mark with as much of `at` is comparing the times.
  const json::value parsed = json::parse(timemarks_json);
  json_text::Writer out(timemarks_json.size());
  out.begin_object();
  for (const auto& [mark, value] : parsed.as_object()) {
    const std::string_view when = value.as_string();
    if (when > at.substr(0, when.size())) continue;
    out.key(mark).string(when);
  }
  out.end_object();
  return out.take();
}

}  // namespace tesoro::transfers::rows
