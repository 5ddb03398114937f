// Webhook deliveries over HTTP, against a receiver in this process (webhook_receiver.hpp):
// signed Standard Webhooks requests checked with OpenSSL alone and with the official
// `standardwebhooks` package; the retry schedule walked with clock advances; eight failures;
// Retry-After; 410; order per endpoint; event_types; replay; a server killed mid-delivery; two
// nodes on PostgreSQL; refused and unreachable addresses; the delivery log's API and its errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <set>
#include <thread>

#include "harness.hpp"
#include "payment_fixtures.hpp"
#include "webhook_receiver.hpp"

using harness::Answer;
using harness::base64_encode;
using harness::signed_with;
using harness::Reply;
using harness::Server;
using harness::WebhookReceiver;
namespace json = boost::json;

namespace {


std::string node_verifier() {
  return std::string(TESORO_SOURCE_DIR) + "/tests/node";
}

// The official library's verdict, or nullopt when node or the package is not installed.
std::optional<bool> verified_by_standardwebhooks(const std::string& secret,
                                                 const harness::ReceivedRequest& request) {
  int code = 0;
  harness::run_capture("command -v node >/dev/null && test -d " +
                           harness::shell_quote(node_verifier() + "/node_modules/standardwebhooks"),
                       &code);
  if (code != 0) return std::nullopt;
  json::object headers;
  for (const auto& [name, value] : request.headers) headers[name] = value;
  json::object input{{"secret", secret}, {"body", request.body}, {"headers", headers}};
  char path[] = "/tmp/tesoro-webhook-XXXXXX";
  int fd = ::mkstemp(path);
  ::close(fd);
  std::ofstream(path) << json::serialize(input);
  std::string out = harness::run_capture("node " + harness::shell_quote(node_verifier() + "/verify.js") +
                                             " < " + harness::shell_quote(path) + " 2>&1",
                                         &code);
  std::remove(path);
  EXPECT_EQ(code, 0) << "standardwebhooks refused the delivery: " << out;
  return code == 0 && out.find(request.header("webhook-id")) != std::string::npos;
}

// --- The API -----------------------------------------------------------------------------------

struct Endpoint {
  std::string id;
  std::string secret;
};

Endpoint add_endpoint(const Server& server, const std::string& url,
                      const std::vector<std::string>& event_types = {}) {
  json::object body{{"url", url}};
  if (!event_types.empty()) {
    json::array types;
    for (const std::string& type : event_types) types.emplace_back(type);
    body["event_types"] = std::move(types);
  }
  Reply made = server.post("/v1/webhook_endpoints", json::serialize(body), {server.bearer_core()});
  EXPECT_EQ(made.status, 201) << made.body;
  if (made.status != 201) return {};
  return {harness::text(made.json(), "id"), harness::text(made.json(), "secret")};
}

// An account_holder.created event; returns the holder's id.
std::string make_account_holder(const Server& server, int port = 0) {
  harness::Request request{"POST", "/v1/ledger/account_holders",
                           harness::account_holder_body(harness::new_uuid()),
                           {server.bearer_core()}};
  Reply made = port == 0 ? server.send(request) : server.send_to(port, request);
  EXPECT_EQ(made.status, 201) << made.body;
  return made.status == 201 ? harness::text(made.json(), "id") : "";
}

// What most tests start from: an endpoint for the account holders' events, and one such event
// sent to it (the receiver has the request).
Endpoint endpoint_with_one_event(const Server& server, const WebhookReceiver& receiver) {
  const Endpoint endpoint = add_endpoint(server, receiver.url(), {"account_holder.created"});
  make_account_holder(server);
  EXPECT_TRUE(receiver.wait_for(1));
  return endpoint;
}

void advance(const Server& server, long long seconds) {
  Reply moved = server.post("/v1/sandbox/clock/advance",
                            "{\"seconds\":" + std::to_string(seconds) + "}",
                            {server.bearer_core()});
  ASSERT_EQ(moved.status, 200) << moved.body;
}

std::string log_path(const std::string& endpoint_id, const std::string& surface = "/v1") {
  return surface + "/webhook_endpoints/" + endpoint_id + "/deliveries";
}

// The log once it has at least `n` attempts (it is written after each response), newest first.
json::array wait_for_log(const Server& server, const std::string& endpoint_id, std::size_t n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  json::array deliveries;
  do {
    Reply reply = server.get(log_path(endpoint_id) + "?page_size=100", {server.bearer_core()});
    EXPECT_EQ(reply.status, 200) << reply.body;
    if (reply.status != 200) break;
    deliveries = reply.json().at("deliveries").as_array();
    if (deliveries.size() >= n) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while (std::chrono::steady_clock::now() < deadline);
  EXPECT_GE(deliveries.size(), n) << json::serialize(deliveries);
  return deliveries;
}

json::value body_of(const harness::ReceivedRequest& request) { return json::parse(request.body); }

std::string event_type_of(const harness::ReceivedRequest& request) {
  return harness::text(body_of(request), "type");
}

// Seconds since the epoch of the server's ISO timestamps.
std::int64_t epoch_seconds(const json::value& iso) {
  std::tm parts{};
  std::string text(iso.as_string());
  EXPECT_NE(::strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &parts), nullptr) << text;
  return static_cast<std::int64_t>(::timegm(&parts));
}

// The seconds between an attempt and the retry it scheduled.
std::int64_t retry_wait_seconds(const json::value& attempt) {
  return epoch_seconds(attempt.at("next_attempt_at")) - epoch_seconds(attempt.at("attempted_at"));
}

// A card with money on it, for authorizations.
std::string make_card(const Server& server) {
  std::string account(server.credentials().at("account_id").as_string());
  Reply funded = server.post("/v1/sandbox/accounts/" + account + "/fund",
                             R"({"amount":{"amount":500000,"currency":"COP"}})",
                             {server.bearer_core()});
  EXPECT_EQ(funded.status, 201) << funded.body;
  Reply card = server.post("/v1/cards",
                           R"({"account_id":")" + account +
                               R"(","type":"virtual","initial_balance":{"amount":500000,"currency":"COP"}})",
                           {server.bearer_core()});
  EXPECT_EQ(card.status, 201) << card.body;
  return harness::text(card.json(), "id");
}

