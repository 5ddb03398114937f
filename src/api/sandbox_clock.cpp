// The tenant's sandbox clock on both surfaces: GET /v1/sandbox/clock, POST
// /v1/sandbox/clock/advance, GET /api/v1/sandbox/clock, POST /api/v1/sandbox/clock/advance.
// Any valid credential of the tenant may read or advance it; absent in production (404).
#include "api/context.hpp"
#include "api/validation/readers.hpp"
#include "core/limits.hpp"
#include "domain/tenant_clock/tenant_clock.hpp"

namespace tesoro::api {
namespace {

json::object clock_json(time::Micros tenant_now, time::Micros real_now) {
  return json::object{{"now", time::iso(tenant_now)},
                      {"offset_seconds", (tenant_now - real_now) / time::k_micros_per_second}};
}

http::Response show(Context& context) {
  Problems problems;
  QueryReader query(context.query, problems);
  query.reject_unknown();
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    const time::Micros real_now = context.services.clock.now();
    // Read in the snapshot rather than from the credential lookup: an advance committed a
    // moment ago shows at once.
    return json_response(200, clock_json(tenant_clock::now(tx, context.tenant_id(), real_now),
                                         real_now));
  });
}

http::Response advance(Context& context) {
  auto parsed = parse_object(context.request.body);
  if (!parsed) return context.error(parsed.error());
  Problems problems;
  ObjectReader reader(parsed.value(), "", problems);
  auto seconds =
      reader.integer("seconds", Need::required, 1, limits::k_clock_advance_max_seconds);
  reader.reject_unknown();
  if (!problems.empty()) return context.error(problems.to_error());
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    const time::Micros real_now = context.services.clock.now();
    auto moved = tenant_clock::advance(tx, context.tenant_id(), *seconds, real_now);
    if (!moved) return std::move(moved).error();
    return json_response(200, clock_json(moved.value(), real_now));
  });
}

}  // namespace

void add_sandbox_clock_routes(Routes& routes) {
  // An empty scope: any valid credential of the surface (the clock is the tenant's, not a
  // resource group's).
  for (auto [prefix, auth] : {std::pair{"/v1", AuthKind::core},
                              std::pair{"/api/v1", AuthKind::participant}}) {
    std::string base = std::string(prefix) + "/sandbox/clock";
    routes.push_back({"GET", base, auth, "", show, true});
    routes.push_back({"POST", base + "/advance", auth, "", advance, true});
  }
}

}  // namespace tesoro::api
