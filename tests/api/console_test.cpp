// The console's server side (docs/console.md): sign-in with its rate limit, the session cookie,
// sign-out and expiry, CSRF and Origin checks, the keys and clients endpoints, the proxy to the
// public API with tenant isolation, the embedded pages with their headers, and no secret of the
// console stored or logged.
#include <gtest/gtest.h>
#include <openssl/sha.h>

#include <ctime>
#include <fstream>
#include <sstream>

#include "harness.hpp"

using harness::Reply;
using harness::Server;
namespace json = boost::json;

namespace {

const char* const k_csp =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

std::string sha256_hex(const std::string& text) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  std::string out;
  static const char* k_hex = "0123456789abcdef";
  for (unsigned char c : digest) {
    out += k_hex[c >> 4];
    out += k_hex[c & 15];
  }
  return out;
}

std::string owner_email(const json::object& made) { return harness::text(made, "owner_email"); }
std::string owner_password(const json::object& made) {
  return harness::text(made, "owner_password");
}

std::string sign_in_body(const std::string& email, const std::string& password) {
  return json::serialize(json::object{{"email", email}, {"password", password}});
}

Reply sign_in(const Server& server, const std::string& email, const std::string& password,
              const std::vector<std::string>& headers = {}) {
  return server.post("/console/api/session", sign_in_body(email, password), headers);
}

// A signed-in browser: its cookie and CSRF token, as headers.
struct Browser {
  std::string token;
  std::string cookie;  // "Cookie: tesoro_console=..."
  std::string csrf;    // "X-CSRF-Token: ..."
  json::object session;
};

// The token of a Set-Cookie value.
std::string cookie_token(const std::string& set_cookie) {
  std::string prefix = "tesoro_console=";
  EXPECT_EQ(set_cookie.rfind(prefix, 0), 0u) << set_cookie;
  return set_cookie.substr(prefix.size(), set_cookie.find(';') - prefix.size());
}

Browser signed_in(const Server& server, const json::object& made) {
  Reply reply = sign_in(server, owner_email(made), owner_password(made));
  EXPECT_EQ(reply.status, 201) << reply.body;
  Browser browser;
  browser.token = cookie_token(reply.header("set-cookie"));
  browser.cookie = "Cookie: tesoro_console=" + browser.token;
  browser.session = reply.json().as_object();
  browser.csrf = "X-CSRF-Token: " + harness::text(browser.session, "csrf_token");
  return browser;
}

Browser owner(const Server& server) { return signed_in(server, server.credentials()); }

// A request of the browser: its cookie, and its CSRF token on state changes unless told not.
Reply as(const Server& server, const Browser& browser, const std::string& method,
         const std::string& path, const std::string& body = "",
         std::vector<std::string> headers = {}, bool with_csrf = true) {
  headers.push_back(browser.cookie);
  if (with_csrf && method != "GET") headers.push_back(browser.csrf);
  return server.send({method, path, body, headers});
}

// Another tenant made by `tenant create`, with its owner.
json::object other_tenant(const Server& server, std::vector<std::string> more = {}) {
  std::vector<std::string> args = {"tenant", "create", "--name", "other", "--json"};
  args.insert(args.end(), more.begin(), more.end());
  int code = 0;
  std::string out = server.command(args, &code);
  EXPECT_EQ(code, 0) << server.commands_log();
  return json::parse(out).as_object();
}

void expect_envelope(const Reply& reply, long status, const std::string& code,
                     const std::string& path = "") {
  EXPECT_EQ(reply.status, status) << reply.body;
  EXPECT_EQ(reply.error_code(), code) << reply.body;
  if (!path.empty()) {
    EXPECT_EQ(reply.error_path(), path) << reply.body;
  }
}

std::int64_t holders_total(const Server& server) {
  return server.get("/v1/ledger/account_holders", {server.bearer_core()})
      .json()
      .at("pagination")
      .at("total_items")
      .as_int64();
}

// Seconds since the epoch of an ISO timestamp (UTC).
std::int64_t epoch_seconds(const json::value& iso) {
  std::string text(iso.as_string());
  std::tm parts{};
  EXPECT_NE(strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &parts), nullptr) << text;
  return static_cast<std::int64_t>(timegm(&parts));
}

