// Ledger accounts (core) and tenant accounts (participant): every rule, error paths included.
#include <gtest/gtest.h>

#include <atomic>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "harness.hpp"

using harness::Reply;
using harness::Server;
namespace json = boost::json;

namespace {

std::string money(long long amount, const std::string& currency = "COP") {
  return R"({"amount":{"amount":)" + std::to_string(amount) + R"(,"currency":")" + currency + R"("}})";
}

std::string default_account(const Server& server) {
  return std::string(server.credentials().at("account_id").as_string());
}

// A new account holder of the server's tenant (a fresh external id each time).
Reply create_holder(Server& server, const std::string& document_number) {
  return server.post("/v1/ledger/account_holders",
      R"({"address":{"city":"Bogota","country":"CO","line_1":"x","state":"DC","zip_code":"1"},)"
      R"("person":{"country_code":"CO","document_number":")" + document_number +
      R"(","document_type":"CC","first_name":"A","last_name":"B","person_type":"natural"},)"
      R"("external_id":"acct-owner-)" + harness::new_uuid() + R"("})", {server.bearer_core()});
}

std::string tenant_account(const Server& server, int index) {
  return std::string(server.credentials().at("tenant_account_ids").at(index).as_string());
}

}  // namespace

TEST(Accounts, InitCreatesAnAccountListedWithItsBalance) {
  Server server;
  Reply list = server.get("/v1/accounts", {server.bearer_core()});
  ASSERT_EQ(list.status, 200) << list.body;
  json::value body = list.json();
  ASSERT_EQ(body.at("accounts").as_array().size(), 1u);
  const json::value& account = body.at("accounts").at(0);
  EXPECT_EQ(account.at("id").as_string(), default_account(server));
  EXPECT_EQ(account.at("state").as_string(), "active");
  EXPECT_EQ(account.at("type").as_string(), "savings_account");
  EXPECT_FALSE(account.at("number").as_string().empty());
  EXPECT_FALSE(account.at("provider").as_string().empty());
  EXPECT_EQ(account.at("balance").at("available").at("amount").as_int64(), 0);
  EXPECT_EQ(account.at("balance").at("available").at("currency").as_string(), "COP");
  EXPECT_TRUE(account.at("balance").as_object().contains("updated_at"));
  EXPECT_EQ(body.at("pagination").at("total_items").as_int64(), 1);
}

TEST(Accounts, OpenForTenantAndForAccountHolder) {
  Server& server = Server::shared();
  Reply holder = create_holder(server, "1");
  ASSERT_EQ(holder.status, 201);
  std::string holder_id(holder.json().at("id").as_string());
  Reply created = server.post("/v1/ledger/accounts",
                              R"({"name":"Savings","type":"checking_account","currency":"COP","account_holder_id":")" +
                                  holder_id + R"("})",
                              {server.bearer_core()});
  ASSERT_EQ(created.status, 201) << created.body;
  json::value account = created.json();
  EXPECT_EQ(std::string(account.at("id").as_string()).substr(0, 4), "acc_");
  EXPECT_EQ(account.at("account_holder_id").as_string(), holder_id);
  EXPECT_EQ(account.at("type").as_string(), "checking_account");
  Reply fetched = server.get("/v1/accounts/" + std::string(account.at("id").as_string()), {server.bearer_core()});
  EXPECT_EQ(fetched.status, 200);
  EXPECT_EQ(fetched.body, created.body);
}

