#pragma once
// Outgoing transfers (participant API): batches of transfers from a tenant account to keys of the
// sandbox network, moved along by the network processor on the tenant's clock.
//
// Acceptance (POST /api/v1/outgoing_transfers, one write unit): the source account is locked
// once (ledger::Journal), then each item, in order, is
//   duplicated  the tenant already has a transfer with its external_id (the existing one is
//               listed; nothing written) — also a repeat inside the same batch;
//   rejected    with error_code, external_id and message, nothing written for it:
//               amount_not_provided (no amount, and the target has no transaction_amount),
//               amount_exceeds_max_limit (above the configured maximum; the message names the
//               amount and the maximum), target_not_found (unknown target_id, or a query that
//               does not resolve), target_expired, target_amount_mismatch (the amount differs
//               from the target's transaction_amount), currency_mismatch, insufficient_funds
//               (the account's available balance, after the items accepted before it);
//               validation_error for an item the API could not decode;
//   accepted    state `created`, timemark T110, its amount held on the source account (the
//               available balance drops, the balance does not), event outgoing_transfer.created.
// A rejected item never affects the others. tenant_account_not_found for the whole request
// when the source is unknown, another tenant's, not an originator, or not active.
//
// Processing (the `network.processor` worker, process_due): every step comes
// limits::k_transfer_step_seconds after the one before on the tenant's clock:
//   created -> processing -> target_resolved (the key is resolved again: gone -> failed
//   target_not_found) -> held -> sent_to_breb_provider (T120) -> successful | failed (T130).
// At the last step a transfer whose sandbox_failure is set (a description containing
// tx_unknown, tx_risk_control, tx_breb_timeout or tx_provider_unavailable, or one of the
// directory's failing keys) fails with that reason (without `tx_`); otherwise it settles: the
// hold is released and one journal entry debits the source and credits the tenant's network
// settlement account. When the key belongs to a collection of this Tesoro (any tenant), the
// transfer is delivered first as a payment attempt on it (collections::simulate_attempt in the
// creditor's tenant, at the creditor's clock, carrying the transfer's end_to_end_id and
// payment_id): a successful attempt settles the transfer, a rejected one fails it with
// state_reason `rejected_by_creditor`. A failure releases the hold. Every change of state emits
// `outgoing_transfer.<state>` (a payout's leg drives its payout instead: payouts::follow).
// A processor that runs late (a clock advance) takes each transfer through every step that came
// due, in one unit, with the timemarks of the schedule.
//
// Locks, in this order in every unit: source accounts (ledger::Journal), then the creditor's
// collection, then its tenant account (what a sandbox attempt locks too), so that processors
// on several nodes and attempts queue instead of deadlocking.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_writer.hpp"
#include "core/page.hpp"
#include "core/result.hpp"
#include "core/time.hpp"
#include "domain/ledger/account_holders.hpp"  // ledger::Metadata
#include "domain/ledger/journal.hpp"
#include "domain/network/targets.hpp"
#include "store/bulk.hpp"
#include "store/store.hpp"

