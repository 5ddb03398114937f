#pragma once
// Money is int64 minor units. Arithmetic is checked: an overflow is an error, never a wrap.
#include <cstdint>
#include <optional>
#include <string>

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

// ISO 4217 alphabetic codes the server accepts on the ledger.
inline bool is_ledger_currency(const std::string& code) { return code == "COP"; }

}  // namespace tesoro::money
