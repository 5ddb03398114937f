#include "core/error.hpp"

namespace tesoro {

const std::string& Error::first_code() const {
  static const std::string empty;
  return errors.empty() ? empty : errors.front().error_code;
}

const char* reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

namespace errors {

Error make(int status, std::string code, std::string message, std::optional<std::string> path) {
  Error error;
  error.status = status;
  error.message = message;
  error.errors.push_back(ErrorItem{std::move(code), std::move(message), std::move(path), {}});
  return error;
}

Error validation(std::string message, std::optional<std::string> path) {
  Error error = make(400, "validation_error", std::move(message), std::move(path));
  error.message = "malformed request";
  return error;
}

Error missing_field(std::string path) {
  Error error = make(422, "missing_field", "field is required", std::move(path));
  error.message = "missing field";
  return error;
}

Error route_not_found() { return make(404, "route_not_found", "no route matches this path"); }
Error method_not_allowed() {
  return make(405, "method_not_allowed", "this path does not accept this method");
}
Error payload_too_large() {
  return make(413, "payload_too_large", "request body is larger than 1 MiB");
}
Error headers_too_large() {
  return make(431, "headers_too_large", "request headers are larger than allowed");
}
// RFC 6750: a 401 for a bearer-protected resource names the scheme (and, when a token was
// presented, that it is invalid).
Error expired_token() {
  Error error = make(401, "expired_token", "token expired, inactive or nonexistent");
  error.message = "authorization header missing or invalid";
  error.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"tesoro\", error=\"invalid_token\"");
  return error;
}
Error missing_authorization_header() {
  Error error = make(401, "missing_authorization_header", "the Authorization header is missing");
  error.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"tesoro\"");
  return error;
}
Error not_authorized() {
  return make(403, "not_authorized", "the credential has no access to this resource");
}
Error item_not_found(std::string what) {
  return make(404, "item_not_found", what + " not found");
}
Error rate_limited(long retry_after_seconds) {
  Error error = make(429, "rate_limit_exceeded", "too many requests; retry after the indicated time");
  error.headers.emplace_back("Retry-After", std::to_string(retry_after_seconds));
  return error;
}
Error internal() { return make(500, "internal_error", "unexpected error"); }
Error unavailable() {
  return make(503, "service_is_unavailable", "service unavailable; try again later");
}
Error idempotency_key_reused() {
  return make(409, "idempotency_key_reused",
              "this idempotency key was used with a different request", "x-idempotency-key");
}
Error idempotency_key_in_use() {
  return make(409, "idempotency_key_in_use",
              "a request with this idempotency key is still running", "x-idempotency-key");
}

}  // namespace errors
}  // namespace tesoro
