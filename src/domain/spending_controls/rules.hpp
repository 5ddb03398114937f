#pragma once
// What a spending control's rules say of a purchase (card_usage, mcc, mid, merchant_name
// patterns), and the calendar windows velocity limits count in.
#include <optional>
#include <string>
#include <string_view>

#include "core/time.hpp"
#include "domain/spending_controls/spending_controls.hpp"

namespace tesoro::spending_controls {

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

// Why `pattern` is not a valid merchant_name pattern: PCRE2's message and the offset where it
// stopped; nullopt when it compiles.
std::optional<std::string> pattern_error(std::string_view pattern);

}  // namespace tesoro::spending_controls
