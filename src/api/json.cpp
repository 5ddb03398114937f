#include "api/json.hpp"

#include <boost/json/basic_parser_impl.hpp>

#include <algorithm>
#include <set>
#include <vector>

#include "api/error_status.hpp"
#include "core/ids.hpp"
#include "core/limits.hpp"
#include "core/log.hpp"
#include "http/status.hpp"

namespace tesoro::api {
namespace {

// Builds the document as json::parser does (a json::value_stack fed by the parser's events) and
// finds the first key that appears twice in one object on the way: Boost.JSON keeps the last of
// two equal keys silently, and an ambiguous request must be refused rather than guessed at. One
// pass instead of a parse and then a second pass to look for duplicates, which for a batch of
// 1,000 transfers (146 KB) costs as much as the parse. The keys of each open object are kept
// in strings reused from object to object at that depth and compared in turn, which for a
// request's few keys per object costs less than a set's allocations (a batch has 7,000 keys);
// an object past k_keys_compared_in_turn keys is checked through a set as well, so that one with
// thousands of keys stays linear.
struct DocumentBuilder {
  static constexpr std::size_t max_array_size = json::array::max_size();
  static constexpr std::size_t max_object_size = json::object::max_size();
  static constexpr std::size_t max_string_size = json::string::max_size();
  static constexpr std::size_t max_key_size = json::string::max_size();
  static constexpr std::size_t k_keys_compared_in_turn = 32;

  struct OpenObject {
    std::vector<std::string> keys;  // the first `count` are this object's
    std::size_t count = 0;
    std::set<std::string, std::less<>> past_scanned;  // its keys after the first scanned ones
  };

  json::value_stack values;  // starts in the caller's buffer, as json::parse's does
  std::vector<OpenObject> open_objects;  // by depth; kept after their object ends, for reuse
  std::size_t depth = 0;                 // how many objects are open
  std::string key_parts;   // a key that comes in parts, until its last
  std::string duplicate;  // the first key found twice; the parse goes on to its end

  DocumentBuilder(unsigned char* buffer, std::size_t size) : values({}, buffer, size) {}

  using error_code = boost::system::error_code;
  using string_view = json::string_view;
  bool on_document_begin(error_code&) { return true; }
  bool on_document_end(error_code&) { return true; }
  bool on_array_begin(error_code&) { return true; }
  bool on_array_end(std::size_t size, error_code&) {
    values.push_array(size);
    return true;
  }
  bool on_object_begin(error_code&) {
    if (open_objects.size() == depth) open_objects.emplace_back();
    OpenObject& object = open_objects[depth++];
    object.count = 0;
    object.past_scanned.clear();
    return true;
  }
  bool on_object_end(std::size_t size, error_code&) {
    --depth;
    values.push_object(size);
    return true;
  }
  bool on_string_part(string_view part, std::size_t, error_code&) {
    values.push_chars(part);
    return true;
  }
  bool on_string(string_view part, std::size_t, error_code&) {
    values.push_string(part);
    return true;
  }
  bool on_key_part(string_view part, std::size_t, error_code&) {
    values.push_chars(part);
    key_parts.append(part.data(), part.size());
    return true;
  }
  bool on_key(string_view part, std::size_t, error_code&) {
    values.push_key(part);
    std::string_view whole(part.data(), part.size());  // the key, unless it came in parts
    if (!key_parts.empty()) whole = key_parts.append(part.data(), part.size());
    if (!add_key(open_objects[depth - 1], whole) && duplicate.empty()) duplicate = whole;
    key_parts.clear();
    return true;
  }
  bool on_number_part(string_view, error_code&) { return true; }
  bool on_int64(std::int64_t number, string_view, error_code&) {
    values.push_int64(number);
    return true;
  }
  bool on_uint64(std::uint64_t number, string_view, error_code&) {
    values.push_uint64(number);
    return true;
  }
  bool on_double(double number, string_view, error_code&) {
    values.push_double(number);
    return true;
  }
  bool on_bool(bool value, error_code&) {
    values.push_bool(value);
    return true;
  }
  bool on_null(error_code&) {
    values.push_null();
    return true;
  }
  bool on_comment_part(string_view, error_code&) { return true; }
  bool on_comment(string_view, error_code&) { return true; }

