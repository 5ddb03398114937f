// /v1/spending_controls (controls and their rules) and /v1/cards/configuration_groups: every
// endpoint, every validation path, tenants isolated, 409 while in use, scopes.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "harness.hpp"

using harness::Reply;
using harness::Server;
namespace json = boost::json;

namespace {

const std::string k_controls = "/v1/spending_controls";
const std::string k_groups = "/v1/cards/configuration_groups";

Reply send(const Server& server, const std::string& method, const std::string& path,
           const std::string& body = "", std::vector<std::string> headers = {}) {
  if (headers.empty()) headers.push_back(server.bearer_core());
  return server.send({method, path, body, headers});
}

json::object money(std::int64_t amount, const char* currency = "COP") {
  return json::object{{"amount", amount}, {"currency", currency}};
}

json::array every_rule() {
  return json::array{
      json::object{{"type", "withdrawal_velocity"}, {"daily", money(100000)}},
      json::object{{"type", "velocity"}, {"daily", money(500000)}, {"monthly", money(9000000)}},
      json::object{{"type", "merchant_name"}, {"allow_pattern", "Exito.*|Carulla"}},
      json::object{{"type", "mid"}, {"operation", "block_mids"}, {"mids", json::array{"M1", "abc123"}}},
      json::object{{"type", "mcc"}, {"operation", "allow_mccs"}, {"mccs", json::array{"5411", "5812"}}},
      json::object{{"type", "card_usage"}, {"disabled_card_usages", json::array{"atm_withdrawal"}}}};
}

json::object control_body(json::array rules = {}, const char* currency = "COP") {
  json::object body{{"name", "Groceries"}, {"currency_code", currency}};
  if (!rules.empty()) body["rules"] = std::move(rules);
  return body;
}

Reply create_control(const json::object& body, const Server& server = Server::shared()) {
  return send(server, "POST", k_controls, json::serialize(body));
}

std::string id_of(const Reply& reply) { return std::string(reply.json().at("id").as_string()); }

std::string new_control(const Server& server = Server::shared(), json::array rules = {}) {
  Reply reply = create_control(control_body(std::move(rules)), server);
  EXPECT_EQ(reply.status, 201) << reply.body;
  return id_of(reply);
}

void expect_error(const Reply& reply, long status, const std::string& code,
                  const std::string& path, const std::string& what) {
  EXPECT_EQ(reply.status, status) << what << ": " << reply.body;
  EXPECT_EQ(reply.error_code(), code) << what << ": " << reply.body;
  EXPECT_TRUE(reply.error_paths().count(path)) << what << " wants " << path << ": " << reply.body;
}

std::vector<std::string> rule_types(const json::value& control) {
  std::vector<std::string> out;
  for (const auto& rule : control.at("rules").as_array()) {
    out.emplace_back(rule.at("type").as_string());
  }
  return out;
}

std::string other_tenant_key(const Server& server) {
  int code = 0;
  json::object other = json::parse(server.command({"tenant", "create", "--name", "other", "--json"},
                                                  &code)).as_object();
  EXPECT_EQ(code, 0);
  return "Authorization: Bearer " + std::string(other.at("api_key").as_string());
}

std::string key_with(const Server& server, const std::string& scopes) {
  std::string tenant(server.credentials().at("tenant_id").as_string());
  json::object key = json::parse(server.command({"keys", "create", "--tenant", tenant, "--scopes",
                                                 scopes, "--json"})).as_object();
  return "Authorization: Bearer " + std::string(key.at("api_key").as_string());
}

}  // namespace

