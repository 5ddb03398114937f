#pragma once
// Payouts (core API, POST /v1/core/payouts): money from a ledger account to a key of the network
// (method co_breb). A payout's network leg is an outgoing transfer (transfers::accept, with
// payout_id set and no external_id), moved by the same processor as the participant API's
// transfers; the payout follows its leg:
//   leg created                                               -> pending
//   leg processing, target_resolved, held, sent_to_breb_provider -> processing
//   leg successful                                            -> settled
//   leg failed                                                -> failed (the leg's state_reason)
// and emits `payout.<state>` whenever its own state changes (once per payout state, however many
// leg steps one processor run takes). Funds are held on create and released on failure, as for
// any transfer.
#include <cstdint>
#include <optional>
#include <string>

#include "core/result.hpp"
#include "core/time.hpp"
#include "domain/ledger/account_holders.hpp"  // ledger::Metadata
#include "domain/transfers/outgoing_transfers.hpp"
#include "store/store.hpp"

namespace tesoro::payouts {

// The payout methods.
inline constexpr std::string_view k_method_breb = "co_breb";

struct NewPayout {
  std::string account_id;  // a core ledger account (acc_)
  std::string external_id;
  std::string method;  // co_breb
  std::int64_t amount_minor = 0;
  std::string currency;
  std::string key_type;  // target.key_type, one of collections::key_types()
  std::string key_value;
  std::optional<std::string> description;
  ledger::Metadata metadata;
  std::int64_t max_amount_minor = 0;  // the configured per-transfer maximum
};

struct Payout {
  std::string id;  // cpout_
  std::string external_id;
  std::string account_id;
  std::string method;
  std::int64_t amount_minor = 0;
  std::string currency;
  std::optional<std::string> description;
  std::string target_json;  // {key_type, key_value, and the resolved (masked) Target fields}
  ledger::Metadata metadata;
  std::string state;  // pending | processing | settled | failed
  std::optional<std::string> state_reason;
  std::string transfer_id;  // the network leg (bbot_)
  std::string inserted_at;
  std::string updated_at;
};

// The payout as the API and its events show it, with its leg's end_to_end_id and timemarks.
std::string payout_text(const Payout& payout, const transfers::Transfer& leg);

struct CreateOutcome {
  Payout payout;
  bool created = false;  // false: the tenant had a payout with this external_id (200, nothing new)
};

// Outcomes in precedence order: the existing payout with this external_id (whatever the rest
// of the request says); item_not_found (account_id: unknown or another tenant's, or not a
// core account); amount_exceeds_max_limit (at amount.amount, naming the amount and the
// maximum); target_not_found (at target.key_value); account_invalid_state,
// currency_mismatch, insufficient_funds (from transfers::accept). A created payout is
// `pending` with event payout.pending.
Result<CreateOutcome> create_payout(store::Tx& tx, const std::string& tenant_id,
                                    const NewPayout& input, time::Micros now);

// item_not_found ("payout not found").
Result<Payout> get_payout(store::Tx& tx, const std::string& tenant_id, const std::string& id);

// item_not_found when no payout has this external_id; invalid_state when not settled.
Result<Payout> find_successful_by(store::Tx& tx, const std::string& tenant_id,
                                  const std::string& external_id);

// Called by the processor after it moved a payout's leg (in the same unit): brings the payout's
// state in line with the leg's, with its event when the payout's state changed.
void follow(store::Tx& tx, const std::string& tenant_id, const transfers::Transfer& leg,
            time::Micros now);

// Invariants for `tesoro verify`: each payout's state agrees with its leg's, and its amount,
// currency and account are its leg's. One message per violation.
std::vector<std::string> verify(store::Tx& tx);

}  // namespace tesoro::payouts
