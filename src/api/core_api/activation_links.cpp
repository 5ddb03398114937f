// POST /v1/cards/activation_links, GET /v1/cards/activation_links,
// GET /v1/cards/activation_links/{plastic_card_activation_id}. The url of a link is shown once,
// in the answer to its creation: only its token's hash is stored.
#include "api/context.hpp"
#include "api/lists.hpp"
#include "api/validation/readers.hpp"
#include "domain/cards/activation_links.hpp"

namespace tesoro::api {
namespace {

// `url`: null except in the answer to the creation (the token is not stored, so it cannot be
// shown again).
json::object link_json(const cards::ActivationLink& link, std::optional<std::string> url) {
  return json::object{{"id", link.id},
                      {"card_id", link.card_id},
                      {"url", optional_json(url)},
                      {"state", link.state},
                      {"expires_at", time::iso(link.expires_at_micros)},
                      {"used_at", optional_json(link.used_at)},
                      {"inserted_at", link.inserted_at},
                      {"updated_at", link.updated_at}};
}

json::object listed_link_json(const cards::ActivationLink& link) {
  return link_json(link, std::nullopt);
}

Result<std::string> decode_new_link(std::string_view body) {
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  Problems problems;
  ObjectReader reader(parsed.value(), "", problems);
  std::optional<std::string> card_id = reader.id("card_id", Need::required, "car");
  reader.reject_unknown();
  if (!problems.empty()) return problems.to_error();
  return *card_id;
}

http::Response create(Context& context) {
  auto card_id = decode_new_link(context.request.body);
  if (!card_id) return context.error(card_id.error());
  const std::string& base = context.services.settings.public_url;
  // The answer's url carries the activation token (its row keeps only a hash): the idempotency
  // record of this answer is kept sealed.
  context.response_has_secret = true;
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto created =
        cards::create_activation_link(tx, context.tenant_id(), card_id.value(), context.now());
    if (!created) return std::move(created).error();
    return json_response(201, link_json(created->link, base + "/activate/" + created->token));
  });
}

http::Response list(Context& context) {
  Problems problems;
  QueryReader query(context.query, problems);
  Page page = read_page(query);
  std::optional<std::string> card_id = query.string("card_id");
  if (card_id) check_path_id(*card_id, "car", "a card", problems, "card_id");
  query.reject_unknown();
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto found = cards::list_activation_links(tx, context.tenant_id(), card_id, context.now(),
                                              page.offset(), page.size);
    if (!found) return std::move(found).error();
    return paginated_json("activation_links", page, found.value(), listed_link_json);
  });
}

http::Response show(Context& context) {
  Problems problems;
  std::string id = check_path_id(context.param("plastic_card_activation_id"), "cal",
                                 "an activation link", problems, "plastic_card_activation_id");
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto link = cards::get_activation_link(tx, context.tenant_id(), id, context.now());
    if (!link) return std::move(link).error();
    return json_response(200, listed_link_json(link.value()));
  });
}

}  // namespace

void add_activation_link_routes(Routes& routes) {
  routes.push_back({"POST", "/v1/cards/activation_links", AuthKind::core, "cards", create});
  routes.push_back({"GET", "/v1/cards/activation_links", AuthKind::core, "cards", list});
  routes.push_back({"GET", "/v1/cards/activation_links/{plastic_card_activation_id}",
                    AuthKind::core, "cards", show});
}

}  // namespace tesoro::api
