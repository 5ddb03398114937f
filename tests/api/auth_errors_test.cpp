// Authentication answers: each 401 names why, each 403 names the scope it lacks, both carry
// RFC 6750's WWW-Authenticate attributes, and their log lines name the credential (never the
// secret).
#include <gtest/gtest.h>

#include <sstream>

#include "harness.hpp"

using harness::Reply;
using harness::Server;
namespace json = boost::json;

namespace {

std::string item_message(const Reply& reply) {
  return std::string(reply.json().at("errors").at(0).at("message").as_string());
}

std::string bearer(const std::string& credential) { return "Authorization: Bearer " + credential; }

// The server's log line about the request with this X-Request-Id.
std::string log_line(const Server& server, const std::string& request_id) {
  std::istringstream log(server.log_text());
  for (std::string line; std::getline(log, line);) {
    if (line.find("\"request.error\"") != std::string::npos &&
        line.find(request_id) != std::string::npos) {
      return line;
    }
  }
  return "";
}

std::string new_key(const Server& server, const std::string& scopes, std::string* id = nullptr) {
  std::string tenant(server.credentials().at("tenant_id").as_string());
  json::object key = json::parse(server.command({"keys", "create", "--tenant", tenant, "--scopes",
                                                 scopes, "--json"}))
                         .as_object();
  if (id) *id = std::string(key.at("id").as_string());
  return std::string(key.at("api_key").as_string());
}

}  // namespace

TEST(AuthErrors, NoCredentialHasNoErrorAttribute) {
  Server& server = Server::shared();
  for (std::string path : {"/v1/accounts", "/api/v1/tenant/accounts"}) {
    for (const std::vector<std::string>& headers :
         {std::vector<std::string>{}, std::vector<std::string>{"Authorization: Basic YTpi"}}) {
      Reply reply = server.get(path, headers);
      EXPECT_EQ(reply.status, 401) << path;
      EXPECT_EQ(reply.header("www-authenticate"), "Bearer realm=\"tesoro\"") << path;
      EXPECT_NE(item_message(reply).find("no "), std::string::npos) << reply.body;
    }
  }
  // The contract's codes: participant names the missing header, core says expired_token.
  EXPECT_EQ(server.get("/api/v1/tenant/accounts").error_code(), "missing_authorization_header");
  EXPECT_EQ(server.get("/api/v1/tenant/accounts", {"Authorization: Basic YTpi"}).error_code(),
            "expired_token");
  EXPECT_EQ(server.get("/v1/accounts").error_code(), "expired_token");
  EXPECT_EQ(item_message(server.get("/v1/accounts")),
            "no credential: send Authorization: Bearer <API key>");
}

TEST(AuthErrors, EachRefusalSaysWhyWithInvalidToken) {
  Server& server = Server::shared();
  std::string revoked_id;
  std::string revoked = new_key(server, "ledger:read", &revoked_id);
  server.command({"keys", "revoke", "--id", revoked_id});
  struct Case {
    std::string path;
    std::string header;
    std::string message;
  };
  const std::string token = server.access_token();
  for (const Case& c : std::vector<Case>{
           {"/v1/accounts", "Authorization: Bearer", "the credential is not an API key"},
           {"/v1/accounts", bearer("hello"), "the credential is not an API key"},
           {"/v1/accounts", bearer("sk_sandbox_" + std::string(43, 'A')), "unknown API key"},
           {"/v1/accounts", bearer(revoked), "the API key was revoked"},
           {"/v1/accounts", bearer(token), "an OAuth access token is for the participant API"},
           {"/api/v1/tenant/accounts", bearer("at_nope"), "unknown access token"},
           {"/api/v1/tenant/accounts", bearer("rt_nope"), "the credential is not an access token"},
           {"/api/v1/tenant/accounts", bearer(server.api_key()),
            "an API key is for the core API"}}) {
    Reply reply = server.get(c.path, {c.header});
    EXPECT_EQ(reply.status, 401) << c.header;
    EXPECT_EQ(reply.error_code(), "expired_token") << c.header;
    EXPECT_EQ(item_message(reply).rfind(c.message, 0), 0u) << c.header << ": " << reply.body;
    EXPECT_EQ(reply.header("www-authenticate"), "Bearer realm=\"tesoro\", error=\"invalid_token\"")
        << c.header;
  }
}

TEST(AuthErrors, AnotherEnvironmentsCredentialIsNamed) {
  Server server({{"--environment", "production"}});
  Reply key = server.get("/v1/accounts", {server.bearer_core()});  // init made a sandbox tenant
  EXPECT_EQ(key.status, 401);
  EXPECT_EQ(item_message(key), "the API key belongs to another environment than this server's");
}

TEST(AuthErrors, ForbiddenNamesTheMissingScope) {
  Server& server = Server::shared();
  Reply core = server.post("/v1/ledger/accounts",
                           R"({"name":"a","type":"savings_account","currency":"COP"})",
                           {bearer(new_key(server, "ledger:read"))});
  EXPECT_EQ(core.status, 403);
  EXPECT_EQ(core.error_code(), "not_authorized");
  EXPECT_EQ(item_message(core), "requires scope ledger:write");
  EXPECT_EQ(core.header("www-authenticate"),
            "Bearer realm=\"tesoro\", error=\"insufficient_scope\", scope=\"ledger:write\"");

  Reply participant = server.get("/api/v1/tenant/accounts",
                                 {bearer(server.access_token("collections"))});
  EXPECT_EQ(participant.status, 403);
  EXPECT_EQ(item_message(participant), "requires scope tenant_accounts:readonly");
  EXPECT_EQ(participant.header("www-authenticate"),
            "Bearer realm=\"tesoro\", error=\"insufficient_scope\", "
            "scope=\"tenant_accounts:readonly\"");
}

