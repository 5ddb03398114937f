#include "domain/collections/attempts.hpp"

#include <boost/json.hpp>

#include <array>
#include <map>

#include "core/crypto.hpp"
#include "core/ids.hpp"
#include "core/json_writer.hpp"
#include "domain/collections/collections.hpp"
#include "domain/collections/qr_codes.hpp"
#include "domain/events/events.hpp"
#include "domain/jobs/jobs.hpp"
#include "store/json_columns.hpp"
#include "domain/ledger/accounts.hpp"
#include "domain/ledger/journal.hpp"
#include "store/pages.hpp"

namespace tesoro::collections {
namespace {

namespace json = boost::json;

constexpr const char* k_columns =
    "id, collection_id, qr_code_id, payment_id, amount, currency, key_type, key_value, state, "
    "state_reason, requested_error, payer, transfer_id, inserted_at, updated_at";

std::string payer_text(const Payer& payer) {
  json_text::Writer out;
  out.begin_object().key("name").string(payer.name);
  out.key("document_type").string(payer.document_type);
  out.key("document_number").string(payer.document_number).end_object();
  return out.take();
}

Payer decode_payer(const std::string& text) {
  const json::value parsed = json::parse(text);
  const json::object& o = parsed.as_object();
  return {json_columns::text(o, "name"), json_columns::text(o, "document_type"),
          json_columns::text(o, "document_number")};
}

Attempt from_row(const store::Row& row) {
  Attempt a;
  a.id = row.text(0);
  a.collection_id = row.text(1);
  a.qr_code_id = row.optional_text(2);
  a.payment_id = row.optional_text(3);
  a.amount_minor = row.integer(4);
  a.currency = row.text(5);
  a.key_type = row.text(6);
  a.key_value = row.text(7);
  a.state = row.text(8);
  a.state_reason = row.optional_text(9);
  a.requested_error = row.optional_text(10);
  a.payer = decode_payer(row.text(11));
  a.transfer_id = row.optional_text(12);
  a.inserted_at = row.text(13);
  a.updated_at = row.text(14);
  return a;
}

void insert_attempt(store::Tx& tx, const std::string& tenant_id, const Attempt& a) {
  tx.exec_later("INSERT INTO collection_attempts (tenant_id, id, collection_id, qr_code_id, "
                "payment_id, amount, currency, key_type, key_value, state, state_reason, "
                "requested_error, payer, transfer_id, inserted_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                {tenant_id, a.id, a.collection_id, store::optional_value(a.qr_code_id),
                 store::optional_value(a.payment_id), a.amount_minor, a.currency, a.key_type,
                 a.key_value, a.state, store::optional_value(a.state_reason),
                 store::optional_value(a.requested_error), payer_text(a.payer),
                 store::optional_value(a.transfer_id), a.inserted_at, a.updated_at});
}

// What a reader derives from any static code's payload: it names no code in particular.
std::string static_payment_id() {
  emvco::Payload any_static;
  any_static.network = std::string(k_network);
  any_static.transaction_id = std::string(emvco::k_static_transaction_id);
  return emvco::payment_id(any_static);
}

// Why the attempt cannot pay, checked under the collection's lock, or nullopt when it can. Sets
// `qr` to the code payment_id names, when it names one of this collection.
std::optional<std::string> rejection(store::Tx& tx, const std::string& tenant_id,
                                     const Collection& collection, const AttemptRequest& request,
                                     std::optional<QrCode>& qr, time::Micros now) {
  if (request.currency != collection.currency) return "currency_mismatch";
  if (!payable_at(collection, now)) return "collection_not_payable";
  if (request.payment_id && *request.payment_id != static_payment_id()) {
    qr = find_qr_by_payment_id(tx, tenant_id, *request.payment_id, /*lock=*/true);
    if (qr && qr->collection_id != collection.id) qr.reset();
    // A payment from the network (an outgoing transfer of this Tesoro: it carries its
    // end-to-end id) whose payment id names no code of this collection paid the key itself.
    if (!qr && !request.end_to_end_id) return "qr_not_found";
  }
  if (qr) {
    if (qr->canceled) return "qr_canceled";
    if (qr->expires_at_micros && now >= *qr->expires_at_micros) return "qr_expired";
    if (qr->usage_mode == "single_use" && qr->successful_attempts > 0) return "qr_already_used";
    if (qr->amount_minor && *qr->amount_minor != request.amount_minor) return "amount_mismatch";
  }
  if (request.amount_minor < collection.minimum_attempt_amount ||
      request.amount_minor > collection.maximum_attempt_amount) {
    return "amount_out_of_range";
  }
  if (request.amount_minor > collection.remaining()) return "amount_exceeds_remaining";
  return std::nullopt;
}

// Money in: the incoming transfer, its journal entry and the attempt's transfer_id.
Status receive(store::Tx& tx, const std::string& tenant_id, const Collection& collection,
               Attempt& attempt, const std::string& attempt_end_to_end_id, time::Micros now) {
  const std::string settlement = ledger::system_account(
      tx, tenant_id, ledger::SystemRole::network_settlement, collection.currency, now);
  auto entry = ledger::post_entry(
      tx, tenant_id, "incoming_transfer", "collection " + collection.id + " attempt " + attempt.id,
      {{collection.tenant_account_id, attempt.amount_minor, collection.currency},
       {settlement, -attempt.amount_minor, collection.currency}},
      {"collection_attempt", attempt.id}, now);
  if (!entry) return std::move(entry).error();
  attempt.transfer_id = ids::generate("bbit");
  tx.exec_later(
      "INSERT INTO incoming_transfers (tenant_id, id, collection_id, attempt_id, "
      "tenant_account_id, amount, currency, end_to_end_id, payer, entry_id, inserted_at) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      {tenant_id, *attempt.transfer_id, collection.id, attempt.id, collection.tenant_account_id,
       attempt.amount_minor, collection.currency, attempt_end_to_end_id, payer_text(attempt.payer),
       entry->entry_id, attempt.inserted_at});
  return ok_status();
}

