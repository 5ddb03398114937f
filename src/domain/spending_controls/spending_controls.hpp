#pragma once
// Spending controls: named sets of rules, at most one rule per type, in one currency. A control
// targets a card (the card's own) or a configuration group (every card of the group); both
// apply to an authorization.
#include <cstdint>
#include <optional>
#include <string>
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

// What an authorization presents to the rules.
struct Merchant {
  std::string name;
  std::string mcc;
  std::string mid;
  std::string country;
};
struct Purchase {
  std::string channel;  // online_purchase | physical_purchase | atm_withdrawal
  Merchant merchant;
};

// The first rule among card_usage, mcc, mid and merchant_name (in that order) that refuses the
// purchase, or nullopt. Velocity rules are not looked at here: they need the card's usage.
std::optional<std::string> refusing_rule(const SpendingControl& control, const Purchase& purchase);

// Calendar windows in UTC: daily from midnight, weekly from Monday 00:00, monthly from the 1st.
enum class Period { daily, weekly, monthly };
const char* to_string(Period period);
struct Window {
  time::Micros start;
  time::Micros end;  // exclusive: the next window's start
};
Window window_of(Period period, time::Micros now);

// 404 item_not_found ("spending control not found") when absent or another tenant's.
Result<SpendingControl> get_spending_control(store::Tx& tx, const std::string& tenant_id,
                                             const std::string& id);

}  // namespace tesoro::spending_controls
