// Card transactions over HTTP: sandbox authorizations (approved and declined), the steps, the
// lists, their error paths, and expiry after a sandbox clock advance.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

#include "harness.hpp"

using harness::Reply;
using harness::Server;
namespace json = boost::json;

namespace {

std::string money(long long amount, const std::string& currency = "COP") {
  return R"({"amount":)" + std::to_string(amount) + R"(,"currency":")" + currency + R"("})";
}

std::string authorization(long long amount, const std::string& channel = "online_purchase",
                          const std::string& mcc = "5812", const std::string& currency = "COP") {
  return R"({"amount":)" + money(amount, currency) +
         R"(,"merchant":{"name":"Acme Store","mcc":")" + mcc +
         R"(","mid":"MID001","country":"CO"},"channel":")" + channel + R"("})";
}

std::string text(const json::value& value, std::string_view key) {
  return std::string(value.at(key).as_string());
}

std::vector<std::string> paths(const Reply& reply) {
  std::vector<std::string> out;
  const json::value body = reply.json();  // kept alive while its array is walked
  for (const json::value& item : body.at("errors").as_array()) {
    const json::value& path = item.at("path");
    out.push_back(path.is_string() ? std::string(path.as_string()) : "");
  }
  return out;
}

bool has_path(const Reply& reply, const std::string& path) {
  auto all = paths(reply);
  return std::find(all.begin(), all.end(), path) != all.end();
}

// A virtual card with `balance` on its prepaid account, funded from the tenant's account.
std::string make_card(const Server& server, long long balance, const std::string& type = "virtual") {
  std::string account(server.credentials().at("account_id").as_string());
  Reply funded = server.post("/v1/sandbox/accounts/" + account + "/fund",
                             R"({"amount":)" + money(balance) + "}", {server.bearer_core()});
  EXPECT_EQ(funded.status, 201) << funded.body;
  Reply card = server.post("/v1/cards",
                           R"({"account_id":")" + account + R"(","type":")" + type +
                               R"(","initial_balance":)" + money(balance) + "}",
                           {server.bearer_core()});
  EXPECT_EQ(card.status, 201) << card.body;
  return text(card.json(), "id");
}

Reply authorize(const Server& server, const std::string& card_id, const std::string& body) {
  return server.post("/v1/sandbox/cards/" + card_id + "/authorizations", body,
                     {server.bearer_core()});
}

Reply step(const Server& server, const std::string& id, const std::string& name,
           const std::string& body = "") {
  return server.post("/v1/sandbox/card_transactions/" + id + "/" + name, body,
                     {server.bearer_core()});
}

long long amount_of(const json::value& transaction, std::string_view key) {
  return transaction.at(key).at("amount").as_int64();
}

}  // namespace

