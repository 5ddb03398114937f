#pragma once
// The console's HTTP rules (docs/console.md), shared by the app's request pipeline and the
// console's handlers (console_pages.cpp, console_session.cpp, console_credentials.cpp):
// which paths are the console's, the session cookie, the Origin and CSRF checks, and the
// headers every console answer carries.
#include <optional>
#include <string>
#include <string_view>

#include "api/context.hpp"

namespace tesoro::api {

inline constexpr std::string_view k_console_cookie_name = "tesoro_console";
inline constexpr std::string_view k_console_csrf_header = "x-csrf-token";

// /console and everything under it (pages, assets and the console API).
bool is_console_path(std::string_view path);
// /console/api and everything under it: JSON answers, never a page.
bool is_console_api_path(std::string_view path);
// The public API's path that a console API path stands for: /console/api/v1/... is /v1/...,
// /console/api/api/v1/... is /api/v1/...; nullopt for any other path.
std::optional<std::string> console_proxied_path(std::string_view path);

// The session token of the request's cookie, or nullopt.
std::optional<std::string> console_cookie_token(const http::Request& request);
// Set-Cookie values: the session's (Max-Age of the session's lifetime), and the one that
// clears it. `secure` adds Secure (the server's public url is https).
std::string console_session_cookie(std::string_view token, bool secure);
std::string console_cleared_cookie(bool secure);

// 403 not_authorized when the request's Origin header names another origin than the server's:
// its public url's, or the one its own Host header names. No Origin header: nothing to check
// (not a browser's cross-site request; the CSRF token still is).
std::optional<Error> console_origin_refusal(const http::Request& request,
                                            std::string_view public_url);
// 403 not_authorized unless the request's X-CSRF-Token header is `csrf_token`.
std::optional<Error> console_csrf_refusal(const http::Request& request,
                                          std::string_view csrf_token);

// The headers of every answer under /console (Content-Security-Policy and the like), and
// Cache-Control: no-store on the console API's.
void add_console_headers(http::Response& response, bool api);

// GET /console, /console/ (index.html) and /console/<file>: the embedded files, or 404
// route_not_found in the envelope.
http::Response console_page(Context& context);

}  // namespace tesoro::api
