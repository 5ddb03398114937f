// Webhook endpoints on both surfaces, the same behaviour on each: /v1/webhook_endpoints (core
// scope group `webhooks`) and /api/v1/webhook_endpoints (participant scope `webhooks`). POST
// creates (201, with the secret), GET lists and shows, PATCH changes, DELETE removes (204),
// POST .../{id}/rotate_secret replaces the secret (200, with the new one). The secret appears in
// no other answer.
#include "api/context.hpp"
#include "api/lists.hpp"
#include "api/validation/readers.hpp"
#include "core/limits.hpp"
#include "domain/webhooks/endpoints.hpp"

namespace tesoro::api {
namespace {


// The url: a string, then the destination rules (webhooks::check_url).
std::optional<std::string> read_url(ObjectReader& reader, Need need, const Settings& settings,
                                    Problems& problems) {
  auto url = reader.string("url", need, limits::k_webhook_url_max_bytes);
  if (!url) return std::nullopt;
  if (auto refused = webhooks::check_url(*url, settings.webhook_destinations)) {
    problems.add(*refused);
    return std::nullopt;
  }
  return url;
}

// event_types: an array of strings, each a known type or pattern (webhooks::check_event_types);
// [] for every type.
std::optional<std::vector<std::string>> read_event_types(ObjectReader& reader, Problems& problems) {
  const json::array* items = reader.array("event_types", Need::optional);
  if (!items) return std::nullopt;
  std::vector<std::string> types;
  bool all_strings = true;
  for (std::size_t i = 0; i < items->size(); ++i) {
    if ((*items)[i].is_string()) {
      types.emplace_back((*items)[i].get_string());
    } else {
      problems.invalid("event_types." + std::to_string(i), "must be a string");
      all_strings = false;
    }
  }
  if (!all_strings) return std::nullopt;
  if (auto refused = webhooks::check_event_types(types)) {
    problems.add(*refused);
    return std::nullopt;
  }
  return types;
}

Result<webhooks::NewEndpoint> decode_new_endpoint(std::string_view body, const Settings& settings) {
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  Problems problems;
  ObjectReader reader(parsed.value(), "", problems);
  webhooks::NewEndpoint input;
  input.url = read_url(reader, Need::required, settings, problems).value_or("");
  input.description = reader.string("description", Need::optional, limits::k_description_max_chars);
  input.event_types = read_event_types(reader, problems).value_or(std::vector<std::string>{});
  input.enabled = reader.boolean("enabled", Need::optional).value_or(true);
  input.authorization_timeout_ms =
      reader
          .integer("authorization_timeout_ms", Need::optional, limits::k_authorization_timeout_ms_min,
                   limits::k_authorization_timeout_ms_max)
          .value_or(limits::k_authorization_timeout_ms_default);
  input.authorization_fallback =
      reader.one_of("authorization_fallback", Need::optional, webhooks::authorization_fallbacks())
          .value_or("decline");
  reader.reject_unknown();
  if (!problems.empty()) return problems.to_error();
  return input;
}

// Absent fields stay as they are; description alone may be null (cleared).
Result<webhooks::EndpointPatch> decode_patch(std::string_view body, const Settings& settings) {
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  Problems problems;
  ObjectReader reader(parsed.value(), "", problems);
  webhooks::EndpointPatch patch;
  for (const char* key :
       {"url", "event_types", "enabled", "authorization_timeout_ms", "authorization_fallback"}) {
    if (reader.is_null(key)) problems.invalid(key, "must not be null");
  }
  patch.url = read_url(reader, Need::optional, settings, problems);
  auto description = reader.patch_string("description", limits::k_description_max_chars);
  if (description.is_null()) patch.description.emplace();  // engaged, holding none
  if (description.has_value()) patch.description.emplace(description.value());
  patch.event_types = read_event_types(reader, problems);
  patch.enabled = reader.boolean("enabled", Need::optional);
  patch.authorization_timeout_ms =
      reader.integer("authorization_timeout_ms", Need::optional,
                     limits::k_authorization_timeout_ms_min, limits::k_authorization_timeout_ms_max);
  patch.authorization_fallback =
      reader.one_of("authorization_fallback", Need::optional, webhooks::authorization_fallbacks());
  reader.reject_unknown();
  if (!problems.empty()) return problems.to_error();
  return patch;
}

std::string endpoint_id(Context& context, Problems& problems) {
  return check_path_id(context.param("id"), "whe", "a webhook endpoint", problems);
}

http::Response create(Context& context) {
  auto input = decode_new_endpoint(context.request.body, context.services.settings);
  if (!input) return context.error(input.error());
  context.response_has_secret = true;
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto created =
        webhooks::create_endpoint(tx, context.services.secrets, context.tenant_id(), input.value(),
                                  context.services.settings.webhook_destinations, context.now());
    if (!created) return std::move(created).error();
    return json_response(201, webhooks::to_json(created->endpoint, created->secret));
  });
}

