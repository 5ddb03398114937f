// The console's credentials (docs/console.md): the session's tenant's API keys and OAuth
// clients, listed (never their secrets), created (the secret shown once) and revoked. Another
// tenant's id answers 404 like an unknown one.
#include "api/console.hpp"
#include "api/credential_json.hpp"
#include "api/validation/readers.hpp"

namespace tesoro::api {
namespace {

// `scopes`: a non-empty array of distinct strings that `known` accepts.
std::vector<std::string> read_scopes(ObjectReader& reader, bool (*known)(std::string_view),
                                     std::string_view what, Problems& problems) {
  std::vector<std::string> scopes;
  const json::array* items = reader.array("scopes", Need::required);
  if (!items) return scopes;
  if (items->empty()) problems.invalid("scopes", "must name at least one scope");
  for (std::size_t i = 0; i < items->size(); ++i) {
    const json::value& item = (*items)[i];
    std::string path = "scopes." + std::to_string(i);
    if (!item.is_string() || !known(item.get_string())) {
      problems.invalid(path, "must be a " + std::string(what) + " scope");
      continue;
    }
    std::string scope(item.get_string());
    if (std::find(scopes.begin(), scopes.end(), scope) == scopes.end()) scopes.push_back(scope);
  }
  return scopes;
}

struct NewKey {
  std::vector<std::string> scopes;
};

Result<NewKey> decode_new_key(std::string_view body, const std::string& tenant_environment) {
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  Problems problems;
  ObjectReader reader(parsed.value(), "", problems);
  auto environment = reader.one_of("environment", Need::required, {"sandbox", "production"});
  if (environment && *environment != tenant_environment) {
    problems.invalid("environment", "must be the tenant's environment, " + tenant_environment);
  }
  NewKey key{
      read_scopes(reader, auth::is_core_scope, "core (<group>:<read|write|admin>)", problems)};
  reader.reject_unknown();
  if (!problems.empty()) return problems.to_error();
  return key;
}

Result<std::vector<std::string>> decode_new_client(std::string_view body) {
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  Problems problems;
  ObjectReader reader(parsed.value(), "", problems);
  auto scopes = read_scopes(reader, auth::is_participant_scope, "participant", problems);
  reader.reject_unknown();
  if (!problems.empty()) return problems.to_error();
  return scopes;
}

// {"data": [...]} of every item `list(tx, tenant)` returns, encoded by `encode`.
template <class List, class Encode>
http::Response list_all(Context& context, List list, Encode encode) {
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto found = list(tx, context.tenant_id());
    if (!found) return std::move(found).error();
    json::array data;
    for (const auto& item : found.value()) data.push_back(encode(item));
    return json_response(200, json::object{{"data", std::move(data)}});
  });
}

http::Response list_keys(Context& context) {
  return list_all(context, auth::list_api_keys, key_summary_json);
}

http::Response create_key(Context& context) {
  auto input = decode_new_key(context.request.body, context.console_session->environment);
  if (!input) return context.error(input.error());
  context.response_has_secret = true;
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto key =
        auth::create_api_key(tx, context.tenant_id(), input->scopes, context.services.clock.now());
    if (!key) return std::move(key).error();
    return json_response(201, json::object{{"id", key->id},
                                           {"api_key", key->api_key},
                                           {"key_prefix", key->key_prefix},
                                           {"scopes", string_array(key->scopes)},
                                           {"environment", key->environment}});
  });
}

http::Response revoke_key(Context& context) {
  Problems problems;
  std::string id = check_path_id(context.param("id"), "key", "an API key", problems);
  if (!problems.empty()) return context.error(problems.to_error());
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto key = auth::revoke_api_key(tx, id, context.services.clock.now(), context.tenant_id());
    if (!key) return std::move(key).error();
    return json_response(200, key_summary_json(key.value()));
  });
}

http::Response list_clients(Context& context) {
  return list_all(context, auth::list_clients, client_summary_json);
}

http::Response create_client(Context& context) {
  auto scopes = decode_new_client(context.request.body);
  if (!scopes) return context.error(scopes.error());
  context.response_has_secret = true;
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto client =
        auth::create_client(tx, context.tenant_id(), scopes.value(), context.services.clock.now());
    if (!client) return std::move(client).error();
    return json_response(201, json::object{{"client_id", client->client_id},
                                           {"client_secret", client->client_secret},
                                           {"scopes", string_array(client->scopes)}});
  });
}

http::Response revoke_client(Context& context) {
  Problems problems;
  std::string id =
      check_path_id(context.param("client_id"), "cli", "an OAuth client", problems, "client_id");
  if (!problems.empty()) return context.error(problems.to_error());
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto client = auth::revoke_client(tx, id, context.services.clock.now(), context.tenant_id());
    if (!client) return std::move(client).error();
    return json_response(200, client_summary_json(client.value()));
  });
}

}  // namespace

void add_console_credential_routes(Routes& routes) {
  const std::string keys = "/console/api/keys";
  routes.push_back({"GET", keys, AuthKind::console, "", list_keys});
  routes.push_back({"POST", keys, AuthKind::console, "", create_key});
  routes.push_back({"DELETE", keys + "/{id}", AuthKind::console, "", revoke_key});
  const std::string clients = "/console/api/clients";
  routes.push_back({"GET", clients, AuthKind::console, "", list_clients});
  routes.push_back({"POST", clients, AuthKind::console, "", create_client});
  routes.push_back({"DELETE", clients + "/{client_id}", AuthKind::console, "", revoke_client});
}

}  // namespace tesoro::api
