#pragma once
// Identifiers: prefix, '_', 22 characters of [A-Za-z0-9_-]: 6 characters of creation time
// (the server's real clock in 1/32 s, in an alphabet whose byte order is time order), then 16
// characters of 96 bits from a cryptographic source; both drawn through the Random seam
// (core/random.hpp: random::id_time and the pooled bytes), which a test may replace. Ids of one prefix sort by creation time, so
// inserts append to their indexes instead of landing on random pages.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/emvco.hpp"

namespace tesoro::ids {

inline constexpr int k_time_chars = 6;
inline constexpr std::size_t k_random_bytes = 12;

std::string generate(std::string_view prefix);
// The pieces of generate, for tests: the time characters' value at a time, and an id from it.
std::uint64_t time_ticks(std::chrono::system_clock::time_point at);
std::string encode(std::string_view prefix, std::uint64_t ticks,
                   const unsigned char (&random)[k_random_bytes]);
// A transaction id of the sandbox instant-payment network (the EMVCo QR's tag 90, incoming
// transfers): 19 characters of [0-9A-Z], the most Bre-B allows (emvco.hpp). The first 7 are the
// time of generate() in base 36 (byte order is time order, so the unique indexes that hold these
// ids take appends), the other 12 uniformly random (62 bits, from the same pool as ids).
inline constexpr std::size_t k_network_transaction_id_chars = emvco::k_transaction_id_max_chars;
std::string network_transaction_id();
std::string encode_network_transaction_id(std::uint64_t ticks, const unsigned char (&random)[12]);
// The end-to-end id of a payment on the network (incoming and outgoing transfers): "E", the
// tenant's date and time to the minute (yyyyMMddHHmm) at `tenant_now_micros`, then a network
// transaction id: 32 characters, the length of the end-to-end ids of instant-payment networks
// such as Pix.
std::string end_to_end_id(std::int64_t tenant_now_micros);
// ^[a-z]{2,7}_[A-Za-z0-9_-]{22}$
bool is_valid(std::string_view id);
// Valid and carries exactly this prefix.
bool has_prefix(std::string_view id, std::string_view prefix);

}  // namespace tesoro::ids