TEST(SpendingControls, CreateShowsEveryRuleInTypeOrder) {
  Reply reply = create_control(control_body(every_rule()));
  ASSERT_EQ(reply.status, 201) << reply.body;
  json::object control = reply.json().as_object();
  EXPECT_EQ(std::string(control.at("id").as_string()).substr(0, 4), "spc_");
  EXPECT_EQ(control.at("name").as_string(), "Groceries");
  EXPECT_EQ(control.at("currency_code").as_string(), "COP");
  EXPECT_EQ(rule_types(control), (std::vector<std::string>{"card_usage", "mcc", "mid",
                                                           "merchant_name", "velocity",
                                                           "withdrawal_velocity"}));
  const json::array& rules = control.at("rules").as_array();
  EXPECT_EQ(rules.at(0), every_rule().at(5));
  EXPECT_EQ(rules.at(1), every_rule().at(4));
  EXPECT_EQ(rules.at(2), every_rule().at(3));
  EXPECT_EQ(rules.at(3), every_rule().at(2));
  EXPECT_EQ(rules.at(4).at("daily"), money(500000));
  EXPECT_TRUE(rules.at(4).at("weekly").is_null());
  EXPECT_EQ(rules.at(4).at("monthly"), money(9000000));
  EXPECT_EQ(rules.at(5).at("daily"), money(100000));
  EXPECT_TRUE(rules.at(5).at("monthly").is_null());
  EXPECT_FALSE(rules.at(5).as_object().contains("weekly"));
  EXPECT_EQ(control.at("inserted_at"), control.at("updated_at"));

  Server& server = Server::shared();
  Reply shown = send(server, "GET", k_controls + "/" + id_of(reply));
  EXPECT_EQ(shown.status, 200);
  EXPECT_EQ(shown.body, reply.body);

  Reply bare = create_control(control_body({}, "USD"));
  ASSERT_EQ(bare.status, 201) << bare.body;
  EXPECT_EQ(bare.json().at("currency_code").as_string(), "USD");
  EXPECT_TRUE(bare.json().at("rules").as_array().empty());
}

TEST(SpendingControls, BodyValidation) {
  json::object no_name = control_body();
  no_name.erase("name");
  expect_error(create_control(no_name), 422, "missing_field", "name", "no name");
  json::object no_currency = control_body();
  no_currency.erase("currency_code");
  expect_error(create_control(no_currency), 422, "missing_field", "currency_code", "no currency");
  expect_error(create_control(control_body({}, "EUR")), 400, "validation_error", "currency_code",
               "EUR");
  json::object long_name = control_body();
  long_name["name"] = std::string(101, 'n');
  expect_error(create_control(long_name), 400, "validation_error", "name", "long name");
  json::object empty_name = control_body();
  empty_name["name"] = "";
  expect_error(create_control(empty_name), 400, "validation_error", "name", "empty name");
  json::object unknown = control_body();
  unknown["color"] = "red";
  expect_error(create_control(unknown), 400, "validation_error", "color", "unknown");
  json::object rules_not_array = control_body();
  rules_not_array["rules"] = json::object{};
  expect_error(create_control(rules_not_array), 400, "validation_error", "rules", "rules object");
  json::array seven = every_rule();
  seven.push_back(every_rule().at(0));
  expect_error(create_control(control_body(seven)), 400, "validation_error", "rules", "seven");
}

TEST(SpendingControls, TwoRulesOfOneTypeAreRefused) {
  json::array rules{json::object{{"type", "mcc"}, {"operation", "allow_mccs"}, {"mccs", json::array{"5411"}}},
                    json::object{{"type", "velocity"}, {"daily", money(1)}},
                    json::object{{"type", "mcc"}, {"operation", "block_mccs"}, {"mccs", json::array{"7995"}}}};
  expect_error(create_control(control_body(rules)), 400, "validation_error", "rules.2.type",
               "duplicate");
}

