#pragma once
// Identifiers: prefix, '_', 22 characters of [A-Za-z0-9_-]: 6 characters of creation time
// (the server's real clock in 1/32 s, in an alphabet whose byte order is time order), then 16
// characters of 96 bits from a cryptographic source. Ids of one prefix sort by creation time, so
// inserts append to their indexes instead of landing on random pages.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace tesoro::ids {

inline constexpr int k_time_chars = 6;
inline constexpr std::size_t k_random_bytes = 12;

std::string generate(std::string_view prefix);
// The pieces of generate, for tests: the time characters' value at a time, and an id from it.
std::uint64_t time_ticks(std::chrono::system_clock::time_point at);
std::string encode(std::string_view prefix, std::uint64_t ticks,
                   const unsigned char (&random)[k_random_bytes]);
// ^[a-z]{2,7}_[A-Za-z0-9_-]{22}$
bool is_valid(std::string_view id);
// Valid and carries exactly this prefix.
bool has_prefix(std::string_view id, std::string_view prefix);

}  // namespace tesoro::ids
