// POST /api/v1/targets/resolve (a key resolved on the sandbox network, 201 with its Target) and
// GET /api/v1/targets/{id} (a recorded target, expired or not).
#include "api/context.hpp"
#include "api/validation/readers.hpp"
#include "domain/network/targets.hpp"

namespace tesoro::api {
namespace {

Result<network::TargetRequest> decode(std::string_view body,
                                      const std::vector<std::string>& currencies,
                                      Problems& problems) {
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  ObjectReader reader(parsed.value(), "", problems);
  network::TargetRequest request;
  request.format =
      reader.one_of("format", Need::required, network::query_formats()).value_or("");
  request.value = reader.string("value", Need::required).value_or("");
  auto amount = read_money(reader, "amount", Need::optional, currencies, problems);
  if (amount) {
    request.amount_minor = amount->amount_minor;
    request.currency = amount->currency;
  }
  reader.reject_unknown();
  if (!problems.empty()) return problems.to_error();
  return request;
}

http::Response resolve(Context& context) {
  Problems problems;
  auto request = decode(context.request.body, context.services.settings.currencies, problems);
  if (!request) return context.error(request.error());
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto target =
        network::resolve_target(tx, context.tenant_id(), request.value(), context.now());
    if (!target) return std::move(target).error();
    return json_text_response(201, std::move(target->json));
  });
}

http::Response show(Context& context) {
  Problems problems;
  const std::string id = check_path_id(context.param("id"), "bbtgt", "a target", problems);
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto target = network::read_target(tx, context.tenant_id(), id, "id");
    if (!target) return std::move(target).error();
    return json_text_response(200, std::move(target->json));
  });
}

}  // namespace

void add_target_routes(Routes& routes) {
  routes.push_back({"POST", "/api/v1/targets/resolve", AuthKind::participant,
                    "target_resolutions", resolve});
  routes.push_back({"GET", "/api/v1/targets/{id}", AuthKind::participant,
                    "target_resolutions:readonly", show});
}

}  // namespace tesoro::api