// --- Tests -------------------------------------------------------------------------------------

TEST(WebhookDeliveries, ACollectionPaymentAndACardAuthorizationArriveSigned) {
  Server server;
  WebhookReceiver receiver;
  const Endpoint endpoint =
      add_endpoint(server, receiver.url(), {"collection.attempt_successful",
                                            "card_transaction.authorization_approved"});
  const payment_fixtures::Tenant tenant = payment_fixtures::init_tenant(server);
  const json::value collection = payment_fixtures::create_collection(server, tenant);
  Reply paid = payment_fixtures::attempt(
      server, tenant, payment_fixtures::attempt_body(5000, payment_fixtures::key_of(collection)));
  ASSERT_LT(paid.status, 300) << paid.body;
  const std::string card_id = make_card(server);
  Reply authorized = server.post("/v1/sandbox/cards/" + card_id + "/authorizations",
                                 R"({"amount":{"amount":1200,"currency":"COP"},"merchant":)"
                                 R"({"name":"Acme","mcc":"5812","mid":"M1","country":"CO"},)"
                                 R"("channel":"online_purchase"})",
                                 {server.bearer_core()});
  ASSERT_EQ(authorized.status, 201) << authorized.body;

  ASSERT_TRUE(receiver.wait_for(2));
  EXPECT_TRUE(receiver.stays_at(2, 500)) << "only the two subscribed types";
  std::set<std::string> types;
  const std::int64_t now = static_cast<std::int64_t>(std::time(nullptr));
  for (const harness::ReceivedRequest& request : receiver.requests()) {
    SCOPED_TRACE(request.body);
    EXPECT_EQ(request.method, "POST");
    EXPECT_EQ(request.target, "/webhooks");
    EXPECT_EQ(request.header("content-type"), "application/json");
    EXPECT_EQ(request.header("user-agent"), "Tesoro-Webhooks/1");
    const json::value body = body_of(request);
    ASSERT_TRUE(body.is_object());
    EXPECT_EQ(body.as_object().size(), 4u) << "exactly id, type, timestamp, data";
    EXPECT_EQ(harness::text(body, "id"), request.header("webhook-id"));
    EXPECT_EQ(request.header("webhook-id").rfind("evt_", 0), 0u);
    EXPECT_TRUE(body.at("data").is_object());
    EXPECT_NEAR(epoch_seconds(body.at("timestamp")), now, 60);
    EXPECT_NEAR(std::stoll(request.header("webhook-timestamp")), now, 60)
        << "webhook-timestamp is real Unix seconds";
    EXPECT_TRUE(signed_with(endpoint.secret, request)) << request.header("webhook-signature");
    EXPECT_FALSE(signed_with("whsec_" + base64_encode(std::string(32, 'x')), request));
    if (auto verified = verified_by_standardwebhooks(endpoint.secret, request)) {
      EXPECT_TRUE(*verified);
    } else {
      std::cout << "[ note ] node or tests/node/node_modules/standardwebhooks missing: "
                   "the official library's check was skipped\n";
    }
    types.insert(event_type_of(request));
  }
  EXPECT_EQ(types, (std::set<std::string>{"collection.attempt_successful",
                                          "card_transaction.authorization_approved"}));
  const json::value card_event = body_of(receiver.requests().at(
      event_type_of(receiver.requests().at(0)) == "card_transaction.authorization_approved" ? 0
                                                                                            : 1));
  EXPECT_EQ(harness::text(card_event.at("data"), "card_transaction_id"),
            harness::text(authorized.json(), "id"));

  // A tampered body no longer verifies.
  harness::ReceivedRequest tampered = receiver.requests().at(0);
  tampered.body.replace(tampered.body.size() - 2, 1, " ");
  EXPECT_FALSE(signed_with(endpoint.secret, tampered));

  json::array log = wait_for_log(server, endpoint.id, 2);
  ASSERT_EQ(log.size(), 2u);
  for (const json::value& attempt : log) {
    EXPECT_EQ(harness::text(attempt, "id").rfind("whd_", 0), 0u);
    EXPECT_EQ(attempt.at("attempt").as_int64(), 1);
    EXPECT_EQ(attempt.at("replay").as_bool(), false);
    EXPECT_EQ(attempt.at("delivered").as_bool(), true);
    EXPECT_EQ(attempt.at("status_code").as_int64(), 200);
    EXPECT_GE(attempt.at("latency_ms").as_int64(), 0);
    EXPECT_TRUE(attempt.at("error").is_null());
    EXPECT_TRUE(attempt.at("next_attempt_at").is_null());
  }
  // Newest first: the card authorization came last.
  EXPECT_EQ(harness::text(log.at(0), "event_type"), "card_transaction.authorization_approved");
  EXPECT_EQ(harness::text(log.at(1), "event_type"), "collection.attempt_successful");
}

