// Authorization decisioning by the tenant over HTTP (decisions.md, "Authorization decisioning by
// the tenant"), against a receiver in this process: the endpoint's two fields and their errors,
// who is asked (an explicit card_authorization.request only, the newest enabled endpoint, never
// for Tesoro's own declines), the signed request and its data, each answer and outcome with its
// ISO 8583 code, the fallbacks, the timeout's precision, increments, funds checked again when the
// decision is recorded, idempotent retries, the delivery log (never replayed), and slow endpoints
// that hold no handler thread. Each test has a tenant of its own: an authorization endpoint
// decides every authorization of its tenant.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "harness.hpp"
#include "webhook_receiver.hpp"

using harness::Answer;
using harness::Reply;
using harness::Server;
using harness::text;
using harness::WebhookReceiver;
namespace json = boost::json;

namespace {

std::string money(long long amount) {
  return R"({"amount":)" + std::to_string(amount) + R"(,"currency":"COP"})";
}

std::string purchase(long long amount, const std::string& channel = "online_purchase") {
  return R"({"amount":)" + money(amount) +
         R"(,"merchant":{"name":"Acme Store","mcc":"5812","mid":"MID001","country":"CO"},)"
         R"("channel":")" + channel + R"("})";
}

// A sandbox tenant of its own, with its API key (every core scope) and its ledger account.
struct Tenant {
  const Server& server;
  std::string bearer;
  std::string account_id;

  Reply post(const std::string& path, const std::string& body,
             std::vector<std::string> headers = {}) const {
    headers.push_back(bearer);
    return server.post(path, body, headers);
  }
  Reply get(const std::string& path) const { return server.get(path, {bearer}); }
  Reply patch(const std::string& path, const std::string& body) const {
    return server.send({"PATCH", path, body, {bearer, "Content-Type: application/json"}});
  }
};

Tenant fresh_tenant(const Server& server) {
  static std::atomic<int> made{0};
  const json::value created = json::parse(server.command(
      {"tenant", "create", "--name", "decisions " + std::to_string(++made), "--json"}));
  return {server, "Authorization: Bearer " + text(created, "api_key"),
          text(created, "account_id")};
}

// A virtual card holding `balance` on its prepaid account.
std::string make_card(const Tenant& tenant, long long balance) {
  Reply funded = tenant.post("/v1/sandbox/accounts/" + tenant.account_id + "/fund",
                             R"({"amount":)" + money(balance) + "}");
  EXPECT_EQ(funded.status, 201) << funded.body;
  Reply card = tenant.post("/v1/cards", R"({"account_id":")" + tenant.account_id +
                                            R"(","type":"virtual","initial_balance":)" +
                                            money(balance) + "}");
  EXPECT_EQ(card.status, 201) << card.body;
  return text(card.json(), "id");
}

struct Endpoint {
  std::string id;
  std::string secret;
};

Endpoint make_endpoint(const Tenant& tenant, const std::string& url,
                       const std::string& more = R"("event_types":["card_authorization.request"])") {
  Reply made = tenant.post("/v1/webhook_endpoints", R"({"url":")" + url + R"(",)" + more + "}");
  EXPECT_EQ(made.status, 201) << made.body;
  if (made.status != 201) return {};
  return {text(made.json(), "id"), text(made.json(), "secret")};
}

Reply authorize(const Tenant& tenant, const std::string& card_id, long long amount,
                std::vector<std::string> headers = {}) {
  return tenant.post("/v1/sandbox/cards/" + card_id + "/authorizations", purchase(amount),
                     std::move(headers));
}

Answer answer(const std::string& body, int status = 200, int delay_ms = 0) {
  Answer out;
  out.status = status;
  out.body = body;
  out.delay_ms = delay_ms;
  return out;
}

const Answer k_approve = answer(R"({"approved":true})");

json::value decision_of(const Reply& reply) { return reply.json().at("decision"); }

