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

namespace {

bool is_capture(const std::string& segment) { return !segment.empty() && segment.front() == '{'; }

// Whether route segments `a` are more specific than `b` for one path: at the first position
// where one has a literal and the other a capture, the literal wins (so /cards/cardholders/{id}
// beats /cards/{card_id}/look for /cards/cardholders/look).
bool more_specific(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  for (std::size_t s = 0; s < a.size(); ++s) {
    if (is_capture(a[s]) != is_capture(b[s])) return !is_capture(a[s]);
  }
  return false;
}

bool same_shape(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  for (std::size_t s = 0; s < a.size(); ++s) {
    if (is_capture(a[s]) != is_capture(b[s])) return false;
    if (!is_capture(a[s]) && a[s] != b[s]) return false;
  }
  return true;
}

}  // namespace

RouteMatch Router::match(std::string_view method, std::string_view path) const {
  std::vector<std::string_view> segments = split(path);
  // The resource is the most specific template that matches the path, whatever the method;
  // then the method picks among the routes of that resource, or the answer is 405.
  const Route* resource = nullptr;
  for (const Route& route : routes_) {
    if (route.segments.size() != segments.size()) continue;
    bool matches = true;
    for (std::size_t s = 0; s < segments.size() && matches; ++s) {
      matches = is_capture(route.segments[s]) || route.segments[s] == segments[s];
    }
    if (matches && (!resource || more_specific(route.segments, resource->segments))) {
      resource = &route;
    }
  }
  RouteMatch best;
  if (!resource) return best;
  for (std::size_t i = 0; i < routes_.size(); ++i) {
    const Route& route = routes_[i];
    if (route.segments.size() != segments.size() || !same_shape(route.segments, resource->segments)) {
      continue;
    }
    if (route.method != method) {
      if (best.allow.find(route.method) == std::string::npos) {
        best.allow += (best.allow.empty() ? "" : ", ") + route.method;
      }
      continue;
    }
    best.outcome = RouteMatch::Outcome::found;
    best.route_index = i;
    for (std::size_t s = 0; s < segments.size(); ++s) {
      const std::string& want = route.segments[s];
      if (is_capture(want)) {
        best.params.emplace_back(want.substr(1, want.size() - 2), std::string(segments[s]));
      }
    }
    return best;
  }
  best.outcome = RouteMatch::Outcome::method_not_allowed;
  return best;
}

}  // namespace tesoro::http
