// Cards: create (inline cardholder, initial balance), list, get, PATCH (states), look, prepaid
// balance operations (entity_id, performed_at filter); the card number never stored or logged in
// clear. Error paths included.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "harness.hpp"

using harness::Reply;
using harness::Server;
namespace json = boost::json;

namespace {

std::string money(long long amount, const std::string& currency = "COP") {
  return R"({"amount":)" + std::to_string(amount) + R"(,"currency":")" + currency + R"("})";
}

std::string text(const json::value& value, std::string_view key) {
  return std::string(value.at(key).as_string());
}

// A new core account of the tenant, funded with `amount` from the sandbox.
std::string funded_account(const Server& server, long long amount) {
  Reply account = server.post("/v1/ledger/accounts",
                              R"({"name":"Cards","type":"savings_account","currency":"COP"})",
                              {server.bearer_core()});
  EXPECT_EQ(account.status, 201) << account.body;
  std::string id = text(account.json(), "id");
  if (amount > 0) {
    Reply funded = server.post("/v1/sandbox/accounts/" + id + "/fund",
                               R"({"amount":)" + money(amount) + "}", {server.bearer_core()});
    EXPECT_EQ(funded.status, 201) << funded.body;
  }
  return id;
}

long long account_balance(const Server& server, const std::string& account_id) {
  Reply account = server.get("/v1/accounts/" + account_id, {server.bearer_core()});
  EXPECT_EQ(account.status, 200) << account.body;
  return account.json().at("balance").at("available").at("amount").as_int64();
}

const char* k_cardholder =
    R"({"first_name":"Ana","last_name":"Rojas","birthdate":"1990-04-01","nationality":"CO",)"
    R"("email":"ana@example.com","phone_number":"+573001234567"})";

Reply create_card(const Server& server, const std::string& fields) {
  return server.post("/v1/cards", "{" + fields + "}", {server.bearer_core()});
}

json::value new_card(const Server& server, const std::string& account_id,
                     const std::string& more = "") {
  Reply card = create_card(server, R"("account_id":")" + account_id + R"(")" + more);
  EXPECT_EQ(card.status, 201) << card.body;
  return card.json();
}

long long available(const json::value& card) {
  return card.at("balance").at("available").at("amount").as_int64();
}
long long posted(const json::value& card) {
  return card.at("balance").at("posted").at("amount").as_int64();
}

Reply operation(const Server& server, const std::string& card_id, const std::string& kind,
                long long amount, const std::string& entity_id,
                const std::string& currency = "COP") {
  return server.post("/v1/cards/" + card_id + "/prepaid/operations",
                     R"({"operation":")" + kind + R"(","amount":)" + money(amount, currency) +
                         R"(,"description":"test","entity_id":")" + entity_id + R"("})",
                     {server.bearer_core()});
}

std::string new_key(const Server& server, const std::string& scopes) {
  std::string tenant = text(server.credentials(), "tenant_id");
  json::value key = json::parse(
      server.command({"keys", "create", "--tenant", tenant, "--scopes", scopes, "--json"}));
  return "Authorization: Bearer " + text(key, "api_key");
}

bool luhn_valid(const std::string& digits) {
  int sum = 0;
  bool twice = false;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    int digit = *it - '0';
    if (twice && (digit *= 2) > 9) digit -= 9;
    sum += digit;
    twice = !twice;
  }
  return sum % 10 == 0;
}

// Every run of 13 to 19 ASCII digits in `bytes` that passes Luhn and ends with `last_four`.
std::vector<std::string> card_numbers_in(const std::string& bytes, const std::string& last_four) {
  std::vector<std::string> found;
  std::string run;
  auto flush = [&] {
    for (std::size_t length = 13; length <= 19 && length <= run.size(); ++length) {
      for (std::size_t at = 0; at + length <= run.size(); ++at) {
        std::string candidate = run.substr(at, length);
        if (candidate.ends_with(last_four) && luhn_valid(candidate)) found.push_back(candidate);
      }
    }
    run.clear();
  };
  for (char c : bytes) {
    if (c >= '0' && c <= '9') {
      run += c;
    } else if (!run.empty()) {
      flush();
    }
  }
  flush();
  return found;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream out;
  out << file.rdbuf();
  return out.str();
}

}  // namespace

