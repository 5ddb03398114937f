#include "core/card_numbers.hpp"

#include "core/crypto.hpp"

namespace tesoro::card_numbers {
namespace {

bool all_digits(std::string_view text) {
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// The Luhn sum of `digits`, doubling every second digit counted from the right when
// `double_rightmost` (the rightmost digit is doubled when computing a check digit, not when
// checking a complete number).
int luhn_sum(std::string_view digits, bool double_rightmost) {
  int sum = 0;
  bool doubled = double_rightmost;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    int digit = *it - '0';
    if (doubled) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
    doubled = !doubled;
  }
  return sum;
}


}  // namespace

bool luhn_valid(std::string_view digits) {
  if (digits.size() < 2 || !all_digits(digits)) return false;
  return luhn_sum(digits, false) % 10 == 0;
}

char luhn_check_digit(std::string_view payload) {
  return static_cast<char>('0' + (10 - luhn_sum(payload, true) % 10) % 10);
}

std::string generate_card_number() {
  std::string number(k_sandbox_iin);
  number += crypto::random_string("0123456789", k_length - k_sandbox_iin.size() - 1);
  number += luhn_check_digit(number);
  return number;
}

}  // namespace tesoro::card_numbers