void emit_outcome(store::Tx& tx, const std::string& tenant_id, const Attempt& attempt,
                  time::Micros now) {
  const char* type = attempt.state == "successful" ? "collection.attempt_successful"
                                                   : "collection.attempt_unsuccessful";
  events::emit(tx, tenant_id, type, attempt_text(attempt), now);
}

Error key_not_found() {
  return errors::of(ErrorCode::key_not_found, "creditor_key_value");
}

}  // namespace

const std::vector<std::string>& sandbox_errors() {
  static const std::vector<std::string> values = {"tx_unknown", "tx_provider_unavailable",
                                                  "tx_breb_timeout", "tx_risk_control"};
  return values;
}

const std::vector<std::string>& attempt_states() {
  static const std::vector<std::string> values = {"pending", "successful", "rejected", "failed"};
  return values;
}

Payer payer_from(const unsigned char (&seed)[k_payer_seed_bytes]) {
  static constexpr std::array<std::string_view, 16> k_first_names = {
      "Andrés", "Camila", "Carlos", "Daniela", "Diego", "Juliana", "Felipe", "Laura",
      "Jorge", "María", "Luis", "Natalia", "Santiago", "Paula", "Sebastián", "Valentina"};
  static constexpr std::array<std::string_view, 16> k_surnames = {
      "Rodríguez", "Gómez", "González", "Martínez", "García", "López", "Hernández", "Sánchez",
      "Ramírez", "Pérez", "Díaz", "Muñoz", "Rojas", "Moreno", "Jiménez", "Vargas"};
  Payer payer;
  payer.name = std::string(k_first_names[seed[0] % 16]) + " " +
               std::string(k_surnames[seed[1] % 16]) + " " + std::string(k_surnames[seed[2] % 16]);
  payer.document_type = "CC";
  // Ten digits starting with 10: the cédulas issued since 2003 look like that.
  payer.document_number = "10";
  static_assert(k_payer_seed_bytes == 3 + 8);
  for (std::size_t i = 3; i < k_payer_seed_bytes; ++i) {
    payer.document_number += static_cast<char>('0' + seed[i] % 10);
  }
  return payer;
}

Payer random_payer() {
  unsigned char random[k_payer_seed_bytes];
  crypto::pooled_random_bytes(random, sizeof random);
  return payer_from(random);
}