TEST(CardTransactions, AnApprovedAuthorizationHoldsThenIsCapturedAndRefunded) {
  Server& server = Server::shared();
  std::string card = make_card(server, 10'000);
  Reply made = authorize(server, card, authorization(3000));
  ASSERT_EQ(made.status, 201) << made.body;
  json::value t = made.json();
  std::string id = text(t, "id");
  EXPECT_EQ(id.substr(0, 4), "ctx_");
  EXPECT_EQ(text(t, "card_id"), card);
  EXPECT_EQ(text(t, "type"), "authorization_approved");
  EXPECT_EQ(text(t, "state"), "pending");
  EXPECT_EQ(amount_of(t, "amount"), 3000);
  EXPECT_EQ(text(t.at("amount"), "currency"), "COP");
  EXPECT_EQ(amount_of(t, "held_amount"), 3000);
  for (const char* key : {"captured_amount", "reversed_amount", "released_amount",
                          "expired_amount", "refunded_amount"}) {
    EXPECT_EQ(amount_of(t, key), 0) << key;
  }
  EXPECT_EQ(text(t, "channel"), "online_purchase");
  EXPECT_EQ(text(t.at("merchant"), "mcc"), "5812");
  EXPECT_EQ(text(t.at("merchant"), "mid"), "MID001");
  EXPECT_TRUE(t.at("decline_reason").is_null());
  EXPECT_TRUE(t.at("declined_by").is_null());
  EXPECT_EQ(text(t, "iso8583_code"), "00");
  EXPECT_TRUE(t.at("expires_at").is_string());
  ASSERT_EQ(t.at("history").as_array().size(), 1u);
  EXPECT_EQ(text(t.at("history").at(0), "type"), "authorization_approved");
  EXPECT_EQ(amount_of(t.at("history").at(0), "amount"), 3000);

  Reply shown = server.get("/v1/cards/" + card + "/transactions/" + id, {server.bearer_core()});
  ASSERT_EQ(shown.status, 200);
  EXPECT_EQ(shown.body, made.body);
  Reply card_view = server.get("/v1/cards/" + card, {server.bearer_core()});
  ASSERT_EQ(card_view.status, 200);
  EXPECT_EQ(amount_of(card_view.json().at("balance"), "available"), 7000) << card_view.body;
  EXPECT_EQ(amount_of(card_view.json().at("balance"), "posted"), 10'000);
  // The hold changed the available balance: the balance's updated_at is the authorization's.
  EXPECT_EQ(text(card_view.json().at("balance"), "updated_at"), text(t, "inserted_at"));

  Reply captured = step(server, id, "capture", R"({"amount":)" + money(2000) + "}");
  ASSERT_EQ(captured.status, 200) << captured.body;
  EXPECT_EQ(text(captured.json(), "state"), "captured");
  EXPECT_EQ(amount_of(captured.json(), "captured_amount"), 2000);
  EXPECT_EQ(amount_of(captured.json(), "released_amount"), 1000);
  EXPECT_TRUE(captured.json().at("expires_at").is_null());
  card_view = server.get("/v1/cards/" + card, {server.bearer_core()});
  EXPECT_EQ(amount_of(card_view.json().at("balance"), "available"), 8000);
  EXPECT_EQ(amount_of(card_view.json().at("balance"), "posted"), 8000);

  Reply refunded = step(server, id, "refund");  // no body: the whole captured amount
  ASSERT_EQ(refunded.status, 200) << refunded.body;
  EXPECT_EQ(text(refunded.json(), "state"), "refunded");
  EXPECT_EQ(amount_of(refunded.json(), "refunded_amount"), 2000);
  EXPECT_EQ(refunded.json().at("history").as_array().size(), 3u);
  Reply again = step(server, id, "refund", "{}");
  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(again.error_code(), "card_transaction_invalid_state");

  Reply list = server.get("/v1/cards/" + card + "/transactions", {server.bearer_core()});
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(text(list.json(), "card_id"), card);
  ASSERT_EQ(list.json().at("transactions").as_array().size(), 1u);
  EXPECT_EQ(text(list.json().at("transactions").at(0), "state"), "refunded");
  EXPECT_EQ(list.json().at("pagination").at("total_items").as_int64(), 1);
}

TEST(CardTransactions, DeclinesAreCreatedWithTheirReason) {
  Server& server = Server::shared();
  std::string card = make_card(server, 1000);
  Reply poor = authorize(server, card, authorization(1001));
  ASSERT_EQ(poor.status, 201) << poor.body;
  EXPECT_EQ(text(poor.json(), "type"), "authorization_declined");
  EXPECT_EQ(text(poor.json(), "state"), "declined");
  EXPECT_EQ(text(poor.json(), "decline_reason"), "insufficient_funds");
  EXPECT_EQ(text(poor.json(), "iso8583_code"), "51");
  EXPECT_EQ(amount_of(poor.json(), "held_amount"), 0);
  EXPECT_TRUE(poor.json().at("expires_at").is_null());

  Reply dollars = authorize(server, card, authorization(10, "online_purchase", "5812", "USD"));
  ASSERT_EQ(dollars.status, 201) << dollars.body;
  EXPECT_EQ(text(dollars.json(), "decline_reason"), "currency_mismatch");
  EXPECT_EQ(text(dollars.json(), "iso8583_code"), "05");

  Reply atm = authorize(server, card, authorization(10, "atm_withdrawal"));
  EXPECT_EQ(text(atm.json(), "decline_reason"), "not_allowed");
  EXPECT_EQ(text(atm.json(), "iso8583_code"), "57");

  Reply control = server.post("/v1/spending_controls",
                              R"({"name":"no groceries","currency_code":"COP","rules":[)"
                              R"({"type":"mcc","operation":"block_mccs","mccs":["5411"]}]})",
                              {server.bearer_core()});
  ASSERT_EQ(control.status, 201) << control.body;
  std::string control_id = text(control.json(), "id");
  Reply patched = server.send({"PATCH", "/v1/cards/" + card,
                               R"({"spending_controls":{"card_target":")" + control_id + R"("}})",
                               {server.bearer_core()}});
  ASSERT_EQ(patched.status, 200) << patched.body;
  Reply grocer = authorize(server, card, authorization(10, "online_purchase", "5411"));
  ASSERT_EQ(grocer.status, 201);
  EXPECT_EQ(text(grocer.json(), "decline_reason"), "spending_controls");
  EXPECT_EQ(text(grocer.json(), "iso8583_code"), "57");
  EXPECT_EQ(text(grocer.json().at("declined_by"), "spending_control_id"), control_id);
  EXPECT_EQ(text(grocer.json().at("declined_by"), "rule_type"), "mcc");
  EXPECT_EQ(text(authorize(server, card, authorization(10)).json(), "state"), "pending");

  Reply blocked = server.send(
      {"PATCH", "/v1/cards/" + card, R"({"state":"blocked"})", {server.bearer_core()}});
  ASSERT_EQ(blocked.status, 200) << blocked.body;
  Reply inactive = authorize(server, card, authorization(10));
  EXPECT_EQ(text(inactive.json(), "decline_reason"), "card_inactive");
  EXPECT_EQ(text(inactive.json(), "iso8583_code"), "62");

  Reply list = server.get("/v1/cards/" + card + "/transactions?page_size=10&page_number=1",
                          {server.bearer_core()});
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(list.json().at("pagination").at("total_items").as_int64(), 6);
  EXPECT_EQ(text(list.json().at("transactions").at(0), "decline_reason"), "card_inactive");
}

// The bodies are written as JSON text, not through Boost.JSON: they must be exactly what
// serialising a Boost.JSON object of the same keys gave (its escaping and number form, the
// keys in the contract's order).
TEST(CardTransactions, BodiesAreBoostJsonsTextInTheContractsKeyOrder) {
  Server& server = Server::shared();
  std::string card = make_card(server, 1000);
  const std::string body =
      R"({"amount":{"amount":600,"currency":"COP"},"channel":"online_purchase","merchant":)"
      R"({"name":"Caf\u00e9 \"Q\" \\ / \u00f1","mcc":"5812","mid":"M1","country":"CO"}})";
  Reply approved = authorize(server, card, body);
  ASSERT_EQ(approved.status, 201) << approved.body;
  EXPECT_EQ(approved.body, json::serialize(approved.json()));
  EXPECT_EQ(text(approved.json().at("merchant"), "name"), "Caf\xC3\xA9 \"Q\" \\ / \xC3\xB1");
  std::vector<std::string> keys;
  const json::value approved_json = approved.json();  // kept alive while its object is walked
  for (const auto& item : approved_json.as_object()) keys.push_back(std::string(item.key()));
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "id", "card_id", "type", "state", "amount", "held_amount", "captured_amount",
                      "reversed_amount", "released_amount", "expired_amount", "refunded_amount",
                      "channel", "merchant", "decline_reason", "decline_reason_detail",
                      "iso8583_code", "declined_by", "decision", "history", "expires_at",
                      "inserted_at", "updated_at"}));
  Reply declined = authorize(server, card, body);  // 600 more than the 400 left
  ASSERT_EQ(declined.status, 201) << declined.body;
  EXPECT_EQ(declined.body, json::serialize(declined.json()));
  std::string id = text(approved.json(), "id");
  Reply captured = server.post("/v1/sandbox/card_transactions/" + id + "/capture",
                               R"({"amount":{"amount":100,"currency":"COP"}})",
                               {server.bearer_core()});
  ASSERT_EQ(captured.status, 200) << captured.body;
  EXPECT_EQ(captured.body, json::serialize(captured.json()));
  EXPECT_EQ(captured.json().at("history").as_array().size(), 2u);
  Reply shown = server.get("/v1/cards/" + card + "/transactions/" + id, {server.bearer_core()});
  EXPECT_EQ(shown.body, captured.body);
  Reply list = server.get("/v1/cards/" + card + "/transactions", {server.bearer_core()});
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(list.body, json::serialize(list.json()));
  keys.clear();
  const json::value list_json = list.json();
  for (const auto& item : list_json.as_object()) keys.push_back(std::string(item.key()));
  EXPECT_EQ(keys, (std::vector<std::string>{"card_id", "transactions", "pagination"}));
  EXPECT_EQ(list.json().at("transactions").as_array().size(), 2u);
}