  // False when `key` is already a key of `object`.
  bool add_key(OpenObject& object, std::string_view key) {
    const std::size_t scanned = std::min(object.count, k_keys_compared_in_turn);
    for (std::size_t i = 0; i < scanned; ++i) {
      if (object.keys[i] == key) return false;
    }
    if (object.count < k_keys_compared_in_turn) {
      if (object.keys.size() == object.count) object.keys.emplace_back();
      object.keys[object.count].assign(key);
    } else if (!object.past_scanned.emplace(key).second) {
      return false;
    }
    ++object.count;
    return true;
  }
};

}  // namespace

Result<json::object> parse_object(std::string_view body, json::storage_ptr storage) {
  json::parse_options options;
  options.max_depth = limits::k_json_depth_max;
  unsigned char buffer[BOOST_JSON_STACK_BUFFER_SIZE];
  json::basic_parser<DocumentBuilder> parser(options, buffer, sizeof buffer);
  parser.handler().values.reset(std::move(storage));
  boost::system::error_code ec;
  const std::size_t read = parser.write_some(false, body.data(), body.size(), ec);
  if (!ec && read < body.size()) ec = json::error::extra_data;  // as json::parse
  if (ec) return errors::validation("body is not valid JSON: " + ec.message(), std::nullopt);
  json::value value = parser.handler().values.release();
  if (!value.is_object()) return errors::validation("body must be a JSON object", std::nullopt);
  const std::string& duplicate = parser.handler().duplicate;
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

std::string www_authenticate(const Challenge& challenge) {
  if (challenge.scheme == Challenge::Scheme::basic) return "Basic realm=\"tesoro\"";
  std::string header = "Bearer realm=\"tesoro\"";
  switch (challenge.token_error) {
    case Challenge::TokenError::none: break;
    case Challenge::TokenError::invalid_token: header += ", error=\"invalid_token\""; break;
    case Challenge::TokenError::insufficient_scope:
      header += ", error=\"insufficient_scope\"";
      break;
  }
  if (!challenge.scope.empty()) header += ", scope=\"" + challenge.scope + "\"";
  return header;
}

http::Response render_error(const Error& error, const ErrorScope& scope) {
  std::string log_id = ids::generate("log");
  const int status = http_status(error);
  json::object envelope;
  envelope["code"] = std::to_string(status) + " " + http::reason_phrase(status);
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
  if (error.oauth && !error.errors.empty()) {  // RFC 6749 section 5.2
    envelope["error"] = error.errors.front().error_code;
    envelope["error_description"] = error.errors.front().message;
  }

  // warn, not info: every error id must reach the log at the default and the benchmark levels.
  log::Fields fields = {
      {"log_id", log_id},
      {"request_id", std::string(scope.request_id)},
      {"method", std::string(scope.method)},
      {"path", loggable_path(scope.target)},
      {"tenant_id", std::string(scope.tenant_id)},
      {"status", status},
      {"error_codes", codes},
      {"message", error.errors.empty() ? error.message : error.errors.front().message}};
  fields.insert(fields.end(), error.log_fields.begin(), error.log_fields.end());
  log::write(status >= 500 ? log::Level::error : log::Level::warn, "request.error", fields);

  http::Response response = json_response(status, envelope);
  if (error.challenge) response.set_header("WWW-Authenticate", www_authenticate(*error.challenge));
  if (error.retry_after_seconds) {
    response.set_header("Retry-After", std::to_string(*error.retry_after_seconds));
  }
  return response;
}

}  // namespace tesoro::api