TEST(Cards, CreateWithCardholderAndInitialBalanceIsATopup) {
  Server& server = Server::shared();
  std::string account = funded_account(server, 100000);
  json::value card = new_card(server, account,
                              R"(,"cardholder":)" + std::string(k_cardholder) +
                                  R"(,"nickname":"Travel","initial_balance":)" + money(30000));
  EXPECT_TRUE(text(card, "id").starts_with("car_"));
  EXPECT_EQ(text(card, "account_id"), account);
  EXPECT_EQ(text(card, "state"), "active");
  EXPECT_EQ(text(card, "type"), "virtual");
  EXPECT_EQ(text(card, "nickname"), "Travel");
  EXPECT_TRUE(std::regex_match(text(card, "last_four"), std::regex("[0-9]{4}")));
  EXPECT_FALSE(card.as_object().contains("number"));
  EXPECT_TRUE(text(card, "cardholder_id").starts_with("carh_"));
  EXPECT_EQ(text(card.at("cardholder"), "first_name"), "Ana");
  EXPECT_EQ(text(card.at("cardholder"), "id"), text(card, "cardholder_id"));
  EXPECT_TRUE(text(card, "configuration_group_id").starts_with("ccg_"));
  EXPECT_EQ(card.at("initial_balance"), json::parse(money(30000)));
  EXPECT_EQ(available(card), 30000);
  EXPECT_EQ(posted(card), 30000);
  EXPECT_EQ(account_balance(server, account), 70000);
  EXPECT_TRUE(card.at("spending_controls").at("card_target").is_null());

  Reply operations = server.get("/v1/cards/" + text(card, "id") + "/prepaid/operations",
                                {server.bearer_core()});
  ASSERT_EQ(operations.status, 200) << operations.body;
  json::value listed = operations.json();
  const json::array& items = listed.at("balance_operations").as_array();
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(text(items[0], "operation"), "topup");
  EXPECT_EQ(text(items[0], "entity_id"), "initial_balance");
  EXPECT_EQ(items[0].at("amount"), json::parse(money(30000)));
  EXPECT_EQ(text(operations.json(), "card_id"), text(card, "id"));

  // The card's group is the tenant's default group.
  Reply groups = server.get("/v1/cards/configuration_groups?page_size=500", {server.bearer_core()});
  ASSERT_EQ(groups.status, 200) << groups.body;
  bool found_default = false;
  json::value group_list = groups.json();
  for (const json::value& group : group_list.at("configuration_groups").as_array()) {
    if (text(group, "id") == text(card, "configuration_group_id")) {
      found_default = group.at("default").as_bool();
    }
  }
  EXPECT_TRUE(found_default);
}

TEST(Cards, GetAndListShowTheSameCard) {
  Server& server = Server::shared();
  json::value card = new_card(server, funded_account(server, 0));
  std::string id = text(card, "id");
  Reply fetched = server.get("/v1/cards/" + id, {server.bearer_core()});
  ASSERT_EQ(fetched.status, 200) << fetched.body;
  EXPECT_EQ(fetched.json(), card);
  Reply listed = server.get("/v1/cards?page_size=10", {server.bearer_core()});
  ASSERT_EQ(listed.status, 200) << listed.body;
  EXPECT_EQ(listed.json().at("cards").at(0), card);  // newest first
  EXPECT_GE(listed.json().at("pagination").at("total_items").as_int64(), 1);
  EXPECT_EQ(server.get("/v1/cards?page_size=5", {server.bearer_core()}).status, 400);
  EXPECT_EQ(server.get("/v1/cards?color=red", {server.bearer_core()}).status, 400);
}