std::string source_file(const std::string& relative) {
  std::ifstream file(std::string(TESORO_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::stringstream out;
  out << file.rdbuf();
  return out.str();
}

}  // namespace

TEST(ConsoleSession, SignInSetsTheCookieAndAnswersTheSession) {
  Server& server = Server::shared();
  const json::object& made = server.credentials();
  // The email in another case is the same user.
  std::string upper = owner_email(made);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  Reply reply = sign_in(server, upper, owner_password(made));
  ASSERT_EQ(reply.status, 201) << reply.body;
  std::string set_cookie = reply.header("set-cookie");
  std::string token = cookie_token(set_cookie);
  EXPECT_TRUE(token.starts_with("cst_")) << set_cookie;
  EXPECT_EQ(set_cookie, "tesoro_console=" + token +
                            "; Path=/console; HttpOnly; SameSite=Strict; Max-Age=43200");
  EXPECT_EQ(reply.header("cache-control"), "no-store");
  json::object session = reply.json().as_object();
  EXPECT_EQ(session.at("user").at("email"), json::value(owner_email(made)));
  EXPECT_TRUE(session.at("user").at("id").as_string().starts_with("cusr_"));
  EXPECT_EQ(session.at("tenant").at("id"), made.at("tenant_id"));
  EXPECT_EQ(session.at("tenant").at("name"), "sandbox");
  EXPECT_EQ(session.at("tenant").at("environment"), "sandbox");
  std::string csrf = harness::text(session, "csrf_token");
  EXPECT_GE(csrf.size(), 32u);
  EXPECT_EQ(csrf.find(token.substr(4)), std::string::npos);
  EXPECT_TRUE(session.at("expires_at").as_string().ends_with("Z"));
  const json::array& core = session.at("scopes").at("core").as_array();
  const json::array& participant = session.at("scopes").at("participant").as_array();
  EXPECT_NE(std::find(core.begin(), core.end(), json::value("ledger:admin")), core.end());
  EXPECT_NE(std::find(participant.begin(), participant.end(), json::value("collections")),
            participant.end());

  Reply shown = server.get("/console/api/session", {"Cookie: tesoro_console=" + token});
  ASSERT_EQ(shown.status, 200) << shown.body;
  EXPECT_EQ(shown.json(), json::value(session)) << "the same session body, csrf_token included";
  EXPECT_EQ(shown.header("cache-control"), "no-store");
  // Other cookies alongside are fine.
  EXPECT_EQ(
      server.get("/console/api/session", {"Cookie: a=b; tesoro_console=" + token + "; c=d"}).status,
      200);
}

TEST(ConsoleSession, WrongPasswordOrUnknownEmailIsOne401AndBadBodiesAreRefused) {
  Server& server = Server::shared();
  Reply wrong = sign_in(server, owner_email(server.credentials()), "not-the-password");
  Reply unknown = sign_in(server, "nobody-" + harness::new_uuid() + "@example.com", "x");
  for (const Reply& reply : {wrong, unknown}) {
    expect_envelope(reply, 401, "invalid_credentials");
    EXPECT_EQ(reply.json().at("errors").at(0).at("message"), "wrong email or password");
    EXPECT_EQ(reply.header("set-cookie"), "");
  }
  expect_envelope(server.post("/console/api/session", R"({"email":"a@b.co"})"), 422,
                  "missing_field", "password");
  expect_envelope(server.post("/console/api/session", R"({"email":"a@b.co","password":1})"), 400,
                  "validation_error", "password");
  expect_envelope(server.post("/console/api/session", R"({"email":"a@b.co","password":"x","y":1})"),
                  400, "validation_error", "y");
  expect_envelope(server.post("/console/api/session", "not json"), 400, "validation_error");
  // No cookie, or one of no session: 401 on the session and on every console API path.
  for (const std::string& cookie : {std::string(), std::string("Cookie: tesoro_console=cst_x"),
                                    "Cookie: tesoro_console=cst_" + std::string(43, 'A')}) {
    std::vector<std::string> headers;
    if (!cookie.empty()) headers.push_back(cookie);
    for (const char* path :
         {"/console/api/session", "/console/api/keys", "/console/api/clients",
          "/console/api/v1/ledger/account_holders", "/console/api/api/v1/tenant/accounts"}) {
      expect_envelope(server.get(path, headers), 401, "expired_token");
    }
  }
}

TEST(ConsoleSession, FailedSignInsFromAnAddressWaitLongerEachTime) {
  Server server;  // its own database
  const json::object& made = server.credentials();
  for (int i = 0; i < 5; ++i) {
    expect_envelope(sign_in(server, owner_email(made), "guess-" + std::to_string(i)), 401,
                    "invalid_credentials");
  }
  // The failures are moved back instead of waiting: the sixth failure (1 s after the fifth is
  // allowed) is counted, then the next attempt waits 2 s, the right password too, and is not
  // counted.
  const std::string back = "UPDATE console_sign_in_failures SET failed_at_micros = "
                           "failed_at_micros - ";
  server.sql(back + "1000000");
  expect_envelope(sign_in(server, owner_email(made), "guess-5"), 401, "invalid_credentials");
  Reply refused = sign_in(server, owner_email(made), owner_password(made));
  expect_envelope(refused, 429, "rate_limit_exceeded");
  long retry_after = std::stol(refused.header("retry-after"));
  EXPECT_GE(retry_after, 1);
  EXPECT_LE(retry_after, 2);
  EXPECT_EQ(refused.header("set-cookie"), "");
  // A second node counts the same failures (they are in the database).
  int other_node = server.start_extra_node();
  expect_envelope(server.send_to(other_node, {"POST",
                                              "/console/api/session",
                                              sign_in_body(owner_email(made), owner_password(made)),
                                              {}}),
                  429, "rate_limit_exceeded");
  // Once the wait has passed, the owner signs in.
  server.sql(back + "2000000");
  EXPECT_EQ(sign_in(server, owner_email(made), owner_password(made)).status, 201);
}

TEST(ConsoleSession, SignOutRevokesTheSessionOnEveryNode) {
  Server server;
  int other_node = server.start_extra_node();
  Browser browser = owner(server);
  Browser second = owner(server);
  // Without the CSRF token, sign-out is refused and the session lives on.
  expect_envelope(as(server, browser, "DELETE", "/console/api/session", "", {}, false), 403,
                  "not_authorized", "x-csrf-token");
  EXPECT_EQ(as(server, browser, "GET", "/console/api/session").status, 200);
  Reply out = as(server, browser, "DELETE", "/console/api/session");
  EXPECT_EQ(out.status, 204) << out.body;
  EXPECT_EQ(out.header("set-cookie"),
            "tesoro_console=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0");
  expect_envelope(as(server, browser, "GET", "/console/api/session"), 401, "expired_token");
  expect_envelope(
      server.send_to(other_node,
                     {"GET", "/console/api/v1/ledger/account_holders", "", {browser.cookie}}),
      401, "expired_token");
  expect_envelope(as(server, browser, "POST", "/console/api/keys",
                     R"({"environment":"sandbox","scopes":["ledger:read"]})"),
                  401, "expired_token");
  // Another session of the same user is not affected.
  EXPECT_EQ(as(server, second, "GET", "/console/api/session").status, 200);
}

TEST(ConsoleSession, AnExpiredSessionIsRefused) {
  Server server;
  Browser browser = owner(server);
  Browser other = owner(server);
  EXPECT_EQ(as(server, browser, "GET", "/console/api/keys").status, 200);
  // Its twelve hours are over (its end moved back instead of waiting).
  server.sql("UPDATE console_sessions SET expires_at_micros = expires_at_micros - " +
             std::to_string(12LL * 3600 * 1000000) + " WHERE token_hash = '" +
             sha256_hex(browser.token) + "'");
  for (const char* path :
       {"/console/api/session", "/console/api/keys", "/console/api/v1/ledger/account_holders"}) {
    expect_envelope(as(server, browser, "GET", path), 401, "expired_token");
  }
  EXPECT_EQ(as(server, other, "GET", "/console/api/session").status, 200);
}

TEST(ConsoleCsrf, StateChangesNeedTheTokenAndTheServersOriginAndChangeNothingWithout) {
  Server& server = Server::shared();
  Browser browser = owner(server);
  const std::string key_body = R"({"environment":"sandbox","scopes":["ledger:read"]})";
  std::size_t keys_before =
      as(server, browser, "GET", "/console/api/keys").json().at("data").as_array().size();
  std::int64_t holders_before = holders_total(server);
  const std::string holder = harness::account_holder_body("csrf-" + harness::new_uuid());
  const std::string holders = "/console/api/v1/ledger/account_holders";
  // Without the token, with another, with another session's.
  Browser second = owner(server);
  for (const std::vector<std::string>& csrf :
       {std::vector<std::string>{}, std::vector<std::string>{"X-CSRF-Token: forged"},
        std::vector<std::string>{second.csrf}}) {
    Reply key = as(server, browser, "POST", "/console/api/keys", key_body, csrf, false);
    expect_envelope(key, 403, "not_authorized", "x-csrf-token");
    expect_envelope(as(server, browser, "POST", holders, holder, csrf, false), 403,
                    "not_authorized", "x-csrf-token");
    expect_envelope(as(server, browser, "DELETE",
                       "/console/api/keys/" + harness::text(server.credentials(), "api_key_id"), "",
                       csrf, false),
                    403, "not_authorized", "x-csrf-token");
  }
  // The right token from another site's page.
  for (const char* origin :
       {"Origin: https://evil.example", "Origin: null", "Origin: http://127.0.0.1:1"}) {
    expect_envelope(as(server, browser, "POST", "/console/api/keys", key_body, {origin}), 403,
                    "not_authorized", "origin");
    expect_envelope(as(server, browser, "POST", holders, holder, {origin}), 403, "not_authorized",
                    "origin");
    expect_envelope(sign_in(server, owner_email(server.credentials()),
                            owner_password(server.credentials()), {origin}),
                    403, "not_authorized", "origin");
  }
  // Nothing changed: no key, no account holder, the init key still works.
  EXPECT_EQ(as(server, browser, "GET", "/console/api/keys").json().at("data").as_array().size(),
            keys_before);
  EXPECT_EQ(holders_total(server), holders_before);
  // The server's own origin with the token: done.
  std::string own_origin = "Origin: " + server.base_url();
  EXPECT_EQ(as(server, browser, "POST", "/console/api/keys", key_body, {own_origin}).status, 201);
  EXPECT_EQ(as(server, browser, "POST", holders, holder, {own_origin}).status, 201);
  EXPECT_EQ(holders_total(server), holders_before + 1);
  // GET needs no token.
  EXPECT_EQ(as(server, browser, "GET", holders).status, 200);
}

TEST(ConsoleKeys, AKeyCreatedInTheConsoleWorksIsListedByPrefixAndRevokedInTheConsole) {
  Server& server = Server::shared();
  Browser browser = owner(server);
  Reply created = as(server, browser, "POST", "/console/api/keys",
                     R"({"environment":"sandbox","scopes":["ledger:write","cards:read"]})");
  ASSERT_EQ(created.status, 201) << created.body;
  json::object key = created.json().as_object();
  std::string secret = harness::text(key, "api_key");
  std::string id = harness::text(key, "id");
  std::string prefix = harness::text(key, "key_prefix");
  EXPECT_TRUE(secret.starts_with("sk_sandbox_"));
  EXPECT_TRUE(secret.starts_with(prefix));
  EXPECT_LT(prefix.size(), secret.size());
  EXPECT_EQ(key.at("scopes"), json::array({"ledger:write", "cards:read"}));
  EXPECT_EQ(key.at("environment"), "sandbox");
  std::string bearer = "Authorization: Bearer " + secret;
  Reply holder =
      server.post("/v1/ledger/account_holders",
                  harness::account_holder_body("console-key-" + harness::new_uuid()), {bearer});
  EXPECT_EQ(holder.status, 201) << holder.body;

  Reply listed = as(server, browser, "GET", "/console/api/keys");
  ASSERT_EQ(listed.status, 200);
  EXPECT_EQ(listed.body.find(secret), std::string::npos) << "never the secret in a list";
  EXPECT_EQ(listed.body.find(secret.substr(prefix.size())), std::string::npos);
  bool found = false;
  const json::value listed_json = listed.json();
  for (const json::value& item : listed_json.at("data").as_array()) {
    if (item.at("id") != json::value(id)) continue;
    found = true;
    EXPECT_EQ(item.at("key_prefix"), json::value(prefix));
    EXPECT_EQ(item.at("scopes"), json::array({"ledger:write", "cards:read"}));
    EXPECT_TRUE(item.at("revoked_at").is_null());
    EXPECT_FALSE(item.as_object().contains("api_key"));
  }
  EXPECT_TRUE(found) << listed.body;

  Reply revoked = as(server, browser, "DELETE", "/console/api/keys/" + id);
  ASSERT_EQ(revoked.status, 200) << revoked.body;
  EXPECT_EQ(revoked.json().at("id"), json::value(id));
  EXPECT_TRUE(revoked.json().at("revoked_at").is_string());
  EXPECT_EQ(revoked.body.find(secret), std::string::npos);
  expect_envelope(server.get("/v1/ledger/account_holders", {bearer}), 401, "expired_token");
  // Revoking again keeps the first revoked_at.
  EXPECT_EQ(as(server, browser, "DELETE", "/console/api/keys/" + id).json().at("revoked_at"),
            revoked.json().at("revoked_at"));
}

TEST(ConsoleKeys, BadRequestsAreRefusedWithTheirPath) {
  Server& server = Server::shared();
  Browser browser = owner(server);
  auto create = [&](const std::string& body) {
    return as(server, browser, "POST", "/console/api/keys", body);
  };
  expect_envelope(create(R"({"environment":"production","scopes":["ledger:read"]})"), 400,
                  "validation_error", "environment");
  expect_envelope(create(R"({"environment":"moon","scopes":["ledger:read"]})"), 400,
                  "validation_error", "environment");
  expect_envelope(create(R"({"environment":"sandbox","scopes":["ledger:read","bank:read"]})"), 400,
                  "validation_error", "scopes.1");
  expect_envelope(create(R"({"environment":"sandbox","scopes":["collections"]})"), 400,
                  "validation_error", "scopes.0");
  expect_envelope(create(R"({"environment":"sandbox","scopes":[]})"), 400, "validation_error",
                  "scopes");
  expect_envelope(create(R"({"environment":"sandbox"})"), 422, "missing_field", "scopes");
  expect_envelope(create(R"({"environment":"sandbox","scopes":["ledger:read"],"x":1})"), 400,
                  "validation_error", "x");
  expect_envelope(as(server, browser, "DELETE", "/console/api/keys/nope"), 400, "validation_error",
                  "id");
  expect_envelope(as(server, browser, "DELETE", "/console/api/keys/key_AAAAAAAAAAAAAAAAAAAAAA"),
                  404, "item_not_found");
  expect_envelope(
      as(server, browser, "POST", "/console/api/clients", R"({"scopes":["ledger:read"]})"), 400,
      "validation_error", "scopes.0");
  expect_envelope(as(server, browser, "DELETE", "/console/api/clients/key_AAAAAAAAAAAAAAAAAAAAAA"),
                  400, "validation_error", "client_id");
  expect_envelope(as(server, browser, "PATCH", "/console/api/keys"), 405, "method_not_allowed");
  expect_envelope(as(server, browser, "GET", "/console/api/nothing"), 404, "route_not_found");
}

TEST(ConsoleClients, AClientCreatedInTheConsoleGetsATokenUntilRevoked) {
  Server& server = Server::shared();
  Browser browser = owner(server);
  Reply created = as(server, browser, "POST", "/console/api/clients",
                     R"({"scopes":["tenant_accounts:readonly","collections"]})");
  ASSERT_EQ(created.status, 201) << created.body;
  std::string client_id = harness::text(created.json(), "client_id");
  std::string secret = harness::text(created.json(), "client_secret");
  EXPECT_TRUE(client_id.starts_with("cli_"));
  EXPECT_TRUE(secret.starts_with("cs_"));
  EXPECT_EQ(created.json().at("scopes"), json::array({"tenant_accounts:readonly", "collections"}));
  auto token_request = [&] {
    return server.post("/api/v1/oauth/token",
                       json::serialize(json::object{{"grant_type", "client_credentials"},
                                                    {"client_id", client_id},
                                                    {"client_secret", secret}}));
  };
  Reply token = token_request();
  ASSERT_EQ(token.status, 200) << token.body;
  std::string bearer = "Authorization: Bearer " + harness::text(token.json(), "access_token");
  EXPECT_EQ(server.get("/api/v1/tenant/accounts", {bearer}).status, 200);

  Reply listed = as(server, browser, "GET", "/console/api/clients");
  ASSERT_EQ(listed.status, 200);
  EXPECT_EQ(listed.body.find(secret), std::string::npos);
  bool found = false;
  const json::value listed_json = listed.json();
  for (const json::value& item : listed_json.at("data").as_array()) {
    if (item.at("client_id") == json::value(client_id)) {
      found = true;
      EXPECT_TRUE(item.at("revoked_at").is_null());
      EXPECT_FALSE(item.as_object().contains("client_secret"));
    }
  }
  EXPECT_TRUE(found);
  Reply revoked = as(server, browser, "DELETE", "/console/api/clients/" + client_id);
  ASSERT_EQ(revoked.status, 200) << revoked.body;
  EXPECT_TRUE(revoked.json().at("revoked_at").is_string());
  EXPECT_EQ(server.get("/api/v1/tenant/accounts", {bearer}).status, 401);
  EXPECT_EQ(token_request().status, 401);
}

TEST(ConsoleIsolation, AnotherTenantsSessionSeesAndChangesNothingOfTheFirst) {
  Server& server = Server::shared();
  const json::object& first = server.credentials();
  json::object second = other_tenant(server);
  Browser mine = owner(server);
  Browser theirs = signed_in(server, second);
  EXPECT_EQ(theirs.session.at("tenant").at("id"), second.at("tenant_id"));

  Reply holder = as(server, mine, "POST", "/console/api/v1/ledger/account_holders",
                    harness::account_holder_body("iso-" + harness::new_uuid()));
  ASSERT_EQ(holder.status, 201) << holder.body;
  std::string holder_id = harness::text(holder.json(), "id");
  // Direct ids of the first tenant: 404 as if unknown, on both surfaces.
  expect_envelope(as(server, theirs, "GET", "/console/api/v1/ledger/account_holders/" + holder_id),
                  404, "item_not_found");
  expect_envelope(
      as(server, theirs, "GET", "/console/api/v1/accounts/" + harness::text(first, "account_id")),
      404, "item_not_found");
  EXPECT_EQ(
      as(server, mine, "GET", "/console/api/v1/accounts/" + harness::text(first, "account_id"))
          .status,
      200);
  Reply their_accounts = as(server, theirs, "GET", "/console/api/api/v1/tenant/accounts");
  ASSERT_EQ(their_accounts.status, 200) << their_accounts.body;
  std::string first_tenant_account(first.at("tenant_account_ids").at(0).as_string());
  EXPECT_EQ(their_accounts.body.find(first_tenant_account), std::string::npos);
  EXPECT_NE(as(server, mine, "GET", "/console/api/api/v1/tenant/accounts")
                .body.find(first_tenant_account),
            std::string::npos);
  expect_envelope(
      as(server, theirs, "POST",
         "/console/api/api/v1/sandbox/tenant/accounts/" + first_tenant_account + "/fund",
         R"({"amount":{"amount":100,"currency":"COP"}})"),
      404, "tenant_account_not_found");
  // Lists: none of the first tenant's objects.
  Reply their_holders = as(server, theirs, "GET", "/console/api/v1/ledger/account_holders");
  EXPECT_EQ(their_holders.body.find(holder_id), std::string::npos);
  // The first tenant's key and client: not listed, not revocable (404), still working.
  std::string key_id = harness::text(first, "api_key_id");
  std::string client_id = harness::text(first, "client_id");
  EXPECT_EQ(as(server, theirs, "GET", "/console/api/keys").body.find(key_id), std::string::npos);
  EXPECT_EQ(as(server, theirs, "GET", "/console/api/clients").body.find(client_id),
            std::string::npos);
  expect_envelope(as(server, theirs, "DELETE", "/console/api/keys/" + key_id), 404,
                  "item_not_found");
  expect_envelope(as(server, theirs, "DELETE", "/console/api/clients/" + client_id), 404,
                  "item_not_found");
  EXPECT_EQ(server.get("/v1/ledger/account_holders", {server.bearer_core()}).status, 200);
  EXPECT_NO_THROW(server.access_token());
}

TEST(ConsoleProxy, PublicRoutesAnswerAsTheyDoWithAnIdempotencyKeyHonoured) {
  Server& server = Server::shared();
  Browser browser = owner(server);
  // The same route and answer as with an API key.
  Reply direct = server.get("/v1/sandbox/clock", {server.bearer_core()});
  Reply proxied = as(server, browser, "GET", "/console/api/v1/sandbox/clock");
  ASSERT_EQ(proxied.status, 200) << proxied.body;
  EXPECT_EQ(proxied.json().as_object().size(), direct.json().as_object().size());
  EXPECT_EQ(as(server, browser, "GET", "/console/api/api/v1/sandbox/clock").status, 200);
  // Errors in the envelope, with their paths.
  expect_envelope(as(server, browser, "POST", "/console/api/v1/ledger/account_holders", "{}"), 422,
                  "missing_field");
  expect_envelope(as(server, browser, "GET", "/console/api/v1/ledger/account_holders/nope"), 400,
                  "validation_error", "id");
  // Only routes that take a credential: not the token endpoint, not the operations ones.
  expect_envelope(as(server, browser, "POST", "/console/api/api/v1/oauth/token",
                     R"({"grant_type":"client_credentials"})"),
                  404, "route_not_found");
  expect_envelope(as(server, browser, "GET", "/console/api/healthz"), 404, "route_not_found");
  expect_envelope(as(server, browser, "GET", "/console/api/v1/nothing"), 404, "route_not_found");
  // x-idempotency-key: a replay answers the stored response.
  std::string key = "X-Idempotency-Key: " + harness::new_uuid();
  std::string body = harness::account_holder_body("console-idem-" + harness::new_uuid());
  Reply first = as(server, browser, "POST", "/console/api/v1/ledger/account_holders", body, {key});
  ASSERT_EQ(first.status, 201) << first.body;
  Reply replay = as(server, browser, "POST", "/console/api/v1/ledger/account_holders", body, {key});
  EXPECT_EQ(replay.status, 201);
  EXPECT_EQ(replay.body, first.body);
  EXPECT_EQ(replay.header("idempotent-replayed"), "true");
}

// The session's principal carries its tenant's sandbox clock, as an API key's does.
TEST(ConsoleProxy, RequestsFollowTheTenantsSandboxClock) {
  Server& server = Server::shared();
  json::object made = other_tenant(server);  // a clock of its own
  Browser browser = signed_in(server, made);
  const std::int64_t day = 86400;
  Reply advanced = as(server, browser, "POST", "/console/api/v1/sandbox/clock/advance",
                      "{\"seconds\":" + std::to_string(3 * day) + "}");
  ASSERT_EQ(advanced.status, 200) << advanced.body;
  std::int64_t now = static_cast<std::int64_t>(std::time(nullptr));
  EXPECT_NEAR(epoch_seconds(advanced.json().at("now")), now + 3 * day, 5);
  Reply by_key =
      server.get("/v1/sandbox/clock", {"Authorization: Bearer " + harness::text(made, "api_key")});
  EXPECT_NEAR(epoch_seconds(by_key.json().at("now")), now + 3 * day, 5);
  Reply holder = as(server, browser, "POST", "/console/api/v1/ledger/account_holders",
                    harness::account_holder_body("clock-" + harness::new_uuid()));
  ASSERT_EQ(holder.status, 201) << holder.body;
  EXPECT_NEAR(epoch_seconds(holder.json().at("inserted_at")), now + 3 * day, 5);
  // The session itself keeps real time: it still lasts 12 hours from sign-in.
  EXPECT_NEAR(epoch_seconds(browser.session.at("expires_at")), now + 12 * 3600, 5);
}

TEST(ConsoleProxy, RateLimitedPerSession) {
  Server server({{"--rate-limit", "1", "--rate-burst", "3"}, true});
  Browser first = owner(server);
  Browser second = owner(server);
  int allowed = 0;
  for (int i = 0; i < 5; ++i) {
    Reply reply = as(server, first, "GET", "/console/api/v1/ledger/account_holders");
    if (reply.status == 200) ++allowed;
    if (reply.status == 429) {
      EXPECT_EQ(reply.error_code(), "rate_limit_exceeded");
      EXPECT_FALSE(reply.header("retry-after").empty());
    }
  }
  EXPECT_LE(allowed, 4);  // a burst of 3, and maybe one token refilled meanwhile
  // Another session has its own bucket.
  Reply other = as(server, second, "GET", "/console/api/v1/ledger/account_holders");
  EXPECT_EQ(other.status, 200) << other.body;
  EXPECT_EQ(other.header("ratelimit-limit"), "3");
}

TEST(ConsolePages, TheEmbeddedFilesAreServedWithTheSecurityHeaders) {
  Server& server = Server::shared();
  const std::string index = source_file("console/index.html");
  ASSERT_FALSE(index.empty());
  for (const char* path : {"/console", "/console/", "/console/index.html"}) {
    Reply page = server.get(path);
    ASSERT_EQ(page.status, 200) << path;
    EXPECT_EQ(page.body, index) << path;
    EXPECT_EQ(page.header("content-type"), "text/html; charset=utf-8");
    EXPECT_EQ(page.header("content-security-policy"), k_csp);
    EXPECT_EQ(page.header("x-content-type-options"), "nosniff");
    EXPECT_EQ(page.header("referrer-policy"), "no-referrer");
    EXPECT_EQ(page.header("x-frame-options"), "DENY");
    EXPECT_EQ(page.header("cache-control"), "no-cache");
    std::string etag = page.header("etag");
    ASSERT_FALSE(etag.empty());
    Reply unchanged = server.get(path, {"If-None-Match: " + etag});
    EXPECT_EQ(unchanged.status, 304);
    EXPECT_TRUE(unchanged.body.empty());
  }
  Reply script = server.get("/console/js/app.js");
  ASSERT_EQ(script.status, 200);
  EXPECT_EQ(script.body, source_file("console/js/app.js"));
  EXPECT_EQ(script.header("content-type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(script.header("content-security-policy"), k_csp);
  Reply style = server.get("/console/console.css");
  ASSERT_EQ(style.status, 200);
  EXPECT_EQ(style.body, source_file("console/console.css"));
  EXPECT_EQ(style.header("content-type"), "text/css; charset=utf-8");
  Reply unknown = server.get("/console/no-such-file.js");
  expect_envelope(unknown, 404, "route_not_found");
  EXPECT_EQ(unknown.header("content-security-policy"), k_csp);
  // No path outside console/ (curl would squash the dots: sent raw).
  std::string raw = server.raw(
      "GET /console/../openapi.yaml HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      "Connection: close\r\n\r\n");
  EXPECT_EQ(raw.rfind("HTTP/1.1 404", 0), 0u) << raw.substr(0, 200);
  Reply posted = server.post("/console/", "");
  expect_envelope(posted, 405, "method_not_allowed");
  // The console API's answers carry the headers too, and are never cached.
  Reply api = server.get("/console/api/session");
  EXPECT_EQ(api.header("cache-control"), "no-store");
  EXPECT_EQ(api.header("content-security-policy"), k_csp);
  EXPECT_EQ(api.header("x-frame-options"), "DENY");
}

TEST(ConsoleSecrets, NoPasswordTokenOrSecretOfTheConsoleIsStoredOrLogged) {
  Server server;
  Browser browser = owner(server);
  std::string csrf = harness::text(browser.session, "csrf_token");
  std::string idempotency = "X-Idempotency-Key: " + harness::new_uuid();
  const std::string body = R"({"environment":"sandbox","scopes":["ledger:read"]})";
  Reply key = as(server, browser, "POST", "/console/api/keys", body, {idempotency});
  ASSERT_EQ(key.status, 201) << key.body;
  std::string api_key = harness::text(key.json(), "api_key");
  // The replay shows the secret again from the sealed record.
  Reply replay = as(server, browser, "POST", "/console/api/keys", body, {idempotency});
  EXPECT_EQ(replay.body, key.body);
  Reply client = as(server, browser, "POST", "/console/api/clients", R"({"scopes":["webhooks"]})",
                    {"X-Idempotency-Key: " + harness::new_uuid()});
  ASSERT_EQ(client.status, 201);
  std::string client_secret = harness::text(client.json(), "client_secret");
  ASSERT_EQ(sign_in(server, owner_email(server.credentials()), "a-wrong-password").status, 401);
  server.check_ledger();
  std::string stored = harness::stored_bytes(server);
  std::string logged = server.log_text();
  for (const std::string& secret :
       {owner_password(server.credentials()), browser.token, browser.token.substr(4), csrf, api_key,
        client_secret, std::string("a-wrong-password")}) {
    EXPECT_EQ(stored.find(secret), std::string::npos) << "stored: " << secret;
    EXPECT_EQ(logged.find(secret), std::string::npos) << "logged: " << secret;
  }
  EXPECT_NE(stored.find(sha256_hex(browser.token)), std::string::npos) << "kept as its hash";
}

TEST(ConsoleUsers, AProductionTenantsOwnerCannotSignInOnASandboxServer) {
  Server& server = Server::shared();
  json::object production = other_tenant(server, {"--environment", "production"});
  expect_envelope(sign_in(server, owner_email(production), owner_password(production)), 401,
                  "invalid_credentials");
}