TEST(SpendingControls, EveryRuleFieldIsValidatedWithItsPath) {
  struct Case {
    json::object rule;
    long status;
    std::string path;
  };
  std::vector<Case> cases = {
      {{{"daily", money(1)}}, 422, "rules.0.type"},
      {{{"type", "speed"}}, 400, "rules.0.type"},
      {{{"type", "velocity"}}, 422, "rules.0.daily"},
      {{{"type", "velocity"}, {"daily", nullptr}}, 422, "rules.0.daily"},
      {{{"type", "velocity"}, {"daily", money(0)}}, 400, "rules.0.daily.amount"},
      {{{"type", "velocity"}, {"weekly", money(-5)}}, 400, "rules.0.weekly.amount"},
      {{{"type", "velocity"}, {"daily", money(5, "EUR")}}, 400, "rules.0.daily.currency"},
      {{{"type", "velocity"}, {"daily", 5}}, 400, "rules.0.daily"},
      {{{"type", "withdrawal_velocity"}, {"weekly", money(5)}}, 400, "rules.0.weekly"},
      {{{"type", "velocity"}, {"daily", money(5)}, {"mccs", json::array{"5411"}}}, 400, "rules.0.mccs"},
      {{{"type", "velocity"}, {"daily", money(5)}, {"color", "red"}}, 400, "rules.0.color"},
      {{{"type", "mcc"}, {"mccs", json::array{"5411"}}}, 422, "rules.0.operation"},
      {{{"type", "mcc"}, {"operation", "allow_mids"}, {"mccs", json::array{"5411"}}}, 400, "rules.0.operation"},
      {{{"type", "mcc"}, {"operation", "allow_mccs"}}, 422, "rules.0.mccs"},
      {{{"type", "mcc"}, {"operation", "allow_mccs"}, {"mccs", json::array{}}}, 400, "rules.0.mccs"},
      {{{"type", "mcc"}, {"operation", "allow_mccs"}, {"mccs", json::array{"541"}}}, 400, "rules.0.mccs.0"},
      {{{"type", "mcc"}, {"operation", "allow_mccs"}, {"mccs", json::array{"5411", "54a1"}}}, 400, "rules.0.mccs.1"},
      {{{"type", "mcc"}, {"operation", "allow_mccs"}, {"mccs", json::array{"5411", 5411}}}, 400, "rules.0.mccs.1"},
      {{{"type", "mcc"}, {"operation", "block_mccs"}, {"mccs", json::array{"5411", "5411"}}}, 400, "rules.0.mccs.1"},
      {{{"type", "mcc"}, {"operation", "block_mccs"}, {"mccs", "5411"}}, 400, "rules.0.mccs"},
      {{{"type", "mid"}, {"operation", "allow_mids"}, {"mids", json::array{"M-1"}}}, 400, "rules.0.mids.0"},
      {{{"type", "mid"}, {"operation", "allow_mids"}, {"mids", json::array{std::string(16, 'm')}}}, 400, "rules.0.mids.0"},
      {{{"type", "mid"}, {"operation", "allow_mids"}, {"mids", json::array{""}}}, 400, "rules.0.mids.0"},
      {{{"type", "mid"}, {"operation", "block_mccs"}, {"mids", json::array{"M1"}}}, 400, "rules.0.operation"},
      {{{"type", "merchant_name"}}, 422, "rules.0.allow_pattern"},
      {{{"type", "merchant_name"}, {"allow_pattern", ""}}, 400, "rules.0.allow_pattern"},
      {{{"type", "merchant_name"}, {"allow_pattern", "Exito("}}, 400, "rules.0.allow_pattern"},
      {{{"type", "merchant_name"}, {"allow_pattern", std::string(201, 'a')}}, 400, "rules.0.allow_pattern"},
      {{{"type", "card_usage"}, {"disabled_card_usages", json::array{"teleport"}}}, 400, "rules.0.disabled_card_usages.0"},
      {{{"type", "card_usage"}, {"disabled_card_usages", json::array{}}}, 400, "rules.0.disabled_card_usages"},
      {{{"type", "card_usage"}, {"disabled_card_usages", json::array{"atm_withdrawal", "atm_withdrawal"}}}, 400, "rules.0.disabled_card_usages.1"},
      {{{"type", "card_usage"}, {"disabled_card_usages", json::array{"atm_withdrawal", "online_purchase", "physical_purchase", "atm_withdrawal"}}}, 400, "rules.0.disabled_card_usages"},
      {{{"type", "card_usage"}, {"disabled_card_usages", json::array{"atm_withdrawal"}}, {"allow_pattern", "x"}}, 400, "rules.0.allow_pattern"},
  };
  for (const Case& c : cases) {
    Reply reply = create_control(control_body(json::array{c.rule}));
    expect_error(reply, c.status, c.status == 400 ? "validation_error" : "missing_field", c.path,
                 json::serialize(c.rule));
  }
  Reply not_object = create_control(control_body(json::array{"velocity"}));
  expect_error(not_object, 400, "validation_error", "rules.0", "a string rule");
  // The compiler's message reaches the client.
  Reply pattern = create_control(control_body(json::array{
      json::object{{"type", "merchant_name"}, {"allow_pattern", "Exito("}}}));
  EXPECT_NE(pattern.body.find("missing closing parenthesis"), std::string::npos) << pattern.body;
  // 500 distinct MCCs are fine; 501 are not.
  json::array mccs;
  for (int i = 0; i < 500; ++i) mccs.push_back(json::value(std::to_string(1000 + i)));
  json::object rule{{"type", "mcc"}, {"operation", "block_mccs"}, {"mccs", mccs}};
  EXPECT_EQ(create_control(control_body(json::array{rule})).status, 201);
  rule["mccs"].as_array().push_back("9999");
  expect_error(create_control(control_body(json::array{rule})), 400, "validation_error",
               "rules.0.mccs", "501 mccs");
}

