// Outgoing transfers over HTTP: POST /api/v1/outgoing_transfers (batches and every item rule),
// the sandbox network moving them on the tenant clock (advanced here, never slept on) to
// successful or failed with the balances right at each step, delivery to collections of this
// server (another tenant's), concurrency on one source account, the lists and reads.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "payment_fixtures.hpp"

using harness::Reply;
using harness::Server;
using namespace payment_fixtures;
namespace json = boost::json;

namespace {

// A tenant's participant side: its bearer, its receptor and its originator tenant accounts.
struct Sender {
  const Server& server;
  std::string bearer;
  std::string originator;
  std::string receptor;

  Reply post(const std::string& path, const std::string& body) const {
    return server.post(path, body, {bearer});
  }
  Reply get(const std::string& path) const { return server.get(path, {bearer}); }
};

std::string account_with_role(const Server& server, const std::string& bearer,
                              const std::string& role) {
  Reply reply = server.get("/api/v1/tenant/accounts?role=" + role, {bearer});
  EXPECT_EQ(reply.status, 200) << reply.body;
  return text(reply.json().at(0), "id");
}

Sender sender_of(const Server& server, const std::string& bearer) {
  return {server, bearer, account_with_role(server, bearer, "originator"),
          account_with_role(server, bearer, "receptor")};
}

Sender init_sender(const Server& server) {
  return sender_of(server, "Authorization: Bearer " + server.access_token());
}

void fund(const Sender& s, const std::string& account, long long amount) {
  Reply funded = s.post("/api/v1/sandbox/tenant/accounts/" + account + "/fund",
                        R"({"amount":)" + money(amount) + "}");
  ASSERT_EQ(funded.status, 201) << funded.body;
}

struct Balance {
  long long available = 0;
  long long held = 0;
  long long current = 0;
  bool operator==(const Balance&) const = default;
};

std::ostream& operator<<(std::ostream& out, const Balance& b) {
  return out << "{available " << b.available << ", held " << b.held << ", current " << b.current
             << "}";
}

Balance balance_of(const Sender& s, const std::string& account) {
  Reply reply = s.get("/api/v1/tenant/accounts");
  EXPECT_EQ(reply.status, 200) << reply.body;
  const json::value accounts = reply.json();
  for (const json::value& item : accounts.as_array()) {
    if (text(item, "id") != account) continue;
    const json::value& balance = item.at("balance");
    return {amount_of(balance, "available"), amount_of(balance, "held"),
            amount_of(balance, "current")};
  }
  ADD_FAILURE() << "no tenant account " << account;
  return {};
}

// One item paying a plain key; `extra` adds members (starting with a comma).
json::object item(const std::string& external_id, long long amount, const std::string& key,
                  const std::string& extra = "") {
  json::object out = json::parse("{" + std::string(R"("external_id":")") + external_id +
                                 R"(","amount":)" + money(amount) + extra + "}")
                         .as_object();
  out["query"] = json::object{{"format", "plain_key"}, {"value", key}};
  return out;
}

std::string batch_body(const std::string& account, const json::array& items,
                       const std::string& extra = "") {
  json::object body = json::parse("{" + std::string(R"("tenant_account_id":")") + account +
                                  "\"" + extra + "}")
                          .as_object();
  body["transfers"] = items;
  return json::serialize(body);
}

// The 201 batch.
json::value send(const Sender& s, const json::array& items, const std::string& extra = "") {
  Reply reply = s.post("/api/v1/outgoing_transfers", batch_body(s.originator, items, extra));
  EXPECT_EQ(reply.status, 201) << reply.body;
  return reply.json();
}

// The one accepted transfer of a batch of one.
json::value send_one(const Sender& s, const json::object& one) {
  json::value batch = send(s, json::array{one});
  EXPECT_EQ(batch.at("accepted_transfers").as_array().size(), 1u) << batch;
  if (batch.at("accepted_transfers").as_array().empty()) return json::object{};
  return batch.at("accepted_transfers").at(0);
}

json::value get_transfer(const Sender& s, const std::string& id) {
  Reply reply = s.get("/api/v1/outgoing_transfers/" + id);
  EXPECT_EQ(reply.status, 200) << reply.body;
  return reply.json();
}

void advance(const Sender& s, int seconds) {
  Reply advanced = s.post("/api/v1/sandbox/clock/advance",
                          R"({"seconds":)" + std::to_string(seconds) + "}");
  ASSERT_EQ(advanced.status, 200) << advanced.body;
}

bool is_final(const json::value& transfer) {
  const std::string state = text(transfer, "state");
  return state == "successful" || state == "failed";
}

// The transfer once `done` holds, or after a bounded wait: the processor moves it in the
// background once the clock made its step due.
template <class Done>
json::value wait_for(const Sender& s, const std::string& id, Done done) {
  json::value transfer;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  do {
    transfer = get_transfer(s, id);
    if (done(transfer)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  } while (std::chrono::steady_clock::now() < deadline);
  return transfer;
}

// Advances past every step and waits for the final state.
json::value run_to_end(const Sender& s, const std::string& id) {
  advance(s, 30);
  return wait_for(s, id, is_final);
}

const json::array& list_at(const json::value& batch, std::string_view key) {
  return batch.at(key).as_array();
}

std::set<std::string> rejected_codes(const json::value& batch) {
  std::set<std::string> codes;
  for (const json::value& r : list_at(batch, "rejected_transfers")) {
    codes.insert(text(r, "error_code"));
  }
  return codes;
}

// The only rejected item of a batch of one.
json::value rejection(const Sender& s, const json::object& one) {
  json::value batch = send(s, json::array{one});
  EXPECT_EQ(list_at(batch, "rejected_transfers").size(), 1u) << batch;
  EXPECT_TRUE(list_at(batch, "accepted_transfers").empty()) << batch;
  if (list_at(batch, "rejected_transfers").empty()) return json::object{};
  return list_at(batch, "rejected_transfers").at(0);
}

// A synthetic directory key nobody registered (10 digits starting with 3: a cellphone). It ends
// in 5, so never in one of the documented endings (404, 991 to 994).
std::string fresh_cellphone() {
  static std::atomic<int> next{0};
  static const int base = static_cast<int>(std::random_device{}() % 4'000'000);
  return "31" + std::to_string(1'000'000 + (base + next++) % 9'000'000) + "5";
}

}  // namespace

