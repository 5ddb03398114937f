#pragma once
// The one error value of Tesoro. Every failure the API can report is an Error; the HTTP layer
// renders it into the contract's envelope (code, message, id, errors[]).
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tesoro {

struct ErrorItem {
  std::string error_code;
  std::string message;
  std::optional<std::string> path;
  std::optional<std::string> url;
};

struct Error {
  int status = 500;
  std::string message;  // the envelope's summary
  std::vector<ErrorItem> errors;
  // Extra top-level string fields, e.g. RFC 6749 `error` and `error_description`.
  std::vector<std::pair<std::string, std::string>> extra_fields;
  // Extra response headers, e.g. Retry-After.
  std::vector<std::pair<std::string, std::string>> headers;

  const std::string& first_code() const;
};

// Named constructors for every error the server produces, so codes and statuses live in one place.
namespace errors {
Error make(int status, std::string code, std::string message,
           std::optional<std::string> path = std::nullopt);
Error validation(std::string message, std::optional<std::string> path);
Error missing_field(std::string path);
Error route_not_found();
Error method_not_allowed();
Error payload_too_large();
Error headers_too_large();
Error expired_token();
Error missing_authorization_header();
Error not_authorized();
Error item_not_found(std::string what = "item");
Error rate_limited(long retry_after_seconds);
Error internal();
Error unavailable();
Error idempotency_key_reused();
Error idempotency_key_in_use();
}  // namespace errors

// Summary message and reason phrase for a status, as the envelope's `code` wants it.
const char* reason_phrase(int status);

}  // namespace tesoro
