#include "core/ids.hpp"

#include "core/crypto.hpp"
#include "core/limits.hpp"

namespace tesoro::ids {

namespace {
constexpr char k_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
}  // namespace

std::string generate(std::string_view prefix) {
  // The first 22 characters of the base64url text of 17 random bytes: 132 bits. Encoded here
  // into the id itself, and drawn from the per-thread pool (ids are public once made).
  static_assert(limits::k_id_random_chars == 22);
  unsigned char raw[17];
  crypto::pooled_random_bytes(raw, sizeof raw);
  std::string id;
  id.reserve(prefix.size() + 1 + limits::k_id_random_chars);
  id.append(prefix).push_back('_');
  for (std::size_t i = 0; i < 15; i += 3) {
    const unsigned v = (unsigned{raw[i]} << 16) | (unsigned{raw[i + 1]} << 8) | raw[i + 2];
    id += k_alphabet[(v >> 18) & 63];
    id += k_alphabet[(v >> 12) & 63];
    id += k_alphabet[(v >> 6) & 63];
    id += k_alphabet[v & 63];
  }
  const unsigned rest = (unsigned{raw[15]} << 16) | (unsigned{raw[16]} << 8);
  id += k_alphabet[(rest >> 18) & 63];
  id += k_alphabet[(rest >> 12) & 63];
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
