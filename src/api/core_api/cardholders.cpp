// POST /v1/cards/cardholders, GET /v1/cards/cardholders[/{id}], PATCH /v1/cards/cardholders/{id}.
#include "api/card_fields.hpp"
#include "api/context.hpp"
#include "api/lists.hpp"
#include "domain/cards/cardholders.hpp"

namespace tesoro::api {
namespace {

http::Response create(Context& context) {
  auto fields = decode_cardholder(context.request.body, context.now());
  if (!fields) return context.error(fields.error());
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto holder =
        cards::create_cardholder(tx, context.tenant_id(), fields.value(), context.now());
    if (!holder) return std::move(holder).error();
    return json_response(201, cardholder_json(holder.value()));
  });
}

http::Response show(Context& context) {
  Problems problems;
  std::string id = check_path_id(context.param("id"), "carh", "a cardholder", problems);
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto holder = cards::get_cardholder(tx, context.tenant_id(), id);
    if (!holder) return std::move(holder).error();
    return json_response(200, cardholder_json(holder.value()));
  });
}

http::Response update(Context& context) {
  Problems problems;
  std::string id = check_path_id(context.param("id"), "carh", "a cardholder", problems);
  if (!problems.empty()) return context.error(problems.to_error());
  auto patch = decode_cardholder_patch(context.request.body, context.now());
  if (!patch) return context.error(patch.error());
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    // Read (locked), merge, replace: the domain stores whole records.
    auto stored = cards::lock_cardholder(tx, context.tenant_id(), id);
    if (!stored) return std::move(stored).error();
    auto holder = cards::replace_cardholder(tx, context.tenant_id(), id,
                                            patched(stored->fields, patch.value()),
                                            context.now());
    if (!holder) return std::move(holder).error();
    return json_response(200, cardholder_json(holder.value()));
  });
}

http::Response list(Context& context) {
  return paginated_list(
      context, "cardholders",
      [&](store::Tx& tx, const Page& page) {
        return cards::list_cardholders(tx, context.tenant_id(), page.offset(), page.size);
      },
      cardholder_json);
}

}  // namespace

void add_cardholder_routes(Routes& routes) {
  routes.push_back({"POST", "/v1/cards/cardholders", AuthKind::core, "cards", create});
  routes.push_back({"GET", "/v1/cards/cardholders", AuthKind::core, "cards", list});
  routes.push_back({"GET", "/v1/cards/cardholders/{id}", AuthKind::core, "cards", show});
  routes.push_back({"PATCH", "/v1/cards/cardholders/{id}", AuthKind::core, "cards", update});
}

}  // namespace tesoro::api
