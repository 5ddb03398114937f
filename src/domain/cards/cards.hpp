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
#include <vector>

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

// 404 item_not_found ("card not found") when absent or another tenant's.
Result<Card> get_card(store::Tx& tx, const std::string& tenant_id, const std::string& id);

// A physical card's activation: pending_activation -> active, with its event. 409
// card_invalid_state from any other state.
Result<Card> activate_card(store::Tx& tx, const std::string& tenant_id, const std::string& id,
                           time::Micros now);

}  // namespace tesoro::cards
