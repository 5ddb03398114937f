#pragma once
// Structured logging: one JSON object per line on stderr. Callers pass fields; nothing here knows
// about secrets, so callers never pass them (the Authorization header is never logged).
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tesoro::log {

enum class Level { debug = 0, info = 1, warn = 2, error = 3 };

void set_level(Level level);
bool parse_level(std::string_view text, Level& out);
bool enabled(Level level);

using Fields = std::vector<std::pair<std::string, std::string>>;
void write(Level level, std::string_view event, const Fields& fields);

}  // namespace tesoro::log
