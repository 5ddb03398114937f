#pragma once
// Payment attempts on collections, simulated by the sandbox network
// (POST /api/v1/sandbox/collections/attempts), and the incoming transfers that successful ones
// create.
//
// An attempt names a creditor key of the directory. Refusals of the request itself
// (validation_error): the key is unknown, inactive or owned by another tenant's collection
// (key_not_found; a value that is not a valid key of its type cannot be in the directory either);
// the collection's tenant account is not active (tenant_account_inactive). Otherwise the attempt is
// recorded (202), under the collection's lock, in one of three states:
//   rejected  a collection or QR rule is broken; state_reason, in precedence order:
//             currency_mismatch, collection_not_payable, qr_not_found, qr_canceled, qr_expired,
//             qr_already_used, amount_mismatch (the QR's fixed amount), amount_out_of_range
//             (the attempt bounds), amount_exceeds_remaining. Event
//             collection.attempt_unsuccessful; the QR (when found) counts a failed attempt.
//   pending   the request named a sandbox `error`: nothing moves; a background job (kind
//             k_attempt_failure_job) then fails it with that error as state_reason, emits
//             collection.attempt_unsuccessful and counts a failed attempt on its QR.
//   successful  an incoming transfer (bbit_) credits the collection's tenant account from the
//             tenant's network settlement account (one journal entry, kind incoming_transfer,
//             with its account.credited event), then collection.attempt_successful, the
//             collection's record_payment (paid_amount, minimum_paid / paid with their events)
//             and a successful attempt on the QR.
// payment_id ties the attempt to the tenant's QR code with that payment_id (of the same
// collection); `CO.COM.<NET>.TRXID000000`, the tag 90 every static code carries, names no code.
// A payment from the network (end_to_end_id set: an outgoing transfer delivered to the key)
// whose payment_id names no code of the collection is a payment to the key: no qr_not_found.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/page.hpp"
#include "core/result.hpp"
#include "core/time.hpp"
#include "store/store.hpp"

namespace tesoro::collections {

inline constexpr std::string_view k_attempt_failure_job = "collections.attempt_failure";

// The sandbox errors an attempt may ask for.
const std::vector<std::string>& sandbox_errors();
// The states of an attempt.
const std::vector<std::string>& attempt_states();

struct Payer {
  std::string name;
  std::string document_type;
  std::string document_number;
};

// A plausible Colombian payer: a first name and two surnames, a CC of 10 digits.
Payer random_payer();
// The same person made from these bytes alone, so that equal bytes give an equal payer (the
// sandbox network's directory draws its creditors from a hash of their key).
inline constexpr std::size_t k_payer_seed_bytes = 11;
Payer payer_from(const unsigned char (&seed)[k_payer_seed_bytes]);

struct AttemptRequest {
  std::int64_t amount_minor = 0;
  std::string currency;
  std::string key_type = "alphanumeric";
  std::string key_value;  // as sent; normalised here
  std::optional<std::string> error;
  Payer payer;
  std::optional<std::string> payment_id;
  // A payment from the network (an outgoing transfer of this Tesoro to the collection's key)
  // carries the transfer's end-to-end id; a sandbox attempt gets a new one.
  std::optional<std::string> end_to_end_id;
};

struct Attempt {
  std::string id;  // bbcolat_
  std::string collection_id;
  std::optional<std::string> qr_code_id;
  std::optional<std::string> payment_id;
  std::int64_t amount_minor = 0;
  std::string currency;
  std::string key_type;
  std::string key_value;
  std::string state;  // pending | successful | rejected | failed
  std::optional<std::string> state_reason;
  std::optional<std::string> requested_error;
  Payer payer;
  std::optional<std::string> transfer_id;
  std::string inserted_at;
  std::string updated_at;
};

Result<Attempt> simulate_attempt(store::Tx& tx, const std::string& tenant_id,
                                 const AttemptRequest& request, time::Micros now);

// The job: fails the pending attempt with the error it asked for. Nothing to do (and ok) when it
// is no longer pending.
Status fail_requested_attempt(store::Tx& tx, const std::string& tenant_id,
                              const std::string& attempt_id, time::Micros now);

// item_not_found ("collection attempt not found").
Result<Attempt> get_attempt(store::Tx& tx, const std::string& tenant_id, const std::string& id);

struct AttemptFilter {
  std::optional<std::string> collection_id;
  std::optional<std::string> state;
};
// Newest first (inserted_at, then id).
Result<PageOf<Attempt>> list_attempts(store::Tx& tx, const std::string& tenant_id,
                                      const AttemptFilter& filter, std::int64_t offset,
                                      std::int64_t limit);

// The attempt as the API and its events show it.
std::string attempt_text(const Attempt& attempt);

// Every successful attempt has exactly one incoming transfer of its amount and no other attempt
// has one; each incoming transfer's journal entry credits its tenant account with its amount,
// and every incoming_transfer entry belongs to a transfer; each collection's successful_attempts
// and each QR code's counters agree with its attempts (collections::verify checks paid_amount
// against the incoming transfers). Empty when all hold.
std::vector<std::string> verify_attempts(store::Tx& tx);

}  // namespace tesoro::collections