TEST(Cards, CreateValidation) {
  Server& server = Server::shared();
  std::string account = funded_account(server, 1000);
  struct Case {
    std::string fields;
    long status;
    std::string code;
    std::string path;
  };
  const std::string unknown_id = "0123456789abcdefghijkl";
  const std::vector<Case> cases = {
      {R"("nickname":"x")", 422, "missing_field", "account_id"},
      {R"("account_id":"acc_short")", 400, "validation_error", "account_id"},
      {R"("account_id":"acc_)" + unknown_id + R"(")", 404, "item_not_found", "account_id"},
      {R"("account_id":")" + account + R"(","type":"metal")", 400, "validation_error", "type"},
      {R"("account_id":")" + account + R"(","color":"red")", 400, "validation_error", "color"},
      {R"("account_id":")" + account + R"(","cardholder":)" + k_cardholder +
           R"(,"cardholder_id":"carh_)" + unknown_id + R"(")",
       400, "validation_error", "cardholder_id"},
      {R"("account_id":")" + account + R"(","cardholder_id":"carh_)" + unknown_id + R"(")", 404,
       "item_not_found", "cardholder_id"},
      {R"("account_id":")" + account + R"(","configuration_group_id":"ccg_)" + unknown_id +
           R"(")",
       404, "item_not_found", "configuration_group_id"},
      {R"("account_id":")" + account + R"(","spending_controls":{"card_target":"spc_)" +
           unknown_id + R"("})",
       404, "item_not_found", "spending_controls.card_target"},
      {R"("account_id":")" + account +
           R"(","spending_controls":{"configuration_group_target":"spc_)" + unknown_id + R"("})",
       400, "validation_error", "spending_controls.configuration_group_target"},
      {R"("account_id":")" + account + R"(","initial_balance":)" + money(0), 400,
       "validation_error", "initial_balance.amount"},
      {R"("account_id":")" + account + R"(","initial_balance":)" + money(10, "EUR"), 400,
       "validation_error", "initial_balance.currency"},
      {R"("account_id":")" + account + R"(","initial_balance":)" + money(10, "USD"), 422,
       "currency_mismatch", "initial_balance.currency"},
      {R"("account_id":")" + account + R"(","initial_balance":)" + money(1001), 422,
       "insufficient_funds", "initial_balance.amount"},
      {R"("account_id":")" + account + R"(","cardholder":{"first_name":"A"})", 422,
       "missing_field", "cardholder.last_name"},
  };
  Reply before = server.get("/v1/cards", {server.bearer_core()});
  for (const Case& c : cases) {
    Reply reply = create_card(server, c.fields);
    EXPECT_EQ(reply.status, c.status) << c.fields << " -> " << reply.body;
    EXPECT_EQ(reply.error_code(), c.code) << c.fields;
    EXPECT_EQ(reply.error_path(), c.path) << c.fields;
  }
  // None of them made a card or moved money.
  Reply after = server.get("/v1/cards", {server.bearer_core()});
  EXPECT_EQ(after.json().at("pagination").at("total_items"),
            before.json().at("pagination").at("total_items"));
  EXPECT_EQ(account_balance(server, account), 1000);
  EXPECT_EQ(server.post("/v1/cards", "[1]", {server.bearer_core()}).status, 400);
}

TEST(Cards, AnotherTenantsCardIsNotFound) {
  Server server;
  json::value card = new_card(server, funded_account(server, 0));
  json::value other = json::parse(server.command({"tenant", "create", "--name", "other", "--json"}));
  std::string bearer = "Authorization: Bearer " + text(other, "api_key");
  std::string id = text(card, "id");
  for (const std::string& path : {"/v1/cards/" + id, "/v1/cards/" + id + "/look",
                                  "/v1/cards/" + id + "/prepaid/operations"}) {
    Reply reply = server.get(path, {bearer});
    EXPECT_EQ(reply.status, 404) << path;
    EXPECT_EQ(reply.error_code(), "item_not_found");
  }
  EXPECT_EQ(server.send({"PATCH", "/v1/cards/" + id, R"({"state":"blocked"})", {bearer}}).status, 404);
  // The other tenant cannot issue a card against this tenant's account either.
  Reply stolen = server.post("/v1/cards", R"({"account_id":")" + text(card, "account_id") + R"("})", {bearer});
  EXPECT_EQ(stolen.status, 404);
  EXPECT_EQ(server.get("/v1/cards", {bearer}).json().at("cards").as_array().size(), 0u);
}