TEST(WebhookDeliveries, AnOutgoingTransferArrivesAsItWasInEachOfItsStates) {
  Server server;
  WebhookReceiver receiver;
  const std::vector<std::string> states = {"created", "processing", "target_resolved", "held",
                                           "sent_to_breb_provider", "successful"};
  std::vector<std::string> types;
  for (const std::string& state : states) types.push_back("outgoing_transfer." + state);
  const Endpoint endpoint = add_endpoint(server, receiver.url(), types);
  const std::string bearer = "Authorization: Bearer " + server.access_token();
  Reply originators = server.get("/api/v1/tenant/accounts?role=originator", {bearer});
  ASSERT_EQ(originators.status, 200) << originators.body;
  const std::string originator = harness::text(originators.json().at(0), "id");
  ASSERT_EQ(server.post("/api/v1/sandbox/tenant/accounts/" + originator + "/fund",
                        R"({"amount":{"amount":100000,"currency":"COP"}})", {bearer})
                .status,
            201);
  Reply sent = server.post(
      "/api/v1/outgoing_transfers",
      R"({"tenant_account_id":")" + originator +
          R"(","transfers":[{"external_id":"hook-1","amount":{"amount":1000,"currency":"COP"},)"
          R"("query":{"format":"plain_key","value":"3001234567"}}]})",
      {bearer});
  ASSERT_EQ(sent.status, 201) << sent.body;
  const json::value accepted = sent.json().at("accepted_transfers").at(0);
  ASSERT_TRUE(receiver.wait_for(1));
  EXPECT_EQ(body_of(receiver.requests().at(0)).at("data"), accepted)
      << "the created event shows the transfer as the batch accepted it";

  advance(server, 10);  // a late processor: every step at once, each at its scheduled time
  ASSERT_TRUE(receiver.wait_for(states.size()));
  Reply final_reply = server.get("/api/v1/outgoing_transfers/" + harness::text(accepted, "id"),
                                 {bearer});
  ASSERT_EQ(final_reply.status, 200) << final_reply.body;
  const json::value final_transfer = final_reply.json();
  ASSERT_EQ(harness::text(final_transfer, "state"), "successful");
  const auto requests = receiver.requests();
  ASSERT_EQ(requests.size(), states.size());
  for (std::size_t i = 0; i < states.size(); ++i) {
    SCOPED_TRACE(requests[i].body);
    const json::value body = body_of(requests[i]);
    EXPECT_EQ(event_type_of(requests[i]), types[i]) << "in the order of the flow";
    const json::object& data = body.at("data").as_object();
    EXPECT_EQ(harness::text(data, "state"), states[i]);
    EXPECT_EQ(harness::text(data, "updated_at"), harness::text(body, "timestamp"))
        << "updated at the time of its step";
    // Set at acceptance (T110), when sent (T120) and at the end (T130): no mark from later.
    const std::size_t marks = i < 4 ? 1 : (i == 4 ? 2 : 3);
    EXPECT_EQ(data.at("timemarks").as_object().size(), marks);
    // Everything else as the transfer is now.
    json::object rest = data;
    json::object now = final_transfer.as_object();
    for (const char* changing : {"state", "timemarks", "updated_at"}) {
      rest.erase(changing);
      now.erase(changing);
    }
    EXPECT_EQ(rest, now);
    // The event as GET /v1/events/{id} reads it carries the same data.
    Reply polled = server.get("/v1/events/" + requests[i].header("webhook-id"),
                              {server.bearer_core()});
    ASSERT_EQ(polled.status, 200) << polled.body;
    EXPECT_EQ(polled.json().at("data"), body.at("data"));
    EXPECT_TRUE(signed_with(endpoint.secret, requests[i]));
  }
  EXPECT_EQ(body_of(requests.back()).at("data"), final_transfer);
}

