#pragma once
// A card as the API shows it: the card with its cardholder, its group's control, its prepaid
// balance and what each of its limits has left. One read assembles it.
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "core/time.hpp"
#include "domain/cards/card_transactions.hpp"
#include "domain/cards/cardholders.hpp"
#include "domain/cards/cards.hpp"
#include "store/store.hpp"

namespace tesoro::cards {

struct CardView {
  Card card;
  std::optional<Cardholder> cardholder;
  std::optional<std::string> group_spending_control_id;  // configuration_group_target
  std::string group_name;
  std::int64_t posted_minor = 0;
  std::int64_t held_minor = 0;
  std::string balance_updated_at;
  std::vector<LimitUsage> limits;
};

CardView view_card(store::Tx& tx, const std::string& tenant_id, Card card, time::Micros now);

}  // namespace tesoro::cards
