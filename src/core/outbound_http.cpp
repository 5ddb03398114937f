#include "core/outbound_http.hpp"

#include <arpa/inet.h>
#include <curl/curl.h>

#include <boost/algorithm/string/trim.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <mutex>

namespace tesoro::outbound_http {
namespace {

// The length of the well-formed UTF-8 sequence at the start of `bytes` (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), or 0.
std::size_t utf8_sequence_length(std::string_view bytes) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(bytes[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (bytes.size() < length || byte(1) < low || byte(1) > high) return 0;
  for (std::size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return length;
}

}  // namespace

void curl_global_once() {
  // curl_global_init is not safe to race with other threads' first curl calls: once per process.
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::optional<UrlParts> parse_url(std::string_view url) {
  curl_global_once();
  // curl's own parser: the host checked is the host curl connects to.
  CURLU* handle = curl_url();
  std::string text(url);
  std::optional<UrlParts> parts;
  char* scheme = nullptr;
  char* host = nullptr;
  char* port = nullptr;
  if (curl_url_set(handle, CURLUPART_URL, text.c_str(), CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK &&
      curl_url_get(handle, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
      curl_url_get(handle, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
      curl_url_get(handle, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK) {
    UrlParts found;
    found.scheme = scheme;
    found.host = host;
    int number = 0;
    std::string_view port_text(port);
    auto parsed = std::from_chars(port_text.data(), port_text.data() + port_text.size(), number);
    if (found.host.size() > 2 && found.host.front() == '[' && found.host.back() == ']') {
      found.host = found.host.substr(1, found.host.size() - 2);
      found.ip_literal = true;
    } else {
      in_addr ipv4{};
      found.ip_literal = ::inet_pton(AF_INET, found.host.c_str(), &ipv4) == 1;
    }
    if ((found.scheme == "http" || found.scheme == "https") && !found.host.empty() &&
        parsed.ec == std::errc() && number > 0 && number < 65536) {
      found.port = number;
      parts = std::move(found);
    }
  }
  curl_free(scheme);
  curl_free(host);
  curl_free(port);
  curl_url_cleanup(handle);
  return parts;
}

std::optional<time::Micros> parse_retry_after(std::string_view value, time::Micros real_now) {
  const std::string trimmed = boost::algorithm::trim_copy(std::string(value));
  value = trimmed;
  if (value.empty()) return std::nullopt;
  if (std::all_of(value.begin(), value.end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    // More digits than any sane delay: the caller caps it anyway.
    if (value.size() > 12) return time::Micros{999'999'999'999} * time::k_micros_per_second;
    std::int64_t seconds = 0;
    std::from_chars(value.data(), value.data() + value.size(), seconds);
    return seconds * time::k_micros_per_second;
  }
  // Each HTTP date form (IMF-fixdate, RFC 850, asctime) begins with the day's name.
  if (!std::isalpha(static_cast<unsigned char>(value.front()))) return std::nullopt;
  const std::string text(value);
  const time_t at = curl_getdate(text.c_str(), nullptr);
  if (at == -1) return std::nullopt;
  const time::Micros delay = static_cast<time::Micros>(at) * time::k_micros_per_second - real_now;
  return std::max<time::Micros>(delay, 0);
}

std::string printable_text(std::string_view bytes, std::size_t max_bytes) {
  static constexpr std::string_view k_replacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(std::min(bytes.size(), max_bytes));
  std::size_t at = 0;
  while (at < bytes.size()) {
    const std::size_t length = utf8_sequence_length(bytes.substr(at));
    const unsigned char first = static_cast<unsigned char>(bytes[at]);
    const bool control = length == 1 && (first < 0x20 || first == 0x7F) && first != '\t' &&
                         first != '\n' && first != '\r';
    std::string_view piece = length == 0 || control ? k_replacement : bytes.substr(at, length);
    if (out.size() + piece.size() > max_bytes) break;
    out += piece;
    at += length == 0 ? 1 : length;
  }
  return out;
}

}  // namespace tesoro::outbound_http