Result<Attempt> simulate_attempt(store::Tx& tx, const std::string& tenant_id,
                                 const AttemptRequest& request, time::Micros now) {
  auto normalized = normalize_key(request.key_type, request.key_value);
  if (!normalized) return key_not_found();
  // Another tenant's key is not found either: paying across tenants is the network's work.
  auto entry = find_key(tx, request.key_type, *normalized);
  if (!entry || entry->state != "active" || entry->tenant_id != tenant_id) return key_not_found();
  auto collection = lock_collection(tx, tenant_id, entry->collection_id);
  if (!collection) return key_not_found();
  auto account = ledger::get_account(tx, tenant_id, collection->tenant_account_id,
                                     ledger::Surface::participant);
  if (!account || account->state != "active") {
    return errors::of(ErrorCode::tenant_account_inactive, "creditor_key_value");
  }

  Attempt attempt;
  attempt.id = ids::generate("bbcolat");
  attempt.collection_id = collection->id;
  attempt.payment_id = request.payment_id;
  attempt.amount_minor = request.amount_minor;
  attempt.currency = request.currency;
  attempt.key_type = request.key_type;
  attempt.key_value = *normalized;
  attempt.payer = request.payer;
  attempt.inserted_at = attempt.updated_at = time::iso(now);
  std::optional<QrCode> qr;
  auto reason = rejection(tx, tenant_id, *collection, request, qr, now);
  if (qr) attempt.qr_code_id = qr->id;

  if (reason) {
    attempt.state = "rejected";
    attempt.state_reason = reason;
    insert_attempt(tx, tenant_id, attempt);
    if (qr) count_qr_attempt(tx, tenant_id, qr->id, /*successful=*/false, now);
    emit_outcome(tx, tenant_id, attempt, now);
    return attempt;
  }
  if (request.error) {
    // Accepted by the network, failed later: the job runs after this unit commits.
    attempt.state = "pending";
    attempt.requested_error = request.error;
    insert_attempt(tx, tenant_id, attempt);
    jobs::enqueue(tx, tenant_id, k_attempt_failure_job, attempt.id, now, now);
    return attempt;
  }
  attempt.state = "successful";
  const std::string e2e =
      request.end_to_end_id ? *request.end_to_end_id : ids::end_to_end_id(now);
  if (auto received = receive(tx, tenant_id, *collection, attempt, e2e, now); !received) {
    return received.error();
  }
  insert_attempt(tx, tenant_id, attempt);
  if (qr) count_qr_attempt(tx, tenant_id, qr->id, /*successful=*/true, now);
  // Before record_payment's collection.minimum_paid / paid: the payment comes first.
  emit_outcome(tx, tenant_id, attempt, now);
  if (auto paid = record_payment(tx, tenant_id, *collection, attempt.amount_minor, now); !paid) {
    return paid.error();
  }
  return attempt;
}

Status fail_requested_attempt(store::Tx& tx, const std::string& tenant_id,
                              const std::string& attempt_id, time::Micros now) {
  auto row = tx.query_one(std::string("SELECT ") + k_columns +
                              " FROM collection_attempts WHERE tenant_id = ? AND id = ?" +
                              std::string(tx.lock_rows()),
                          {tenant_id, attempt_id});
  if (!row) return ok_status();
  Attempt attempt = from_row(*row);
  if (attempt.state != "pending") return ok_status();
  attempt.state = "failed";
  attempt.state_reason = attempt.requested_error;
  attempt.updated_at = time::iso(now);
  tx.exec("UPDATE collection_attempts SET state = ?, state_reason = ?, updated_at = ? "
          "WHERE tenant_id = ? AND id = ?",
          {attempt.state, store::optional_value(attempt.state_reason), attempt.updated_at,
           tenant_id, attempt.id});
  if (attempt.qr_code_id) count_qr_attempt(tx, tenant_id, *attempt.qr_code_id, false, now);
  emit_outcome(tx, tenant_id, attempt, now);
  return ok_status();
}

Result<Attempt> get_attempt(store::Tx& tx, const std::string& tenant_id, const std::string& id) {
  auto row = tx.query_one(std::string("SELECT ") + k_columns +
                              " FROM collection_attempts WHERE tenant_id = ? AND id = ?",
                          {tenant_id, id});
  if (!row) return errors::item_not_found("collection attempt");
  return from_row(*row);
}

Result<PageOf<Attempt>> list_attempts(store::Tx& tx, const std::string& tenant_id,
                                      const AttemptFilter& filter, std::int64_t offset,
                                      std::int64_t limit) {
  std::string where = " WHERE tenant_id = ?";
  store::Params params = {tenant_id};
  store::where_equal(where, params, "collection_id", filter.collection_id);
  store::where_equal(where, params, "state", filter.state);
  return store::query_page<Attempt>(tx, k_columns, " FROM collection_attempts" + where, params,
                                    "inserted_at DESC, id DESC", offset, limit, from_row);
}

std::string attempt_text(const Attempt& a) {
  auto optional = [](json_text::Writer& out, const std::optional<std::string>& text) {
    if (text) {
      out.string(*text);
    } else {
      out.null();
    }
  };
  json_text::Writer out(640);
  out.begin_object().key("id").string(a.id).key("collection_id").string(a.collection_id);
  out.key("amount").begin_object().key("amount").integer(a.amount_minor);
  out.key("currency").string(a.currency).end_object();
  out.key("state").string(a.state).key("state_reason");
  optional(out, a.state_reason);
  out.key("payer").raw(payer_text(a.payer)).key("payment_id");
  optional(out, a.payment_id);
  out.key("qr_code_id");
  optional(out, a.qr_code_id);
  out.key("transfer_id");
  optional(out, a.transfer_id);
  out.key("key_type").string(a.key_type).key("key_value").string(a.key_value);
  out.key("inserted_at").string(a.inserted_at).key("updated_at").string(a.updated_at);
  out.end_object();
  return out.take();
}

