#include "domain/cards/card_view.hpp"

#include "domain/cards/configuration_groups.hpp"
#include "domain/ledger/accounts.hpp"

namespace tesoro::cards {

CardView view_card(store::Tx& tx, const std::string& tenant_id, Card card, time::Micros now) {
  CardView view;
  if (card.cardholder_id) {
    auto holder = get_cardholder(tx, tenant_id, *card.cardholder_id);
    if (holder) view.cardholder = std::move(holder).value();
  }
  if (auto group = get_configuration_group(tx, tenant_id, card.configuration_group_id)) {
    view.group_spending_control_id = group->spending_control_id;
    view.group_name = group->name;
  }
  if (auto prepaid = ledger::get_account(tx, tenant_id, card.prepaid_account_id,
                                         ledger::Surface::card)) {
    view.posted_minor = prepaid->balance_minor;
    view.held_minor = prepaid->held_minor;
    view.balance_updated_at = prepaid->balance_updated_at;
  }
  view.limits = limit_usages(tx, tenant_id, card, now);
  view.card = std::move(card);
  return view;
}

}  // namespace tesoro::cards