TEST(Cards, StatesFollowTheirTransitions) {
  Server& server = Server::shared();
  json::value card = new_card(server, funded_account(server, 0));
  std::string path = "/v1/cards/" + text(card, "id");
  auto patch = [&](const std::string& body) {
    return server.send({"PATCH", path, body, {server.bearer_core()}});
  };
  Reply blocked = patch(R"({"state":"blocked","nickname":"Old"})");
  ASSERT_EQ(blocked.status, 200) << blocked.body;
  EXPECT_EQ(text(blocked.json(), "state"), "blocked");
  EXPECT_EQ(text(blocked.json(), "nickname"), "Old");
  Reply cleared = patch(R"({"nickname":null})");
  ASSERT_EQ(cleared.status, 200);
  EXPECT_TRUE(cleared.json().at("nickname").is_null());
  EXPECT_EQ(text(cleared.json(), "state"), "blocked");
  EXPECT_EQ(text(patch(R"({"state":"active"})").json(), "state"), "active");
  EXPECT_EQ(text(patch(R"({"state":"canceled"})").json(), "state"), "canceled");
  for (const char* state : {"active", "blocked"}) {
    Reply refused = patch(std::string(R"({"state":")") + state + R"("})");
    EXPECT_EQ(refused.status, 409) << state;
    EXPECT_EQ(refused.error_code(), "card_invalid_state");
  }
  EXPECT_EQ(patch(R"({"state":"lost"})").status, 400);
  EXPECT_EQ(patch(R"({"state":null})").status, 400);
  EXPECT_EQ(patch(R"({"last_four":"1234"})").status, 400);
  EXPECT_EQ(server.send({"PATCH", "/v1/cards/car_bad", "{}", {server.bearer_core()}}).status, 400);
}

TEST(Cards, PhysicalCardsWaitForActivation) {
  Server& server = Server::shared();
  json::value card = new_card(server, funded_account(server, 0), R"(,"type":"physical")");
  EXPECT_EQ(text(card, "type"), "physical");
  EXPECT_EQ(text(card, "state"), "pending_activation");
  std::string path = "/v1/cards/" + text(card, "id");
  Reply activated = server.send({"PATCH", path, R"({"state":"active"})", {server.bearer_core()}});
  EXPECT_EQ(activated.status, 409);
  EXPECT_EQ(activated.error_code(), "card_invalid_state");
  Reply canceled = server.send({"PATCH", path, R"({"state":"canceled"})", {server.bearer_core()}});
  EXPECT_EQ(canceled.status, 200);
}

TEST(Cards, LookShowsTheDesign) {
  Server& server = Server::shared();
  json::value card = new_card(server, funded_account(server, 0),
                              R"(,"cardholder":)" + std::string(k_cardholder));
  Reply look = server.get("/v1/cards/" + text(card, "id") + "/look", {server.bearer_core()});
  ASSERT_EQ(look.status, 200) << look.body;
  json::value body = look.json();
  EXPECT_EQ(text(body, "card_id"), text(card, "id"));
  EXPECT_EQ(text(body, "last_four"), text(card, "last_four"));
  EXPECT_EQ(text(body, "embossed_name"), "ANA ROJAS");
  EXPECT_EQ(text(body, "product_name"), "Default");
  EXPECT_EQ(body.at("expiration_year"), card.at("expiration_year"));
  EXPECT_TRUE(std::regex_match(text(body, "background_color"), std::regex("#[0-9A-F]{6}")));
}

TEST(Cards, PrepaidOperationsMoveMoneyOnceByEntityId) {
  Server& server = Server::shared();
  std::string account = funded_account(server, 50000);
  json::value card = new_card(server, account);
  std::string card_id = text(card, "id");
  Reply topup = operation(server, card_id, "topup", 20000, "top-1");
  ASSERT_EQ(topup.status, 201) << topup.body;
  EXPECT_TRUE(text(topup.json(), "id").starts_with("cbo_"));
  EXPECT_EQ(text(topup.json(), "operation"), "topup");
  Reply again = operation(server, card_id, "topup", 20000, "top-1");
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(again.body, topup.body);
  // The same entity_id with other values still answers the first operation and moves nothing.
  Reply different = operation(server, card_id, "withdrawal", 5, "top-1");
  EXPECT_EQ(different.status, 200);
  EXPECT_EQ(text(different.json(), "id"), text(topup.json(), "id"));
  EXPECT_EQ(account_balance(server, account), 30000);

  Reply too_much = operation(server, card_id, "withdrawal", 20001, "w-1");
  EXPECT_EQ(too_much.status, 422);
  EXPECT_EQ(too_much.error_code(), "insufficient_funds");
  Reply withdrawal = operation(server, card_id, "withdrawal", 7000, "w-1");
  ASSERT_EQ(withdrawal.status, 201) << withdrawal.body;
  EXPECT_EQ(account_balance(server, account), 37000);
  json::value now = server.get("/v1/cards/" + card_id, {server.bearer_core()}).json();
  EXPECT_EQ(available(now), 13000);
  EXPECT_EQ(posted(now), 13000);

  Reply over_account = operation(server, card_id, "topup", 37001, "t-2");
  EXPECT_EQ(over_account.status, 422);
  EXPECT_EQ(over_account.error_code(), "insufficient_funds");
  Reply usd = operation(server, card_id, "topup", 10, "t-3", "USD");
  EXPECT_EQ(usd.status, 422);
  EXPECT_EQ(usd.error_code(), "currency_mismatch");
}

TEST(Cards, PrepaidOperationValidation) {
  Server& server = Server::shared();
  json::value card = new_card(server, funded_account(server, 100));
  std::string path = "/v1/cards/" + text(card, "id") + "/prepaid/operations";
  struct Case {
    std::string body;
    long status;
    std::string path;
  };
  const std::vector<Case> cases = {
      {R"({"amount":)" + money(1) + R"(,"entity_id":"e"})", 422, "operation"},
      {R"({"operation":"refund","amount":)" + money(1) + R"(,"entity_id":"e"})", 400, "operation"},
      {R"({"operation":"topup","entity_id":"e"})", 422, "amount"},
      {R"({"operation":"topup","amount":)" + money(-1) + R"(,"entity_id":"e"})", 400, "amount.amount"},
      {R"({"operation":"topup","amount":)" + money(1) + "}", 422, "entity_id"},
      {R"({"operation":"topup","amount":)" + money(1) + R"(,"entity_id":""})", 400, "entity_id"},
      {R"({"operation":"topup","amount":)" + money(1) + R"(,"entity_id":"e","x":1})", 400, "x"},
  };
  for (const Case& c : cases) {
    Reply reply = server.post(path, c.body, {server.bearer_core()});
    EXPECT_EQ(reply.status, c.status) << c.body << " -> " << reply.body;
    EXPECT_EQ(reply.error_path(), c.path) << c.body;
  }
  Reply unknown = server.post("/v1/cards/car_0123456789abcdefghijkl/prepaid/operations",
                              R"({"operation":"topup","amount":)" + money(1) + R"(,"entity_id":"e"})",
                              {server.bearer_core()});
  EXPECT_EQ(unknown.status, 404);
  // A canceled card takes no topup, but its money can still be withdrawn.
  ASSERT_EQ(operation(server, text(card, "id"), "topup", 100, "t").status, 201);
  server.send({"PATCH", "/v1/cards/" + text(card, "id"), R"({"state":"canceled"})", {server.bearer_core()}});
  Reply refused = operation(server, text(card, "id"), "topup", 1, "t2");
  EXPECT_EQ(refused.status, 409);
  EXPECT_EQ(refused.error_code(), "card_invalid_state");
  EXPECT_EQ(operation(server, text(card, "id"), "withdrawal", 100, "w").status, 201);
}

TEST(Cards, OperationsFilterByPerformedAtOnTheTenantClock) {
  Server server;
  json::value card = new_card(server, funded_account(server, 1000));
  std::string card_id = text(card, "id");
  Reply first = operation(server, card_id, "topup", 100, "first");
  ASSERT_EQ(first.status, 201);
  Reply advanced = server.post("/v1/sandbox/clock/advance", R"({"seconds":86400})", {server.bearer_core()});
  ASSERT_EQ(advanced.status, 200) << advanced.body;
  Reply second = operation(server, card_id, "topup", 200, "second");
  ASSERT_EQ(second.status, 201);
  std::string first_at = text(first.json(), "performed_at");
  std::string second_at = text(second.json(), "performed_at");
  ASSERT_LT(first_at, second_at);
  std::string base = "/v1/cards/" + card_id + "/prepaid/operations";
  auto entity_ids = [&](const std::string& query) {
    Reply reply = server.get(base + query, {server.bearer_core()});
    EXPECT_EQ(reply.status, 200) << query << " -> " << reply.body;
    std::vector<std::string> out;
    json::value body = reply.json();
    for (const json::value& item : body.at("balance_operations").as_array()) {
      out.push_back(text(item, "entity_id"));
    }
    return out;
  };
  EXPECT_EQ(entity_ids(""), (std::vector<std::string>{"second", "first"}));
  EXPECT_EQ(entity_ids("?performed_at[gte]=" + second_at), std::vector<std::string>{"second"});
  EXPECT_EQ(entity_ids("?performed_at[lte]=" + first_at), std::vector<std::string>{"first"});
  EXPECT_EQ(entity_ids("?performed_at%5Blte%5D=" + first_at), std::vector<std::string>{"first"});
  EXPECT_EQ(entity_ids("?performed_at[gte]=" + first_at + "&performed_at[lte]=" + second_at).size(), 2u);
  Reply bad = server.get(base + "?performed_at[gte]=yesterday", {server.bearer_core()});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.error_path(), "performed_at[gte]");
}

