// POST /v1/core/payouts, GET /v1/core/payouts/{id}, GET /v1/core/payouts/find_successful_by:
// money from a core account to a key of the sandbox network, moved by the network processor on
// the tenant's clock (advanced here, never slept on).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "harness.hpp"
#include "payment_fixtures.hpp"

namespace {

using harness::Reply;
using harness::Server;
using harness::text;
using payment_fixtures::amount_of;
using payment_fixtures::money;
namespace json = boost::json;

// A funded core account of the server's tenant, made for one test.
std::string funded_account(const Server& server, long long amount) {
  Reply opened = server.post("/v1/ledger/accounts",
                             R"({"name":"payouts","type":"savings_account","currency":"COP"})",
                             {server.bearer_core()});
  EXPECT_EQ(opened.status, 201) << opened.body;
  const std::string id = text(opened.json(), "id");
  Reply funded =
      server.post("/v1/sandbox/accounts/" + id + "/fund", R"({"amount":)" + money(amount) + "}",
                  {server.bearer_core()});
  EXPECT_EQ(funded.status, 201) << funded.body;
  return id;
}

struct Balance {
  long long available = 0;
  long long held = 0;
  long long current = 0;
};

Balance balance_of(const Server& server, const std::string& account_id) {
  Reply reply = server.get("/v1/accounts/" + account_id, {server.bearer_core()});
  EXPECT_EQ(reply.status, 200) << reply.body;
  const json::value body = reply.json();
  const json::value& balance = body.at("balance");
  return {amount_of(balance, "available"), amount_of(balance, "held"),
          amount_of(balance, "current")};
}

std::string payout_body(const std::string& account_id, const std::string& external_id,
                        long long amount, const std::string& key_type,
                        const std::string& key_value, const std::string& extra = "") {
  return R"({"account_id":")" + account_id + R"(","external_id":")" + external_id +
         R"(","method":"co_breb","amount":)" + money(amount) + R"(,"target":{"key_type":")" +
         key_type + R"(","key_value":")" + key_value + "\"}" + extra + "}";
}

Reply create_payout(const Server& server, const std::string& body) {
  return server.post("/v1/core/payouts", body, {server.bearer_core()});
}

// Moves the tenant's clock far enough for every step of a transfer, then polls the payout
// until it reaches a final state (the processor runs in the background) or a bounded wait ends.
json::value settle(const Server& server, const std::string& payout_id) {
  Reply advanced =
      server.post("/v1/sandbox/clock/advance", R"({"seconds":30})", {server.bearer_core()});
  EXPECT_EQ(advanced.status, 200) << advanced.body;
  json::value payout;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  do {
    Reply reply = server.get("/v1/core/payouts/" + payout_id, {server.bearer_core()});
    EXPECT_EQ(reply.status, 200) << reply.body;
    payout = reply.json();
    const std::string state = text(payout, "state");
    if (state == "settled" || state == "failed") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while (std::chrono::steady_clock::now() < deadline);
  return payout;
}

std::string bearer_with_scopes(const Server& server, const std::string& scopes) {
  const std::string tenant = text(server.credentials(), "tenant_id");
  json::value key = json::parse(
      server.command({"keys", "create", "--tenant", tenant, "--scopes", scopes, "--json"}));
  return "Authorization: Bearer " + text(key, "api_key");
}

TEST(Payouts, APayoutHoldsItsAmountThenSettlesAndTheBalanceDrops) {
  Server server;  // a clock of its own to advance
  const std::string account = funded_account(server, 5'000'000);
  const std::string external_id = harness::new_uuid();
  Reply created = create_payout(
      server, payout_body(account, external_id, 1'250'000, "cellphone", "3001234567",
                          R"(,"description":"March salary","metadata":{"employee":"42"})"));
  ASSERT_EQ(created.status, 201) << created.body;
  const json::value payout = created.json();
  const std::string id = text(payout, "id");
  EXPECT_EQ(id.rfind("cpout_", 0), 0u) << id;
  EXPECT_EQ(text(payout, "external_id"), external_id);
  EXPECT_EQ(text(payout, "account_id"), account);
  EXPECT_EQ(text(payout, "method"), "co_breb");
  EXPECT_EQ(amount_of(payout, "amount"), 1'250'000);
  EXPECT_EQ(text(payout, "state"), "pending");
  EXPECT_TRUE(payout.at("state_reason").is_null());
  EXPECT_EQ(text(payout, "description"), "March salary");
  EXPECT_EQ(text(payout.at("metadata"), "employee"), "42");
  EXPECT_EQ(text(payout.at("target"), "key_type"), "cellphone");
  EXPECT_EQ(text(payout.at("target"), "key_value"), "3001234567");
  // The creditor is shown masked.
  EXPECT_NE(text(payout.at("target").at("creditor"), "full_name").find('*'), std::string::npos)
      << payout;
  EXPECT_EQ(text(payout, "end_to_end_id").size(), 32u);
  EXPECT_TRUE(payout.at("timemarks").as_object().contains("T110")) << payout;

  // Held, not yet moved.
  Balance held = balance_of(server, account);
  EXPECT_EQ(held.current, 5'000'000);
  EXPECT_EQ(held.held, 1'250'000);
  EXPECT_EQ(held.available, 3'750'000);
  Reply not_yet = server.get("/v1/core/payouts/find_successful_by?external_id=" + external_id,
                             {server.bearer_core()});
  EXPECT_EQ(not_yet.status, 409) << not_yet.body;
  EXPECT_EQ(not_yet.error_code(), "invalid_state");

  const json::value settled = settle(server, id);
  EXPECT_EQ(text(settled, "state"), "settled") << settled;
  EXPECT_TRUE(settled.at("timemarks").as_object().contains("T120")) << settled;
  Balance after = balance_of(server, account);
  EXPECT_EQ(after.current, 3'750'000);
  EXPECT_EQ(after.held, 0);
  EXPECT_EQ(after.available, 3'750'000);
  Reply found = server.get("/v1/core/payouts/find_successful_by?external_id=" + external_id,
                           {server.bearer_core()});
  ASSERT_EQ(found.status, 200) << found.body;
  EXPECT_EQ(text(found.json(), "id"), id);
  // One event per state of the payout, in order, and none of the participant API's transfers.
  EXPECT_EQ(payment_fixtures::event_types(server, id),
            (std::vector<std::string>{"payout.pending", "payout.processing", "payout.settled"}));
  server.check_ledger();
}

TEST(Payouts, TheSameExternalIdAnswersTheFirstPayoutAndMovesNothingMore) {
  Server& server = Server::shared();
  const std::string account = funded_account(server, 1'000'000);
  const std::string external_id = harness::new_uuid();
  Reply first = create_payout(
      server, payout_body(account, external_id, 400'000, "alphanumeric", "@PROVEEDOR1"));
  ASSERT_EQ(first.status, 201) << first.body;
  // Whatever else the second request says: the external id decides.
  Reply second = create_payout(
      server, payout_body(account, external_id, 900'000, "email", "someone@example.com"));
  ASSERT_EQ(second.status, 200) << second.body;
  EXPECT_EQ(text(second.json(), "id"), text(first.json(), "id"));
  EXPECT_EQ(amount_of(second.json(), "amount"), 400'000);
  EXPECT_EQ(balance_of(server, account).held, 400'000);
}

TEST(Payouts, ADescriptionTriggerFailsThePayoutAndReleasesTheHold) {
  Server server;
  const std::string account = funded_account(server, 2'000'000);
  for (const std::string reason : {"unknown", "risk_control", "breb_timeout",
                                   "provider_unavailable"}) {
    Reply created = create_payout(
        server, payout_body(account, harness::new_uuid(), 500'000, "identification",
                            "1020304050", R"(,"description":"pay tx_)" + reason + "\""));
    ASSERT_EQ(created.status, 201) << created.body;
    const std::string id = text(created.json(), "id");
    const json::value failed = settle(server, id);
    EXPECT_EQ(text(failed, "state"), "failed") << failed;
    EXPECT_EQ(text(failed, "state_reason"), reason) << failed;
    EXPECT_EQ(payment_fixtures::event_types(server, id).back(), "payout.failed");
  }
  Balance after = balance_of(server, account);
  EXPECT_EQ(after.current, 2'000'000);
  EXPECT_EQ(after.held, 0);
  EXPECT_EQ(after.available, 2'000'000);
  server.check_ledger();
}

TEST(Payouts, AFailingKeyOfTheSandboxDirectoryFailsThePayout) {
  Server server;
  const std::string account = funded_account(server, 1'000'000);
  Reply created = create_payout(
      server, payout_body(account, harness::new_uuid(), 100'000, "cellphone", "3001112992"));
  ASSERT_EQ(created.status, 201) << created.body;
  const json::value failed = settle(server, text(created.json(), "id"));
  EXPECT_EQ(text(failed, "state"), "failed") << failed;
  EXPECT_EQ(text(failed, "state_reason"), "risk_control");
  EXPECT_EQ(balance_of(server, account).available, 1'000'000);
}

TEST(Payouts, APayoutToACollectionKeyOfTheTenantPaysTheCollection) {
  Server server;
  const std::string account = funded_account(server, 3'000'000);
  payment_fixtures::Tenant tenant = payment_fixtures::init_tenant(server);
  const json::value collection = payment_fixtures::create_collection(server, tenant);
  const long long receptor_before = payment_fixtures::tenant_account_balance(server, tenant);
  Reply created = create_payout(
      server, payout_body(account, harness::new_uuid(), 200'000, "alphanumeric",
                          payment_fixtures::key_of(collection)));
  ASSERT_EQ(created.status, 201) << created.body;
  const json::value settled = settle(server, text(created.json(), "id"));
  EXPECT_EQ(text(settled, "state"), "settled") << settled;
  const json::value paid =
      payment_fixtures::get_collection(server, tenant, text(collection, "id"));
  EXPECT_EQ(amount_of(paid, "paid_amount"), 200'000) << paid;
  EXPECT_EQ(payment_fixtures::tenant_account_balance(server, tenant), receptor_before + 200'000);
  Reply attempts = server.get("/api/v1/collections/" + text(collection, "id") + "/attempts",
                              {tenant.bearer});
  ASSERT_EQ(attempts.status, 200) << attempts.body;
  const json::value attempts_body = attempts.json();
  const json::array& listed = attempts_body.at("attempts").as_array();
  ASSERT_EQ(listed.size(), 1u) << attempts.body;
  EXPECT_EQ(text(listed.at(0), "state"), "successful");
  EXPECT_EQ(amount_of(listed.at(0), "amount"), 200'000);
  server.check_ledger();
}

TEST(Payouts, RefusalsChangeNothing) {
  Server& server = Server::shared();
  const std::string account = funded_account(server, 1'000'000);
  auto refused = [&](const std::string& body, long status, const std::string& code,
                     const std::string& path) {
    Reply reply = create_payout(server, body);
    EXPECT_EQ(reply.status, status) << body << "\n" << reply.body;
    EXPECT_EQ(reply.error_code(), code) << reply.body;
    EXPECT_EQ(reply.error_path(), path) << reply.body;
  };
  const std::string id = harness::new_uuid();
  // Above the default maximum (COP 11,552,000.00): the message names both amounts.
  Reply too_much = create_payout(
      server, payout_body(account, id, 1'155'200'001, "cellphone", "3001234567"));
  EXPECT_EQ(too_much.status, 422) << too_much.body;
  EXPECT_EQ(too_much.error_code(), "amount_exceeds_max_limit");
  EXPECT_EQ(too_much.error_path(), "amount.amount");
  EXPECT_NE(too_much.body.find("COP 11,552,000.01"), std::string::npos) << too_much.body;
  EXPECT_NE(too_much.body.find("COP 11,552,000.00"), std::string::npos) << too_much.body;
  refused(payout_body(account, id, 2'000'000, "cellphone", "3001234567"), 422,
          "insufficient_funds", "amount.amount");
  refused(payout_body(account, id, 1'000, "cellphone", "3001234404"), 404, "target_not_found",
          "target.key_value");
  refused(payout_body("acc_AAAAAAAAAAAAAAAAAAAAAA", id, 1'000, "cellphone", "3001234567"), 404,
          "item_not_found", "account_id");
  refused(payout_body(account, id, 1'000, "cellphone", "123"), 400, "validation_error",
          "target.key_value");
  refused(payout_body(account, id, 1'000, "phone", "3001234567"), 400, "validation_error",
          "target.key_type");
  refused(payout_body("not-an-id", id, 1'000, "cellphone", "3001234567"), 400,
          "validation_error", "account_id");
  refused(R"({"account_id":")" + account + R"(","external_id":"x","method":"co_spei",)"
          R"("amount":)" + money(1'000) + R"(,"target":{"key_type":"cellphone",)"
          R"("key_value":"3001234567"}})",
          400, "validation_error", "method");
  refused(R"({"account_id":")" + account + R"(","method":"co_breb","amount":)" + money(1'000) +
              R"(,"target":{"key_type":"cellphone","key_value":"3001234567"}})",
          422, "missing_field", "external_id");
  refused(R"({"account_id":")" + account + R"(","external_id":"x","method":"co_breb","amount":)" +
              money(1'000) + "}",
          422, "missing_field", "target");
  refused(payout_body(account, id, 0, "cellphone", "3001234567"), 400, "validation_error",
          "amount.amount");
  refused(payout_body(account, id, 1'000, "cellphone", "3001234567", R"(,"color":"red")"), 400,
          "validation_error", "color");
  // Nothing was created or held by any of them.
  EXPECT_EQ(server.get("/v1/core/payouts/find_successful_by?external_id=" + id,
                       {server.bearer_core()})
                .status,
            404);
  EXPECT_EQ(balance_of(server, account).held, 0);
  EXPECT_EQ(balance_of(server, account).available, 1'000'000);
}

TEST(Payouts, TheMaximumIsConfigurable) {
  harness::ServerOptions options;
  options.extra_args = {"--transfer-max-amount", "100000"};
  Server server(options);
  const std::string account = funded_account(server, 1'000'000);
  Reply over = create_payout(
      server, payout_body(account, harness::new_uuid(), 100'001, "cellphone", "3001234567"));
  EXPECT_EQ(over.status, 422) << over.body;
  EXPECT_EQ(over.error_code(), "amount_exceeds_max_limit");
  EXPECT_NE(over.body.find("COP 1,000.00"), std::string::npos) << over.body;
  Reply at_maximum = create_payout(
      server, payout_body(account, harness::new_uuid(), 100'000, "cellphone", "3001234567"));
  EXPECT_EQ(at_maximum.status, 201) << at_maximum.body;
}

TEST(Payouts, ReadsAnswer404ForUnknownAndOtherTenantsPayouts) {
  Server& server = Server::shared();
  const std::string account = funded_account(server, 100'000);
  Reply created = create_payout(
      server, payout_body(account, harness::new_uuid(), 1'000, "cellphone", "3001234567"));
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string id = text(created.json(), "id");
  Reply shown = server.get("/v1/core/payouts/" + id, {server.bearer_core()});
  ASSERT_EQ(shown.status, 200) << shown.body;
  EXPECT_EQ(text(shown.json(), "id"), id);
  EXPECT_EQ(server.get("/v1/core/payouts/cpout_AAAAAAAAAAAAAAAAAAAAAA", {server.bearer_core()})
                .error_code(),
            "item_not_found");
  EXPECT_EQ(server.get("/v1/core/payouts/nope", {server.bearer_core()}).status, 400);
  Reply missing = server.get("/v1/core/payouts/find_successful_by", {server.bearer_core()});
  EXPECT_EQ(missing.status, 422) << missing.body;
  EXPECT_EQ(missing.error_path(), "external_id");
  EXPECT_EQ(server.get("/v1/core/payouts/find_successful_by?external_id=never-used",
                       {server.bearer_core()})
                .error_code(),
            "item_not_found");
  // Another tenant's key sees nothing of it.
  json::value other = json::parse(server.command({"tenant", "create", "--name", "other", "--json"}));
  const std::string other_bearer = "Authorization: Bearer " + text(other, "api_key");
  EXPECT_EQ(server.get("/v1/core/payouts/" + id, {other_bearer}).status, 404);
}

TEST(Payouts, ScopesGuardThePayouts) {
  Server& server = Server::shared();
  const std::string account = funded_account(server, 100'000);
  const std::string reader = bearer_with_scopes(server, "payouts:read");
  const std::string body =
      payout_body(account, harness::new_uuid(), 1'000, "cellphone", "3001234567");
  Reply forbidden = server.post("/v1/core/payouts", body, {reader});
  EXPECT_EQ(forbidden.status, 403) << forbidden.body;
  EXPECT_EQ(forbidden.error_code(), "not_authorized");
  const std::string writer = bearer_with_scopes(server, "payouts:write");
  Reply created = server.post("/v1/core/payouts", body, {writer});
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(server.get("/v1/core/payouts/" + text(created.json(), "id"), {reader}).status, 200);
  const std::string ledger_only = bearer_with_scopes(server, "ledger:admin");
  EXPECT_EQ(server.get("/v1/core/payouts/" + text(created.json(), "id"), {ledger_only}).status,
            403);
}

}  // namespace