TEST(CardTransactions, AuthorizationValidation) {
  Server& server = Server::shared();
  std::string card = make_card(server, 1000);
  Reply empty = authorize(server, card, "{}");
  EXPECT_EQ(empty.status, 422);
  EXPECT_EQ(empty.error_code(), "missing_field");
  EXPECT_TRUE(has_path(empty, "amount"));
  EXPECT_TRUE(has_path(empty, "merchant"));
  EXPECT_TRUE(has_path(empty, "channel"));

  Reply merchant_missing = authorize(
      server, card, R"({"amount":)" + money(10) + R"(,"merchant":{},"channel":"online_purchase"})");
  EXPECT_EQ(merchant_missing.status, 422);
  for (const char* path : {"merchant.name", "merchant.mcc", "merchant.mid", "merchant.country"}) {
    EXPECT_TRUE(has_path(merchant_missing, path)) << path;
  }

  // Every bad field at once, and a missing one with them: 400 listing all.
  Reply bad = authorize(server, card,
                        R"({"amount":{"amount":0,"currency":"EUR"},"merchant":{"name":"",)"
                        R"("mcc":"54a1","mid":"MID-1","country":"col"},"channel":"teleport",)"
                        R"("extra":1})");
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_EQ(bad.error_code(), "validation_error");
  for (const char* path : {"amount.amount", "amount.currency", "merchant.name", "merchant.mcc",
                           "merchant.mid", "merchant.country", "channel", "extra"}) {
    EXPECT_TRUE(has_path(bad, path)) << path << " in " << bad.body;
  }
  Reply long_mid = authorize(
      server, card,
      R"({"amount":)" + money(10) +
          R"(,"merchant":{"name":"x","mcc":"5812","mid":"M1234567890123456","country":"CO"}})");
  EXPECT_EQ(long_mid.status, 400);
  EXPECT_TRUE(has_path(long_mid, "merchant.mid"));
  EXPECT_TRUE(has_path(long_mid, "channel"));  // missing, listed with the invalid one

  Reply not_json = authorize(server, card, "{");
  EXPECT_EQ(not_json.status, 400);
  Reply bad_id = authorize(server, "nope", authorization(10));
  EXPECT_EQ(bad_id.status, 400);
  EXPECT_TRUE(has_path(bad_id, "card_id"));
  Reply unknown = authorize(server, "car_AAAAAAAAAAAAAAAAAAAAAA", authorization(10));
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.error_code(), "item_not_found");
}