std::vector<std::string> verify_attempts(store::Tx& tx) {
  std::vector<std::string> violations;
  auto report = [&](const std::string& sql, const std::string& what) {
    for (const store::Row& row : tx.query(sql)) {
      violations.push_back(what + " " + row.text(1) + " of tenant " + row.text(0) + ": " +
                           row.text(2));
    }
  };
  report("SELECT a.tenant_id, a.id, 'successful without its incoming transfer' "
         "FROM collection_attempts a LEFT JOIN incoming_transfers t "
         "ON t.tenant_id = a.tenant_id AND t.attempt_id = a.id WHERE a.state = 'successful' "
         "AND (t.id IS NULL OR a.transfer_id IS NULL OR t.id <> a.transfer_id "
         "OR t.amount <> a.amount OR t.collection_id <> a.collection_id)",
         "collection attempt");
  report("SELECT t.tenant_id, t.id, 'its attempt is missing or not successful' "
         "FROM incoming_transfers t LEFT JOIN collection_attempts a "
         "ON a.tenant_id = t.tenant_id AND a.id = t.attempt_id "
         "WHERE a.id IS NULL OR a.state <> 'successful'",
         "incoming transfer");
  // `account_id || ''` keeps SQLite (no statistics) off the postings_by_account index, which
  // would read every posting of the tenant account for each transfer: the entry's postings are
  // found by the primary key.
  report("SELECT t.tenant_id, t.id, 'its journal entry does not credit its tenant account with "
         "its amount' FROM incoming_transfers t WHERE NOT EXISTS (SELECT 1 FROM postings p "
         "WHERE p.tenant_id = t.tenant_id AND p.entry_id = t.entry_id "
         "AND p.account_id || '' = t.tenant_account_id AND p.amount = t.amount "
         "AND p.currency = t.currency)",
         "incoming transfer");
  // Entries and transfers match one to one: each transfer's entry is an incoming_transfer entry
  // (a primary-key lookup), and per tenant there are as many such entries as distinct entries
  // of transfers. (A join from the entries to the transfers would have no index to use.)
  report("SELECT t.tenant_id, t.id, 'its journal entry is missing or not an incoming_transfer' "
         "FROM incoming_transfers t LEFT JOIN journal_entries e "
         "ON e.tenant_id = t.tenant_id AND e.id = t.entry_id "
         "WHERE e.id IS NULL OR e.kind <> 'incoming_transfer'",
         "incoming transfer");
  std::map<std::string, std::int64_t> entries;
  for (const store::Row& row : tx.query("SELECT tenant_id, COUNT(*) FROM journal_entries "
                                        "WHERE kind = 'incoming_transfer' GROUP BY tenant_id")) {
    entries[row.text(0)] = row.integer(1);
  }
  for (const store::Row& row : tx.query("SELECT tenant_id, COUNT(DISTINCT entry_id) FROM "
                                        "incoming_transfers GROUP BY tenant_id")) {
    entries[row.text(0)] -= row.integer(1);
  }
  for (const auto& [tenant_id, unmatched] : entries) {
    if (unmatched == 0) continue;
    violations.push_back("tenant " + tenant_id + ": " + std::to_string(unmatched) +
                         " incoming_transfer journal entries more than its incoming transfers "
                         "have (negative: transfers share entries)");
  }
  // (paid_amount against the incoming transfers is collections::verify's.)
  report("SELECT c.tenant_id, c.id, 'successful_attempts differs from its successful attempts' "
         "FROM collections c LEFT JOIN (SELECT tenant_id, collection_id, COUNT(*) AS successes "
         "FROM collection_attempts WHERE state = 'successful' GROUP BY tenant_id, collection_id) s "
         "ON s.tenant_id = c.tenant_id AND s.collection_id = c.id "
         "WHERE c.successful_attempts <> COALESCE(s.successes, 0)",
         "collection");
  report("SELECT q.tenant_id, q.id, 'its attempt counters differ from its attempts' "
         "FROM qr_codes q LEFT JOIN (SELECT tenant_id, qr_code_id, "
         "SUM(CASE WHEN state = 'successful' THEN 1 ELSE 0 END) AS successes, "
         "SUM(CASE WHEN state IN ('rejected', 'failed') THEN 1 ELSE 0 END) AS failures "
         "FROM collection_attempts WHERE qr_code_id IS NOT NULL "
         "GROUP BY tenant_id, qr_code_id) s ON s.tenant_id = q.tenant_id AND s.qr_code_id = q.id "
         "WHERE q.successful_attempts <> COALESCE(s.successes, 0) "
         "OR q.failed_attempts <> COALESCE(s.failures, 0)",
         "QR code");
  return violations;
}

}  // namespace tesoro::collections