TEST(SpendingControls, AmountsInAnotherCurrencyAre422) {
  json::array rules{json::object{{"type", "velocity"}, {"daily", money(5, "USD")}, {"monthly", money(9)}},
                    json::object{{"type", "withdrawal_velocity"}, {"monthly", money(7, "USD")}}};
  Reply reply = create_control(control_body(rules));
  EXPECT_EQ(reply.status, 422) << reply.body;
  EXPECT_EQ(reply.error_code(), "currency_mismatch");
  EXPECT_EQ(reply.error_paths(), (std::set<std::string>{"rules.0.daily.currency", "rules.1.monthly.currency"}));
  // A 400 problem anywhere wins over a business rule.
  json::object both = control_body(rules);
  both["color"] = "red";
  EXPECT_EQ(create_control(both).status, 400);
}

TEST(SpendingControls, PutRuleAddsAndReplacesByType) {
  Server& server = Server::shared();
  std::string id = new_control();
  std::string rules_path = k_controls + "/" + id + "/rules";
  Reply added = send(server, "PUT", rules_path,
                     R"({"type":"mcc","operation":"block_mccs","mccs":["7995"]})");
  ASSERT_EQ(added.status, 200) << added.body;
  EXPECT_EQ(id_of(added), id);
  EXPECT_EQ(rule_types(added.json()), std::vector<std::string>{"mcc"});
  Reply second = send(server, "PUT", rules_path, R"({"type":"card_usage","disabled_card_usages":["online_purchase"]})");
  ASSERT_EQ(second.status, 200) << second.body;
  EXPECT_EQ(rule_types(second.json()), (std::vector<std::string>{"card_usage", "mcc"}));
  Reply replaced = send(server, "PUT", rules_path,
                        R"({"type":"mcc","operation":"allow_mccs","mccs":["5411","5812"]})");
  ASSERT_EQ(replaced.status, 200) << replaced.body;
  EXPECT_EQ(rule_types(replaced.json()), (std::vector<std::string>{"card_usage", "mcc"}));
  json::value body = replaced.json();
  const json::value& mcc = body.at("rules").at(1);
  EXPECT_EQ(mcc.at("operation").as_string(), "allow_mccs");
  EXPECT_EQ(mcc.at("mccs"), (json::array{"5411", "5812"}));
  EXPECT_EQ(send(server, "GET", k_controls + "/" + id).body, replaced.body);
}

