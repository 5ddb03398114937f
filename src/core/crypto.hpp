#pragma once
// Thin wrappers over OpenSSL: hashing, HMAC, randomness. Secrets are stored only as sha256 hashes;
// they are 256-bit random values, so a fast hash is enough (no dictionary to attack).
#include <cstddef>
#include <string>
#include <string_view>

namespace tesoro::crypto {

std::string sha256_hex(std::string_view data);
std::string hmac_sha256_hex(std::string_view key, std::string_view data);
// `count` bytes from the cryptographic random source.
std::string random_bytes(std::size_t count);
// `bytes` random bytes, base64url without padding.
std::string random_token(std::size_t bytes);
std::string base64url(std::string_view bytes);
std::string base64(std::string_view bytes);
std::string base64_decode(std::string_view text, bool& ok);
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace tesoro::crypto