TEST(Cards, ScopesGuardCards) {
  Server& server = Server::shared();
  std::string account = funded_account(server, 0);
  std::string reader = new_key(server, "cards:read");
  Reply refused = server.post("/v1/cards", R"({"account_id":")" + account + R"("})", {reader});
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(refused.error_code(), "not_authorized");
  EXPECT_EQ(server.get("/v1/cards", {reader}).status, 200);
  std::string ledger_only = new_key(server, "ledger:admin");
  EXPECT_EQ(server.get("/v1/cards", {ledger_only}).status, 403);
}

TEST(Cards, CardNumbersAreNeverStoredNorLoggedInClear) {
  if (harness::is_postgres()) GTEST_SKIP() << "searches the raw SQLite files";
  Server server;
  std::string account = funded_account(server, 1000);
  std::vector<std::string> last_fours;
  for (int i = 0; i < 20; ++i) {
    last_fours.push_back(text(new_card(server, account, R"(,"initial_balance":)" + money(1)), "last_four"));
  }
  server.stop();  // the WAL is checkpointed and the logs are complete
  std::string data_dir = server.store_flags().at(1);
  std::string everything;
  for (const auto& entry : std::filesystem::directory_iterator(data_dir)) {
    if (entry.is_regular_file()) everything += read_file(entry.path()) + "\n";
  }
  everything += server.log_text() + server.commands_log();
  ASSERT_NE(everything.find("CREATE TABLE cards"), std::string::npos) << "not the database";
  for (const std::string& last_four : last_fours) {
    EXPECT_TRUE(card_numbers_in(everything, last_four).empty()) << last_four;
  }
  server.start();
}