TEST(SpendingControls, PutRuleErrors) {
  Server& server = Server::shared();
  std::string id = new_control();
  std::string rules_path = k_controls + "/" + id + "/rules";
  expect_error(send(server, "PUT", rules_path, R"({"type":"mcc","operation":"allow_mccs","mccs":["12"]})"),
               400, "validation_error", "mccs.0", "short mcc");
  expect_error(send(server, "PUT", rules_path, R"({"type":"velocity"})"), 422, "missing_field",
               "daily", "no caps");
  expect_error(send(server, "PUT", rules_path, R"({"operation":"allow_mccs"})"), 422,
               "missing_field", "type", "no type");
  expect_error(send(server, "PUT", rules_path, R"({"type":"velocity","daily":{"amount":5,"currency":"USD"}})"),
               422, "currency_mismatch", "daily.currency", "mismatch");
  expect_error(send(server, "PUT", rules_path, R"({"type":"merchant_name","allow_pattern":"[a-"})"),
               400, "validation_error", "allow_pattern", "bad pattern");
  expect_error(send(server, "PUT", k_controls + "/nope/rules", R"({"type":"velocity","daily":{"amount":5,"currency":"COP"}})"),
               400, "validation_error", "spending_control_id", "malformed id");
  Reply unknown = send(server, "PUT", k_controls + "/spc_AAAAAAAAAAAAAAAAAAAAAA/rules",
                       R"({"type":"velocity","daily":{"amount":5,"currency":"COP"}})");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.error_code(), "item_not_found");
  EXPECT_TRUE(send(server, "GET", k_controls + "/" + id).json().at("rules").as_array().empty());
}

TEST(SpendingControls, DeleteRule) {
  Server& server = Server::shared();
  std::string id = new_control(server, every_rule());
  std::string path = k_controls + "/" + id + "/rules/";
  Reply deleted = send(server, "DELETE", path + "mcc");
  EXPECT_EQ(deleted.status, 204);
  EXPECT_TRUE(deleted.body.empty());
  json::value control = send(server, "GET", k_controls + "/" + id).json();
  EXPECT_EQ(rule_types(control), (std::vector<std::string>{"card_usage", "mid", "merchant_name",
                                                           "velocity", "withdrawal_velocity"}));
  Reply again = send(server, "DELETE", path + "mcc");
  EXPECT_EQ(again.status, 404);
  EXPECT_EQ(again.error_code(), "item_not_found");
  expect_error(send(server, "DELETE", path + "speed"), 400, "validation_error", "type", "bad type");
  EXPECT_EQ(send(server, "DELETE", k_controls + "/spc_AAAAAAAAAAAAAAAAAAAAAA/rules/mcc").status,
            404);
}

TEST(SpendingControls, PatchRenames) {
  Server& server = Server::shared();
  std::string id = new_control(server, every_rule());
  Reply renamed = send(server, "PATCH", k_controls + "/" + id, R"({"name":"Travel"})");
  ASSERT_EQ(renamed.status, 200) << renamed.body;
  EXPECT_EQ(renamed.json().at("name").as_string(), "Travel");
  EXPECT_EQ(renamed.json().at("rules").as_array().size(), 6u);
  EXPECT_EQ(send(server, "GET", k_controls + "/" + id).body, renamed.body);
  expect_error(send(server, "PATCH", k_controls + "/" + id, R"({"name":null})"), 400,
               "validation_error", "name", "null name");
  expect_error(send(server, "PATCH", k_controls + "/" + id, R"({"name":""})"), 400,
               "validation_error", "name", "empty name");
  expect_error(send(server, "PATCH", k_controls + "/" + id, R"({"currency_code":"USD"})"), 400,
               "validation_error", "currency_code", "currency is fixed");
  EXPECT_EQ(send(server, "PATCH", k_controls + "/spc_AAAAAAAAAAAAAAAAAAAAAA", R"({"name":"x"})").status,
            404);
}

