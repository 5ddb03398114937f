#include "http/router.hpp"

namespace tesoro::http {

std::vector<std::string_view> Router::split(std::string_view path) {
  std::vector<std::string_view> segments;
  std::size_t at = 0;
  while (at < path.size()) {
    if (path[at] == '/') {
      ++at;
      continue;
    }
    std::size_t end = path.find('/', at);
    if (end == std::string_view::npos) end = path.size();
    segments.push_back(path.substr(at, end - at));
    at = end;
  }
  return segments;
}

std::size_t Router::add(std::string method, std::string pattern) {
  Route route{std::move(method), std::move(pattern), {}};
  for (std::string_view segment : split(route.pattern)) route.segments.emplace_back(segment);
  routes_.push_back(std::move(route));
  return routes_.size() - 1;
}

RouteMatch Router::match(std::string_view method, std::string_view path) const {
  std::vector<std::string_view> segments = split(path);
  RouteMatch best;
  int best_literals = -1;
  for (std::size_t i = 0; i < routes_.size(); ++i) {
    const Route& route = routes_[i];
    if (route.segments.size() != segments.size()) continue;
    int literals = 0;
    bool matches = true;
    for (std::size_t s = 0; s < segments.size() && matches; ++s) {
      const std::string& want = route.segments[s];
      if (!want.empty() && want.front() == '{') continue;
      if (want != segments[s]) matches = false;
      ++literals;
    }
    if (!matches) continue;
    if (route.method != method) {
      if (best.outcome == RouteMatch::Outcome::not_found) {
        best.outcome = RouteMatch::Outcome::method_not_allowed;
      }
      if (best.allow.find(route.method) == std::string::npos) {
        best.allow += (best.allow.empty() ? "" : ", ") + route.method;
      }
      continue;
    }
    if (literals <= best_literals) continue;
    best_literals = literals;
    best.outcome = RouteMatch::Outcome::found;
    best.route_index = i;
    best.params.clear();
    for (std::size_t s = 0; s < segments.size(); ++s) {
      const std::string& want = route.segments[s];
      if (!want.empty() && want.front() == '{') {
        best.params.emplace_back(want.substr(1, want.size() - 2), std::string(segments[s]));
      }
    }
  }
  return best;
}

}  // namespace tesoro::http
