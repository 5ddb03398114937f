#include "api/json.hpp"

#include "core/ids.hpp"
#include "core/limits.hpp"
#include "core/log.hpp"

namespace tesoro::api {

Result<json::object> parse_object(std::string_view body) {
  json::parse_options options;
  options.max_depth = limits::k_json_depth_max;
  boost::system::error_code ec;
  json::value value = json::parse(body, ec, {}, options);
  if (ec) return errors::validation("body is not valid JSON: " + ec.message(), std::nullopt);
  if (!value.is_object()) return errors::validation("body must be a JSON object", std::nullopt);
  return std::move(value.as_object());
}

http::Response json_response(int status, const json::value& value) {
  http::Response response;
  response.status = status;
  response.body = json::serialize(value);
  return response;
}

http::Response render_error(const Error& error, const ErrorScope& scope) {
  std::string log_id = ids::generate("log");
  json::object envelope;
  envelope["code"] = std::to_string(error.status) + " " + reason_phrase(error.status);
  envelope["message"] = error.message.empty() ? error.first_code() : error.message;
  envelope["id"] = log_id;
  json::array items;
  std::string codes;
  for (const ErrorItem& item : error.errors) {
    json::object entry;
    entry["error_code"] = item.error_code;
    entry["message"] = item.message;
    entry["path"] = item.path ? json::value(*item.path) : json::value(nullptr);
    entry["url"] = item.url ? json::value(*item.url) : json::value(nullptr);
    items.push_back(std::move(entry));
    codes += (codes.empty() ? "" : ",") + item.error_code;
  }
  envelope["errors"] = std::move(items);
  for (const auto& [key, value] : error.extra_fields) envelope[key] = value;

  // warn, not info: every error id must reach the log at the default and the benchmark levels.
  log::write(error.status >= 500 ? log::Level::error : log::Level::warn, "request.error",
             {{"log_id", log_id},
              {"request_id", std::string(scope.request_id)},
              {"method", std::string(scope.method)},
              {"path", std::string(scope.target.substr(0, scope.target.find('?')))},
              {"tenant_id", std::string(scope.tenant_id)},
              {"status", std::to_string(error.status)},
              {"error_codes", codes},
              {"message", error.errors.empty() ? error.message : error.errors.front().message}});

  http::Response response = json_response(error.status, envelope);
  for (const auto& [name, value] : error.headers) response.set_header(name, value);
  return response;
}

}  // namespace tesoro::api
