#include "core/ids.hpp"

#include "core/crypto.hpp"
#include "core/limits.hpp"

namespace tesoro::ids {

std::string generate(std::string_view prefix) {
  // 17 random bytes give 136 bits, 22 base64url characters carry 132 of them.
  std::string random = crypto::random_token(17).substr(0, limits::k_id_random_chars);
  std::string id;
  id.reserve(prefix.size() + 1 + random.size());
  id.append(prefix).append("_").append(random);
  return id;
}

bool is_valid(std::string_view id) {
  auto underscore = id.find('_');
  if (underscore == std::string_view::npos || underscore < 2 || underscore > 7) return false;
  for (std::size_t i = 0; i < underscore; ++i) {
    if (id[i] < 'a' || id[i] > 'z') return false;
  }
  std::string_view random = id.substr(underscore + 1);
  if (random.size() != limits::k_id_random_chars) return false;
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
