#pragma once
// Console passwords: scrypt hashes (memory-hard, through OpenSSL) in the PHC string format,
// "$scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt>$<hash>" with salt and hash in base64 without padding.
// Each hash carries its parameters, so limits.hpp's may rise later and older hashes still
// verify. Hashing takes tens of milliseconds and 32 MiB: call these outside any write unit (the
// SQLite writer is one thread). Passwords are never logged.
#include <string>
#include <string_view>

namespace tesoro::console {

// A fresh salt and limits.hpp's parameters.
std::string hash_password(std::string_view password);
// Whether `password` is the one `stored` was made from, compared in constant time. False for a
// stored text that is not such a hash, or whose parameters exceed limits.hpp's maxima.
bool verify_password(std::string_view password, std::string_view stored);
// A stored hash no password matches in practice: what a sign-in with an unknown email verifies
// against, so that it takes as long as one with a known email.
const std::string& decoy_hash();
// A random one-time password (base64url of limits::k_console_password_bytes random bytes).
std::string new_password();

}  // namespace tesoro::console