// The endpoint's delivery log, newest first.
json::array deliveries(const Tenant& tenant, const std::string& endpoint_id) {
  Reply log = tenant.get("/v1/webhook_endpoints/" + endpoint_id + "/deliveries?page_size=100");
  EXPECT_EQ(log.status, 200) << log.body;
  return log.json().at("deliveries").as_array();
}

long long available(const Tenant& tenant, const std::string& card_id) {
  Reply card = tenant.get("/v1/cards/" + card_id);
  EXPECT_EQ(card.status, 200) << card.body;
  return card.json().at("balance").at("available").at("amount").as_int64();
}

}  // namespace

TEST(AuthorizationDecisions, EndpointsShowTheirTwoFieldsWithDefaultsAndCheckThem) {
  Server& server = Server::shared();
  const Tenant tenant = fresh_tenant(server);
  Reply made = tenant.post("/v1/webhook_endpoints", R"({"url":"http://localhost:9/hook"})");
  ASSERT_EQ(made.status, 201) << made.body;
  EXPECT_EQ(made.json().at("authorization_timeout_ms").as_int64(), 2000);
  EXPECT_EQ(text(made.json(), "authorization_fallback"), "decline");
  const std::string id = text(made.json(), "id");

  Reply changed = tenant.patch("/v1/webhook_endpoints/" + id,
                               R"({"authorization_timeout_ms":150,"authorization_fallback":"approve",)"
                               R"("event_types":["card_authorization.request","card_transaction.*"]})");
  ASSERT_EQ(changed.status, 200) << changed.body;
  EXPECT_EQ(changed.json().at("authorization_timeout_ms").as_int64(), 150);
  EXPECT_EQ(text(changed.json(), "authorization_fallback"), "approve");
  Reply shown = tenant.get("/v1/webhook_endpoints/" + id);
  EXPECT_EQ(shown.json().at("authorization_timeout_ms").as_int64(), 150);
  EXPECT_EQ(text(shown.json(), "authorization_fallback"), "approve");
  // The participant surface manages the same endpoints and shows the same fields.
  Reply created = tenant.post("/v1/webhook_endpoints",
                              R"({"url":"http://localhost:9/b","authorization_timeout_ms":10000,)"
                              R"("authorization_fallback":"decline","event_types":["card_authorization.*"]})");
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(created.json().at("authorization_timeout_ms").as_int64(), 10000);

  struct Case {
    std::string body;
    std::string path;
  };
  for (const Case& wrong : std::vector<Case>{
           {R"({"url":"http://localhost:9/c","authorization_timeout_ms":99})",
            "authorization_timeout_ms"},
           {R"({"url":"http://localhost:9/c","authorization_timeout_ms":10001})",
            "authorization_timeout_ms"},
           {R"({"url":"http://localhost:9/c","authorization_timeout_ms":"2000"})",
            "authorization_timeout_ms"},
           {R"({"url":"http://localhost:9/c","authorization_timeout_ms":1500.5})",
            "authorization_timeout_ms"},
           {R"({"url":"http://localhost:9/c","authorization_fallback":"maybe"})",
            "authorization_fallback"},
           {R"({"url":"http://localhost:9/c","event_types":["card_authorization.requests"]})",
            "event_types.0"},
       }) {
    Reply refused = tenant.post("/v1/webhook_endpoints", wrong.body);
    EXPECT_EQ(refused.status, 400) << wrong.body << " " << refused.body;
    EXPECT_EQ(refused.json().at("errors").at(0).at("path").as_string(), wrong.path) << refused.body;
  }
  for (const char* body : {R"({"authorization_timeout_ms":null})",
                           R"({"authorization_fallback":null})",
                           R"({"authorization_timeout_ms":0})"}) {
    Reply refused = tenant.patch("/v1/webhook_endpoints/" + id, body);
    EXPECT_EQ(refused.status, 400) << body << " " << refused.body;
  }
  // Nothing changed by the refused requests.
  Reply after = tenant.get("/v1/webhook_endpoints/" + id);
  EXPECT_EQ(after.json().at("authorization_timeout_ms").as_int64(), 150);
}

TEST(AuthorizationDecisions, AnApprovalIsTheEndpointsAndTheRequestIsSignedWithItsData) {
  Server& server = Server::shared();
  const Tenant tenant = fresh_tenant(server);
  WebhookReceiver receiver;
  receiver.set_default(k_approve);
  const Endpoint endpoint = make_endpoint(tenant, receiver.url("/decide"));
  const std::string card = make_card(tenant, 50'000);

  Reply approved = authorize(tenant, card, 12'000);
  ASSERT_EQ(approved.status, 201) << approved.body;
  EXPECT_EQ(text(approved.json(), "type"), "authorization_approved");
  EXPECT_EQ(text(approved.json(), "state"), "pending");
  EXPECT_EQ(text(approved.json(), "iso8583_code"), "00");
  const json::value decision = decision_of(approved);
  EXPECT_EQ(text(decision, "by"), "endpoint");
  EXPECT_EQ(text(decision, "reason"), "webhook_approved");
  EXPECT_EQ(text(decision, "webhook_endpoint_id"), endpoint.id);
  EXPECT_GE(decision.at("duration_ms").as_int64(), 0);
  EXPECT_TRUE(approved.json().at("decline_reason_detail").is_null());
  EXPECT_EQ(available(tenant, card), 38'000);

  ASSERT_EQ(receiver.count(), 1u);
  const harness::ReceivedRequest request = receiver.requests().at(0);
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.target, "/decide");
  EXPECT_TRUE(harness::signed_with(endpoint.secret, request)) << request.header("webhook-signature");
  const json::value body = json::parse(request.body);
  EXPECT_EQ(text(body, "type"), "card_authorization.request");
  EXPECT_EQ(text(body, "id").rfind("adr_", 0), 0u) << request.body;
  EXPECT_EQ(request.header("webhook-id"), text(body, "id"));
  const long long sent_at = std::stoll(request.header("webhook-timestamp"));
  EXPECT_NEAR(static_cast<double>(sent_at), static_cast<double>(std::time(nullptr)), 30);
  const json::value& data = body.at("data");
  EXPECT_EQ(text(data, "card_transaction_id"), text(approved.json(), "id"));
  EXPECT_EQ(text(data, "card_id"), card);
  EXPECT_EQ(text(data, "account_id"), tenant.account_id);
  EXPECT_EQ(text(data, "kind"), "authorization");
  EXPECT_EQ(data.at("amount"), json::parse(money(12'000)));
  EXPECT_EQ(text(data, "channel"), "online_purchase");
  EXPECT_EQ(text(data.at("merchant"), "mcc"), "5812");
  EXPECT_EQ(text(data.at("merchant"), "name"), "Acme Store");

  // Its line in the delivery log, which no replay can send again.
  const json::array log = deliveries(tenant, endpoint.id);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(text(log[0], "event_type"), "card_authorization.request");
  EXPECT_EQ(text(log[0], "event_id"), text(body, "id"));
  EXPECT_EQ(text(log[0], "outcome"), "webhook_approved");
  EXPECT_EQ(log[0].at("status_code").as_int64(), 200);
  EXPECT_TRUE(log[0].at("delivered").as_bool());
  EXPECT_TRUE(log[0].at("next_attempt_at").is_null());
  Reply replay = tenant.post(
      "/v1/webhook_endpoints/" + endpoint.id + "/deliveries/" + text(body, "id") + "/replay", "");
  EXPECT_EQ(replay.status, 400) << replay.body;  // not an event: nothing to replay
  EXPECT_EQ(replay.error_path(), "event_id");
  EXPECT_TRUE(receiver.stays_at(1, 500));

  // The transaction shows the same decision when read.
  Reply read = tenant.get("/v1/cards/" + card + "/transactions/" + text(approved.json(), "id"));
  EXPECT_EQ(read.json().at("decision"), decision);
}

TEST(AuthorizationDecisions, EachAnswerHasItsOutcomeAndCode) {
  Server& server = Server::shared();
  const Tenant tenant = fresh_tenant(server);
  WebhookReceiver receiver;
  const Endpoint endpoint = make_endpoint(tenant, receiver.url());
  const std::string card = make_card(tenant, 1'000'000);

  struct Case {
    Answer answer;
    std::string type;
    std::string reason;
    std::string by;
    std::string code;
    std::optional<std::string> detail;
  };
  const std::string long_reason(250, 'x');
  const std::vector<Case> cases = {
      {answer(R"({"approved":false,"reason":"over the trip budget"})"), "authorization_declined",
       "webhook_declined", "endpoint", "05", "over the trip budget"},
      {answer(R"({"approved":false})", 201), "authorization_declined", "webhook_declined",
       "endpoint", "05", std::nullopt},
      {answer(R"({"approved":false,"reason":")" + long_reason + R"("})"),
       "authorization_declined", "webhook_declined", "endpoint", "05", std::string(200, 'x')},
      {answer(R"({"approved":true,"reason":"fine","extra":[1]})"), "authorization_approved",
       "webhook_approved", "endpoint", "00", std::nullopt},
      {answer(R"({"approved":true})", 500), "authorization_declined", "webhook_error", "fallback",
       "91", std::nullopt},
      {answer(R"({"approved":true})", 302), "authorization_declined", "webhook_error",
       "fallback", "91", std::nullopt},
      {answer("approved"), "authorization_declined", "webhook_error", "fallback", "91",
       std::nullopt},
      {answer(R"({"approved":"true"})"), "authorization_declined", "webhook_error", "fallback",
       "91", std::nullopt},
      {answer(R"([{"approved":true}])"), "authorization_declined", "webhook_error", "fallback",
       "91", std::nullopt},
      {answer(R"({"approved":true,"reason":7})"), "authorization_declined", "webhook_error",
       "fallback", "91", std::nullopt},
      {answer(""), "authorization_declined", "webhook_error", "fallback", "91", std::nullopt},
  };
  for (const Case& expected : cases) {
    receiver.script({expected.answer});
    Reply decided = authorize(tenant, card, 1'000);
    ASSERT_EQ(decided.status, 201) << expected.answer.body << " " << decided.body;
    const json::value body = decided.json();
    EXPECT_EQ(text(body, "type"), expected.type) << expected.answer.body;
    EXPECT_EQ(text(body, "iso8583_code"), expected.code) << expected.answer.body;
    EXPECT_EQ(text(body.at("decision"), "reason"), expected.reason) << expected.answer.body;
    EXPECT_EQ(text(body.at("decision"), "by"), expected.by) << expected.answer.body;
    if (expected.type == "authorization_declined") {
      EXPECT_EQ(text(body, "decline_reason"), expected.reason);
      EXPECT_EQ(text(body, "state"), "declined");
    } else {
      EXPECT_TRUE(body.at("decline_reason").is_null());
    }
    if (expected.detail) {
      EXPECT_EQ(text(body, "decline_reason_detail"), *expected.detail);
    } else {
      EXPECT_TRUE(body.at("decline_reason_detail").is_null()) << decided.body;
    }
  }
  // Every request is in the log once, with its outcome; an error says what came back.
  const json::array log = deliveries(tenant, endpoint.id);
  ASSERT_EQ(log.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const json::value& line = log[cases.size() - 1 - i];  // newest first
    EXPECT_EQ(text(line, "outcome"), cases[i].reason) << json::serialize(line);
    EXPECT_EQ(line.at("status_code").as_int64(), cases[i].answer.status);
    EXPECT_EQ(line.at("delivered").as_bool(), cases[i].by == "endpoint");
    EXPECT_EQ(line.at("error").is_null(), cases[i].by == "endpoint") << json::serialize(line);
  }
  EXPECT_NE(text(log[cases.size() - 1 - 4], "error").find("HTTP 500"), std::string::npos);
  // Only the approved one holds anything.
  EXPECT_EQ(available(tenant, card), 999'000);
}

TEST(AuthorizationDecisions, ATimeoutIsHonouredAndFallsBack) {
  Server& server = Server::shared();
  const Tenant tenant = fresh_tenant(server);
  WebhookReceiver receiver;
  receiver.set_default(answer(R"({"approved":true})", 200, 1500));  // always too late
  const Endpoint endpoint =
      make_endpoint(tenant, receiver.url(),
                    R"("event_types":["card_authorization.request"],"authorization_timeout_ms":200)");
  const std::string card = make_card(tenant, 100'000);

  const auto started = std::chrono::steady_clock::now();
  Reply declined = authorize(tenant, card, 5'000);
  const auto took = std::chrono::steady_clock::now() - started;
  ASSERT_EQ(declined.status, 201) << declined.body;
  EXPECT_EQ(text(declined.json(), "decline_reason"), "webhook_timeout");
  EXPECT_EQ(text(declined.json(), "iso8583_code"), "91");
  const json::value decision = decision_of(declined);
  EXPECT_EQ(text(decision, "by"), "fallback");
  // Within 50 ms of the endpoint's timeout, and answered long before the late answer.
  EXPECT_GE(decision.at("duration_ms").as_int64(), 200);
  EXPECT_LE(decision.at("duration_ms").as_int64(), 250);
  EXPECT_LT(took, std::chrono::milliseconds(1000));
  const json::array log = deliveries(tenant, endpoint.id);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(text(log[0], "outcome"), "webhook_timeout");
  EXPECT_TRUE(log[0].at("status_code").is_null());
  EXPECT_NE(text(log[0], "error").find("ignored"), std::string::npos) << text(log[0], "error");

  // With the fallback `approve`, the same timeout approves.
  Reply patched = tenant.patch("/v1/webhook_endpoints/" + endpoint.id,
                               R"({"authorization_fallback":"approve"})");
  ASSERT_EQ(patched.status, 200) << patched.body;
  Reply approved = authorize(tenant, card, 5'000);
  ASSERT_EQ(approved.status, 201) << approved.body;
  EXPECT_EQ(text(approved.json(), "type"), "authorization_approved");
  EXPECT_EQ(text(decision_of(approved), "by"), "fallback");
  EXPECT_EQ(text(decision_of(approved), "reason"), "webhook_timeout");
  EXPECT_EQ(available(tenant, card), 95'000);
}

TEST(AuthorizationDecisions, AnUnreachableEndpointIsAnErrorDecidedByItsFallback) {
  Server& server = Server::shared();
  const Tenant tenant = fresh_tenant(server);
  std::string closed_url;
  {
    WebhookReceiver gone;  // a port nobody listens on once it is destroyed
    closed_url = gone.url();
  }
  const Endpoint endpoint =
      make_endpoint(tenant, closed_url,
                    R"("event_types":["card_authorization.request"],"authorization_fallback":"approve")");
  const std::string card = make_card(tenant, 10'000);
  Reply approved = authorize(tenant, card, 1'000);
  ASSERT_EQ(approved.status, 201) << approved.body;
  EXPECT_EQ(text(approved.json(), "type"), "authorization_approved");
  EXPECT_EQ(text(decision_of(approved), "reason"), "webhook_error");
  EXPECT_EQ(text(decision_of(approved), "by"), "fallback");
  const json::array log = deliveries(tenant, endpoint.id);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(text(log[0], "outcome"), "webhook_error");
  EXPECT_TRUE(log[0].at("status_code").is_null());
  EXPECT_FALSE(text(log[0], "error").empty());
}

TEST(AuthorizationDecisions, OnlyAnExplicitListingIsAskedAndTheNewestEnabledOne) {
  Server& server = Server::shared();
  const Tenant tenant = fresh_tenant(server);
  WebhookReceiver everything, pattern, cards, older, newer;
  for (WebhookReceiver* receiver : {&everything, &pattern, &cards, &older, &newer}) {
    receiver->set_default(answer(R"({"approved":false,"reason":"asked"})"));
  }
  make_endpoint(tenant, everything.url(), R"("event_types":[])");
  make_endpoint(tenant, pattern.url(), R"("event_types":["card_authorization.*"])");
  make_endpoint(tenant, cards.url(), R"("event_types":["card_transaction.*"])");
  const std::string card = make_card(tenant, 10'000);
  Reply tesoro = authorize(tenant, card, 100);
  ASSERT_EQ(tesoro.status, 201) << tesoro.body;
  EXPECT_EQ(text(tesoro.json(), "type"), "authorization_approved");
  EXPECT_EQ(decision_of(tesoro), json::parse(R"({"by":"tesoro","webhook_endpoint_id":null,)"
                                             R"("reason":"approved","duration_ms":null})"));

  const Endpoint first = make_endpoint(tenant, older.url());
  const Endpoint second = make_endpoint(tenant, newer.url());
  Reply asked = authorize(tenant, card, 100);
  EXPECT_EQ(text(decision_of(asked), "webhook_endpoint_id"), second.id);
  EXPECT_EQ(newer.count(), 1u);
  EXPECT_EQ(older.count(), 0u);
  // The newest disabled: the older one decides.
  ASSERT_EQ(tenant.patch("/v1/webhook_endpoints/" + second.id, R"({"enabled":false})").status, 200);
  Reply by_older = authorize(tenant, card, 100);
  EXPECT_EQ(text(decision_of(by_older), "webhook_endpoint_id"), first.id);
  EXPECT_EQ(older.count(), 1u);
  // Events still reach the endpoints subscribed to them, never the request itself.
  ASSERT_TRUE(everything.wait_for(1));
  for (const auto& request : everything.requests()) {
    EXPECT_NE(text(json::parse(request.body), "type"), "card_authorization.request");
  }
  EXPECT_EQ(pattern.count(), 0u);
}

TEST(AuthorizationDecisions, TesorosOwnDeclinesNeverReachTheEndpoint) {
  Server& server = Server::shared();
  const Tenant tenant = fresh_tenant(server);
  WebhookReceiver receiver;
  receiver.set_default(k_approve);
  const Endpoint endpoint = make_endpoint(tenant, receiver.url());
  const std::string card = make_card(tenant, 1'000);
  Reply poor = authorize(tenant, card, 5'000);
  ASSERT_EQ(poor.status, 201) << poor.body;
  EXPECT_EQ(text(poor.json(), "decline_reason"), "insufficient_funds");
  EXPECT_EQ(decision_of(poor), json::parse(R"({"by":"tesoro","webhook_endpoint_id":null,)"
                                           R"("reason":"insufficient_funds","duration_ms":null})"));
  Reply atm = tenant.post("/v1/sandbox/cards/" + card + "/authorizations",
                          purchase(100, "atm_withdrawal"));
  EXPECT_EQ(text(atm.json(), "decline_reason"), "not_allowed");
  Reply unknown = authorize(tenant, "car_" + std::string(22, 'A'), 100);
  EXPECT_EQ(unknown.status, 404) << unknown.body;
  EXPECT_TRUE(receiver.stays_at(0, 300));
  EXPECT_TRUE(deliveries(tenant, endpoint.id).empty());
}

TEST(AuthorizationDecisions, IncrementsAreAskedTooAndADeclineChangesNothing) {
  Server& server = Server::shared();
  const Tenant tenant = fresh_tenant(server);
  WebhookReceiver receiver;
  const Endpoint endpoint = make_endpoint(tenant, receiver.url());
  const std::string card = make_card(tenant, 10'000);
  receiver.script({k_approve, k_approve,
                   answer(R"({"approved":false,"reason":"tip too large"})")});
  Reply approved = authorize(tenant, card, 1'000);
  ASSERT_EQ(approved.status, 201) << approved.body;
  const std::string id = text(approved.json(), "id");

  Reply grown = tenant.post("/v1/sandbox/card_transactions/" + id + "/increment",
                            R"({"amount":)" + money(500) + "}");
  ASSERT_EQ(grown.status, 200) << grown.body;
  EXPECT_EQ(grown.json().at("amount").at("amount").as_int64(), 1'500);
  Reply refused = tenant.post("/v1/sandbox/card_transactions/" + id + "/increment",
                              R"({"amount":)" + money(700) + "}");
  EXPECT_EQ(refused.status, 422) << refused.body;
  EXPECT_EQ(refused.error_code(), "authorization_declined");
  EXPECT_NE(refused.body.find("tip too large"), std::string::npos) << refused.body;
  EXPECT_EQ(available(tenant, card), 8'500);
  Reply read = tenant.get("/v1/cards/" + card + "/transactions/" + id);
  EXPECT_EQ(read.json().at("amount").at("amount").as_int64(), 1'500);

  ASSERT_EQ(receiver.count(), 3u);
  const json::value asked = json::parse(receiver.requests().at(2).body);
  EXPECT_EQ(text(asked.at("data"), "kind"), "increment");
  EXPECT_EQ(text(asked.at("data"), "card_transaction_id"), id);
  EXPECT_EQ(asked.at("data").at("amount"), json::parse(money(700)));
  const json::array log = deliveries(tenant, endpoint.id);
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(text(log[0], "outcome"), "webhook_declined");
  // An increment Tesoro refuses itself is not asked.
  Reply too_much = tenant.post("/v1/sandbox/card_transactions/" + id + "/increment",
                               R"({"amount":)" + money(50'000) + "}");
  EXPECT_EQ(too_much.status, 422);
  EXPECT_EQ(too_much.error_code(), "insufficient_funds");
  EXPECT_TRUE(receiver.stays_at(3, 300));
}

TEST(AuthorizationDecisions, FundsAreCheckedAgainWhenTheDecisionIsRecorded) {
  Server& server = Server::shared();
  const Tenant tenant = fresh_tenant(server);
  WebhookReceiver receiver;
  receiver.set_default(answer(R"({"approved":true})", 200, 400));
  const Endpoint endpoint = make_endpoint(tenant, receiver.url());
  const std::string card = make_card(tenant, 1'000);
  // Both pass Tesoro's checks before either is decided; only one can have the money.
  auto first = std::async(std::launch::async, [&] { return authorize(tenant, card, 1'000); });
  auto second = std::async(std::launch::async, [&] { return authorize(tenant, card, 1'000); });
  const Reply a = first.get();
  const Reply b = second.get();
  ASSERT_EQ(a.status, 201) << a.body;
  ASSERT_EQ(b.status, 201) << b.body;
  ASSERT_EQ(receiver.count(), 2u);
  const bool a_won = text(a.json(), "type") == "authorization_approved";
  const Reply& lost = a_won ? b : a;
  const Reply& won = a_won ? a : b;
  EXPECT_EQ(text(won.json(), "type"), "authorization_approved");
  EXPECT_EQ(text(lost.json(), "decline_reason"), "insufficient_funds");
  const json::value decision = decision_of(lost);
  EXPECT_EQ(text(decision, "by"), "tesoro");
  EXPECT_EQ(text(decision, "reason"), "insufficient_funds");
  EXPECT_EQ(text(decision, "webhook_endpoint_id"), endpoint.id);
  EXPECT_GE(decision.at("duration_ms").as_int64(), 400);
  EXPECT_EQ(available(tenant, card), 0);
}

TEST(AuthorizationDecisions, AnIdempotentRetryReplaysTheDecisionWithoutAskingAgain) {
  Server& server = Server::shared();
  const Tenant tenant = fresh_tenant(server);
  WebhookReceiver receiver;
  receiver.set_default(answer(R"({"approved":true})", 200, 300));
  make_endpoint(tenant, receiver.url());
  const std::string card = make_card(tenant, 10'000);
  const std::string key = "X-Idempotency-Key: 6f1c3a52-7d2e-4b8f-9a41-0c5e8d7b2f13";
  auto first = std::async(std::launch::async, [&] { return authorize(tenant, card, 700, {key}); });
  ASSERT_TRUE(receiver.wait_for(1, 5000));
  Reply during = authorize(tenant, card, 700, {key});  // the first is still being decided
  EXPECT_EQ(during.status, 409) << during.body;
  EXPECT_EQ(during.error_code(), "idempotency_key_in_use");
  const Reply made = first.get();
  ASSERT_EQ(made.status, 201) << made.body;
  Reply again = authorize(tenant, card, 700, {key});
  EXPECT_EQ(again.status, 201);
  EXPECT_EQ(again.body, made.body);
  EXPECT_EQ(again.header("idempotent-replayed"), "true");
  EXPECT_EQ(receiver.count(), 1u);
  EXPECT_EQ(available(tenant, card), 9'300);
}

TEST(AuthorizationDecisions, WaitingOnASlowEndpointHoldsNoHandlerThread) {
  Server& server = Server::shared();  // 16 handler threads
  const Tenant tenant = fresh_tenant(server);
  WebhookReceiver receiver;
  receiver.set_default(answer(R"({"approved":true})", 200, 2500));
  make_endpoint(tenant, receiver.url(),
                R"("event_types":["card_authorization.request"],"authorization_timeout_ms":5000)");
  const std::string card = make_card(tenant, 1'000'000);
  constexpr int k_waiting = 48;  // three times the handler threads
  std::vector<std::future<Reply>> waiting;
  for (int i = 0; i < k_waiting; ++i) {
    waiting.push_back(std::async(std::launch::async, [&] { return authorize(tenant, card, 10); }));
  }
  ASSERT_TRUE(receiver.wait_for(k_waiting, 10000)) << receiver.count();
  // Every one of them waits on the endpoint now; writes of others go through at once.
  const auto started = std::chrono::steady_clock::now();
  const std::string account = R"({"name":"probe","type":"savings_account","currency":"COP"})";
  Reply holder = tenant.post("/v1/ledger/accounts", account);
  Reply other = server.post("/v1/ledger/accounts", account, {server.bearer_core()});
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(holder.status, 201) << holder.body;
  EXPECT_EQ(other.status, 201) << other.body;
  EXPECT_LT(took, std::chrono::milliseconds(1000));
  for (auto& reply : waiting) {
    const Reply done = reply.get();
    EXPECT_EQ(done.status, 201) << done.body;
    EXPECT_EQ(text(done.json(), "type"), "authorization_approved");
  }
  EXPECT_EQ(available(tenant, card), 1'000'000 - 10 * k_waiting);
}

// Whether a tenant has an authorization endpoint is read with its credential on every request
// (tenants.authorization_endpoints): an endpoint registered, disabled or deleted through one
// node changes what the next authorization on another node does.
TEST(AuthorizationDecisions, AnEndpointChangedOnOneNodeDecidesOnTheOther) {
  if (!harness::is_postgres()) GTEST_SKIP() << "several nodes need PostgreSQL";
  Server server;
  const int second = server.start_extra_node();
  const Tenant tenant = fresh_tenant(server);
  const std::string card = make_card(tenant, 10'000);
  auto authorize_on_second = [&] {
    return server.send_to(second, {"POST", "/v1/sandbox/cards/" + card + "/authorizations",
                                   purchase(100),
                                   {tenant.bearer, "Content-Type: application/json"}});
  };
  Reply before = authorize_on_second();
  ASSERT_EQ(before.status, 201) << before.body;
  EXPECT_EQ(text(decision_of(before), "by"), "tesoro");
  WebhookReceiver receiver;
  receiver.set_default(answer(R"({"approved":false,"reason":"second node"})"));
  const Endpoint endpoint = make_endpoint(tenant, receiver.url());
  Reply asked = authorize_on_second();
  EXPECT_EQ(text(decision_of(asked), "by"), "endpoint") << asked.body;
  EXPECT_EQ(text(asked.json(), "decline_reason_detail"), "second node");
  ASSERT_EQ(tenant.patch("/v1/webhook_endpoints/" + endpoint.id, R"({"enabled":false})").status,
            200);
  Reply disabled = authorize_on_second();
  EXPECT_EQ(text(decision_of(disabled), "by"), "tesoro") << disabled.body;
  EXPECT_EQ(receiver.count(), 1u);
}
