#pragma once
// Money is int64 minor units. Arithmetic is checked: an overflow is an error, never a wrap.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tesoro::money {

inline std::optional<std::int64_t> add(std::int64_t a, std::int64_t b) {
  std::int64_t out;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

inline std::optional<std::int64_t> negate(std::int64_t a) {
  if (a == INT64_MIN) return std::nullopt;
  return -a;
}

struct Currency {
  std::string_view code;  // ISO 4217 alphabetic code
  int exponent;           // digits of the minor unit: COP 2 (1500000 is 15,000.00), CLP 0
};

// The ISO 4217 currencies a server may be configured to accept (`serve --currencies`,
// `--card-currencies`). A currency is added here with its exponent from the ISO 4217 list.
inline constexpr Currency k_known_currencies[] = {
    {"ARS", 2}, {"BRL", 2}, {"CAD", 2}, {"CLP", 0}, {"COP", 2}, {"EUR", 2}, {"GBP", 2},
    {"JPY", 0}, {"MXN", 2}, {"PEN", 2}, {"USD", 2}, {"UYU", 2},
};

inline std::optional<Currency> find_currency(std::string_view code) {
  for (const Currency& currency : k_known_currencies) {
    if (currency.code == code) return currency;
  }
  return std::nullopt;
}

}  // namespace tesoro::money