TEST(SpendingControls, DeleteIsRefusedWhileAGroupUsesIt) {
  Server& server = Server::shared();
  std::string id = new_control();
  Reply group = send(server, "POST", k_groups,
                     json::serialize(json::object{{"name", "Team"}, {"spending_control_id", id}}));
  ASSERT_EQ(group.status, 201) << group.body;
  Reply refused = send(server, "DELETE", k_controls + "/" + id);
  EXPECT_EQ(refused.status, 409);
  EXPECT_EQ(refused.error_code(), "spending_control_in_use");
  EXPECT_EQ(send(server, "GET", k_controls + "/" + id).status, 200);

  Reply cleared = send(server, "PATCH", k_groups + "/" + id_of(group), R"({"spending_control_id":null})");
  ASSERT_EQ(cleared.status, 200) << cleared.body;
  EXPECT_TRUE(cleared.json().at("spending_control_id").is_null());
  Reply deleted = send(server, "DELETE", k_controls + "/" + id);
  EXPECT_EQ(deleted.status, 204);
  EXPECT_EQ(send(server, "GET", k_controls + "/" + id).status, 404);
  EXPECT_EQ(send(server, "DELETE", k_controls + "/" + id).status, 404);
}

TEST(SpendingControls, OtherTenantsControlsAreUnknown) {
  Server& server = Server::shared();
  std::string id = new_control();
  std::string other = other_tenant_key(server);
  std::string path = k_controls + "/" + id;
  for (const auto& [method, target, body] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"GET", path, ""},
           {"PATCH", path, R"({"name":"x"})"},
           {"DELETE", path, ""},
           {"PUT", path + "/rules", R"({"type":"mcc","operation":"allow_mccs","mccs":["5411"]})"},
           {"DELETE", path + "/rules/mcc", ""}}) {
    Reply reply = send(server, method, target, body, {other});
    EXPECT_EQ(reply.status, 404) << method << " " << target;
    EXPECT_EQ(reply.error_code(), "item_not_found") << method << " " << target;
  }
  EXPECT_EQ(send(server, "GET", k_controls, "", {other}).json().at("pagination").at("total_items").as_int64(), 0);
  // Nor may another tenant's group name it.
  Reply group = send(server, "POST", k_groups,
                     json::serialize(json::object{{"name", "Theirs"}, {"spending_control_id", id}}),
                     {other});
  expect_error(group, 404, "item_not_found", "spending_control_id", "other tenant's control");
  EXPECT_EQ(send(server, "GET", path).json().at("name").as_string(), "Groceries");
}

TEST(SpendingControls, MalformedIds) {
  Server& server = Server::shared();
  expect_error(send(server, "GET", k_controls + "/acc_AAAAAAAAAAAAAAAAAAAAAA"), 400,
               "validation_error", "id", "wrong prefix");
  expect_error(send(server, "DELETE", k_controls + "/x"), 400, "validation_error", "id", "delete");
  // One path in the description, one parameter name (the interface's `spending_control_id` of
  // PATCH is this same id).
  expect_error(send(server, "PATCH", k_controls + "/x", "{}"), 400, "validation_error", "id",
               "patch");
  EXPECT_EQ(send(server, "GET", k_controls + "/spc_AAAAAAAAAAAAAAAAAAAAAA").error_code(),
            "item_not_found");
}

TEST(SpendingControls, ListIsPaginatedNewestFirst) {
  Server server;
  for (int i = 0; i < 11; ++i) {
    json::object body = control_body();
    body["name"] = "c" + std::to_string(i);
    ASSERT_EQ(create_control(body, server).status, 201);
  }
  Reply first = send(server, "GET", k_controls);
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(first.json().at("spending_controls").as_array().size(), 10u);
  EXPECT_EQ(first.json().at("spending_controls").at(0).at("name").as_string(), "c10");
  EXPECT_EQ(first.json().at("pagination").at("total_items").as_int64(), 11);
  Reply second = send(server, "GET", k_controls + "?page_number=2&page_size=10");
  EXPECT_EQ(second.json().at("spending_controls").at(0).at("name").as_string(), "c0");
  EXPECT_EQ(send(server, "GET", k_controls + "?page_size=501").status, 400);
}