TEST(CardTransactions, StepsAndTheirErrors) {
  Server& server = Server::shared();
  std::string card = make_card(server, 10'000);
  std::string id = text(authorize(server, card, authorization(5000)).json(), "id");

  Reply too_much = step(server, id, "capture", R"({"amount":)" + money(5001) + "}");
  EXPECT_EQ(too_much.status, 422);
  EXPECT_EQ(too_much.error_code(), "amount_exceeds_authorization");
  EXPECT_EQ(text(too_much.json().at("errors").at(0), "message"),
            "the amount is larger than what is open (COP 50.00)");
  Reply dollars = step(server, id, "reverse", R"({"amount":)" + money(1, "USD") + "}");
  EXPECT_EQ(dollars.status, 422);
  EXPECT_EQ(dollars.error_code(), "currency_mismatch");
  Reply euros = step(server, id, "reverse", R"({"amount":)" + money(1, "EUR") + "}");
  EXPECT_EQ(euros.status, 400);
  Reply no_amount = step(server, id, "increment", "{}");
  EXPECT_EQ(no_amount.status, 422);
  EXPECT_EQ(no_amount.error_code(), "missing_field");
  Reply unknown_field = step(server, id, "capture", R"({"amont":1})");
  EXPECT_EQ(unknown_field.status, 400);
  Reply not_json = step(server, id, "capture", "[");
  EXPECT_EQ(not_json.status, 400);

  Reply grown = step(server, id, "increment", R"({"amount":)" + money(2000) + "}");
  ASSERT_EQ(grown.status, 200) << grown.body;
  EXPECT_EQ(amount_of(grown.json(), "amount"), 7000);
  EXPECT_EQ(amount_of(grown.json(), "held_amount"), 7000);
  Reply poor = step(server, id, "increment", R"({"amount":)" + money(3001) + "}");
  EXPECT_EQ(poor.status, 422);
  EXPECT_EQ(poor.error_code(), "insufficient_funds");

  Reply reversed = step(server, id, "reverse", R"({"amount":)" + money(1000) + "}");
  ASSERT_EQ(reversed.status, 200);
  EXPECT_EQ(text(reversed.json(), "state"), "pending");
  EXPECT_EQ(amount_of(reversed.json(), "held_amount"), 6000);
  Reply all = step(server, id, "reverse");
  ASSERT_EQ(all.status, 200);
  EXPECT_EQ(text(all.json(), "state"), "reversed");
  Reply late = step(server, id, "capture");
  EXPECT_EQ(late.status, 409);
  EXPECT_EQ(late.error_code(), "card_transaction_invalid_state");
  Reply not_captured = step(server, id, "refund");
  EXPECT_EQ(not_captured.status, 409);

  Reply missing = step(server, "ctx_AAAAAAAAAAAAAAAAAAAAAA", "capture");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.error_code(), "item_not_found");
  Reply bad_id = step(server, "acc_AAAAAAAAAAAAAAAAAAAAAA", "capture");
  EXPECT_EQ(bad_id.status, 400);
  EXPECT_TRUE(has_path(bad_id, "id"));
}