http::Response list(Context& context) {
  return paginated_list(
      context, "webhook_endpoints",
      [&](store::Tx& tx, const Page& page) {
        return webhooks::list_endpoints(tx, context.tenant_id(), page.offset(), page.size);
      },
      [](const webhooks::Endpoint& endpoint) { return webhooks::to_json(endpoint); });
}

http::Response show(Context& context) {
  Problems problems;
  std::string id = endpoint_id(context, problems);
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto endpoint = webhooks::get_endpoint(tx, context.tenant_id(), id);
    if (!endpoint) return std::move(endpoint).error();
    return json_response(200, webhooks::to_json(endpoint.value()));
  });
}

http::Response update(Context& context) {
  Problems problems;
  std::string id = endpoint_id(context, problems);
  auto patch = decode_patch(context.request.body, context.services.settings);
  if (!patch) problems.add(patch.error());
  if (!problems.empty()) return context.error(problems.to_error());
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto endpoint =
        webhooks::update_endpoint(tx, context.tenant_id(), id, patch.value(),
                                  context.services.settings.webhook_destinations, context.now());
    if (!endpoint) return std::move(endpoint).error();
    return json_response(200, webhooks::to_json(endpoint.value()));
  });
}

http::Response remove(Context& context) {
  Problems problems;
  std::string id = endpoint_id(context, problems);
  if (!problems.empty()) return context.error(problems.to_error());
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto deleted = webhooks::delete_endpoint(tx, context.tenant_id(), id, context.now());
    if (!deleted) return std::move(deleted).error();
    return no_content();
  });
}

http::Response rotate_secret(Context& context) {
  Problems problems;
  std::string id = endpoint_id(context, problems);
  if (auto not_object = read_no_body(context.request.body, problems)) {
    return context.error(*not_object);
  }
  if (!problems.empty()) return context.error(problems.to_error());
  context.response_has_secret = true;
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto rotated = webhooks::rotate_secret(tx, context.services.secrets, context.tenant_id(), id,
                                           context.now(), context.services.clock.now());
    if (!rotated) return std::move(rotated).error();
    return json_response(200, webhooks::to_json(rotated->endpoint, rotated->secret));
  });
}

}  // namespace

void add_webhook_endpoint_routes(Routes& routes) {
  for (auto [prefix, auth] :
       {std::pair{"/v1", AuthKind::core}, std::pair{"/api/v1", AuthKind::participant}}) {
    const std::string base = std::string(prefix) + "/webhook_endpoints";
    const std::string scope = "webhooks";  // a core group, and a participant scope
    routes.push_back({"POST", base, auth, scope, create});
    routes.push_back({"GET", base, auth, scope, list});
    routes.push_back({"GET", base + "/{id}", auth, scope, show});
    routes.push_back({"PATCH", base + "/{id}", auth, scope, update});
    routes.push_back({"DELETE", base + "/{id}", auth, scope, remove});
    routes.push_back({"POST", base + "/{id}/rotate_secret", auth, scope, rotate_secret});
  }
}

}  // namespace tesoro::api