TEST(Accounts, ListedByAccountHolder) {
  Server& server = Server::shared();
  Reply holder = create_holder(server, "2");
  ASSERT_EQ(holder.status, 201) << holder.body;
  const std::string holder_id(holder.json().at("id").as_string());
  std::vector<std::string> opened;
  for (const char* name : {"first", "second"}) {
    Reply created = server.post("/v1/ledger/accounts",
                                R"({"name":")" + std::string(name) +
                                    R"(","type":"savings_account","currency":"COP","account_holder_id":")" +
                                    holder_id + R"("})",
                                {server.bearer_core()});
    ASSERT_EQ(created.status, 201) << created.body;
    opened.push_back(std::string(created.json().at("id").as_string()));
  }
  ASSERT_EQ(server.post("/v1/ledger/accounts", R"({"name":"mine","type":"savings_account","currency":"COP"})",
                        {server.bearer_core()}).status, 201);
  Reply listed = server.get("/v1/accounts?account_holder_id=" + holder_id, {server.bearer_core()});
  ASSERT_EQ(listed.status, 200) << listed.body;
  const json::value body = listed.json();
  ASSERT_EQ(body.at("accounts").as_array().size(), 2u);
  EXPECT_EQ(body.at("accounts").at(0).at("id").as_string(), opened[1]);  // newest first
  EXPECT_EQ(body.at("accounts").at(1).at("id").as_string(), opened[0]);
  EXPECT_EQ(body.at("pagination").at("total_items").as_int64(), 2);
  Reply unknown = server.get("/v1/accounts?account_holder_id=acch_0000000000000000000000",
                             {server.bearer_core()});
  ASSERT_EQ(unknown.status, 200);
  EXPECT_TRUE(unknown.json().at("accounts").as_array().empty());
  Reply malformed = server.get("/v1/accounts?account_holder_id=acc_1", {server.bearer_core()});
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(malformed.error_path(), "account_holder_id");
}

TEST(Accounts, OpenValidation) {
  Server& server = Server::shared();
  auto post = [&](const std::string& body) { return server.post("/v1/ledger/accounts", body, {server.bearer_core()}); };
  Reply missing = post("{}");
  EXPECT_EQ(missing.status, 422);
  EXPECT_EQ(missing.json().at("errors").as_array().size(), 3u);
  Reply bad_type = post(R"({"name":"a","type":"piggy_bank","currency":"COP"})");
  EXPECT_EQ(bad_type.status, 400);
  EXPECT_EQ(bad_type.error_path(), "type");
  Reply bad_currency = post(R"({"name":"a","type":"savings_account","currency":"USD"})");
  EXPECT_EQ(bad_currency.status, 400);
  EXPECT_EQ(bad_currency.error_path(), "currency");
  Reply bad_holder = post(R"({"name":"a","type":"savings_account","currency":"COP","account_holder_id":"acch_1"})");
  EXPECT_EQ(bad_holder.status, 400);
  EXPECT_EQ(bad_holder.error_path(), "account_holder_id");
  Reply unknown_holder = post(R"({"name":"a","type":"savings_account","currency":"COP","account_holder_id":"acch_AAAAAAAAAAAAAAAAAAAAAA"})");
  EXPECT_EQ(unknown_holder.status, 404);
  EXPECT_EQ(unknown_holder.error_code(), "item_not_found");
}

TEST(Accounts, GetErrors) {
  Server& server = Server::shared();
  Reply malformed = server.get("/v1/accounts/acc_short", {server.bearer_core()});
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(malformed.error_path(), "id");
  EXPECT_EQ(server.get("/v1/accounts/acc_AAAAAAAAAAAAAAAAAAAAAA", {server.bearer_core()}).error_code(), "item_not_found");
  // A tenant account is not a core account.
  EXPECT_EQ(server.get("/v1/accounts/" + tenant_account(server, 0), {server.bearer_core()}).status, 400);
  for (const char* bad : {"page_size=5", "page_size=1000", "page_number=-1", "sort=asc"}) {
    EXPECT_EQ(server.get(std::string("/v1/accounts?") + bad, {server.bearer_core()}).status, 400) << bad;
  }
}

