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

// An amount as people read it in messages: the code, thousands separated by commas, the minor
// digits after a point ("COP 11,552,000.00"; "CLP 5,000"; a currency not in the list shows its
// minor units: "XYZ 1500"). Never parsed back.
inline std::string display(std::int64_t amount_minor, std::string_view currency_code) {
  const std::optional<Currency> currency = find_currency(currency_code);
  const int exponent = currency ? currency->exponent : 0;
  const bool negative = amount_minor < 0;
  // Unsigned, so that INT64_MIN has a magnitude.
  std::uint64_t magnitude = negative ? 0 - static_cast<std::uint64_t>(amount_minor)
                                     : static_cast<std::uint64_t>(amount_minor);
  std::string digits = std::to_string(magnitude);
  if (static_cast<int>(digits.size()) <= exponent) {
    digits.insert(0, static_cast<std::size_t>(exponent + 1 - static_cast<int>(digits.size())), '0');
  }
  const std::size_t whole_length = digits.size() - static_cast<std::size_t>(exponent);
  std::string whole;
  for (std::size_t i = 0; i < whole_length; ++i) {
    if (i > 0 && (whole_length - i) % 3 == 0) whole += ',';
    whole += digits[i];
  }
  std::string out(currency_code);
  out += negative ? " -" : " ";
  out += whole;
  if (exponent > 0) out += "." + digits.substr(whole_length);
  return out;
}

}  // namespace tesoro::money