TEST(SpendingControls, ScopesApply) {
  Server& server = Server::shared();
  std::string id = new_control();
  std::string read = key_with(server, "spending_controls:read");
  EXPECT_EQ(send(server, "GET", k_controls + "/" + id, "", {read}).status, 200);
  EXPECT_EQ(send(server, "GET", k_controls, "", {read}).status, 200);
  EXPECT_EQ(send(server, "POST", k_controls, json::serialize(control_body()), {read}).status, 403);
  EXPECT_EQ(send(server, "DELETE", k_controls + "/" + id, "", {read}).error_code(), "not_authorized");
  std::string write = key_with(server, "spending_controls:write");
  EXPECT_EQ(send(server, "PUT", k_controls + "/" + id + "/rules",
                 R"({"type":"mcc","operation":"allow_mccs","mccs":["5411"]})", {write}).status,
            200);
  EXPECT_EQ(send(server, "DELETE", k_controls + "/" + id + "/rules/mcc", "", {write}).status, 403);
  EXPECT_EQ(send(server, "DELETE", k_controls + "/" + id, "", {write}).status, 403);
  std::string cards = key_with(server, "cards:admin");
  EXPECT_EQ(send(server, "GET", k_controls, "", {cards}).status, 403);
  std::string admin = key_with(server, "spending_controls:admin");
  EXPECT_EQ(send(server, "DELETE", k_controls + "/" + id + "/rules/mcc", "", {admin}).status, 204);
  EXPECT_EQ(send(server, "DELETE", k_controls + "/" + id, "", {admin}).status, 204);
}

TEST(ConfigurationGroups, EveryTenantStartsWithTheDefaultGroup) {
  Server server;
  for (const std::string& key : {server.bearer_core(), other_tenant_key(server)}) {
    Reply list = send(server, "GET", k_groups, "", {key});
    ASSERT_EQ(list.status, 200) << list.body;
    json::value body = list.json();
    const json::array& groups = body.at("configuration_groups").as_array();
    ASSERT_EQ(groups.size(), 1u);
    EXPECT_EQ(groups.at(0).at("name").as_string(), "Default");
    EXPECT_TRUE(groups.at(0).at("default").as_bool());
    EXPECT_TRUE(groups.at(0).at("spending_control_id").is_null());
    EXPECT_EQ(list.json().at("pagination").at("total_items").as_int64(), 1);
  }
}

TEST(ConfigurationGroups, CreateShowUpdate) {
  Server& server = Server::shared();
  Reply plain = send(server, "POST", k_groups, R"({"name":"Sales"})");
  ASSERT_EQ(plain.status, 201) << plain.body;
  json::object group = plain.json().as_object();
  EXPECT_EQ(std::string(group.at("id").as_string()).substr(0, 4), "ccg_");
  EXPECT_EQ(group.at("name").as_string(), "Sales");
  EXPECT_TRUE(group.at("spending_control_id").is_null());
  EXPECT_FALSE(group.at("default").as_bool());
  EXPECT_EQ(group.at("inserted_at"), group.at("updated_at"));
  std::string path = k_groups + "/" + id_of(plain);
  EXPECT_EQ(send(server, "GET", path).body, plain.body);

  std::string control = new_control();
  Reply with_control = send(server, "PATCH", path,
                            json::serialize(json::object{{"spending_control_id", control}}));
  ASSERT_EQ(with_control.status, 200) << with_control.body;
  EXPECT_EQ(with_control.json().at("spending_control_id").as_string(), control);
  EXPECT_EQ(with_control.json().at("name").as_string(), "Sales");
  Reply renamed = send(server, "PATCH", path, R"({"name":"Sales team"})");
  EXPECT_EQ(renamed.json().at("name").as_string(), "Sales team");
  EXPECT_EQ(renamed.json().at("spending_control_id").as_string(), control);  // kept
  EXPECT_EQ(send(server, "GET", path).body, renamed.body);

  Reply created = send(server, "POST", k_groups,
                       json::serialize(json::object{{"name", "Ops"}, {"spending_control_id", control}}));
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(created.json().at("spending_control_id").as_string(), control);
}

