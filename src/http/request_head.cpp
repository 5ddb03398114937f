#include "http/request_head.hpp"

#include <cctype>

namespace tesoro::http {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }

// `value` is `chunked` in any case, with optional white space around it.
bool is_chunked(std::string_view value) {
  while (!value.empty() && is_space(value.front())) value.remove_prefix(1);
  while (!value.empty() && is_space(value.back())) value.remove_suffix(1);
  constexpr std::string_view k_chunked = "chunked";
  if (value.size() != k_chunked.size()) return false;
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(value[i])) != k_chunked[i]) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string_view> head_problem(const RequestHead& head) {
  if (head.version >= 11 && head.host_fields != 1) {
    return "an HTTP/1.1 request must have exactly one Host header";
  }
  if (head.transfer_encoding_fields > 0) {
    if (head.version < 11) return "Transfer-Encoding is not allowed in an HTTP/1.0 request";
    if (head.transfer_encoding_fields > 1 || !is_chunked(head.transfer_encoding)) {
      return "the only Transfer-Encoding accepted is chunked";
    }
    if (head.content_length_fields > 0) {
      return "a request may not have both Transfer-Encoding and Content-Length";
    }
  }
  return std::nullopt;
}

}  // namespace tesoro::http
