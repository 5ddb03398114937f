// The console's session (docs/console.md): POST /console/api/session signs in with email and
// password (201, the session body and its cookie), GET shows it, DELETE signs out (204, the
// session revoked in the database and the cookie cleared). The app's pipeline checks the
// cookie, the Origin and the CSRF token before these run (app/app.cpp).
#include "api/console.hpp"
#include "api/credential_json.hpp"
#include "api/validation/readers.hpp"
#include "core/limits.hpp"

namespace tesoro::api {
namespace {

bool secure_cookies(const Context& context) {
  return context.services.settings.public_url.starts_with("https://");
}

http::Response session_body(int status, const console::Session& session,
                            const std::string& csrf_token) {
  return json_response(
      status,
      json::object{
          {"user", json::object{{"id", session.user_id}, {"email", session.user_email}}},
          {"tenant", json::object{{"id", session.tenant_id},
                                  {"name", session.tenant_name},
                                  {"environment", session.environment}}},
          {"csrf_token", csrf_token},
          {"expires_at", time::iso(session.expires_at)},
          {"scopes", json::object{{"core", string_array(auth::all_core_admin_scopes())},
                                  {"participant", string_array(auth::participant_scopes())}}}});
}

http::Response sign_in(Context& context) {
  auto parsed = parse_object(context.request.body);
  if (!parsed) return context.error(parsed.error());
  Problems problems;
  ObjectReader reader(parsed.value(), "", problems);
  auto email = reader.string("email", Need::required, limits::k_email_max_chars);
  auto password = reader.string("password", Need::required, limits::k_console_password_max_chars);
  reader.reject_unknown();
  if (!problems.empty()) return context.error(problems.to_error());
  auto signed_in =
      console::sign_in(context.services.store, {*email, *password, context.request.remote_address},
                       context.services.settings.environment, context.services.clock.now());
  if (!signed_in) return context.error(signed_in.error());
  const console::Session& session = signed_in->session;
  context.principal = console::principal(session, auth::Surface::core);  // the log's tenant
  http::Response response = session_body(201, session, console::csrf_token(signed_in->token));
  response.set_header("Set-Cookie",
                      console_session_cookie(signed_in->token, secure_cookies(context)));
  return response;
}

http::Response show(Context& context) {
  return session_body(200, *context.console_session, context.console_csrf_token);
}

http::Response sign_out(Context& context) {
  http::Response response = context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto ended = console::sign_out(tx, *context.console_session, context.services.clock.now());
    if (!ended) return std::move(ended).error();
    return no_content();
  });
  if (response.status == 204) {
    response.set_header("Set-Cookie", console_cleared_cookie(secure_cookies(context)));
  }
  return response;
}

}  // namespace

void add_console_session_routes(Routes& routes) {
  // Sign-in takes no credential (its failures are counted in the database, and it is rate
  // limited by address like every route without one); the others take the session's cookie.
  const std::string path = "/console/api/session";
  routes.push_back({"POST", path, AuthKind::none, "", sign_in});
  routes.push_back({"GET", path, AuthKind::console, "", show});
  routes.push_back({"DELETE", path, AuthKind::console, "", sign_out});
}

}  // namespace tesoro::api
