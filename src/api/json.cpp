#include "api/json.hpp"

#include <boost/json/basic_parser_impl.hpp>

#include <set>
#include <vector>

#include "core/ids.hpp"
#include "core/limits.hpp"
#include "core/log.hpp"

namespace tesoro::api {
namespace {

// A second, allocation-light pass over a body that already parsed: Boost.JSON keeps the last of
// two equal keys silently, and an ambiguous request must be refused rather than guessed at.
struct DuplicateKeyFinder {
  static constexpr std::size_t max_array_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_object_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_string_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_key_size = static_cast<std::size_t>(-1);

  std::vector<std::set<std::string, std::less<>>> open_objects;
  std::string key;
  std::string duplicate;

  using error_code = boost::system::error_code;
  using string_view = json::string_view;
  bool on_document_begin(error_code&) { return true; }
  bool on_document_end(error_code&) { return true; }
  bool on_array_begin(error_code&) { return true; }
  bool on_array_end(std::size_t, error_code&) { return true; }
  bool on_object_begin(error_code&) {
    open_objects.emplace_back();
    return true;
  }
  bool on_object_end(std::size_t, error_code&) {
    open_objects.pop_back();
    return true;
  }
  bool on_string_part(string_view, std::size_t, error_code&) { return true; }
  bool on_string(string_view, std::size_t, error_code&) { return true; }
  bool on_key_part(string_view part, std::size_t, error_code&) {
    key.append(part.data(), part.size());
    return true;
  }
  bool on_key(string_view part, std::size_t, error_code& ec) {
    key.append(part.data(), part.size());
    if (!open_objects.back().insert(key).second) {
      duplicate = key;
      ec = json::error::syntax;  // stop here
      return false;
    }
    key.clear();
    return true;
  }
  bool on_number_part(string_view, error_code&) { return true; }
  bool on_int64(std::int64_t, string_view, error_code&) { return true; }
  bool on_uint64(std::uint64_t, string_view, error_code&) { return true; }
  bool on_double(double, string_view, error_code&) { return true; }
  bool on_bool(bool, error_code&) { return true; }
  bool on_null(error_code&) { return true; }
  bool on_comment_part(string_view, error_code&) { return true; }
  bool on_comment(string_view, error_code&) { return true; }
};

// The first key that appears twice in one object, or "" when there is none.
std::string first_duplicate_key(std::string_view body) {
  json::parse_options options;
  options.max_depth = limits::k_json_depth_max;
  json::basic_parser<DuplicateKeyFinder> parser(options);
  boost::system::error_code ec;
  parser.write_some(false, body.data(), body.size(), ec);
  return parser.handler().duplicate;
}

}  // namespace

Result<json::object> parse_object(std::string_view body) {
  json::parse_options options;
  options.max_depth = limits::k_json_depth_max;
  boost::system::error_code ec;
  json::value value = json::parse(body, ec, {}, options);
  if (ec) return errors::validation("body is not valid JSON: " + ec.message(), std::nullopt);
  if (!value.is_object()) return errors::validation("body must be a JSON object", std::nullopt);
  std::string duplicate = first_duplicate_key(body);
  if (!duplicate.empty()) {
    return errors::validation("key \"" + duplicate + "\" appears twice in one object", duplicate);
  }
  return std::move(value.as_object());
}

http::Response json_response(int status, const json::value& value) {
  http::Response response;
  response.status = status;
  response.body = json::serialize(value);
  return response;
}

http::Response no_content() { return http::Response{204, "application/json", "", {}}; }

http::Response json_text_response(int status, std::string body) {
  http::Response response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

json::value optional_json(const std::optional<std::string>& text) {
  return text ? json::value(*text) : json::value(nullptr);
}

void money_text(json_text::Writer& out, std::int64_t amount_minor, const std::string& currency) {
  out.begin_object().key("amount").integer(amount_minor).key("currency").string(currency);
  out.end_object();
}

void optional_text(json_text::Writer& out, const std::optional<std::string>& text) {
  if (text) {
    out.string(*text);
  } else {
    out.null();
  }
}

std::string loggable_path(std::string_view target) {
  std::string_view path = target.substr(0, target.find('?'));
  // By segment, as the router matches: //activate/x reaches the activation page too.
  std::size_t start = path.find_first_not_of('/');
  if (start != std::string_view::npos && path.substr(start).starts_with("activate/")) {
    return std::string(path.substr(0, start)) + "activate/[redacted]";
  }
  return std::string(path);
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
  log::Fields fields = {
      {"log_id", log_id},
      {"request_id", std::string(scope.request_id)},
      {"method", std::string(scope.method)},
      {"path", loggable_path(scope.target)},
      {"tenant_id", std::string(scope.tenant_id)},
      {"status", error.status},
      {"error_codes", codes},
      {"message", error.errors.empty() ? error.message : error.errors.front().message}};
  fields.insert(fields.end(), error.log_fields.begin(), error.log_fields.end());
  log::write(error.status >= 500 ? log::Level::error : log::Level::warn, "request.error", fields);

  http::Response response = json_response(error.status, envelope);
  for (const auto& [name, value] : error.headers) response.set_header(name, value);
  return response;
}

}  // namespace tesoro::api
