#pragma once
// Spending controls: named sets of rules, at most one rule per type, in one currency. A control
// targets a card (the card's own) or a configuration group (every card of the group); both
// apply to an authorization.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/page.hpp"
#include "core/result.hpp"
#include "core/time.hpp"
#include "store/store.hpp"

namespace tesoro::spending_controls {

// The rule types, in the order an authorization checks them.
inline const std::vector<std::string>& rule_types() {
  static const std::vector<std::string> k_types = {"card_usage", "mcc", "mid", "merchant_name",
                                                   "velocity", "withdrawal_velocity"};
  return k_types;
}

struct Rule {
  std::string type;
  // velocity (daily, weekly, monthly) and withdrawal_velocity (daily, monthly): caps in minor
  // units of the control's currency; at least one is set.
  std::optional<std::int64_t> daily_minor;
  std::optional<std::int64_t> weekly_minor;
  std::optional<std::int64_t> monthly_minor;
  // mcc: allow_mccs | block_mccs with `values` the MCCs (four digits); mid: allow_mids |
  // block_mids with `values` the merchant ids.
  std::string operation;
  std::vector<std::string> values;
  // merchant_name: a merchant name must match it (PCRE2 syntax, whole name).
  std::string allow_pattern;
  // card_usage: among online_purchase, physical_purchase, atm_withdrawal.
  std::vector<std::string> disabled_card_usages;
};

struct SpendingControl {
  std::string id;  // spc_
  std::string name;
  std::string currency_code;
  std::vector<Rule> rules;  // in rule_types() order
  std::string inserted_at;
  std::string updated_at;
};

// item_not_found ("spending control not found") when absent or another tenant's.
Result<SpendingControl> get_spending_control(store::Tx& tx, const std::string& tenant_id,
                                             const std::string& id);
// get_spending_control with the row locked until the unit ends (on engines with row locks). Whoever
// makes a card or a group name a control takes this lock, and so does a delete: a delete then
// either sees the new reference (spending_control_in_use) or the reference finds no control
// (item_not_found).
Result<SpendingControl> lock_spending_control(store::Tx& tx, const std::string& tenant_id,
                                              const std::string& id);
// Newest first.
Result<PageOf<SpendingControl>> list_spending_controls(store::Tx& tx,
                                                       const std::string& tenant_id,
                                                       std::int64_t offset, std::int64_t limit);

// A rule as a request gives it: the rule, and the currency each amount was given in, by field
// (daily, weekly, monthly), which must be the control's currency.
struct RuleInput {
  Rule rule;
  std::vector<std::pair<std::string, std::string>> amount_currencies;
};
struct NewSpendingControl {
  std::string name;
  std::string currency_code;
  std::vector<RuleInput> rules;  // at most one per type (the caller checked)
};
// currency_mismatch at rules.<n>.<field>.currency for each amount in another currency.
Result<SpendingControl> create_spending_control(store::Tx& tx, const std::string& tenant_id,
                                                const NewSpendingControl& input,
                                                time::Micros now);
// Renames the control when `name` is given (a PATCH); item_not_found.
Result<SpendingControl> update_spending_control(store::Tx& tx, const std::string& tenant_id,
                                                const std::string& id,
                                                const std::optional<std::string>& name,
                                                time::Micros now);
// item_not_found; spending_control_in_use while a card (its own control) or a
// configuration group names it.
Status delete_spending_control(store::Tx& tx, const std::string& tenant_id,
                               const std::string& id, time::Micros now);
// Adds the rule, or replaces the control's rule of the same type. item_not_found;
// currency_mismatch at <field>.currency for an amount in another currency than the control's.
Result<SpendingControl> put_rule(store::Tx& tx, const std::string& tenant_id,
                                 const std::string& id, const RuleInput& input,
                                 time::Micros now);
// item_not_found for an unknown control, or when it has no rule of that type.
Result<SpendingControl> delete_rule(store::Tx& tx, const std::string& tenant_id,
                                    const std::string& id, const std::string& type,
                                    time::Micros now);

}  // namespace tesoro::spending_controls
