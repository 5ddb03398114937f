#include "domain/console/passwords.hpp"

#include <charconv>
#include <optional>
#include <stdexcept>
#include <vector>

#include "core/crypto.hpp"
#include "core/limits.hpp"

namespace tesoro::console {
namespace {

constexpr std::string_view k_scheme = "$scrypt$";

std::string base64_unpadded(std::string_view bytes) {
  std::string text = crypto::base64(bytes);
  while (!text.empty() && text.back() == '=') text.pop_back();
  return text;
}

struct Parsed {
  int log2_n = 0;
  std::uint32_t r = 0;
  std::uint32_t p = 0;
  std::string salt;
  std::string hash;
};

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t at = 0;
  while (true) {
    std::size_t end = text.find(separator, at);
    parts.push_back(text.substr(at, end == std::string_view::npos ? end : end - at));
    if (end == std::string_view::npos) return parts;
    at = end + 1;
  }
}

// `name=<decimal>` into value; false on any other text.
template <class Integer>
bool read_parameter(std::string_view text, std::string_view name, Integer& value) {
  if (!text.starts_with(name) || text.size() <= name.size() + 1 || text[name.size()] != '=') {
    return false;
  }
  std::string_view digits = text.substr(name.size() + 1);
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return error == std::errc() && end == digits.data() + digits.size();
}

std::optional<Parsed> parse(std::string_view stored) {
  if (!stored.starts_with(k_scheme)) return std::nullopt;
  std::vector<std::string_view> fields = split(stored.substr(k_scheme.size()), '$');
  if (fields.size() != 3) return std::nullopt;
  std::vector<std::string_view> parameters = split(fields[0], ',');
  Parsed parsed;
  if (parameters.size() != 3 || !read_parameter(parameters[0], "ln", parsed.log2_n) ||
      !read_parameter(parameters[1], "r", parsed.r) ||
      !read_parameter(parameters[2], "p", parsed.p)) {
    return std::nullopt;
  }
  bool salt_ok = false, hash_ok = false;
  parsed.salt = crypto::base64_decode(fields[1], salt_ok);
  parsed.hash = crypto::base64_decode(fields[2], hash_ok);
  if (!salt_ok || !hash_ok || parsed.salt.empty() || parsed.hash.empty()) return std::nullopt;
  return parsed;
}

}  // namespace

std::string hash_password(std::string_view password) {
  std::string salt = crypto::random_bytes(limits::k_console_salt_bytes);
  auto hash =
      crypto::scrypt(password, salt, limits::k_console_scrypt_log2_n, limits::k_console_scrypt_r,
                     limits::k_console_scrypt_p, limits::k_console_scrypt_max_memory_bytes,
                     limits::k_console_hash_bytes);
  // Our own constants within OpenSSL's limits (limits.hpp checks them): a failure here is a
  // broken OpenSSL, not an input to handle.
  if (!hash) throw std::runtime_error("scrypt failed with the configured parameters");
  return std::string(k_scheme) + "ln=" + std::to_string(limits::k_console_scrypt_log2_n) +
         ",r=" + std::to_string(limits::k_console_scrypt_r) +
         ",p=" + std::to_string(limits::k_console_scrypt_p) + "$" + base64_unpadded(salt) + "$" +
         base64_unpadded(*hash);
}

bool verify_password(std::string_view password, std::string_view stored) {
  auto parsed = parse(stored);
  if (!parsed || parsed->log2_n < 1 || parsed->log2_n > limits::k_console_scrypt_log2_n_max ||
      parsed->hash.size() > limits::k_console_stored_hash_max_bytes) {
    return false;
  }
  // OpenSSL refuses parameters whose memory would pass the maximum (r and p included).
  auto derived = crypto::scrypt(password, parsed->salt, parsed->log2_n, parsed->r, parsed->p,
                                limits::k_console_scrypt_max_memory_bytes, parsed->hash.size());
  return derived && crypto::constant_time_equal(*derived, parsed->hash);
}

const std::string& decoy_hash() {
  static const std::string k_decoy = hash_password(crypto::random_token(32));
  return k_decoy;
}

std::string new_password() { return crypto::random_token(limits::k_console_password_bytes); }

}  // namespace tesoro::console
