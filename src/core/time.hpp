#pragma once
// Time as microseconds since the Unix epoch, UTC. Stored and shown as fixed-width ISO 8601 text
// ("2026-11-21T10:00:00.123456Z") so that text order is time order on both engines.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tesoro::time {

using Micros = std::int64_t;
inline constexpr Micros k_micros_per_second = 1'000'000;

Micros now_micros();
std::string iso(Micros at);
std::string iso_now();
// Without zone designator, as `timemarks` wants: "2026-11-21T10:00:00.123456".
std::string iso_local(Micros at);
// Parses an RFC 3339 timestamp with a zone (Z or +hh:mm). nullopt when malformed.
std::optional<Micros> parse_iso(std::string_view text);

}  // namespace tesoro::time