TEST(WebhookDeliveries, AFailingReceiverIsRetriedOnTheScheduleAsTheClockAdvances) {
  Server server;
  WebhookReceiver receiver;
  receiver.script({{500, {}, "broken"}, {503}, {500}});  // then 200
  const Endpoint endpoint = endpoint_with_one_event(server, receiver);
  json::array log = wait_for_log(server, endpoint.id, 1);
  EXPECT_EQ(log.at(0).at("status_code").as_int64(), 500);
  EXPECT_EQ(harness::text(log.at(0), "error"), "HTTP 500: broken");
  EXPECT_EQ(retry_wait_seconds(log.at(0)), 5);
  EXPECT_TRUE(receiver.stays_at(1, 700)) << "no retry before the tenant clock says so";

  advance(server, 5);
  ASSERT_TRUE(receiver.wait_for(2));
  log = wait_for_log(server, endpoint.id, 2);
  EXPECT_EQ(log.at(0).at("attempt").as_int64(), 2);
  EXPECT_EQ(retry_wait_seconds(log.at(0)), 300);

  advance(server, 280);
  EXPECT_TRUE(receiver.stays_at(2, 700)) << "5 min after the second failure, not before";
  advance(server, 20);
  ASSERT_TRUE(receiver.wait_for(3));
  log = wait_for_log(server, endpoint.id, 3);
  EXPECT_EQ(retry_wait_seconds(log.at(0)), 1800);

  advance(server, 1800);
  ASSERT_TRUE(receiver.wait_for(4));
  log = wait_for_log(server, endpoint.id, 4);
  ASSERT_EQ(log.size(), 4u);
  const std::vector<std::int64_t> statuses = {200, 500, 503, 500};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(log.at(i).at("attempt").as_int64(), static_cast<std::int64_t>(4 - i));
    EXPECT_EQ(log.at(i).at("status_code").as_int64(), statuses[i]);
    EXPECT_EQ(log.at(i).at("delivered").as_bool(), i == 0);
  }
  EXPECT_TRUE(log.at(0).at("next_attempt_at").is_null());
  const auto requests = receiver.requests();
  for (const auto& request : requests) {
    EXPECT_EQ(request.header("webhook-id"), requests.at(0).header("webhook-id"))
        << "every attempt carries the event's id";
    EXPECT_EQ(request.body, requests.at(0).body);
  }
  advance(server, 86400);
  EXPECT_TRUE(receiver.stays_at(4, 700)) << "delivered: never sent again";
}

