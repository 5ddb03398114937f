// POST /api/v1/oauth/token: OAuth 2.0 client credentials and refresh tokens (RFC 6749), with
// JSON or form bodies and client authentication in the body or by HTTP Basic.
#include <boost/url/params_view.hpp>
#include <boost/url/parse_query.hpp>

#include <map>

#include "api/context.hpp"
#include "api/validation/readers.hpp"
#include "core/crypto.hpp"

namespace tesoro::api {
namespace {

using Parameters = std::map<std::string, std::string, std::less<>>;

Result<Parameters> parse_form(std::string_view body) {
  if (!boost::urls::parse_query(body)) {
    return auth::oauth_error(ErrorCode::invalid_request, "malformed form body");
  }
  Parameters parameters;
  for (auto param : boost::urls::params_view(body)) {  // decodes %XX and '+' as space
    if (parameters.contains(param.key)) {
      return auth::oauth_error(ErrorCode::invalid_request, "parameter repeated: " + param.key);
    }
    if (param.has_value && !param.value.empty()) parameters[param.key] = param.value;
  }
  return parameters;
}

Result<Parameters> parse_json(std::string_view body) {
  auto object = parse_object(body);
  if (!object) {
    return auth::oauth_error(ErrorCode::invalid_request, object.error().errors.front().message);
  }
  Parameters parameters;
  for (const auto& entry : object.value()) {
    if (entry.value().is_null()) continue;  // RFC 6749: a parameter without value is omitted
    if (!entry.value().is_string()) {
      return auth::oauth_error(ErrorCode::invalid_request,
                               std::string(entry.key()) + " must be a string");
    }
    if (!entry.value().get_string().empty()) {
      parameters[std::string(entry.key())] = std::string(entry.value().get_string());
    }
  }
  return parameters;
}

// HTTP Basic client authentication (RFC 6749 2.3.1): base64(client_id:client_secret).
void read_basic_credentials(const http::Request& request, Parameters& parameters) {
  const std::string* header = request.header("authorization");
  if (!header || header->size() < 6) return;
  std::string scheme = header->substr(0, 6);
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme != "basic ") return;
  bool ok = false;
  std::string decoded = crypto::base64_decode(std::string_view(*header).substr(6), ok);
  auto colon = decoded.find(':');
  if (!ok || colon == std::string::npos) return;
  parameters.try_emplace("client_id", decoded.substr(0, colon));
  parameters.try_emplace("client_secret", decoded.substr(colon + 1));
}

std::optional<std::string> get(const Parameters& parameters, std::string_view name) {
  auto found = parameters.find(name);
  if (found == parameters.end()) return std::nullopt;
  return found->second;
}

http::Response grant_response(const auth::TokenGrant& grant) {
  json::object body;
  body["access_token"] = grant.access_token;
  body["token_type"] = "Bearer";
  body["expires_in"] = grant.expires_in_seconds;
  body["scope"] = auth::join_scopes(grant.scopes, ' ');
  body["refresh_token"] = grant.refresh_token;
  http::Response response = json_response(200, body);
  response.set_header("Cache-Control", "no-store");
  response.set_header("Pragma", "no-cache");
  return response;
}

// Tokens are secrets: the response is never kept as an idempotency record (it would store a
// token in clear). Each call issues a new pair; a retry is safe because tokens are cheap.
http::Response token(Context& context) {
  const std::string* content_type = context.request.header("content-type");
  bool is_json = content_type && content_type->find("application/json") != std::string::npos;
  bool is_form = content_type &&
                 content_type->find("application/x-www-form-urlencoded") != std::string::npos;
  if (!is_json && !is_form) {
    return context.error(auth::oauth_error(
        ErrorCode::invalid_request,
        "Content-Type must be application/json or application/x-www-form-urlencoded"));
  }
  auto parsed = is_json ? parse_json(context.request.body) : parse_form(context.request.body);
  if (!parsed) return context.error(parsed.error());
  Parameters parameters = std::move(parsed).value();
  read_basic_credentials(context.request, parameters);

  auto grant_type = get(parameters, "grant_type");
  if (!grant_type) {
    return context.error(auth::oauth_error(ErrorCode::invalid_request, "grant_type is required"));
  }
  const std::string& environment = context.services.settings.environment;
  auto scope = get(parameters, "scope");
  auto result = context.services.store.write<auth::TokenGrant>([&](store::Tx& tx)
                                                                   -> Result<auth::TokenGrant> {
    if (*grant_type == "client_credentials") {
      auto client_id = get(parameters, "client_id");
      auto client_secret = get(parameters, "client_secret");
      if (!client_id || !client_secret) {
        return auth::oauth_error(ErrorCode::invalid_client,
                                 "client_id and client_secret are required");
      }
      return auth::grant_client_credentials(tx, *client_id, *client_secret, scope, environment,
                                            context.services.clock.now());
    }
    if (*grant_type == "refresh_token") {
      auto refresh_token = get(parameters, "refresh_token");
      if (!refresh_token) {
        return auth::oauth_error(ErrorCode::invalid_request, "refresh_token is required");
      }
      return auth::grant_refresh_token(tx, *refresh_token, scope, environment, context.services.clock.now());
    }
    return auth::oauth_error(ErrorCode::unsupported_grant_type,
                             "grant_type must be client_credentials or refresh_token");
  });
  if (!result) return context.error(result.error());
  return grant_response(result.value());
}

}  // namespace

void add_oauth_routes(Routes& routes) {
  routes.push_back({"POST", "/api/v1/oauth/token", AuthKind::none, "", token});
}

}  // namespace tesoro::api
