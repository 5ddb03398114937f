#pragma once
// Identifiers: prefix, '_', 22 characters of [A-Za-z0-9_-] from a cryptographic source (132 bits).
#include <string>
#include <string_view>

namespace tesoro::ids {

std::string generate(std::string_view prefix);
// ^[a-z]{2,7}_[A-Za-z0-9_-]{22}$
bool is_valid(std::string_view id);
// Valid and carries exactly this prefix.
bool has_prefix(std::string_view id, std::string_view prefix);

}  // namespace tesoro::ids