TEST(CardTransactions, ListAndShowErrors) {
  Server& server = Server::shared();
  std::string card = make_card(server, 1000);
  std::string other = make_card(server, 1000);
  std::string id = text(authorize(server, card, authorization(10)).json(), "id");
  EXPECT_EQ(server.get("/v1/cards/car_AAAAAAAAAAAAAAAAAAAAAA/transactions",
                       {server.bearer_core()}).status, 404);
  EXPECT_EQ(server.get("/v1/cards/x/transactions", {server.bearer_core()}).status, 400);
  EXPECT_EQ(server.get("/v1/cards/" + card + "/transactions?page_size=5",
                       {server.bearer_core()}).status, 400);
  EXPECT_EQ(server.get("/v1/cards/" + card + "/transactions?color=red",
                       {server.bearer_core()}).status, 400);
  // Under another card it is not found.
  EXPECT_EQ(server.get("/v1/cards/" + other + "/transactions/" + id,
                       {server.bearer_core()}).status, 404);
  EXPECT_EQ(server.get("/v1/cards/" + card + "/transactions/ctx_AAAAAAAAAAAAAAAAAAAAAA",
                       {server.bearer_core()}).status, 404);
  EXPECT_EQ(server.get("/v1/cards/" + card + "/transactions/nope", {server.bearer_core()}).status,
            400);
  Reply other_list = server.get("/v1/cards/" + other + "/transactions", {server.bearer_core()});
  ASSERT_EQ(other_list.status, 200);
  EXPECT_TRUE(other_list.json().at("transactions").as_array().empty());
}

TEST(CardTransactions, AClockAdvanceExpiresThePendingHold) {
  Server server;  // its own tenant clock
  std::string card = make_card(server, 10'000);
  std::string pending = text(authorize(server, card, authorization(4000)).json(), "id");
  std::string captured = text(authorize(server, card, authorization(1000)).json(), "id");
  ASSERT_EQ(step(server, captured, "capture").status, 200);
  Reply advanced = server.post("/v1/sandbox/clock/advance", R"({"seconds": 604801})",
                               {server.bearer_core()});
  ASSERT_EQ(advanced.status, 200) << advanced.body;
  // The worker hears the advance; a bounded wait, never a long sleep.
  json::value t;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    t = server.get("/v1/cards/" + card + "/transactions/" + pending, {server.bearer_core()}).json();
    if (text(t, "state") == "expired") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while (std::chrono::steady_clock::now() < deadline);
  ASSERT_EQ(text(t, "state"), "expired");
  EXPECT_EQ(amount_of(t, "expired_amount"), 4000);
  EXPECT_EQ(amount_of(t, "held_amount"), 0);
  EXPECT_TRUE(t.at("expires_at").is_null());
  EXPECT_EQ(text(t.at("history").at(1), "type"), "authorization_expiry");
  Reply other = server.get("/v1/cards/" + card + "/transactions/" + captured,
                           {server.bearer_core()});
  EXPECT_EQ(text(other.json(), "state"), "captured");  // a captured one never expires
  Reply card_view = server.get("/v1/cards/" + card, {server.bearer_core()});
  EXPECT_EQ(amount_of(card_view.json().at("balance"), "available"), 9000);
  Reply late = step(server, pending, "capture");
  EXPECT_EQ(late.status, 409);
  server.check_ledger();
}

TEST(CardTransactions, MutatedBodiesNeverEarnA5xx) {
  Server& server = Server::shared();
  std::string card = make_card(server, 100'000);
  std::string id = text(authorize(server, card, authorization(10)).json(), "id");
  std::mt19937 random(20260310);
  const std::string valid = authorization(10);
  const std::string step_body = R"({"amount":)" + money(1) + "}";
  for (int i = 0; i < 150; ++i) {
    const bool is_step = i % 3 == 2;
    std::string body = harness::mutate_body(is_step ? step_body : valid, random);
    Reply reply = is_step ? step(server, id, i % 2 ? "increment" : "reverse", body)
                          : authorize(server, card, body);
    ASSERT_GT(reply.status, 0) << body;
    EXPECT_LT(reply.status, 500) << body << " -> " << reply.body;
    if (reply.status >= 400) {
      EXPECT_FALSE(reply.error_code().empty()) << reply.body;
    }
  }
}
