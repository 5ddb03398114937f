// No input crashes the server or earns a 5xx: mutated bodies, odd paths and headers, for every
// write endpoint; each answer is a success or an envelope, and the ledger still verifies.
#include <gtest/gtest.h>

#include <random>

#include "harness.hpp"

using harness::Reply;
using harness::Server;
namespace json = boost::json;

namespace {

void expect_clean(const Reply& reply, const std::string& what) {
  ASSERT_GT(reply.status, 0) << "no answer (crash or hang?) for " << what;
  EXPECT_LT(reply.status, 500) << what << " -> " << reply.body;
  if (reply.status >= 400) {
    EXPECT_FALSE(reply.error_code().empty()) << "not an envelope: " << reply.body;
  }
}

}  // namespace

TEST(Robustness, MutatedBodiesNeverEarnA5xx) {
  Server server;
  std::mt19937 random(20261121);
  std::string account = std::string(server.credentials().at("account_id").as_string());
  std::string tenant_account = std::string(server.credentials().at("tenant_account_ids").at(0).as_string());
  std::string token = "Authorization: Bearer " + server.access_token();
  // A console session: its cookie and CSRF token.
  Reply session = server.post(
      "/console/api/session",
      json::serialize(json::object{{"email", server.credentials().at("owner_email")},
                                   {"password", server.credentials().at("owner_password")}}));
  ASSERT_EQ(session.status, 201) << session.body;
  std::string set_cookie = session.header("set-cookie");
  std::vector<std::string> console = {
      "Cookie: " + set_cookie.substr(0, set_cookie.find(';')),
      "X-CSRF-Token: " + std::string(session.json().at("csrf_token").as_string())};
  struct Target {
    std::string path;
    std::string body;
    std::vector<std::string> auth;
  };
  std::vector<Target> targets = {
      {"/v1/ledger/account_holders",
       R"({"address":{"city":"Bogota","country":"CO","line_1":"x","state":"DC","zip_code":"1"},"person":{"country_code":"CO","document_number":"1","document_type":"CC","first_name":"A","last_name":"B","person_type":"natural"},"external_id":"fuzz","metadata":{"a":"b"}})",
       {server.bearer_core()}},
      {"/v1/ledger/accounts", R"({"name":"n","type":"savings_account","currency":"COP"})", {server.bearer_core()}},
      {"/v1/sandbox/accounts/" + account + "/fund", R"({"amount":{"amount":100,"currency":"COP"},"description":"d"})",
       {server.bearer_core()}},
      {"/api/v1/sandbox/tenant/accounts/" + tenant_account + "/fund", R"({"amount":{"amount":100,"currency":"COP"}})", {token}},
      {"/api/v1/oauth/token", R"({"grant_type":"client_credentials","client_id":"x","client_secret":"y"})", {}},
      {"/console/api/session", R"({"email":"a@example.com","password":"p"})", {}},
      {"/console/api/keys", R"({"environment":"sandbox","scopes":["ledger:read"]})", console},
      {"/console/api/clients", R"({"scopes":["webhooks"]})", console},
      {"/console/api/v1/sandbox/accounts/" + account + "/fund",
       R"({"amount":{"amount":100,"currency":"COP"},"description":"d"})", console},
  };
  for (const Target& target : targets) {
    for (int i = 0; i < 120; ++i) {
      std::string body = harness::mutate_body(target.body, random);
      std::vector<std::string> headers = target.auth;
      if (i % 3 == 0) headers.push_back("x-idempotency-key: " + harness::new_uuid());
      expect_clean(server.post(target.path, body, headers), target.path + " with " + body);
    }
  }
  EXPECT_EQ(server.get("/healthz").status, 200);
}

TEST(Robustness, OddPathsQueriesAndHeaders) {
  Server& server = Server::shared();
  for (const char* path : {"/v1/accounts/%00", "/v1/accounts/..%2F..%2Fetc", "/v1/accounts?page_size=%ZZ",
                           "/v1/accounts?page_number=99999999999999999999", "/v1/accounts?page_size=10&page_size=x",
                           "/v1//accounts", "/v1/accounts/acc_AAAAAAAAAAAAAAAAAAAAAA/", "/%FF%FE",
                           "/v1/ledger/account_holders?page_number=2147483647&page_size=500"}) {
    expect_clean(server.get(path, {server.bearer_core()}), path);
  }
  expect_clean(server.get("/v1/accounts", {"Authorization: Bearer " + std::string(5000, 'x')}), "long token");
  // The console's paths: files, its API, the proxy, and odd cookies.
  for (const char* path : {"/console/%00", "/console/..%2Findex.html", "/console//index.html",
                           "/console/api/v1/accounts/%00", "/console//api/v1/accounts",
                           "/console/api/api/v1/", "/console/api/", "/console/api", "/consolex",
                           "/console/api/keys/%FF"}) {
    expect_clean(server.get(path), path);
    for (const char* cookie : {"Cookie: tesoro_console=", "Cookie: tesoro_console",
                               "Cookie: ;;; =;tesoro_console=\xff", "Cookie: tesoro_console=cst_%00"}) {
      expect_clean(server.get(path, {cookie}), std::string(path) + " with " + cookie);
    }
  }
  for (const char* query : {"/v1/accounts?%ff%fe=1", "/v1/accounts?page_size=%ff", "/v1/accounts?page_size=10&page_size=20"}) {
    Reply reply = server.get(query, {server.bearer_core()});
    EXPECT_EQ(reply.status, 400) << query;
    boost::system::error_code ec;
    json::parse(reply.body, ec);
    EXPECT_FALSE(ec) << "answer is not valid JSON (UTF-8): " << reply.body;
  }
  expect_clean(server.get("/v1/accounts", {"Authorization: bearer " + server.api_key()}), "lower-case scheme");
  std::string answer = server.raw("POST /v1/accounts HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n");
  EXPECT_EQ(answer.find(" 500 "), std::string::npos) << answer;
  answer = server.raw("GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n");
  EXPECT_EQ(answer.find(" 500 "), std::string::npos) << answer;
  EXPECT_EQ(server.get("/healthz").status, 200);
}