TEST(Accounts, SandboxFundingCreditsTheBalance) {
  Server server;
  std::string id = default_account(server);
  Reply funded = server.post("/v1/sandbox/accounts/" + id + "/fund", money(1500000), {server.bearer_core()});
  ASSERT_EQ(funded.status, 201) << funded.body;
  EXPECT_EQ(funded.json().at("balance").at("available").at("amount").as_int64(), 1500000);
  // Nothing held: the current balance is all available.
  EXPECT_EQ(funded.json().at("balance").at("current").at("amount").as_int64(), 1500000);
  EXPECT_EQ(funded.json().at("balance").at("held").at("amount").as_int64(), 0);
  Reply again = server.post("/v1/sandbox/accounts/" + id + "/fund", money(1), {server.bearer_core()});
  EXPECT_EQ(again.json().at("balance").at("available").at("amount").as_int64(), 1500001);
  Reply listed = server.get("/v1/accounts", {server.bearer_core()});
  EXPECT_EQ(listed.json().at("accounts").at(0).at("balance").at("available").at("amount").as_int64(), 1500001);

  std::string key = "x-idempotency-key: " + harness::new_uuid();
  Reply first = server.post("/v1/sandbox/accounts/" + id + "/fund", money(10), {server.bearer_core(), key});
  Reply replay = server.post("/v1/sandbox/accounts/" + id + "/fund", money(10), {server.bearer_core(), key});
  EXPECT_EQ(replay.body, first.body);
  EXPECT_EQ(replay.header("idempotent-replayed"), "true");
  EXPECT_EQ(server.get("/v1/accounts/" + id, {server.bearer_core()}).json().at("balance").at("available").at("amount").as_int64(),
            1500011);
}

TEST(Accounts, SandboxFundingValidation) {
  Server& server = Server::shared();
  std::string path = "/v1/sandbox/accounts/" + default_account(server) + "/fund";
  for (const std::string& body : {money(0), money(-5), std::string(R"({"amount":{"amount":1.5,"currency":"COP"}})"),
                                  std::string(R"({"amount":{"amount":9223372036854775808,"currency":"COP"}})"),
                                  std::string(R"({"amount":{"amount":"10","currency":"COP"}})"), money(10, "EUR"),
                                  std::string(R"({"amount":{"amount":10,"currency":"COP","x":1}})")}) {
    Reply reply = server.post(path, body, {server.bearer_core()});
    EXPECT_EQ(reply.status, 400) << body << " " << reply.body;
    EXPECT_EQ(reply.error_path().substr(0, 7), "amount.") << body;
  }
  Reply missing = server.post(path, "{}", {server.bearer_core()});
  EXPECT_EQ(missing.status, 422);
  EXPECT_EQ(missing.error_path(), "amount");
  EXPECT_EQ(server.post("/v1/sandbox/accounts/acc_AAAAAAAAAAAAAAAAAAAAAA/fund", money(5), {server.bearer_core()}).status, 404);
  EXPECT_EQ(server.post("/v1/sandbox/accounts/nope/fund", money(5), {server.bearer_core()}).status, 400);
  // A bad path and a bad body: one answer lists both.
  Reply both = server.post("/v1/sandbox/accounts/nope/fund", money(-1), {server.bearer_core()});
  EXPECT_EQ(both.status, 400);
  EXPECT_EQ(both.json().at("errors").as_array().size(), 2u) << both.body;
}

// Amounts and balances stay within 2^53 - 1, the largest integer a JSON client reading numbers as
// doubles (JavaScript) reads exactly: a larger amount is refused, and so is a balance past it.
TEST(Accounts, BalanceOverflowIsRefused) {
  Server server;
  const std::string path = "/v1/sandbox/accounts/" + default_account(server) + "/fund";
  Reply beyond = server.post(path, money(9007199254740992LL), {server.bearer_core()});
  EXPECT_EQ(beyond.status, 400);
  EXPECT_EQ(beyond.error_path(), "amount.amount");
  EXPECT_EQ(server.post(path, money(9223372036854775807LL), {server.bearer_core()}).status, 400);
  Reply largest = server.post(path, money(9007199254740991LL), {server.bearer_core()});
  ASSERT_EQ(largest.status, 201) << largest.body;
  EXPECT_EQ(largest.json().at("balance").at("current").at("amount").as_int64(), 9007199254740991LL);
  Reply overflow = server.post(path, money(1), {server.bearer_core()});
  EXPECT_EQ(overflow.status, 422);
  EXPECT_EQ(overflow.error_code(), "balance_overflow");
}

