// The console's HTTP rules: paths, the session cookie, the Origin and CSRF checks, headers.
#include "api/console.hpp"
#include "core/crypto.hpp"
#include "core/limits.hpp"

namespace tesoro::api {
namespace {

constexpr std::string_view k_console = "/console";
constexpr std::string_view k_console_api = "/console/api";

// `path` is `prefix` or lies under it.
bool under(std::string_view path, std::string_view prefix) {
  return path.starts_with(prefix) && (path.size() == prefix.size() || path[prefix.size()] == '/');
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// scheme://host[:port] of a url, in lower case.
std::string origin_of(std::string_view url) {
  std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return "";
  std::size_t host_end = url.find('/', scheme_end + 3);
  return lower(url.substr(0, host_end));
}

// 403 not_authorized naming the header at fault.
Error refused(std::string_view header, std::string message) {
  Error error = errors::of(ErrorCode::not_authorized, std::string(header), std::move(message));
  error.log_fields.emplace_back("auth_reason", "console_" + std::string(header));
  return error;
}

std::string cookie(std::string_view value, std::int64_t max_age_seconds, bool secure) {
  return std::string(k_console_cookie_name) + "=" + std::string(value) +
         "; Path=/console; HttpOnly; SameSite=Strict; Max-Age=" + std::to_string(max_age_seconds) +
         (secure ? "; Secure" : "");
}

}  // namespace

bool is_console_path(std::string_view path) { return under(path, k_console); }
bool is_console_api_path(std::string_view path) { return under(path, k_console_api); }

std::optional<std::string> console_proxied_path(std::string_view path) {
  if (!is_console_api_path(path)) return std::nullopt;
  std::string_view rest = path.substr(k_console_api.size());
  if (under(rest, "/v1") || under(rest, "/api/v1")) return std::string(rest);
  return std::nullopt;
}

std::optional<std::string> console_cookie_token(const http::Request& request) {
  // Every Cookie header (HTTP/2 proxies may split them), each `name=value; name=value`.
  for (const auto& [name, value] : request.headers) {
    if (name != "cookie") continue;
    std::string_view rest = value;
    while (!rest.empty()) {
      std::size_t end = rest.find(';');
      std::string_view pair = rest.substr(0, end);
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
      while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
      std::size_t equals = pair.find('=');
      if (equals != std::string_view::npos && pair.substr(0, equals) == k_console_cookie_name) {
        return std::string(pair.substr(equals + 1));
      }
    }
  }
  return std::nullopt;
}

std::string console_session_cookie(std::string_view token, bool secure) {
  return cookie(token, limits::k_console_session_ttl_seconds, secure);
}

std::string console_cleared_cookie(bool secure) { return cookie("", 0, secure); }

std::optional<Error> console_origin_refusal(const http::Request& request,
                                            std::string_view public_url) {
  const std::string* origin = request.header("origin");
  if (!origin) return std::nullopt;
  std::string given = lower(*origin);
  if (given == origin_of(public_url)) return std::nullopt;
  if (const std::string* host = request.header("host")) {
    std::string by_host = lower(*host);
    if (given == "http://" + by_host || given == "https://" + by_host) return std::nullopt;
  }
  return refused("origin",
                 "the request's Origin is not this server's: state changes are refused from "
                 "other sites");
}

std::optional<Error> console_csrf_refusal(const http::Request& request,
                                          std::string_view csrf_token) {
  const std::string* given = request.header(k_console_csrf_header);
  if (!given) {
    return refused(k_console_csrf_header,
                   "missing X-CSRF-Token: send the session's csrf_token with every state change");
  }
  if (!crypto::constant_time_equal(*given, csrf_token)) {
    return refused(k_console_csrf_header, "X-CSRF-Token is not this session's csrf_token");
  }
  return std::nullopt;
}

void add_console_headers(http::Response& response, bool api) {
  response.set_header("Content-Security-Policy",
                      "default-src 'none'; script-src 'self'; style-src 'self'; "
                      "img-src 'self' data: blob:; connect-src 'self'; form-action 'self'; "
                      "frame-ancestors 'none'; base-uri 'none'");
  response.set_header("X-Content-Type-Options", "nosniff");
  response.set_header("Referrer-Policy", "no-referrer");
  response.set_header("X-Frame-Options", "DENY");
  if (api) response.set_header("Cache-Control", "no-store");
}

}  // namespace tesoro::api
