#pragma once
// Method + path template routing. Templates are literal segments and `{name}` captures; a literal
// segment beats a capture (so /collections/find_successful_by wins over /collections/{id}). The
// most specific template decides the resource before the method is looked at: PATCH on
// /cards/cardholders is 405 (a resource that takes no PATCH), not PATCH /cards/{card_id}.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tesoro::http {

using PathParams = std::vector<std::pair<std::string, std::string>>;

struct RouteMatch {
  enum class Outcome { found, not_found, method_not_allowed };
  Outcome outcome = Outcome::not_found;
  std::size_t route_index = 0;
  PathParams params;
  std::string allow;  // for 405: the methods the path accepts
};

class Router {
 public:
  // Returns the index later reported by match().
  std::size_t add(std::string method, std::string pattern);
  RouteMatch match(std::string_view method, std::string_view path) const;
  const std::string& pattern(std::size_t index) const { return routes_[index].pattern; }

 private:
  struct Route {
    std::string method;
    std::string pattern;
    std::vector<std::string> segments;  // "{x}" marks a capture
  };
  static std::vector<std::string_view> split(std::string_view path);
  std::vector<Route> routes_;
};

}  // namespace tesoro::http