TEST(Accounts, ScopesApply) {
  Server& server = Server::shared();
  std::string tenant(server.credentials().at("tenant_id").as_string());
  json::object read_key = json::parse(server.command({"keys", "create", "--tenant", tenant, "--scopes", "ledger:read", "--json"})).as_object();
  std::string header = "Authorization: Bearer " + std::string(read_key.at("api_key").as_string());
  EXPECT_EQ(server.get("/v1/accounts", {header}).status, 200);
  EXPECT_EQ(server.post("/v1/ledger/accounts", R"({"name":"a","type":"savings_account","currency":"COP"})", {header}).status, 403);
  EXPECT_EQ(server.post("/v1/sandbox/accounts/" + default_account(server) + "/fund", money(5), {header}).status, 403);
}

TEST(Accounts, SandboxRoutesAreAbsentInProduction) {
  Server server({{"--environment", "production"}});
  Reply reply = server.post("/v1/sandbox/accounts/" + default_account(server) + "/fund", money(5), {server.bearer_core()});
  EXPECT_EQ(reply.status, 404);
  EXPECT_EQ(reply.error_code(), "route_not_found");
  EXPECT_EQ(server.post("/api/v1/sandbox/tenant/accounts/" + tenant_account(server, 0) + "/fund", money(5)).error_code(),
            "route_not_found");
}

TEST(TenantAccounts, BareArrayWithFilters) {
  Server& server = Server::shared();
  std::string auth = "Authorization: Bearer " + server.access_token();
  Reply all = server.get("/api/v1/tenant/accounts", {auth});
  ASSERT_EQ(all.status, 200) << all.body;
  json::value accounts = all.json();
  ASSERT_TRUE(accounts.is_array());
  ASSERT_EQ(accounts.as_array().size(), 2u);
  const json::value& first = accounts.at(0);
  for (const char* field : {"id", "number", "currency_code", "type", "role", "state", "beneficiary", "balance", "inserted_at", "updated_at"}) {
    EXPECT_TRUE(first.as_object().contains(field)) << field;
  }
  EXPECT_EQ(first.at("currency_code").as_string(), "COP");
  EXPECT_TRUE(first.at("beneficiary").as_object().contains("full_name"));

  json::value receptors = server.get("/api/v1/tenant/accounts?role=receptor", {auth}).json();
  ASSERT_EQ(receptors.as_array().size(), 1u);
  EXPECT_EQ(receptors.at(0).at("role").as_string(), "receptor");
  EXPECT_EQ(server.get("/api/v1/tenant/accounts?role=all", {auth}).json().as_array().size(), 2u);
  std::string number(receptors.at(0).at("number").as_string());
  json::value by_number = server.get("/api/v1/tenant/accounts?number=" + number, {auth}).json();
  ASSERT_EQ(by_number.as_array().size(), 1u);
  EXPECT_EQ(by_number.at(0).at("number").as_string(), number);
  EXPECT_EQ(server.get("/api/v1/tenant/accounts?number=0000000000", {auth}).json().as_array().size(), 0u);
  EXPECT_EQ(server.get("/api/v1/tenant/accounts?type=regular_deposit", {auth}).json().as_array().size(), 0u);
  EXPECT_EQ(server.get("/api/v1/tenant/accounts?state=inactive", {auth}).json().as_array().size(), 0u);
  EXPECT_EQ(server.get("/api/v1/tenant/accounts?state=active&type=savings_account", {auth}).json().as_array().size(), 2u);
  for (const char* bad : {"role=boss", "type=gold", "state=closed", "color=red"}) {
    Reply reply = server.get(std::string("/api/v1/tenant/accounts?") + bad, {auth});
    EXPECT_EQ(reply.status, 400) << bad;
    EXPECT_EQ(reply.error_code(), "validation_error") << bad;
  }
}

