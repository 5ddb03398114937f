#pragma once
// Cards: issued against a ledger account of the tenant (`account_id`), each with a prepaid
// balance in a ledger account of its own (surface 'card') that topups fill from `account_id`
// and withdrawals empty back into it. The card number is generated Luhn-valid, sealed with
// AES-256-GCM and never shown: only its last four digits.
//
// States: active, blocked, canceled (terminal); physical cards start pending_activation until
// an activation link is used.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/crypto.hpp"
#include "core/page.hpp"
#include "core/result.hpp"
#include "core/time.hpp"
#include "domain/cards/cardholders.hpp"
#include "store/store.hpp"

namespace tesoro::cards {

struct Card {
  std::string id;  // car_
  std::string account_id;
  std::string prepaid_account_id;
  std::optional<std::string> cardholder_id;
  std::string configuration_group_id;
  std::optional<std::string> spending_control_id;  // the card's own control (card_target)
  std::optional<std::string> nickname;
  std::string state;  // active | blocked | canceled | pending_activation
  std::string type;   // virtual | physical
  std::string currency;
  std::string last_four;
  int expiration_month = 1;
  int expiration_year = 2000;
  std::optional<std::int64_t> initial_balance_minor;
  std::string inserted_at;
  std::string updated_at;
};

struct NewCard {
  std::string account_id;
  std::string type = "virtual";  // virtual | physical
  // At most one of the two: an existing cardholder, or one to create with the card.
  std::optional<std::string> cardholder_id;
  std::optional<CardholderFields> cardholder;
  std::optional<std::string> configuration_group_id;  // the tenant's default when absent
  std::optional<std::string> nickname;
  std::optional<std::string> spending_control_id;  // card_target
  std::optional<std::int64_t> initial_balance_minor;
  std::string initial_balance_currency;
};

// item_not_found (at account_id, cardholder_id, configuration_group_id or
// spending_controls.card_target) for an unknown reference; initial_balance:
// currency_mismatch, insufficient_funds (at initial_balance...). Emits card.<state>. The new
// card number is sealed with `sealer`, bound to the tenant and card id (a sealed number copied
// to another row does not open), and is unique on the server (by its keyed fingerprint).
Result<Card> create_card(store::Tx& tx, const std::string& tenant_id, const NewCard& input,
                         const crypto::Sealer& sealer, time::Micros now);

// A PATCH: nullopt leaves a field; an inner nullopt clears it.
struct CardChanges {
  std::optional<std::optional<std::string>> nickname;
  std::optional<std::string> state;  // active | blocked | canceled
  std::optional<std::optional<std::string>> spending_control_id;
};
// Transitions: active <-> blocked; active, blocked, pending_activation -> canceled. Canceled is
// terminal and pending_activation leaves only by activation or cancelation: any other change of
// state is card_invalid_state (the same state is no change). item_not_found for an unknown control.
Result<Card> update_card(store::Tx& tx, const std::string& tenant_id, const std::string& id,
                         const CardChanges& changes, time::Micros now);

// item_not_found ("card not found") when absent or another tenant's.
Result<Card> get_card(store::Tx& tx, const std::string& tenant_id, const std::string& id);

// The card with its configuration group's spending control (nullopt when the group has none),
// read in one statement: what an authorization needs. item_not_found like get_card.
struct CardWithGroupControl {
  Card card;
  std::optional<std::string> group_spending_control_id;
};
Result<CardWithGroupControl> get_card_with_group_control(store::Tx& tx,
                                                         const std::string& tenant_id,
                                                         const std::string& id);
// The same with the prepaid account's balance and held amount, in the same statement: what the
// read-only checks before an authorization is put to the tenant's endpoint read
// (card_transactions.hpp, approvable_authorization).
struct CardWithBalance {
  CardWithGroupControl found;
  std::int64_t balance_minor = 0;
  std::int64_t held_minor = 0;
  std::string currency;
  std::string state;
};
Result<CardWithBalance> get_card_with_balance(store::Tx& tx, const std::string& tenant_id,
                                              const std::string& id);

// A physical card's activation: pending_activation -> active, with its event.
// card_invalid_state from any other state.
Result<Card> activate_card(store::Tx& tx, const std::string& tenant_id, const std::string& id,
                           time::Micros now);

Result<PageOf<Card>> list_cards(store::Tx& tx, const std::string& tenant_id,
                                std::int64_t offset, std::int64_t limit);

// Prepaid balance operations: a topup moves money from the card's account to its prepaid
// balance, a withdrawal back. entity_id identifies one operation of a card: a second request with
// it moves nothing and gets the first operation back.
struct BalanceOperation {
  std::string id;  // cbo_
  std::string card_id;
  std::string operation;  // topup | withdrawal
  std::int64_t amount_minor = 0;
  std::string currency;
  std::string description;
  std::string entity_id;
  std::string performed_at;
};
struct NewBalanceOperation {
  std::string operation;
  std::int64_t amount_minor = 0;
  std::string currency;
  std::string description;
  std::string entity_id;
};
struct BalanceOperationOutcome {
  BalanceOperation operation;
  bool created = false;  // false: the card already had one with this entity_id
};
// item_not_found; card_invalid_state (a topup of a canceled card);
// currency_mismatch, insufficient_funds (a withdrawal takes only the available balance).
Result<BalanceOperationOutcome> perform_balance_operation(store::Tx& tx,
                                                          const std::string& tenant_id,
                                                          const std::string& card_id,
                                                          const NewBalanceOperation& input,
                                                          time::Micros now);
struct BalanceOperationFilter {
  std::optional<time::Micros> performed_from;  // inclusive
  std::optional<time::Micros> performed_to;    // inclusive
};
// Newest first. item_not_found for an unknown card.
Result<PageOf<BalanceOperation>> list_balance_operations(store::Tx& tx,
                                                         const std::string& tenant_id,
                                                         const std::string& card_id,
                                                         const BalanceOperationFilter& filter,
                                                         std::int64_t offset,
                                                         std::int64_t limit);

}  // namespace tesoro::cards