TEST(WebhookDeliveries, AfterEightFailedAttemptsTheDeliveryFails) {
  Server server;
  WebhookReceiver receiver;
  receiver.set_default({500});
  const Endpoint endpoint = endpoint_with_one_event(server, receiver);
  const long long waits[] = {5, 300, 1800, 7200, 18000, 36000, 36000};
  for (std::size_t i = 0; i < 7; ++i) {
    wait_for_log(server, endpoint.id, i + 1);
    advance(server, waits[i]);
    ASSERT_TRUE(receiver.wait_for(i + 2)) << "attempt " << i + 2;
  }
  json::array log = wait_for_log(server, endpoint.id, 8);
  ASSERT_EQ(log.size(), 8u);
  EXPECT_EQ(log.at(0).at("attempt").as_int64(), 8);
  EXPECT_TRUE(log.at(0).at("next_attempt_at").is_null()) << "no retry after the eighth";
  EXPECT_EQ(log.at(1).at("attempt").as_int64(), 7);
  EXPECT_EQ(retry_wait_seconds(log.at(1)), 36000);
  advance(server, 10 * 86400);
  EXPECT_TRUE(receiver.stays_at(8, 1000));
  EXPECT_EQ(payment_fixtures::query_column(server, "SELECT state FROM webhook_deliveries"),
            std::vector<std::string>{"failed"});

  // Pages of the log: 10 to 500 a page; past the last, empty.
  Reply second = server.get(log_path(endpoint.id) + "?page_number=2&page_size=10",
                            {server.bearer_core()});
  ASSERT_EQ(second.status, 200) << second.body;
  EXPECT_TRUE(second.json().at("deliveries").as_array().empty());
  EXPECT_EQ(second.json().at("pagination").at("total_items").as_int64(), 8);
  Reply bad = server.get(log_path(endpoint.id) + "?page_size=5", {server.bearer_core()});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.error_path(), "page_size");
}

TEST(WebhookDeliveries, RetryAfterIsHonouredUpToTheLongestStep) {
  Server server;
  WebhookReceiver receiver;
  receiver.script({{503, "3600"}, {429, "999999"}});  // then 200
  const Endpoint endpoint = endpoint_with_one_event(server, receiver);
  json::array log = wait_for_log(server, endpoint.id, 1);
  EXPECT_EQ(retry_wait_seconds(log.at(0)), 3600) << "later than the schedule's 5 s";
  advance(server, 5);
  EXPECT_TRUE(receiver.stays_at(1, 700)) << "the schedule says now, Retry-After says not yet";
  advance(server, 3600);
  ASSERT_TRUE(receiver.wait_for(2));
  log = wait_for_log(server, endpoint.id, 2);
  EXPECT_EQ(retry_wait_seconds(log.at(0)), 36000) << "capped at the longest step, 10 h";
  advance(server, 35000);
  EXPECT_TRUE(receiver.stays_at(2, 700));
  advance(server, 1000);
  ASSERT_TRUE(receiver.wait_for(3));
  EXPECT_EQ(wait_for_log(server, endpoint.id, 3).at(0).at("delivered").as_bool(), true);
}

TEST(WebhookDeliveries, A410DisablesTheEndpointUntilItIsEnabledAgain) {
  Server server;
  WebhookReceiver receiver;
  receiver.script({{410}});
  const Endpoint endpoint = endpoint_with_one_event(server, receiver);
  json::array log = wait_for_log(server, endpoint.id, 1);
  EXPECT_EQ(log.at(0).at("status_code").as_int64(), 410);
  EXPECT_TRUE(log.at(0).at("next_attempt_at").is_null());
  Reply shown = server.get("/v1/webhook_endpoints/" + endpoint.id, {server.bearer_core()});
  ASSERT_EQ(shown.status, 200) << shown.body;
  EXPECT_EQ(shown.json().at("enabled").as_bool(), false);
  EXPECT_EQ(harness::text(shown.json(), "disabled_reason"), "gone");

  make_account_holder(server);  // while disabled: not queued for it
  advance(server, 86400);
  EXPECT_TRUE(receiver.stays_at(1, 1000)) << "nothing goes to a disabled endpoint";

  Reply enabled = server.send({"PATCH", "/v1/webhook_endpoints/" + endpoint.id,
                               R"({"enabled":true})", {server.bearer_core()}});
  ASSERT_EQ(enabled.status, 200) << enabled.body;
  ASSERT_TRUE(receiver.wait_for(2)) << "the delivery that met the 410 goes once enabled";
  EXPECT_EQ(receiver.requests().at(1).header("webhook-id"),
            receiver.requests().at(0).header("webhook-id"));
  const std::string after = make_account_holder(server);
  ASSERT_TRUE(receiver.wait_for(3));
  EXPECT_EQ(harness::text(body_of(receiver.requests().at(2)).at("data"), "account_holder_id"), after);
  EXPECT_TRUE(receiver.stays_at(3, 700)) << "the event of the disabled time is not sent";
  log = wait_for_log(server, endpoint.id, 3);
  EXPECT_EQ(log.at(1).at("attempt").as_int64(), 2) << "the second attempt of the first event";
  EXPECT_EQ(log.at(1).at("delivered").as_bool(), true);
}