TEST(OutgoingTransfers, ABatchMixesAcceptedDuplicatedAndRejectedItems) {
  const Server& server = Server::shared();
  Sender s = init_sender(server);
  fund(s, s.originator, 1'000'000);
  const Balance before = balance_of(s, s.originator);
  const std::string earlier = harness::new_uuid();
  const json::value first = send_one(s, item(earlier, 1'000, fresh_cellphone()));

  const std::string fresh = harness::new_uuid();
  json::array items;
  items.push_back(item(earlier, 1'000, fresh_cellphone()));                 // 0 earlier batch
  items.push_back(item(fresh, 2'000, fresh_cellphone(),                     // 1 accepted
                       R"(,"description":"rent","metadata":{"unit":"4B"})"));
  items.push_back(item(fresh, 9'999, fresh_cellphone()));                   // 2 repeat in batch
  items.push_back(item("too-much", 1'155'200'001, fresh_cellphone()));      // 3 over the max
  json::object no_target = item("no-target", 10, "");
  no_target.erase("query");
  items.push_back(no_target);                                               // 4 missing target
  items.push_back(item("bad-amount", -5, fresh_cellphone()));               // 5 invalid amount
  items.push_back(item("unknown-key", 10, "3001234404"));                   // 6 never resolves
  items.push_back(item("broke", 5'000'000, fresh_cellphone()));             // 7 no funds
  items.push_back(json::value("not an object"));                            // 8 not an object
  json::value batch = send(s, items, R"(,"description":"March")");

  EXPECT_TRUE(text(batch, "id").starts_with("bbotb_")) << batch;
  EXPECT_EQ(text(batch, "state"), "created");
  EXPECT_EQ(text(batch, "description"), "March");
  EXPECT_EQ(text(batch, "tenant_account_id"), s.originator);
  ASSERT_EQ(list_at(batch, "accepted_transfers").size(), 1u) << batch;
  const json::value& accepted = list_at(batch, "accepted_transfers").at(0);
  EXPECT_EQ(text(accepted, "external_id"), fresh);
  EXPECT_EQ(text(accepted, "batch_id"), text(batch, "id"));
  EXPECT_EQ(text(accepted, "description"), "rent");
  EXPECT_EQ(text(accepted.at("metadata"), "unit"), "4B");
  ASSERT_EQ(list_at(batch, "duplicated_transfers").size(), 2u) << batch;
  EXPECT_EQ(text(list_at(batch, "duplicated_transfers").at(0), "id"), text(first, "id"));
  EXPECT_EQ(text(list_at(batch, "duplicated_transfers").at(1), "id"), text(accepted, "id"));
  // The repeat in the batch shows the accepted transfer whole, as the batch accepted it.
  EXPECT_EQ(list_at(batch, "duplicated_transfers").at(1), accepted);
  // Rejected items in request order, each with its index, external_id, code, message and path.
  const json::array& rejected = list_at(batch, "rejected_transfers");
  ASSERT_EQ(rejected.size(), 6u) << batch;
  struct Expected {
    int index;
    const char* external_id;
    const char* code;
    const char* path;
  };
  const Expected expected[] = {
      {3, "too-much", "amount_exceeds_max_limit", "transfers.3.amount.amount"},
      {4, "no-target", "missing_field", "transfers.4.target_id"},
      {5, "bad-amount", "validation_error", "transfers.5.amount.amount"},
      {6, "unknown-key", "target_not_found", "transfers.6.query.value"},
      {7, "broke", "insufficient_funds", "transfers.7.amount.amount"},
      {8, nullptr, "validation_error", "transfers.8"},
  };
  for (std::size_t i = 0; i < rejected.size(); ++i) {
    const json::value& r = rejected[i];
    EXPECT_EQ(r.at("index").as_int64(), expected[i].index) << r;
    if (expected[i].external_id) {
      EXPECT_EQ(text(r, "external_id"), expected[i].external_id) << r;
    } else {
      EXPECT_TRUE(r.at("external_id").is_null()) << r;
    }
    EXPECT_EQ(text(r, "error_code"), expected[i].code) << r;
    EXPECT_EQ(text(r, "path"), expected[i].path) << r;
    EXPECT_FALSE(text(r, "message").empty()) << r;
  }
  EXPECT_NE(text(rejected[0], "message").find("COP 11,552,000.01"), std::string::npos)
      << rejected[0];
  EXPECT_NE(text(rejected[0], "message").find("COP 11,552,000.00"), std::string::npos)
      << rejected[0];
  // Only the accepted items hold: the balance itself has not moved.
  const Balance after = balance_of(s, s.originator);
  EXPECT_EQ(after.current, before.current);
  EXPECT_EQ(after.held, before.held + 3'000);
  EXPECT_EQ(after.available, before.available - 3'000);
  // Nothing was written for the rejected items.
  Reply none = s.get("/api/v1/outgoing_transfers?external_id=broke");
  EXPECT_EQ(none.json().at("outgoing_transfers").as_array().size(), 0u) << none.body;
}

TEST(OutgoingTransfers, AnAcceptedTransferShowsTheContractsFields) {
  const Server& server = Server::shared();
  Sender s = init_sender(server);
  fund(s, s.originator, 100'000);
  const std::string external_id = harness::new_uuid();
  const std::string key = fresh_cellphone();
  json::value t = send_one(
      s, item(external_id, 12'345, key,
              R"(,"expected_creditor":{"document_number":"1020304050","document_type":"CC"})"));
  EXPECT_TRUE(text(t, "id").starts_with("bbot_")) << t;
  EXPECT_EQ(text(t, "external_id"), external_id);
  EXPECT_EQ(text(t, "tenant_account_id"), s.originator);
  EXPECT_EQ(amount_of(t, "amount"), 12'345);
  EXPECT_EQ(text(t.at("amount"), "currency"), "COP");
  EXPECT_EQ(text(t, "state"), "created");
  EXPECT_TRUE(t.at("state_reason").is_null());
  EXPECT_EQ(text(t, "end_to_end_id").size(), 32u);
  EXPECT_TRUE(text(t, "end_to_end_id").starts_with("E")) << t;
  EXPECT_TRUE(text(t, "payment_id").starts_with("CO.COM.CRB.TRXID")) << t;
  EXPECT_FALSE(text(t, "payer_name").empty()) << t;
  EXPECT_TRUE(text(t, "resolution_request_id").starts_with("bbtgr_")) << t;
  EXPECT_EQ(text(t.at("query"), "format"), "plain_key");
  EXPECT_EQ(text(t.at("query"), "value"), key);
  EXPECT_EQ(text(t.at("expected_creditor"), "document_number"), "1020304050");
  const json::value& target = t.at("target");
  EXPECT_TRUE(text(target, "id").starts_with("bbtgt_")) << target;
  EXPECT_EQ(text(target, "key_type"), "cellphone");
  EXPECT_EQ(text(target, "key_value"), key);
  EXPECT_EQ(text(target, "payment_id"), text(t, "payment_id"));
  EXPECT_EQ(text(target, "resolution_request_id"), text(t, "resolution_request_id"));
  EXPECT_NE(text(target.at("creditor"), "full_name").find('*'), std::string::npos) << target;
  // T110: the tenant's time of acceptance, without a zone.
  const std::string t110 = text(t.at("timemarks"), "T110");
  EXPECT_EQ(t110.size(), 26u) << t110;
  EXPECT_EQ(t110.back() != 'Z', true) << t110;
  EXPECT_EQ(t110.substr(0, 19), text(t, "inserted_at").substr(0, 19));
  EXPECT_EQ(get_transfer(s, text(t, "id")), t);
  EXPECT_EQ(event_types(server, text(t, "id")).front(), "outgoing_transfer.created");
}

TEST(OutgoingTransfers, TheRequestItselfIsValidated) {
  const Server& server = Server::shared();
  Sender s = init_sender(server);
  auto post = [&](const std::string& body) { return s.post("/api/v1/outgoing_transfers", body); };
  Reply empty = post(batch_body(s.originator, json::array{}));
  EXPECT_EQ(empty.status, 400);
  EXPECT_EQ(empty.error_path(), "transfers");
  json::array too_many;
  for (int i = 0; i < 1001; ++i) too_many.push_back(item("x" + std::to_string(i), 1, "3001234567"));
  Reply over = post(batch_body(s.originator, too_many));
  EXPECT_EQ(over.status, 400);
  EXPECT_EQ(over.error_path(), "transfers");
  Reply missing = post(R"({"transfers":[]})");
  EXPECT_EQ(missing.status, 400) << missing.body;  // an empty list and a missing account: both
  Reply no_account = post(json::serialize(json::object{
      {"transfers", json::array{item("a", 1, "3001234567")}}}));
  EXPECT_EQ(no_account.status, 422);
  EXPECT_EQ(no_account.error_code(), "missing_field");
  EXPECT_EQ(no_account.error_path(), "tenant_account_id");
  Reply malformed = post(batch_body("acc_x", json::array{item("a", 1, "3001234567")}));
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(malformed.error_path(), "tenant_account_id");
  Reply unknown_field = post(batch_body(s.originator, json::array{item("a", 1, "3001234567")},
                                        R"(,"colour":"blue")"));
  EXPECT_EQ(unknown_field.status, 400);
  EXPECT_EQ(unknown_field.error_path(), "colour");
  Reply not_json = post("{");
  EXPECT_EQ(not_json.status, 400);
}

TEST(OutgoingTransfers, AnUnknownForeignOrReceptorSourceIsTenantAccountNotFound) {
  const Server& server = Server::shared();
  Sender s = init_sender(server);
  Sender other = sender_of(server, other_tenant(server, "Other source").bearer);
  const json::array one{item("a", 1, "3001234567")};
  for (const std::string& account :
       {std::string("bbtacc_AAAAAAAAAAAAAAAAAAAAAA"), other.originator, s.receptor}) {
    Reply reply = s.post("/api/v1/outgoing_transfers", batch_body(account, one));
    EXPECT_EQ(reply.status, 404) << account << " " << reply.body;
    EXPECT_EQ(reply.error_code(), "tenant_account_not_found");
    EXPECT_EQ(reply.error_path(), "tenant_account_id");
  }
}

TEST(OutgoingTransfers, EachItemRuleRejectsThatItemAlone) {
  Server server({{"--currencies", "COP,USD"}});
  Sender s = init_sender(server);
  fund(s, s.originator, 50'000);
  auto code_of = [&](const json::object& one) { return text(rejection(s, one), "error_code"); };
  // A target or a query, not both and not neither.
  json::object both = item("both", 10, "3001234567");
  both["target_id"] = "bbtgt_AAAAAAAAAAAAAAAAAAAAAA";
  json::value both_rejected = rejection(s, both);
  EXPECT_EQ(text(both_rejected, "error_code"), "validation_error");
  EXPECT_EQ(text(both_rejected, "path"), "transfers.0.query");
  json::object bad_format = item("format", 10, "3001234567");
  bad_format["query"].as_object()["format"] = "iban";
  EXPECT_EQ(text(rejection(s, bad_format), "path"), "transfers.0.query.format");
  // amount_not_provided: no amount, and a query has no transaction amount.
  json::object no_amount = item("no-amount", 10, fresh_cellphone());
  no_amount.erase("amount");
  json::value not_provided = rejection(s, no_amount);
  EXPECT_EQ(text(not_provided, "error_code"), "amount_not_provided");
  EXPECT_EQ(text(not_provided, "path"), "transfers.0.amount");
  // currency_mismatch: a currency the server takes, but not the account's.
  json::object dollars = item("usd", 10, fresh_cellphone());
  dollars["amount"] = json::object{{"amount", 10}, {"currency", "USD"}};
  EXPECT_EQ(code_of(dollars), "currency_mismatch");
  // Keys that do not resolve: malformed, or documented never to resolve.
  EXPECT_EQ(code_of(item("malformed-key", 10, "not a key")), "target_not_found");
  EXPECT_EQ(code_of(item("email-404", 10, "nadie404@example.com")), "target_not_found");
  // Targets by id: unknown, then one resolved with an amount.
  json::object unknown_target = item("unknown-target", 10, "");
  unknown_target.erase("query");
  unknown_target["target_id"] = "bbtgt_AAAAAAAAAAAAAAAAAAAAAA";
  json::value not_found = rejection(s, unknown_target);
  EXPECT_EQ(text(not_found, "error_code"), "target_not_found");
  EXPECT_EQ(text(not_found, "path"), "transfers.0.target_id");
  const std::string key = fresh_cellphone();
  Reply resolved = s.post("/api/v1/targets/resolve",
                          R"({"format":"plain_key","value":")" + key +
                              R"(","amount":)" + money(7'000) + "}");
  ASSERT_EQ(resolved.status, 201) << resolved.body;
  const json::value target = resolved.json();
  auto by_target = [&](const std::string& external_id, std::optional<long long> amount) {
    json::object one{{"external_id", external_id}, {"target_id", text(target, "id")}};
    if (amount) one["amount"] = json::parse(money(*amount));
    return one;
  };
  json::value mismatch = rejection(s, by_target("mismatch", 7'001));
  EXPECT_EQ(text(mismatch, "error_code"), "target_amount_mismatch");
  EXPECT_EQ(text(mismatch, "path"), "transfers.0.amount.amount");
  EXPECT_NE(text(mismatch, "message").find("COP 70.01"), std::string::npos) << mismatch;
  EXPECT_NE(text(mismatch, "message").find("COP 70.00"), std::string::npos) << mismatch;
  // Without an amount the target's is taken; with the same amount it is accepted as well.
  json::value batch = send(s, json::array{by_target("target-amount", std::nullopt),
                                          by_target("same-amount", 7'000)});
  ASSERT_EQ(list_at(batch, "accepted_transfers").size(), 2u) << batch;
  for (const json::value& t : list_at(batch, "accepted_transfers")) {
    EXPECT_EQ(amount_of(t, "amount"), 7'000);
    EXPECT_EQ(text(t.at("target"), "id"), text(target, "id"));
    EXPECT_EQ(text(t, "payment_id"), text(target, "payment_id"));
    EXPECT_EQ(text(t, "resolution_request_id"), text(target, "resolution_request_id"));
    EXPECT_TRUE(t.at("query").is_null());
  }
  // insufficient_funds counts what the items before it took: 50,000 - 14,000 left.
  json::value funds = send(s, json::array{item("fits", 30'000, fresh_cellphone()),
                                          item("does-not-fit", 6'001, fresh_cellphone()),
                                          item("fits-too", 6'000, fresh_cellphone())});
  EXPECT_EQ(list_at(funds, "accepted_transfers").size(), 2u) << funds;
  EXPECT_EQ(rejected_codes(funds), std::set<std::string>{"insufficient_funds"});
  EXPECT_EQ(list_at(funds, "rejected_transfers").at(0).at("index").as_int64(), 1);
  // Money in messages is written one way (COP 60.00 is 6,000 minor units), never raw.
  EXPECT_EQ(text(list_at(funds, "rejected_transfers").at(0), "message"),
            "the source account's available balance (COP 60.00) does not cover the amount");
  EXPECT_EQ(balance_of(s, s.originator), (Balance{0, 50'000, 50'000}));
  // target_expired once its 15 minutes passed on the tenant clock.
  advance(s, 15 * 60 + 1);
  json::value expired = rejection(s, by_target("expired", std::nullopt));
  EXPECT_EQ(text(expired, "error_code"), "target_expired");
  EXPECT_EQ(text(expired, "path"), "transfers.0.target_id");
}

TEST(OutgoingTransfers, TheMaximumIsConfigurableAndNamedInTheRejection) {
  Server server({{"--transfer-max-amount", "500000"}});
  Sender s = init_sender(server);
  fund(s, s.originator, 2'000'000);
  json::value batch = send(s, json::array{item("at-max", 500'000, fresh_cellphone()),
                                          item("over-max", 500'001, fresh_cellphone())});
  ASSERT_EQ(list_at(batch, "accepted_transfers").size(), 1u) << batch;
  EXPECT_EQ(text(list_at(batch, "accepted_transfers").at(0), "external_id"), "at-max");
  const json::value& over = list_at(batch, "rejected_transfers").at(0);
  EXPECT_EQ(text(over, "error_code"), "amount_exceeds_max_limit");
  EXPECT_EQ(text(over, "external_id"), "over-max");
  EXPECT_NE(text(over, "message").find("COP 5,000.01"), std::string::npos) << over;
  EXPECT_NE(text(over, "message").find("COP 5,000.00"), std::string::npos) << over;
  // A target's own amount is held to the maximum too.
  Reply resolved = s.post("/api/v1/targets/resolve", R"({"format":"plain_key","value":")" +
                                                         fresh_cellphone() + R"(","amount":)" +
                                                         money(600'000) + "}");
  ASSERT_EQ(resolved.status, 201) << resolved.body;
  json::value by_target = rejection(
      s, json::object{{"external_id", "target-over"}, {"target_id", text(resolved.json(), "id")}});
  EXPECT_EQ(text(by_target, "error_code"), "amount_exceeds_max_limit");
}

// The data of the transfer's events as GET /api/v1/events shows them, oldest first, by event
// type; waits (at most 10 s) until `count` are positioned.
std::vector<std::pair<std::string, json::value>> events_of(const Sender& s, const std::string& id,
                                                           std::size_t count) {
  std::vector<std::pair<std::string, json::value>> found;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    found.clear();
    Reply reply = s.get("/api/v1/events?type=outgoing_transfer.*&page_size=500");
    EXPECT_EQ(reply.status, 200) << reply.body;
    const json::value page = reply.json();
    for (const json::value& event : page.at("events").as_array()) {
      if (text(event.at("data"), "id") == id) {
        found.emplace_back(text(event, "type"), event.at("data"));
      }
    }
    if (found.size() >= count) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while (std::chrono::steady_clock::now() < deadline);
  std::reverse(found.begin(), found.end());
  return found;
}

TEST(OutgoingTransfers, ATransferLivesToSuccessfulWithTheBalancesRightAtEachStep) {
  Server server;  // a clock of its own to advance
  Sender s = init_sender(server);
  fund(s, s.originator, 1'000'000);
  const std::string external_id = harness::new_uuid();
  json::value t = send_one(s, item(external_id, 250'000, fresh_cellphone()));
  const std::string id = text(t, "id");
  EXPECT_EQ(balance_of(s, s.originator), (Balance{750'000, 250'000, 1'000'000}));
  Reply early = s.get("/api/v1/outgoing_transfers/find_successful_by?external_id=" + external_id);
  EXPECT_EQ(early.status, 409);
  EXPECT_EQ(early.error_code(), "invalid_state");

  // One second of the tenant clock a step: each state the transfer is seen in holds the amount
  // until it is successful, when the balance drops and nothing is held.
  const std::vector<std::string> flow = {"created", "processing", "target_resolved", "held",
                                         "sent_to_breb_provider", "successful"};
  std::string state = "created";
  // The transfer as GET showed it in each state: what the event of that state shows.
  std::map<std::string, json::value> seen_in = {{"created", get_transfer(s, id)}};
  EXPECT_EQ(seen_in["created"], t) << "GET shows the transfer as the batch accepted it";
  for (int step = 0; step < 12 && state != "successful"; ++step) {
    advance(s, 1);
    json::value now = wait_for(s, id, [&](const json::value& v) { return text(v, "state") != state; });
    const std::string seen = text(now, "state");
    seen_in[seen] = now;
    ASSERT_NE(std::find(flow.begin(), flow.end(), seen), flow.end()) << now;
    ASSERT_GT(std::find(flow.begin(), flow.end(), seen), std::find(flow.begin(), flow.end(), state))
        << now;
    state = seen;
    const Balance balance = balance_of(s, s.originator);
    if (state == "successful") {
      EXPECT_EQ(balance, (Balance{750'000, 0, 750'000})) << state;
    } else {
      EXPECT_EQ(balance, (Balance{750'000, 250'000, 1'000'000})) << state;
    }
  }
  ASSERT_EQ(state, "successful");
  json::value done = get_transfer(s, id);
  EXPECT_TRUE(done.at("state_reason").is_null());
  // The timemarks are the schedule's: T120 four steps after T110, T130 five.
  const json::object& marks = done.at("timemarks").as_object();
  const long long t110 = micros_of(std::string(marks.at("T110").as_string()));
  EXPECT_EQ(micros_of(std::string(marks.at("T120").as_string())) - t110, 4'000'000) << done;
  EXPECT_EQ(micros_of(std::string(marks.at("T130").as_string())) - t110, 5'000'000) << done;
  // Every step is an event, in order.
  EXPECT_EQ(event_types(server, id),
            (std::vector<std::string>{"outgoing_transfer.created", "outgoing_transfer.processing",
                                      "outgoing_transfer.target_resolved",
                                      "outgoing_transfer.held",
                                      "outgoing_transfer.sent_to_breb_provider",
                                      "outgoing_transfer.successful"}));
  // Each event shows the transfer as it was in its state: its state, the timemarks set by then
  // and updated_at the time of the step, everything else as accepted.
  const auto events = events_of(s, id, flow.size());
  ASSERT_EQ(events.size(), flow.size());
  for (std::size_t i = 0; i < flow.size(); ++i) {
    EXPECT_EQ(events[i].first, "outgoing_transfer." + flow[i]);
    if (!seen_in.contains(flow[i])) continue;  // a step the polling above did not catch
    EXPECT_EQ(events[i].second, seen_in[flow[i]]) << flow[i];
  }
  EXPECT_EQ(events.back().second, done);
  // The same through GET /api/v1/events/{id}.
  Reply listed = s.get("/api/v1/events?type=outgoing_transfer.held&page_size=500");
  ASSERT_EQ(listed.status, 200) << listed.body;
  const json::value held_events = listed.json();
  for (const json::value& event : held_events.at("events").as_array()) {
    if (text(event.at("data"), "id") != id) continue;
    Reply one = s.get("/api/v1/events/" + text(event, "id"));
    ASSERT_EQ(one.status, 200) << one.body;
    EXPECT_EQ(one.json(), event);
    EXPECT_EQ(text(one.json().at("data"), "state"), "held");
    EXPECT_EQ(one.json().at("data").at("timemarks").as_object().size(), 1u) << one.body;
  }
  Reply found = s.get("/api/v1/outgoing_transfers/find_successful_by?external_id=" + external_id);
  ASSERT_EQ(found.status, 200) << found.body;
  EXPECT_EQ(text(found.json(), "id"), id);
  // The batch completed with its only transfer.
  EXPECT_EQ(query_column(server, "SELECT state FROM outgoing_transfer_batches WHERE id = '" +
                                     text(t, "batch_id") + "'"),
            std::vector<std::string>{"completed"});
  server.check_ledger();
}

TEST(OutgoingTransfers, ALateProcessorTakesEveryDueStepAtOnceWithTheScheduledTimemarks) {
  Server server;
  Sender s = init_sender(server);
  fund(s, s.originator, 100'000);
  json::value t = send_one(s, item(harness::new_uuid(), 1'000, fresh_cellphone()));
  json::value done = run_to_end(s, text(t, "id"));
  ASSERT_EQ(text(done, "state"), "successful") << done;
  const json::object& marks = done.at("timemarks").as_object();
  const long long t110 = micros_of(std::string(marks.at("T110").as_string()));
  EXPECT_EQ(micros_of(std::string(marks.at("T120").as_string())) - t110, 4'000'000) << done;
  EXPECT_EQ(micros_of(std::string(marks.at("T130").as_string())) - t110, 5'000'000) << done;
  EXPECT_EQ(event_types(server, text(t, "id")).size(), 6u);
}

TEST(OutgoingTransfers, EachSandboxTriggerAndFailingKeyFailsTheTransferAndReleasesItsFunds) {
  Server server;
  Sender s = init_sender(server);
  fund(s, s.originator, 1'000'000);
  struct Case {
    std::string external_id;
    std::string key;
    std::string extra;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"unknown", fresh_cellphone(), R"(,"description":"pay tx_unknown")", "unknown"},
      {"risk", fresh_cellphone(), R"(,"description":"tx_risk_control please")", "risk_control"},
      {"timeout", fresh_cellphone(), R"(,"description":"tx_breb_timeout")", "breb_timeout"},
      {"provider", fresh_cellphone(), R"(,"description":"tx_provider_unavailable")",
       "provider_unavailable"},
      {"key-991", "3001234991", "", "unknown"},
      {"key-992", "3001234992", "", "risk_control"},
      {"key-993", "3001234993", "", "breb_timeout"},
      {"key-994", "3001234994", "", "provider_unavailable"},
  };
  json::array items;
  for (const Case& c : cases) items.push_back(item(c.external_id, 10'000, c.key, c.extra));
  json::value batch = send(s, items);
  ASSERT_EQ(list_at(batch, "accepted_transfers").size(), cases.size()) << batch;
  EXPECT_EQ(balance_of(s, s.originator), (Balance{920'000, 80'000, 1'000'000}));
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string id = text(list_at(batch, "accepted_transfers").at(i), "id");
    json::value done = run_to_end(s, id);
    EXPECT_EQ(text(done, "state"), "failed") << done;
    EXPECT_EQ(text(done, "state_reason"), cases[i].reason) << done;
    EXPECT_TRUE(done.at("timemarks").as_object().contains("T130")) << done;
    EXPECT_EQ(event_types(server, id).back(), "outgoing_transfer.failed");
    // The failure's event shows the transfer as it ended; the ones before it, no reason.
    const auto events = events_of(s, id, 6);
    ASSERT_EQ(events.size(), 6u);
    EXPECT_EQ(events.back().second, done);
    for (std::size_t e = 0; e + 1 < events.size(); ++e) {
      EXPECT_TRUE(events[e].second.at("state_reason").is_null()) << events[e].second;
      EXPECT_FALSE(events[e].second.at("timemarks").as_object().contains("T130"))
          << events[e].second;
    }
  }
  // Every hold released, nothing moved.
  EXPECT_EQ(balance_of(s, s.originator), (Balance{1'000'000, 0, 1'000'000}));
  Reply failed = s.get("/api/v1/outgoing_transfers?state=failed&batch_id=" + text(batch, "id"));
  EXPECT_EQ(failed.json().at("pagination").at("total_items").as_int64(), 8) << failed.body;
  Reply not_successful =
      s.get("/api/v1/outgoing_transfers/find_successful_by?external_id=risk");
  EXPECT_EQ(not_successful.status, 409);
  server.check_ledger();
}

TEST(OutgoingTransfers, AKeyThatGoesAwayBeforeItIsResolvedAgainFailsTheTransfer) {
  Server server;
  Sender s = init_sender(server);
  fund(s, s.originator, 100'000);
  Tenant own{s.bearer, s.receptor};
  const json::value collection = create_collection(server, own);
  json::value t = send_one(s, item("gone", 1'000, key_of(collection)));
  ASSERT_EQ(server.send({"DELETE", "/api/v1/collections/" + text(collection, "id"), "",
                         {s.bearer}})
                .status,
            204);
  json::value done = run_to_end(s, text(t, "id"));
  EXPECT_EQ(text(done, "state"), "failed") << done;
  EXPECT_EQ(text(done, "state_reason"), "target_not_found") << done;
  EXPECT_EQ(balance_of(s, s.originator), (Balance{100'000, 0, 100'000}));
}

TEST(OutgoingTransfers, ATransferToAnotherTenantsCollectionArrivesAsItsPayment) {
  Server server;
  Sender a = init_sender(server);
  fund(a, a.originator, 1'000'000);
  const Tenant b = other_tenant(server, "Creditor tenant");
  const json::value collection = create_collection(server, b);
  const long long b_before = tenant_account_balance(server, b);
  json::value t = send_one(a, item("to-b", 40'000, key_of(collection)));
  EXPECT_EQ(text(t.at("target"), "key_value"), key_of(collection));
  json::value done = run_to_end(a, text(t, "id"));
  ASSERT_EQ(text(done, "state"), "successful") << done;
  EXPECT_EQ(balance_of(a, a.originator), (Balance{960'000, 0, 960'000}));
  // On B's side: a successful attempt of the amount, carrying the transfer's payment id, its
  // incoming transfer with the transfer's end-to-end id, and the money in B's account.
  Reply attempts =
      server.get("/api/v1/collections/" + text(collection, "id") + "/attempts", {b.bearer});
  ASSERT_EQ(attempts.status, 200) << attempts.body;
  const json::value listed = attempts.json();
  const json::array& list = listed.at("attempts").as_array();
  ASSERT_EQ(list.size(), 1u) << attempts.body;
  EXPECT_EQ(text(list.at(0), "state"), "successful");
  EXPECT_EQ(amount_of(list.at(0), "amount"), 40'000);
  EXPECT_EQ(text(list.at(0), "payment_id"), text(t, "payment_id"));
  EXPECT_EQ(query_column(server, "SELECT end_to_end_id FROM incoming_transfers WHERE id = '" +
                                     text(list.at(0), "transfer_id") + "'"),
            std::vector<std::string>{text(t, "end_to_end_id")});
  EXPECT_EQ(tenant_account_balance(server, b), b_before + 40'000);
  EXPECT_EQ(amount_of(get_collection(server, b, text(collection, "id")), "paid_amount"), 40'000);
  server.check_ledger();
}

TEST(OutgoingTransfers, ACollectionThatRejectsThePaymentFailsTheTransferAndReleasesIt) {
  Server server;
  Sender a = init_sender(server);
  fund(a, a.originator, 1'000'000);
  const Tenant b = other_tenant(server, "Picky creditor");
  const json::value collection = create_collection(server, b, with_limits(100, 1'000, 1'000, 5'000));
  const long long b_before = tenant_account_balance(server, b);
  json::value t = send_one(a, item("too-big", 5'000, key_of(collection)));
  json::value done = run_to_end(a, text(t, "id"));
  EXPECT_EQ(text(done, "state"), "failed") << done;
  EXPECT_EQ(text(done, "state_reason"), "rejected_by_creditor") << done;
  EXPECT_EQ(balance_of(a, a.originator), (Balance{1'000'000, 0, 1'000'000}));
  EXPECT_EQ(tenant_account_balance(server, b), b_before);
  // The creditor sees the rejected attempt and why.
  Reply attempts = server.get("/api/v1/collections/" + text(collection, "id") +
                                  "/attempts?state=rejected",
                              {b.bearer});
  const json::value listed = attempts.json();
  const json::array& list = listed.at("attempts").as_array();
  ASSERT_EQ(list.size(), 1u) << attempts.body;
  EXPECT_EQ(text(list.at(0), "state_reason"), "amount_out_of_range");
  server.check_ledger();
}

TEST(OutgoingTransfers, ConcurrentBatchesFromOneAccountNeverOverdrawIt) {
  Server server;
  Sender s = init_sender(server);
  fund(s, s.originator, 1'000'000);
  constexpr int k_batches = 8;
  constexpr int k_items = 100;
  constexpr long long k_amount = 2'000;  // 8 x 100 x 2,000 = 1,600,000: more than there is
  std::atomic<int> accepted{0};
  std::atomic<int> insufficient{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int b = 0; b < k_batches; ++b) {
    threads.emplace_back([&, b] {
      json::array items;
      for (int i = 0; i < k_items; ++i) {
        items.push_back(item("c" + std::to_string(b) + "-" + std::to_string(i), k_amount,
                             fresh_cellphone()));
      }
      Reply reply = s.post("/api/v1/outgoing_transfers", batch_body(s.originator, items));
      if (reply.status != 201) {
        ++failures;
        return;
      }
      json::value batch = json::parse(reply.body);
      accepted += static_cast<int>(batch.at("accepted_transfers").as_array().size());
      for (const json::value& r : batch.at("rejected_transfers").as_array()) {
        if (r.at("error_code").as_string() == "insufficient_funds") ++insufficient;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  // Exactly what the balance covers was accepted; the rest was refused for lack of funds.
  EXPECT_EQ(accepted.load(), 500);
  EXPECT_EQ(insufficient.load(), k_batches * k_items - 500);
  EXPECT_EQ(balance_of(s, s.originator), (Balance{0, 1'000'000, 1'000'000}));
  // Units queued on the account's lock: none deadlocked (PostgreSQL would have retried it).
  EXPECT_EQ(server.log_text().find("store.retry"), std::string::npos);
  server.check_ledger();
}

// Batches that race for the same external ids: each id is accepted once across them, every other
// batch lists it among its duplicates (PostgreSQL: the loser's COPY meets the winner's row, and
// its INSERT that skips taken ids runs instead), and only the accepted transfers hold funds.
TEST(OutgoingTransfers, ConcurrentBatchesWithTheSameExternalIdsAcceptEachOnce) {
  Server server;
  Sender s = init_sender(server);
  fund(s, s.originator, 1'000'000);
  constexpr int k_batches = 6;
  constexpr int k_items = 40;
  constexpr long long k_amount = 1'000;
  std::vector<std::string> keys;
  for (int i = 0; i < k_items; ++i) keys.push_back(fresh_cellphone());
  std::atomic<int> failures{0};
  std::mutex mutex;
  std::map<std::string, std::set<std::string>> accepted_ids;  // external id -> transfer ids
  std::map<std::string, std::set<std::string>> duplicate_of;  // external id -> ids listed
  std::vector<std::thread> threads;
  for (int b = 0; b < k_batches; ++b) {
    threads.emplace_back([&] {
      json::array items;
      for (int i = 0; i < k_items; ++i) {
        items.push_back(item("race-" + std::to_string(i), k_amount, keys[i]));
      }
      Reply reply = s.post("/api/v1/outgoing_transfers", batch_body(s.originator, items));
      if (reply.status != 201) {
        ++failures;
        return;
      }
      const json::value batch = json::parse(reply.body);
      std::lock_guard lock(mutex);
      for (const json::value& t : list_at(batch, "accepted_transfers")) {
        accepted_ids[text(t, "external_id")].insert(text(t, "id"));
      }
      for (const json::value& t : list_at(batch, "duplicated_transfers")) {
        duplicate_of[text(t, "external_id")].insert(text(t, "id"));
      }
      if (!list_at(batch, "rejected_transfers").empty()) ++failures;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  ASSERT_EQ(accepted_ids.size(), static_cast<std::size_t>(k_items));
  for (const auto& [external_id, ids] : accepted_ids) {
    EXPECT_EQ(ids.size(), 1u) << external_id;
    // The batches that lost it name the one transfer that has it.
    EXPECT_EQ(duplicate_of[external_id], ids) << external_id;
  }
  // What the accepted transfers hold, or (settled meanwhile on the tenant clock) have spent.
  const Balance after = balance_of(s, s.originator);
  EXPECT_EQ(after.available, 1'000'000 - k_items * k_amount);
  EXPECT_EQ(after.held + (1'000'000 - after.current), k_items * k_amount);
  Reply listed = s.get("/api/v1/outgoing_transfers?page_size=500");
  ASSERT_EQ(listed.status, 200) << listed.body;
  EXPECT_EQ(listed.json().at("outgoing_transfers").as_array().size(),
            static_cast<std::size_t>(k_items));
  server.check_ledger();
}

TEST(OutgoingTransfers, ListsArePagedNewestFirstAndFiltered) {
  Server server;
  Sender s = init_sender(server);
  fund(s, s.originator, 1'000'000);
  json::array items;
  for (int i = 0; i < 12; ++i) items.push_back(item("l" + std::to_string(i), 100, fresh_cellphone()));
  json::value first = send(s, items);
  json::value second = send(s, json::array{item("later", 100, fresh_cellphone())});
  Reply page = s.get("/api/v1/outgoing_transfers?page_size=10");
  ASSERT_EQ(page.status, 200) << page.body;
  const json::value body = page.json();
  EXPECT_EQ(body.at("pagination").at("total_items").as_int64(), 13);
  EXPECT_EQ(body.at("pagination").at("total_pages").as_int64(), 2);
  ASSERT_EQ(body.at("outgoing_transfers").as_array().size(), 10u);
  EXPECT_EQ(text(body.at("outgoing_transfers").at(0), "external_id"), "later");
  Reply rest = s.get("/api/v1/outgoing_transfers?page_size=10&page_number=2");
  EXPECT_EQ(rest.json().at("outgoing_transfers").as_array().size(), 3u);
  Reply of_batch = s.get("/api/v1/outgoing_transfers?batch_id=" + text(first, "id"));
  EXPECT_EQ(of_batch.json().at("pagination").at("total_items").as_int64(), 12);
  Reply by_external = s.get("/api/v1/outgoing_transfers?external_id=l3");
  ASSERT_EQ(by_external.json().at("outgoing_transfers").as_array().size(), 1u);
  EXPECT_EQ(text(by_external.json().at("outgoing_transfers").at(0), "external_id"), "l3");
  Reply created = s.get("/api/v1/outgoing_transfers?state=created");
  EXPECT_EQ(created.json().at("pagination").at("total_items").as_int64(), 13);
  Reply successful = s.get("/api/v1/outgoing_transfers?state=successful");
  EXPECT_EQ(successful.json().at("pagination").at("total_items").as_int64(), 0);
  for (const char* bad : {"state=lost", "batch_id=x", "page_size=5", "colour=red"}) {
    Reply refused = s.get(std::string("/api/v1/outgoing_transfers?") + bad);
    EXPECT_EQ(refused.status, 400) << bad << " " << refused.body;
  }
  // Another tenant sees none of them.
  Sender other = sender_of(server, other_tenant(server, "Lister").bearer);
  EXPECT_EQ(other.get("/api/v1/outgoing_transfers").json().at("pagination").at("total_items").as_int64(), 0);
  const std::string id = text(list_at(second, "accepted_transfers").at(0), "id");
  EXPECT_EQ(other.get("/api/v1/outgoing_transfers/" + id).status, 404);
}

TEST(OutgoingTransfers, ReadsAnswer404400And409AsTheContractSays) {
  const Server& server = Server::shared();
  Sender s = init_sender(server);
  Reply unknown = s.get("/api/v1/outgoing_transfers/bbot_AAAAAAAAAAAAAAAAAAAAAA");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.error_code(), "item_not_found");
  Reply malformed = s.get("/api/v1/outgoing_transfers/bbcol_AAAAAAAAAAAAAAAAAAAAAA");
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(malformed.error_path(), "id");
  Reply no_external = s.get("/api/v1/outgoing_transfers/find_successful_by");
  EXPECT_EQ(no_external.status, 422);
  EXPECT_EQ(no_external.error_code(), "missing_field");
  Reply none = s.get("/api/v1/outgoing_transfers/find_successful_by?external_id=" +
                     harness::new_uuid());
  EXPECT_EQ(none.status, 404);
  EXPECT_EQ(none.error_code(), "item_not_found");
}

TEST(OutgoingTransfers, ScopesGuardBatchesAndReads) {
  const Server& server = Server::shared();
  Sender s = init_sender(server);
  const std::string readonly = "Authorization: Bearer " +
                               server.access_token("outgoing_transfers:readonly");
  const std::string collections_only = "Authorization: Bearer " + server.access_token("collections");
  const std::string body = batch_body(s.originator, json::array{item("scoped", 1, "3001234567")});
  Reply refused = server.post("/api/v1/outgoing_transfers", body, {readonly});
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(refused.error_code(), "not_authorized");
  EXPECT_EQ(server.get("/api/v1/outgoing_transfers", {readonly}).status, 200);
  EXPECT_EQ(server.get("/api/v1/outgoing_transfers", {collections_only}).status, 403);
  EXPECT_EQ(server.post("/api/v1/outgoing_transfers", body, {}).status, 401);
}

TEST(OutgoingTransfers, AReplayWithTheSameIdempotencyKeyAcceptsOnce) {
  const Server& server = Server::shared();
  Sender s = init_sender(server);
  fund(s, s.originator, 10'000);
  const Balance before = balance_of(s, s.originator);
  const std::string body =
      batch_body(s.originator, json::array{item(harness::new_uuid(), 1'000, fresh_cellphone())});
  const std::string key = "x-idempotency-key: " + harness::new_uuid();
  Reply first = server.post("/api/v1/outgoing_transfers", body, {s.bearer, key});
  Reply again = server.post("/api/v1/outgoing_transfers", body, {s.bearer, key});
  ASSERT_EQ(first.status, 201) << first.body;
  EXPECT_EQ(again.status, 201);
  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(again.header("idempotent-replayed"), "true");
  EXPECT_EQ(balance_of(s, s.originator).held, before.held + 1'000);
}

TEST(OutgoingTransfers, MutatedBodiesNeverEarnA5xx) {
  const Server& server = Server::shared();
  Sender s = init_sender(server);
  std::mt19937 random(20260101);
  json::object full = item("m", 1'000, "3001234567",
                           R"(,"description":"d","metadata":{"k":"v"},)"
                           R"("expected_creditor":{"document_number":"1","document_type":"CC"})");
  const std::string valid = batch_body(s.originator, json::array{full}, R"(,"description":"b")");
  for (int i = 0; i < 120; ++i) {
    std::string body = harness::mutate_body(valid, random);
    Reply reply = s.post("/api/v1/outgoing_transfers", body);
    ASSERT_GT(reply.status, 0) << body;
    EXPECT_LT(reply.status, 500) << body << " -> " << reply.body;
  }
}
