#include "core/ids.hpp"

#include "core/crypto.hpp"
#include "core/limits.hpp"
#include "core/random.hpp"
#include "core/time.hpp"

#include <algorithm>
#include <array>
#include <limits>

namespace tesoro::ids {

namespace {
// The random characters: any 64 will do.
constexpr char k_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
// The time characters: the same 64 in ASCII order, so that byte order is time order.
constexpr char k_sorted_alphabet[] =
    "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz";

// 1/32 s since 2020-01-01T00:00:00Z in 36 bits: until 2088. Coarse enough that a group commit's
// ids share their leading characters, fine enough that they land on a few index pages.
constexpr std::int64_t k_epoch_unix_seconds = 1577836800;
constexpr std::int64_t k_ticks_per_second = 32;
constexpr std::uint64_t k_tick_max = (std::uint64_t{1} << 36) - 1;
}  // namespace

std::uint64_t time_ticks(std::chrono::system_clock::time_point at) {
  auto since_epoch = std::chrono::duration_cast<std::chrono::microseconds>(at.time_since_epoch()).count() -
                     k_epoch_unix_seconds * 1'000'000;
  if (since_epoch <= 0) return 0;
  auto ticks = static_cast<std::uint64_t>(since_epoch) * k_ticks_per_second / 1'000'000;
  return std::min(ticks, k_tick_max);  // past 2088 ids stay valid; they stop sorting by time
}

std::string encode(std::string_view prefix, std::uint64_t ticks,
                   const unsigned char (&random)[k_random_bytes]) {
  static_assert(limits::k_id_chars_after_prefix == k_time_chars + 16 && k_random_bytes == 12);
  // Sized once and written in place: a batch of transfers makes thousands of ids, and appending
  // character by character would be most of an id's cost.
  std::string id(prefix.size() + 1 + limits::k_id_chars_after_prefix, '_');
  char* out = std::copy(prefix.begin(), prefix.end(), id.data()) + 1;  // after the '_'
  ticks = std::min(ticks, k_tick_max);
  for (int shift = 6 * (k_time_chars - 1); shift >= 0; shift -= 6) {
    *out++ = k_sorted_alphabet[(ticks >> shift) & 63];
  }
  // 96 random bits, four characters per three bytes.
  for (std::size_t i = 0; i < k_random_bytes; i += 3) {
    const unsigned v = (unsigned{random[i]} << 16) | (unsigned{random[i + 1]} << 8) | random[i + 2];
    *out++ = k_alphabet[(v >> 18) & 63];
    *out++ = k_alphabet[(v >> 12) & 63];
    *out++ = k_alphabet[(v >> 6) & 63];
    *out++ = k_alphabet[v & 63];
  }
  return id;
}

std::string generate(std::string_view prefix) {
  // Drawn from the per-thread pool: ids are public once made, and need no secrecy beyond that.
  unsigned char random[k_random_bytes];
  crypto::pooled_random_bytes(random, sizeof random);
  return encode(prefix, time_ticks(random::id_time()), random);
}

namespace {
// Writes the id into `id` (k_network_transaction_id_chars characters).
void write_network_transaction_id(char* id, std::uint64_t ticks,
                                  const unsigned char (&random)[12]) {
  constexpr char k_base36[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  constexpr int k_time_digits = 7;  // 36^7 > 2^36: every tick value fits
  static_assert(k_time_digits + 12 == k_network_transaction_id_chars);
  ticks = std::min(ticks, k_tick_max);
  for (int i = k_time_digits - 1; i >= 0; --i) {
    id[i] = k_base36[ticks % 36];
    ticks /= 36;
  }
  // One byte per character: `% 36` makes 0..3 a little likelier (256 = 7 * 36 + 4), which costs
  // well under a bit of the 62; the id needs uniqueness, not secrecy.
  for (int i = 0; i < 12; ++i) id[k_time_digits + i] = k_base36[random[i] % 36];
}
}  // namespace

std::string encode_network_transaction_id(std::uint64_t ticks, const unsigned char (&random)[12]) {
  std::string id(k_network_transaction_id_chars, '0');
  write_network_transaction_id(id.data(), ticks, random);
  return id;
}

std::string network_transaction_id() {
  unsigned char random[12];
  crypto::pooled_random_bytes(random, sizeof random);
  return encode_network_transaction_id(time_ticks(random::id_time()), random);
}

std::string end_to_end_id(std::int64_t tenant_now_micros) {
  // Made in one string (a batch makes a thousand): E, the tenant's yyyyMMddHHmm, then a network
  // transaction id. The minute's characters are kept from the thread's last call in the same
  // minute: a batch's thousand ids share them instead of formatting the time a thousand times.
  constexpr std::size_t k_minute_chars = 13;  // E202501311234
  constexpr std::int64_t k_micros_per_minute = 60 * time::k_micros_per_second;
  thread_local std::int64_t minute_of_chars = std::numeric_limits<std::int64_t>::min();
  thread_local std::array<char, k_minute_chars> minute_chars{};
  const std::int64_t minute = tenant_now_micros / k_micros_per_minute -
                              (tenant_now_micros % k_micros_per_minute < 0 ? 1 : 0);
  if (minute != minute_of_chars) {
    const std::string at = time::iso(tenant_now_micros);  // 2025-01-31T12:34:56.000000Z
    minute_chars[0] = 'E';
    for (auto [from, to, count] : {std::array<std::size_t, 3>{0, 1, 4}, {5, 5, 2}, {8, 7, 2},
                                   {11, 9, 2}, {14, 11, 2}}) {
      at.copy(minute_chars.data() + to, count, from);
    }
    minute_of_chars = minute;
  }
  std::string id(k_minute_chars + k_network_transaction_id_chars, 'E');
  std::copy(minute_chars.begin(), minute_chars.end(), id.begin());
  unsigned char random[12];
  crypto::pooled_random_bytes(random, sizeof random);
  write_network_transaction_id(id.data() + k_minute_chars,
                               time_ticks(random::id_time()), random);
  return id;
}

bool is_valid(std::string_view id) {
  auto underscore = id.find('_');
  if (underscore == std::string_view::npos || underscore < 2 || underscore > 7) return false;
  for (std::size_t i = 0; i < underscore; ++i) {
    if (id[i] < 'a' || id[i] > 'z') return false;
  }
  std::string_view random = id.substr(underscore + 1);
  if (random.size() != limits::k_id_chars_after_prefix) return false;
  for (char c : random) {
    bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   c == '_' || c == '-';
    if (!allowed) return false;
  }
  return true;
}

bool has_prefix(std::string_view id, std::string_view prefix) {
  return is_valid(id) && id.size() > prefix.size() && id.substr(0, prefix.size()) == prefix &&
         id[prefix.size()] == '_';
}

}  // namespace tesoro::ids