TEST(WebhookDeliveries, EachEndpointGetsItsEventsInPositionOrder) {
  Server server;
  WebhookReceiver first;
  WebhookReceiver second;
  add_endpoint(server, first.url(), {"account_holder.created"});
  add_endpoint(server, second.url("/other"), {"account_holder.created"});
  std::vector<std::string> made;
  for (int i = 0; i < 20; ++i) made.push_back(make_account_holder(server));
  for (WebhookReceiver* receiver : {&first, &second}) {
    ASSERT_TRUE(receiver->wait_for(made.size()));
    std::vector<std::string> received;
    for (const auto& request : receiver->requests()) {
      received.push_back(harness::text(body_of(request).at("data"), "account_holder_id"));
    }
    EXPECT_EQ(received, made) << "one at a time, in the order the events were committed";
  }
}

TEST(WebhookDeliveries, EventTypesChooseWhatAnEndpointReceives) {
  Server server;
  WebhookReceiver receiver;
  WebhookReceiver everything;
  const Endpoint holders = add_endpoint(server, receiver.url(), {"account_holder.created"});
  add_endpoint(server, everything.url());
  Reply cardholder = server.post("/v1/cards/cardholders",
                                 R"({"first_name":"Ana","last_name":"Lopez"})",
                                 {server.bearer_core()});
  ASSERT_EQ(cardholder.status, 201) << cardholder.body;
  make_account_holder(server);
  ASSERT_TRUE(receiver.wait_for(1));
  ASSERT_TRUE(everything.wait_for(2));
  EXPECT_TRUE(receiver.stays_at(1, 500)) << "the cardholder's event came first and was skipped";
  EXPECT_EQ(event_type_of(receiver.requests().at(0)), "account_holder.created");
  std::set<std::string> all;
  for (const auto& request : everything.requests()) all.insert(event_type_of(request));
  EXPECT_TRUE(all.count("cardholder.created")) << "an endpoint without event_types gets every type";
  EXPECT_TRUE(all.count("account_holder.created"));
  static_cast<void>(holders);
}

TEST(WebhookDeliveries, AReplayResendsTheEventWithTheSameWebhookId) {
  Server server;
  WebhookReceiver receiver;
  const Endpoint endpoint = endpoint_with_one_event(server, receiver);
  const std::string event_id = receiver.requests().at(0).header("webhook-id");
  wait_for_log(server, endpoint.id, 1);

  const std::string replay_path = log_path(endpoint.id) + "/" + event_id + "/replay";
  Reply replayed = server.post(replay_path, "", {server.bearer_core()});
  ASSERT_EQ(replayed.status, 202) << replayed.body;
  const json::value replay = replayed.json();
  EXPECT_EQ(harness::text(replay, "delivery_id").rfind("whq_", 0), 0u);
  EXPECT_EQ(harness::text(replay, "endpoint_id"), endpoint.id);
  EXPECT_EQ(harness::text(replay, "event_id"), event_id);
  EXPECT_EQ(harness::text(replay, "state"), "pending");
  ASSERT_TRUE(receiver.wait_for(2));
  const auto requests = receiver.requests();
  EXPECT_EQ(requests.at(1).header("webhook-id"), event_id);
  EXPECT_EQ(requests.at(1).body, requests.at(0).body) << "the same event, byte for byte";
  EXPECT_TRUE(signed_with(endpoint.secret, requests.at(1)));
  json::array log = wait_for_log(server, endpoint.id, 2);
  EXPECT_EQ(log.at(0).at("replay").as_bool(), true);
  EXPECT_EQ(log.at(0).at("attempt").as_int64(), 1);
  EXPECT_EQ(log.at(1).at("replay").as_bool(), false);

  // The participant surface sees the same log and replays too.
  const std::string token = "Authorization: Bearer " + server.access_token("webhooks");
  Reply participant = server.get(log_path(endpoint.id, "/api/v1"), {token});
  ASSERT_EQ(participant.status, 200) << participant.body;
  EXPECT_EQ(participant.json().at("deliveries").as_array().size(), 2u);
  Reply again = server.post(log_path(endpoint.id, "/api/v1") + "/" + event_id + "/replay", "",
                            {token});
  EXPECT_EQ(again.status, 202) << again.body;
  ASSERT_TRUE(receiver.wait_for(3));
}