TEST(ConfigurationGroups, Validation) {
  Server& server = Server::shared();
  expect_error(send(server, "POST", k_groups, "{}"), 422, "missing_field", "name", "no name");
  expect_error(send(server, "POST", k_groups, R"({"name":""})"), 400, "validation_error", "name", "empty");
  expect_error(send(server, "POST", k_groups, json::serialize(json::object{{"name", std::string(101, 'g')}})),
               400, "validation_error", "name", "long");
  expect_error(send(server, "POST", k_groups, R"({"name":"a","spending_control_id":"spc_x"})"), 400,
               "validation_error", "spending_control_id", "malformed control");
  expect_error(send(server, "POST", k_groups, R"({"name":"a","default":true})"), 400,
               "validation_error", "default", "unknown");
  expect_error(send(server, "POST", k_groups, R"({"name":"a","spending_control_id":"spc_AAAAAAAAAAAAAAAAAAAAAA"})"),
               404, "item_not_found", "spending_control_id", "unknown control");

  Reply group = send(server, "POST", k_groups, R"({"name":"Valid"})");
  std::string path = k_groups + "/" + id_of(group);
  expect_error(send(server, "PATCH", path, R"({"name":null})"), 400, "validation_error", "name", "null");
  expect_error(send(server, "PATCH", path, R"({"spending_control_id":"spc_AAAAAAAAAAAAAAAAAAAAAA"})"),
               404, "item_not_found", "spending_control_id", "unknown control");
  expect_error(send(server, "PATCH", path, R"({"color":1})"), 400, "validation_error", "color", "unknown");
  EXPECT_EQ(send(server, "GET", path).body, group.body);

  expect_error(send(server, "GET", k_groups + "/nope"), 400, "validation_error", "id", "malformed");
  Reply unknown = send(server, "GET", k_groups + "/ccg_AAAAAAAAAAAAAAAAAAAAAA");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.error_code(), "item_not_found");
  EXPECT_EQ(send(server, "PATCH", k_groups + "/ccg_AAAAAAAAAAAAAAAAAAAAAA", "{}").status, 404);
  std::string other = other_tenant_key(server);
  EXPECT_EQ(send(server, "GET", path, "", {other}).status, 404);
  EXPECT_EQ(send(server, "PATCH", path, R"({"name":"x"})", {other}).status, 404);
}

TEST(ConfigurationGroups, ListIsPaginatedNewestFirst) {
  Server server;
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(send(server, "POST", k_groups, "{\"name\":\"g" + std::to_string(i) + "\"}").status, 201);
  }
  Reply first = send(server, "GET", k_groups);
  ASSERT_EQ(first.status, 200);
  EXPECT_EQ(first.json().at("configuration_groups").at(0).at("name").as_string(), "g9");
  EXPECT_EQ(first.json().at("pagination").at("total_items").as_int64(), 11);  // and Default
  Reply second = send(server, "GET", k_groups + "?page_number=2");
  EXPECT_EQ(second.json().at("configuration_groups").at(0).at("name").as_string(), "Default");
}

TEST(ConfigurationGroups, ScopesApply) {
  Server& server = Server::shared();
  std::string read = key_with(server, "cards:read");
  EXPECT_EQ(send(server, "GET", k_groups, "", {read}).status, 200);
  EXPECT_EQ(send(server, "POST", k_groups, R"({"name":"x"})", {read}).status, 403);
  std::string controls = key_with(server, "spending_controls:admin");
  EXPECT_EQ(send(server, "GET", k_groups, "", {controls}).status, 403);
}