TEST(TenantAccounts, AuthenticationAndScopes) {
  Server& server = Server::shared();
  Reply missing = server.get("/api/v1/tenant/accounts");
  EXPECT_EQ(missing.status, 401);
  EXPECT_EQ(missing.error_code(), "missing_authorization_header");
  Reply bad = server.get("/api/v1/tenant/accounts", {"Authorization: Bearer at_nope"});
  EXPECT_EQ(bad.status, 401);
  EXPECT_EQ(bad.error_code(), "expired_token");
  Reply api_key = server.get("/api/v1/tenant/accounts", {server.bearer_core()});
  EXPECT_EQ(api_key.status, 401);
  EXPECT_EQ(api_key.error_code(), "expired_token");
  Reply narrow = server.get("/api/v1/tenant/accounts", {"Authorization: Bearer " + server.access_token("collections")});
  EXPECT_EQ(narrow.status, 403);
  EXPECT_EQ(narrow.error_code(), "not_authorized");
}

TEST(TenantAccounts, SandboxFunding) {
  Server server;
  std::string auth = "Authorization: Bearer " + server.access_token();
  std::string id = tenant_account(server, 1);
  Reply funded = server.post("/api/v1/sandbox/tenant/accounts/" + id + "/fund", money(250000), {auth});
  ASSERT_EQ(funded.status, 201) << funded.body;
  EXPECT_EQ(funded.json().at("id").as_string(), id);
  EXPECT_EQ(funded.json().at("balance").at("available").at("amount").as_int64(), 250000);
  json::value listed = server.get("/api/v1/tenant/accounts", {auth}).json();
  std::int64_t total = 0;
  for (const auto& account : listed.as_array()) total += account.at("balance").at("available").at("amount").as_int64();
  EXPECT_EQ(total, 250000);
  Reply unknown = server.post("/api/v1/sandbox/tenant/accounts/bbtacc_AAAAAAAAAAAAAAAAAAAAAA/fund", money(5), {auth});
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.error_code(), "tenant_account_not_found");
  Reply malformed = server.post("/api/v1/sandbox/tenant/accounts/acc_AAAAAAAAAAAAAAAAAAAAAA/fund", money(5), {auth});
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(malformed.error_path(), "id");
  // Funding is a write: a read-only token may list but not fund.
  std::string readonly = "Authorization: Bearer " + server.access_token("tenant_accounts:readonly");
  EXPECT_EQ(server.get("/api/v1/tenant/accounts", {readonly}).status, 200);
  Reply refused = server.post("/api/v1/sandbox/tenant/accounts/" + id + "/fund", money(5), {readonly});
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(refused.error_code(), "not_authorized");
  // A malformed id and a body that is not JSON: both reported at once.
  Reply both = server.post("/api/v1/sandbox/tenant/accounts/nope/fund", "{", {auth});
  EXPECT_EQ(both.status, 400);
  EXPECT_EQ(both.json().at("errors").as_array().size(), 2u) << both.body;
  // A core account id is not a tenant account, and a core key does not open the participant API.
  EXPECT_EQ(server.post("/api/v1/sandbox/tenant/accounts/" + id + "/fund", money(5), {server.bearer_core()}).status, 401);
}

TEST(Cli, VerifyRefusesAFolderWithoutDatabase) {
  std::string line = "'" + harness::tesoro_bin() + "' verify --data /tmp/tesoro-no-such-folder 2>/dev/null";
  int status = std::system(line.c_str());
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_FALSE(std::filesystem::exists("/tmp/tesoro-no-such-folder"));
}

TEST(Ledger, ConcurrentFundingKeepsEveryInvariant) {
  Server server;
  std::string path = "/v1/sandbox/accounts/" + default_account(server) + "/fund";
  std::vector<std::thread> threads;
  std::atomic<long long> acknowledged{0};
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        long long amount = 100 + t * 10 + i;
        if (server.post(path, money(amount), {server.bearer_core()}).status == 201) acknowledged += amount;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  Reply account = server.get("/v1/accounts/" + default_account(server), {server.bearer_core()});
  EXPECT_EQ(account.json().at("balance").at("available").at("amount").as_int64(), acknowledged.load());
  int code = 0;
  std::string out = server.command({"verify"}, &code);
  EXPECT_EQ(code, 0) << out;
}