namespace tesoro::transfers {

// Raised after a unit that accepted transfers commits: wakes the processor.
inline constexpr std::string_view k_moving_topic = "transfers.moving";

// Every state, in the order of the flow.
const std::vector<std::string>& states();

struct Query {
  std::string format;  // plain_key
  std::string value;
};

struct ExpectedCreditor {
  std::string document_number;
  std::string document_type;
};

struct Transfer {
  std::string id;  // bbot_
  std::optional<std::string> batch_id;
  std::optional<std::string> payout_id;
  std::optional<std::string> external_id;
  std::string tenant_account_id;
  std::int64_t amount_minor = 0;
  std::string currency;
  std::optional<std::string> description;
  std::string end_to_end_id;
  std::string payment_id;
  std::string payer_name;
  std::string resolution_request_id;
  std::string target_id;
  std::string key_type;
  std::string key_value;
  // The masked Target as the row keeps it (network::stored_target): shown with the fields
  // above by network::write_target.
  std::string stored_target;
  std::optional<Query> query;
  std::optional<ExpectedCreditor> expected_creditor;
  ledger::Metadata metadata;
  std::string state;
  std::optional<std::string> state_reason;
  std::optional<std::string> sandbox_failure;
  std::string timemarks_json;  // {"T110": "...", ...}
  std::int64_t held_minor = 0;
  std::optional<time::Micros> next_step_at_micros;
  std::optional<std::string> creditor_tenant_id;
  std::optional<std::string> creditor_collection_id;
  std::optional<std::string> attempt_id;
  std::optional<std::string> entry_id;
  std::string inserted_at;
  std::string updated_at;
};

// The transfer as the API and its events show it (the fields of the contract's Outgoing
// transfer, with target, query, expected_creditor, metadata and timemarks as objects).
// `shown` (optional) keeps the stored Targets shown, for transfers shown after (a batch's).
std::string transfer_text(const Transfer& transfer, network::ShownTargets* shown = nullptr);
// The same text written into `out` (one writer for many transfers: a batch's).
void write_transfer(json_text::Writer& out, const Transfer& transfer,
                    network::ShownTargets* shown = nullptr);
// The transfer's whole Target as it shows it (its stored form with the row's own fields).
std::string target_text(const Transfer& transfer);

// The transfer as it was when it entered `state` at `at` (ISO 8601, the tenant's time): what
// its outgoing_transfer.<state> event shows. Of what transfer_text shows, only the state, the
// state_reason (set when it fails), the timemarks (each added at its step, never changed) and
// updated_at change once a transfer is accepted, so its row holds every event's data and the
// events keep a reference to it (events.hpp). A change that alters any other shown field of an
// accepted transfer would alter its past events: keep such fields fixed, or store the events'
// data again.
Transfer as_of(Transfer transfer, std::string_view state, std::string_view at);

// One item of a batch, decoded by the API.
struct BatchItem {
  std::string external_id;
  std::optional<std::int64_t> amount_minor;
  std::string currency;  // with amount_minor
  std::optional<std::string> target_id;
  std::optional<Query> query;
  std::optional<std::string> description;
  std::optional<ExpectedCreditor> expected_creditor;
  ledger::Metadata metadata;
};

// An item the API could not decode, or one acceptance refused. error's paths are relative to
// the request (transfers.<index>...).
struct RejectedItem {
  std::size_t index = 0;
  std::string external_id;  // "" when the item had none
  Error error;
};

struct NewBatch {
  std::string tenant_account_id;
  std::optional<std::string> description;
  // In request order; an item the API rejected is absent here and present in `rejected`.
  std::vector<std::pair<std::size_t, BatchItem>> items;
  std::vector<RejectedItem> rejected;
  std::int64_t max_amount_minor = 0;  // the configured per-transfer maximum
};

struct Batch {
  std::string id;  // bbotb_
  std::string tenant_account_id;
  std::optional<std::string> description;
  std::string state;  // created | completed
  std::vector<Transfer> accepted;
  std::vector<Transfer> duplicated;
  std::vector<RejectedItem> rejected;  // by index
  std::string inserted_at;
  std::string updated_at;
};

// The batch as POST answers it (id, description, state, accepted_transfers,
// duplicated_transfers, rejected_transfers with error_code, external_id, message, index,
// path, inserted_at, updated_at).
std::string batch_text(const Batch& batch);

// See the top of this file. 201 with the batch even when every item is rejected.
Result<Batch> create_batch(store::Tx& tx, const std::string& tenant_id, const NewBatch& input,
                           time::Micros now);

// The same in two parts, so that what does not need the source account's lock stays out of the
// write unit (off the SQLite writer, and before PostgreSQL's row lock). prepare_batch runs in a
// read snapshot: for each item the tenant's transfer with its external_id, or its resolution,
// amount and rejection, and the transfer it would become (ids, times, its text).
// accept_batch(prepared) is the write unit: it locks the source, decides funds and writes; an
// item whose external_id another unit took since the snapshot is found by its insert (ON
// CONFLICT) and listed as duplicated. A key whose directory entry changes in between is the
// processor's to catch: it resolves every key again (target_resolved).
struct PreparedItem {
  std::size_t index = 0;
  std::string external_id;
  std::optional<Transfer> duplicate_of;  // the tenant's transfer with this external_id; or:
  bool made = false;                     // a transfer made, stamped, in the batch; or:
  std::optional<Error> rejection;        // paths under transfers.<index>
  // The made transfer's amount, what deciding and holding read of it. Its text and its row
  // (below) hold the rest: the items are made in one Transfer, reused item after item so that
  // its strings keep their room, instead of a Transfer of some thirty strings each.
  std::int64_t amount_minor = 0;
  std::string currency;
  // transfer_text(*transfer): where it is in PreparedBatch::texts (PreparedBatch::text).
  std::size_t text_begin = 0;
  std::size_t text_size = 0;
  // Its outgoing_transfer.created event's id and data (rows::event_reference), made here so
  // that the write unit only binds them; empty where the row keeps its created event
  // (events::rows_keep_events: SQLite).
  std::string created_event_id;
  std::string created_event_data;
  // The batch's item before this one with the same external_id, if any: this one is a
  // duplicate when that one (or one before it) is accepted. Found here, off the one writer.
  std::optional<std::size_t> earlier_same;
  // The transfer's row in PreparedBatch::rows.
  std::size_t row = 0;
};
struct PreparedBatch {
  std::string id;  // bbotb_
  std::string tenant_account_id;
  std::optional<std::string> description;
  time::Micros now = 0;
  std::vector<PreparedItem> items;    // in request order
  std::vector<RejectedItem> rejected;  // the API's
  // The prepared transfers' texts one after another, written by one writer: a thousand texts
  // of about 1.5 KB were as many allocations, and frees, on the handler's thread.
  std::string texts;
  std::string_view text(const PreparedItem& item) const {
    return std::string_view(texts).substr(item.text_begin, item.text_size);
  }
  // The prepared transfers' rows, packed here for the write unit to bind (store::PackedRows).
  store::PackedRows rows;
  // The id of the transfer `item` made.
  std::string_view transfer_id(const PreparedItem& item) const;
};
// tenant_account_not_found (accept_batch checks again in its unit).
Result<PreparedBatch> prepare_batch(store::Tx& tx, const std::string& tenant_id,
                                    const NewBatch& input, time::Micros now);
// What the unit decided: `batch` without its accepted transfers, which are the prepared items
// at `accepted` (in order). The unit copies none of the prepared transfers and leaves
// `prepared` as it was, so a unit that runs again (a PostgreSQL retry) decides afresh.
struct AcceptedBatch {
  Batch batch;  // batch.accepted empty
  std::vector<std::size_t> accepted;  // indexes into prepared.items
};
// Writes the accepted items and their events first and locks the source account last, for the
// one hold (see accept_batch's comment on when its decisions stand).
// tenant_account_not_found.
Result<AcceptedBatch> accept_batch(store::Tx& tx, const std::string& tenant_id,
                                   const PreparedBatch& prepared);
// batch_text of the batch with its accepted transfers, from the texts prepare_batch wrote.
std::string batch_text(const PreparedBatch& prepared, const AcceptedBatch& accepted);

// What acceptance does for one transfer whose key is resolved (a batch item, a payout's leg):
// holds its amount on the locked source, inserts it in state created with T110 and emits
// outgoing_transfer.created (not for a payout's leg). currency_mismatch, insufficient_funds;
// account_invalid_state. Nothing written when it fails. `transfer` comes filled but for
// id, end_to_end_id, state, timemarks, held and the times, which this sets.
Result<Transfer> accept(store::Tx& tx, const std::string& tenant_id, ledger::Journal& journal,
                        Transfer transfer, time::Micros now);

// item_not_found ("outgoing transfer not found"); a payout's leg is not found here.
Result<Transfer> get_transfer(store::Tx& tx, const std::string& tenant_id, const std::string& id);
// The same for any transfer, a payout's leg included (payouts read their leg).
Result<Transfer> get_any_transfer(store::Tx& tx, const std::string& tenant_id,
                                  const std::string& id);

struct TransferFilter {
  std::optional<std::string> state;
  std::optional<std::string> external_id;
  std::optional<std::string> batch_id;
};
// The participant API's transfers (no payout legs), newest first (inserted_at, then id).
Result<PageOf<Transfer>> list_transfers(store::Tx& tx, const std::string& tenant_id,
                                        const TransferFilter& filter, std::int64_t offset,
                                        std::int64_t limit);

// item_not_found when no transfer has this external_id; invalid_state when it is not
// (yet) successful.
Result<Transfer> find_successful_by(store::Tx& tx, const std::string& tenant_id,
                                    const std::string& external_id);

}  // namespace tesoro::transfers
