#pragma once
// Card numbers (PANs) of the sandbox issuer: 16 digits, Luhn-valid. Generated here, sealed with
// crypto::Sealer before they are stored, never logged or returned (only their last four digits).
#include <string>
#include <string_view>

namespace tesoro::card_numbers {

// The issuer identification number every generated card starts with. 400000 is in the range of
// the card networks' published test numbers, never a real issuer's: a sandbox number can never
// be mistaken for, or collide with, a live card.
inline constexpr std::string_view k_sandbox_iin = "400000";
inline constexpr std::size_t k_length = 16;

// True when `digits` is two or more ASCII digits whose Luhn (mod 10) checksum is 0. Anything
// else (empty, spaces, dashes, letters) is false. For tests: the server makes numbers with
// luhn_check_digit, on the same sum, and never takes one in.
bool luhn_valid(std::string_view digits);

// The Luhn check digit ('0'..'9') to append to `payload` (digits only, no check digit yet).
char luhn_check_digit(std::string_view payload);

// A new number: k_sandbox_iin, 9 uniformly random digits (cryptographic randomness, without
// modulo bias), and the Luhn check digit. 10^9 numbers per issuer prefix: callers that need
// uniqueness check it against their store.
std::string generate_card_number();

}  // namespace tesoro::card_numbers
