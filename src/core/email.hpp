#pragma once
// The shape of an email address, shared by the API's field readers and the network key
// directory (email keys): local@domain.tld, no spaces, one @, a dot in the domain, at most 254
// bytes (RFC 5321). No attempt at the full RFC 5322 grammar: what matters is catching typos.
#include <string_view>

namespace tesoro::email {

inline bool is_email(std::string_view text) {
  auto at = text.find('@');
  if (at == std::string_view::npos || at == 0 || text.find('@', at + 1) != std::string_view::npos) {
    return false;
  }
  std::string_view domain = text.substr(at + 1);
  auto dot = domain.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 2 > domain.size() ||
      domain.find("..") != std::string_view::npos || domain.front() == '-') {
    return false;
  }
  for (char c : text) {
    if (c == ' ' || c == ',' || c == ';' || c == '<' || c == '>' || c == '(' || c == ')') {
      return false;
    }
  }
  return text.size() <= 254;
}

}  // namespace tesoro::email
