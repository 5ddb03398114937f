#pragma once
// JSON in and out of handlers (Boost.JSON), and the error envelope.
#include <boost/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/json_writer.hpp"
#include "core/result.hpp"
#include "http/message.hpp"

namespace tesoro::api {

namespace json = boost::json;

// Parses a request body that must be one JSON object. Depth, UTF-8 and syntax are checked;
// failures are 400 validation_error with path null. The document's values are allocated from
// `storage` (by default the heap); a caller that reads the document and lets it go, as a
// batch's decoding does, may hand it a json::monotonic_resource that outlives the document.
Result<json::object> parse_object(std::string_view body, json::storage_ptr storage = {});

http::Response json_response(int status, const json::value& value);
// 204 No Content: the answer of a DELETE.
http::Response no_content();
// A body already written as JSON text (json_text::Writer), for the hot paths.
http::Response json_text_response(int status, std::string body);
// The text, or null: every optional field of a record is present in its JSON.
json::value optional_json(const std::optional<std::string>& text);
// The same two for records written as text (json_text::Writer): {"amount":..,"currency":..},
// and the text or null.
void money_text(json_text::Writer& out, std::int64_t amount_minor, const std::string& currency);
void optional_text(json_text::Writer& out, const std::optional<std::string>& text);

struct ErrorScope {
  std::string_view request_id;
  std::string_view method;
  std::string_view target;
  std::string_view tenant_id;
};

// The path of a request target as logs may show it: without the query, and with the secret
// segment of a path that carries one replaced (/activate/{token} -> /activate/[redacted]).
std::string loggable_path(std::string_view target);

// The WWW-Authenticate header of a refused credential: Bearer realm="tesoro" with RFC 6750's
// error (and scope), or Basic realm="tesoro" for the token endpoint's client credentials.
std::string www_authenticate(const Challenge& challenge);

// Renders the contract's envelope (with RFC 6749's fields for the token endpoint's errors),
// assigns the log_ id and writes the error log line; the error's challenge and retry delay
// become the WWW-Authenticate and Retry-After headers.
http::Response render_error(const Error& error, const ErrorScope& scope);

}  // namespace tesoro::api