TEST(WebhookDeliveries, TheLogAndReplaysRefuseUnknownIdsAndMissingScopes) {
  Server server;
  WebhookReceiver receiver;
  const Endpoint endpoint = endpoint_with_one_event(server, receiver);
  const std::string event_id = receiver.requests().at(0).header("webhook-id");
  const std::string unknown_endpoint = "whe_AAAAAAAAAAAAAAAAAAAAAA";
  const std::string unknown_event = "evt_AAAAAAAAAAAAAAAAAAAAAA";
  const std::string bearer = server.bearer_core();

  Reply missing = server.get(log_path(unknown_endpoint), {bearer});
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.error_code(), "item_not_found");
  Reply malformed = server.get(log_path("not-an-id"), {bearer});
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(malformed.error_path(), "id");
  EXPECT_EQ(server.post(log_path(unknown_endpoint) + "/" + event_id + "/replay", "", {bearer})
                .error_code(),
            "item_not_found");
  Reply no_event = server.post(log_path(endpoint.id) + "/" + unknown_event + "/replay", "", {bearer});
  EXPECT_EQ(no_event.status, 404);
  EXPECT_EQ(no_event.error_code(), "item_not_found");
  Reply bad_event = server.post(log_path(endpoint.id) + "/evt_short/replay", "", {bearer});
  EXPECT_EQ(bad_event.status, 400);
  EXPECT_EQ(bad_event.error_path(), "event_id");
  const std::string replay_path = log_path(endpoint.id) + "/" + event_id + "/replay";
  Reply unknown_field = server.post(replay_path, R"({"force":true})", {bearer});
  EXPECT_EQ(unknown_field.status, 400);
  EXPECT_EQ(unknown_field.error_path(), "force");
  EXPECT_EQ(server.post(replay_path, "[1]", {bearer}).status, 400) << "a body must be an object";
  EXPECT_EQ(server.post(replay_path, "{}", {bearer}).status, 202) << "an empty object is no body";
  ASSERT_TRUE(receiver.wait_for(2));

  // Another tenant sees neither the endpoint nor the event.
  json::value other = json::parse(server.command({"tenant", "create", "--name", "other", "--json"}));
  const std::string other_bearer = "Authorization: Bearer " + harness::text(other, "api_key");
  EXPECT_EQ(server.get(log_path(endpoint.id), {other_bearer}).status, 404);
  EXPECT_EQ(server.post(log_path(endpoint.id) + "/" + event_id + "/replay", "", {other_bearer})
                .status,
            404);
  const Endpoint theirs = [&] {
    Reply made = server.post("/v1/webhook_endpoints",
                             json::serialize(json::object{
                                 {"url", receiver.url("/theirs")},
                                 {"event_types", json::array{"account_holder.created"}}}),
                             {other_bearer});
    EXPECT_EQ(made.status, 201) << made.body;
    return Endpoint{harness::text(made.json(), "id"), ""};
  }();
  EXPECT_EQ(server.post(log_path(theirs.id) + "/" + event_id + "/replay", "", {other_bearer})
                .error_code(),
            "item_not_found")
      << "an event of another tenant";

  // Scopes: webhooks:read lists but does not replay; other groups and scopes do neither.
  const std::string tenant_id = harness::text(server.credentials(), "tenant_id");
  auto key_with = [&](const std::string& scopes) {
    json::value made = json::parse(server.command(
        {"keys", "create", "--tenant", tenant_id, "--scopes", scopes, "--json"}));
    return "Authorization: Bearer " + harness::text(made, "api_key");
  };
  const std::string reader = key_with("webhooks:read");
  EXPECT_EQ(server.get(log_path(endpoint.id), {reader}).status, 200);
  Reply denied = server.post(log_path(endpoint.id) + "/" + event_id + "/replay", "", {reader});
  EXPECT_EQ(denied.status, 403);
  EXPECT_EQ(denied.error_code(), "not_authorized");
  EXPECT_EQ(server.get(log_path(endpoint.id), {key_with("ledger:admin")}).status, 403);
  const std::string collections = "Authorization: Bearer " + server.access_token("collections");
  EXPECT_EQ(server.get(log_path(endpoint.id, "/api/v1"), {collections}).status, 403);
  EXPECT_EQ(server.get(log_path(endpoint.id)).status, 401);
  EXPECT_TRUE(receiver.stays_at(2, 300)) << "no refused replay was sent";
}

