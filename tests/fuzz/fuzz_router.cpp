// The request target as the server reads it: the router with every route of the server (path
// ids captured), a captured id checked as handlers check theirs, and the query readers of the
// list endpoints. Input: the method, a space, then the target (path and query).
#include <string>
#include <string_view>

#include "api/error_status.hpp"
#include "api/route_groups.hpp"
#include "api/validation/readers.hpp"
#include "fuzz.hpp"
#include "http/router.hpp"

using namespace tesoro;

namespace {

const http::Router& router() {
  static const http::Router built = [] {
    http::Router r;
    api::Routes routes;
    for (api::AddRoutes add : api::route_groups()) add(routes);
    for (const api::RouteSpec& route : routes) r.add(route.method, route.pattern);
    return r;
  }();
  return built;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t space = input.find(' ');
  const std::string_view method = input.substr(0, space);
  const std::string_view target = space == std::string_view::npos ? "" : input.substr(space + 1);
  const std::size_t mark = target.find('?');
  const std::string_view path = target.substr(0, mark);
  const std::string_view query = mark == std::string_view::npos ? "" : target.substr(mark + 1);

  http::RouteMatch match = router().match(method, path);
  if (match.outcome == http::RouteMatch::Outcome::found) {
    api::Problems problems;
    for (const auto& [name, value] : match.params) {
      FUZZ_CHECK(!name.empty());
      api::check_path_id(value, "acc", "an account", problems, name);
    }
    if (!problems.empty()) FUZZ_CHECK(tesoro::api::http_status(problems.to_error()) == 400);
  } else if (match.outcome == http::RouteMatch::Outcome::method_not_allowed) {
    FUZZ_CHECK(!match.allow.empty());
  }

  api::Problems problems;
  api::QueryReader reader(query, problems);
  api::Page page = api::read_page(reader);
  FUZZ_CHECK(page.number >= 1 && page.size >= 1);
  reader.timestamp("created_at[gte]");
  reader.one_of("state", {"created", "ready", "paid"});
  reader.string("external_id");
  reader.integer("limit", 1, 500);
  reader.reject_unknown();
  if (!problems.empty()) {
    const Error error = problems.to_error();
    FUZZ_CHECK(tesoro::api::http_status(error) == 400 && !error.errors.empty());
  }
  return 0;
}