TEST(AuthErrors, TenantAccountFundingNeedsTheTenantAccountsScope) {
  Server& server = Server::shared();
  std::string id(server.credentials().at("tenant_account_ids").at(0).as_string());
  std::string path = "/api/v1/sandbox/tenant/accounts/" + id + "/fund";
  std::string body = R"({"amount":{"amount":100,"currency":"COP"}})";
  Reply readonly =
      server.post(path, body, {bearer(server.access_token("tenant_accounts:readonly"))});
  EXPECT_EQ(readonly.status, 403);
  EXPECT_EQ(item_message(readonly), "requires scope tenant_accounts");
  EXPECT_NE(readonly.header("www-authenticate").find("scope=\"tenant_accounts\""),
            std::string::npos);
  Reply transfers = server.post(path, body, {bearer(server.access_token("outgoing_transfers"))});
  EXPECT_EQ(transfers.status, 403);
  Reply full = server.post(path, body, {bearer(server.access_token("tenant_accounts"))});
  EXPECT_EQ(full.status, 201) << full.body;
  // The full scope includes its read-only form.
  EXPECT_EQ(server.get("/api/v1/tenant/accounts", {bearer(server.access_token("tenant_accounts"))})
                .status,
            200);
}

TEST(AuthErrors, LogLinesNameTheCredentialNeverTheSecret) {
  Server& server = Server::shared();
  const std::string unknown = "sk_sandbox_Zq9xSECRETPART" + std::string(30, 'B');
  std::string request_id = "req-auth-log-" + harness::new_uuid();
  server.get("/v1/accounts", {bearer(unknown), "X-Request-Id: " + request_id});
  std::string line = log_line(server, request_id);
  EXPECT_NE(line.find("\"auth_reason\":\"unknown\""), std::string::npos) << line;
  EXPECT_NE(line.find("\"credential\":\"sk_sandbox_Zq9x\""), std::string::npos) << line;
  EXPECT_EQ(server.log_text().find("SECRETPART"), std::string::npos);

  std::string key_id;
  std::string key = new_key(server, "cards:read", &key_id);
  request_id = "req-auth-log-" + harness::new_uuid();
  server.get("/v1/accounts", {bearer(key), "X-Request-Id: " + request_id});
  line = log_line(server, request_id);
  EXPECT_NE(line.find("\"auth_reason\":\"insufficient_scope\""), std::string::npos) << line;
  EXPECT_NE(line.find(key_id + " " + key.substr(0, 15)), std::string::npos) << line;
  EXPECT_EQ(server.log_text().find(key), std::string::npos);

  std::string token = server.access_token("collections");
  request_id = "req-auth-log-" + harness::new_uuid();
  server.get("/api/v1/tenant/accounts", {bearer(token), "X-Request-Id: " + request_id});
  line = log_line(server, request_id);
  EXPECT_NE(line.find(std::string(server.credentials().at("client_id").as_string())),
            std::string::npos)
      << line;
  EXPECT_EQ(server.log_text().find(token), std::string::npos);
}

// A key that has worked (so that a node may keep its principal: app/credential_cache.hpp) and is
// then revoked from the command line, another process, is refused from its next request on,
// whatever that request: a read, a write (which writes nothing), a body refused before any read,
// a route its scopes do not reach. Each gets the 401 of a revoked key, never the answer the kept
// principal would have had.
TEST(AuthErrors, AKeyRevokedAfterUseIsRefusedOnItsNextRequestWhateverItIs) {
  Server server;  // its own: the list at the end is short
  const std::string external_id = "after-revoke-" + harness::new_uuid();
  struct Case {
    std::string method;
    std::string path;
    std::string body;
    int status_before;  // what the key was answered before its revocation
  };
  for (const Case& c : std::vector<Case>{
           {"GET", "/v1/ledger/account_holders", "", 200},
           {"POST", "/v1/ledger/account_holders", harness::account_holder_body(external_id), 201},
           {"POST", "/v1/ledger/account_holders", "{", 400},
           {"POST", "/v1/cards/cardholders", "{}", 403}}) {
    std::string id;
    std::string key = new_key(server, "ledger:write", &id);
    const std::string body =
        c.status_before == 201 ? harness::account_holder_body("before-" + harness::new_uuid())
                               : c.body;
    ASSERT_EQ(server.send({c.method, c.path, body, {bearer(key)}}).status, c.status_before)
        << c.method << " " << c.path;
    server.command({"keys", "revoke", "--id", id});
    Reply reply = server.send({c.method, c.path, c.body, {bearer(key)}});
    EXPECT_EQ(reply.status, 401) << c.method << " " << c.path << ": " << reply.body;
    EXPECT_EQ(item_message(reply), "the API key was revoked") << reply.body;
  }
  Reply written = server.get("/v1/ledger/account_holders?page_size=500", {server.bearer_core()});
  EXPECT_EQ(written.body.find(external_id), std::string::npos) << "a revoked key wrote";
}