TEST(WebhookDeliveries, AServerKilledMidDeliverySendsTheEventAgainAfterRestart) {
  // On PostgreSQL a dead node's leases expire (shortened here from 60 s); on SQLite, where one
  // process owns the data, the restarted server ends them when it starts.
  Server server(harness::is_postgres()
                    ? harness::ServerOptions{.environment = {"TESORO_WEBHOOK_LEASE_SECONDS=2"}}
                    : harness::ServerOptions{});
  WebhookReceiver receiver;
  receiver.script({Answer{.hang = true}});  // then 200
  const Endpoint endpoint = endpoint_with_one_event(server, receiver);
  server.stop(true);  // SIGKILL while the receiver holds the request
  server.start();
  ASSERT_TRUE(receiver.wait_for(2, 15000));
  const auto requests = receiver.requests();
  EXPECT_EQ(requests.at(1).header("webhook-id"), requests.at(0).header("webhook-id"));
  EXPECT_EQ(requests.at(1).body, requests.at(0).body);
  json::array log = wait_for_log(server, endpoint.id, 1);
  EXPECT_EQ(log.size(), 1u) << "the killed attempt left no record";
  EXPECT_EQ(log.at(0).at("delivered").as_bool(), true);
  EXPECT_TRUE(receiver.stays_at(2, 700));
  receiver.release_hung();
}

TEST(WebhookDeliveries, ATimeoutIsAFailedAttempt) {
  Server server({.environment = {"TESORO_WEBHOOK_TIMEOUT_MS=500"}});
  WebhookReceiver receiver;
  receiver.script({Answer{.hang = true}});
  const Endpoint endpoint = endpoint_with_one_event(server, receiver);
  json::array log = wait_for_log(server, endpoint.id, 1);
  EXPECT_TRUE(log.at(0).at("status_code").is_null());
  EXPECT_EQ(harness::text(log.at(0), "error"), "timed out after 500 ms");
  EXPECT_EQ(retry_wait_seconds(log.at(0)), 5);
  receiver.release_hung();
  advance(server, 5);
  ASSERT_TRUE(receiver.wait_for(2));
  EXPECT_EQ(wait_for_log(server, endpoint.id, 2).at(0).at("delivered").as_bool(), true);
}

TEST(WebhookDeliveries, UnreachableAndRefusedAddressesAreLoggedAsFailedAttempts) {
  Server server;
  WebhookReceiver receiver;
  // Nothing listens there: the connection is refused.
  int closed_port = 0;
  {
    WebhookReceiver gone;
    closed_port = gone.port();
  }
  const Endpoint unreachable = add_endpoint(
      server, "http://127.0.0.1:" + std::to_string(closed_port) + "/x", {"account_holder.created"});
  make_account_holder(server);
  json::array log = wait_for_log(server, unreachable.id, 1);
  EXPECT_TRUE(log.at(0).at("status_code").is_null());
  EXPECT_FALSE(harness::text(log.at(0), "error").empty());
  EXPECT_EQ(retry_wait_seconds(log.at(0)), 5);

  // Registered while allowed; the operator then narrows the allowed hosts: the address is
  // checked again at delivery, and nothing is sent.
  const Endpoint refused = add_endpoint(server, receiver.url(), {"cardholder.created"});
  server.restart_with({.extra_args = {"--webhook-allowed-hosts", "hooks.example.com"}});
  Reply cardholder = server.post("/v1/cards/cardholders",
                                 R"({"first_name":"Ana","last_name":"Lopez"})",
                                 {server.bearer_core()});
  ASSERT_EQ(cardholder.status, 201) << cardholder.body;
  log = wait_for_log(server, refused.id, 1);
  EXPECT_TRUE(log.at(0).at("status_code").is_null());
  EXPECT_EQ(harness::text(log.at(0), "error"), "address not allowed");
  EXPECT_EQ(log.at(0).at("latency_ms").as_int64(), 0);
  EXPECT_EQ(retry_wait_seconds(log.at(0)), 5);
  EXPECT_EQ(receiver.count(), 0u);
}

TEST(WebhookDeliveries, TwoNodesOnPostgresDeliverEachEventOnce) {
  if (!harness::is_postgres()) GTEST_SKIP() << "several nodes need PostgreSQL";
  Server server;
  const int second = server.start_extra_node();
  WebhookReceiver receivers[2];
  for (WebhookReceiver& receiver : receivers) {
    add_endpoint(server, receiver.url(), {"account_holder.created"});
  }
  constexpr int k_events = 40;
  std::vector<std::string> made;
  for (int i = 0; i < k_events; ++i) {
    made.push_back(make_account_holder(server, i % 2 == 0 ? server.port() : second));
  }
  for (WebhookReceiver& receiver : receivers) {
    ASSERT_TRUE(receiver.wait_for(k_events, 20000));
    EXPECT_TRUE(receiver.stays_at(k_events, 1500)) << "no event twice";
    std::vector<std::string> received;
    for (const auto& request : receiver.requests()) {
      received.push_back(harness::text(body_of(request).at("data"), "account_holder_id"));
    }
    EXPECT_EQ(received, made) << "once each, in order, whichever node sent it";
  }
}

}  // namespace
