// Collections over HTTP: the batch create (created, duplicated, rejected with paths), every
// validation rule, the batch bounds, list pagination and filters, tenant isolation, PATCH of
// each field and its consistency rules, DELETE, find_successful_by, expiry on a sandbox clock
// advance, keys unique across the directory, and scopes.
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <functional>
#include <thread>

#include "harness.hpp"

using harness::Reply;
using harness::Server;
using harness::text;
namespace json = boost::json;

namespace {

json::object money(std::int64_t amount, const std::string& currency = "COP") {
  return json::object{{"amount", amount}, {"currency", currency}};
}

std::string receptor(const Server& server) {
  return std::string(server.credentials().at("tenant_account_ids").at(0).as_string());
}
std::string originator(const Server& server) {
  return std::string(server.credentials().at("tenant_account_ids").at(1).as_string());
}

std::string unique(const std::string& prefix) { return prefix + "-" + harness::new_uuid(); }

// A valid item: 10.00 to 500.00 per attempt, 1,000.00 in all (at least 100.00).
json::object item(const Server& server, const std::string& external_id) {
  return json::object{{"external_id", external_id},
                      {"tenant_account_id", receptor(server)},
                      {"usage_mode", "multiple_use"},
                      {"minimum_attempt_amount", money(1000)},
                      {"maximum_attempt_amount", money(50000)},
                      {"total_minimum_amount", money(10000)},
                      {"total_maximum_amount", money(100000)}};
}

std::string batch(const json::array& items) {
  return json::serialize(json::object{{"collections", items}});
}

struct Participant {
  const Server& server;
  std::string bearer;

  explicit Participant(const Server& s, const std::string& scope = "")
      : server(s), bearer("Authorization: Bearer " + s.access_token(scope)) {}
  Participant(const Server& s, std::string token, bool) : server(s), bearer(std::move(token)) {}

  Reply create(const json::array& items) const {
    return server.post("/api/v1/collections", batch(items), {bearer});
  }
  // One item that must be created; returns the collection.
  json::object create_one(const json::object& body) const {
    Reply reply = create(json::array{body});
    EXPECT_EQ(reply.status, 201) << reply.body;
    const json::value parsed = reply.json();
    EXPECT_EQ(parsed.at("created").as_array().size(), 1u) << reply.body;
    if (parsed.at("created").as_array().empty()) return {};
    return parsed.at("created").at(0).as_object();
  }
  Reply get(const std::string& path) const { return server.get(path, {bearer}); }
  Reply patch(const std::string& id, const std::string& body) const {
    return server.send({"PATCH", "/api/v1/collections/" + id, body, {bearer}});
  }
  Reply remove(const std::string& id) const {
    return server.send({"DELETE", "/api/v1/collections/" + id, "", {bearer}});
  }
};

// A participant of another tenant of the same server.
Participant other_tenant(const Server& server) {
  int code = 0;
  json::value other =
      json::parse(server.command({"tenant", "create", "--name", "other", "--json"}, &code));
  EXPECT_EQ(code, 0);
  json::object body{{"grant_type", "client_credentials"},
                    {"client_id", other.at("client_id")},
                    {"client_secret", other.at("client_secret")}};
  Reply token = server.post("/api/v1/oauth/token", json::serialize(body));
  EXPECT_EQ(token.status, 200) << token.body;
  return Participant(server, "Authorization: Bearer " + text(token.json(), "access_token"), true);
}

// Waits (bounded) until the collection reaches `state`: the expiry worker runs after the
// clock advance commits, on its own thread.
json::value wait_for_state(const Participant& p, const std::string& id, const std::string& state) {
  json::value c;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    c = p.get("/api/v1/collections/" + id).json();
    if (text(c, "state") == state) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while (std::chrono::steady_clock::now() < deadline);
  return c;
}

std::string tenant_now(const Participant& p) {
  return text(p.get("/api/v1/sandbox/clock").json(), "now");
}

// The tenant's time `seconds` from now, as an ISO timestamp the API accepts.
std::string tenant_time_in(const Participant& p, std::int64_t seconds) {
  std::string now = tenant_now(p);  // 2026-01-01T00:00:00.000000Z
  std::tm parts{};
  strptime(now.c_str(), "%Y-%m-%dT%H:%M:%S", &parts);
  std::time_t at = timegm(&parts) + seconds;
  char out[32];
  std::strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&at));
  return out;
}

}  // namespace

TEST(CollectionsCreate, ABatchReportsCreatedDuplicatedAndRejectedItems) {
  Server& server = Server::shared();
  Participant p(server);
  const std::string first = unique("batch-a"), second = unique("batch-b");
  json::object with_key = item(server, second);
  const std::string email_local = "ana." + harness::new_uuid().substr(0, 8);
  with_key["key"] = json::object{{"type", "email"}, {"value", email_local + "@Example.COM"}};
  with_key["nickname"] = "rent";
  with_key["reference"] = "INV-7";
  with_key["metadata"] = json::object{{"order", 7}, {"vip", true}};
  json::object bad = item(server, unique("batch-bad"));
  bad["minimum_attempt_amount"] = money(0);
  json::object wrong_account = item(server, unique("batch-originator"));
  wrong_account["tenant_account_id"] = originator(server);
  Reply reply = p.create(json::array{item(server, first), with_key, item(server, first), bad,
                                     wrong_account});
  ASSERT_EQ(reply.status, 201) << reply.body;
  json::value body = reply.json();
  ASSERT_EQ(body.at("created").as_array().size(), 2u) << reply.body;
  ASSERT_EQ(body.at("duplicated").as_array().size(), 1u) << reply.body;
  ASSERT_EQ(body.at("rejected").as_array().size(), 2u) << reply.body;

  const json::value& made = body.at("created").at(0);
  EXPECT_TRUE(text(made, "id").starts_with("bbcol_"));
  EXPECT_EQ(text(made, "external_id"), first);
  EXPECT_EQ(text(made, "state"), "ready");
  EXPECT_TRUE(made.at("state_reason").is_null());
  EXPECT_EQ(made.at("enabled").as_bool(), true);
  EXPECT_EQ(made.at("paid_amount"), json::value(money(0)));
  EXPECT_EQ(made.at("remaining_amount"), json::value(money(100000)));
  EXPECT_EQ(made.at("minimum_attempt_amount"), json::value(money(1000)));
  EXPECT_EQ(made.at("total_maximum_amount"), json::value(money(100000)));
  EXPECT_EQ(text(made, "usage_mode"), "multiple_use");
  EXPECT_EQ(text(made, "tenant_account_id"), receptor(server));
  EXPECT_TRUE(made.at("expires_at").is_null());
  EXPECT_EQ(made.at("metadata"), json::value(json::object{}));
  // A generated key: alphanumeric, '@' and 10 upper-case letters or digits, active, the default.
  const std::string generated = text(made.at("key"), "value");
  EXPECT_EQ(text(made.at("key"), "type"), "alphanumeric");
  ASSERT_EQ(generated.size(), 11u);
  EXPECT_EQ(generated[0], '@');
  for (char c : generated.substr(1)) EXPECT_TRUE(std::isupper(c) || std::isdigit(c)) << generated;
  ASSERT_EQ(made.at("keys").as_array().size(), 1u);
  EXPECT_EQ(text(made.at("keys").at(0), "state"), "active");

  const json::value& keyed = body.at("created").at(1);
  EXPECT_EQ(text(keyed.at("key"), "type"), "email");
  // Email keys are kept in lower case.
  EXPECT_EQ(text(keyed.at("key"), "value"), email_local + "@example.com");
  EXPECT_EQ(text(keyed, "nickname"), "rent");
  EXPECT_EQ(text(keyed, "reference"), "INV-7");
  EXPECT_EQ(keyed.at("metadata"), json::value(json::object{{"order", "7"}, {"vip", "true"}}));

  // The second item with the first's external_id is the first collection, not a new one.
  EXPECT_EQ(text(body.at("duplicated").at(0), "id"), text(made, "id"));

  const json::value& rejected_amount = body.at("rejected").at(0);
  EXPECT_EQ(rejected_amount.at("index").as_int64(), 3);
  EXPECT_EQ(text(rejected_amount, "external_id"), text(json::value(bad), "external_id"));
  EXPECT_EQ(text(rejected_amount, "error_code"), "validation_error");
  EXPECT_EQ(text(rejected_amount, "path"), "collections.3.minimum_attempt_amount.amount");
  EXPECT_FALSE(text(rejected_amount, "message").empty());
  const json::value& rejected_account = body.at("rejected").at(1);
  EXPECT_EQ(rejected_account.at("index").as_int64(), 4);
  EXPECT_EQ(text(rejected_account, "error_code"), "tenant_account_not_found");
  EXPECT_EQ(text(rejected_account, "path"), "collections.4.tenant_account_id");

  // The same external_id in a later request: duplicated, with the existing collection.
  Reply again = p.create(json::array{item(server, first)});
  ASSERT_EQ(again.status, 201);
  EXPECT_TRUE(again.json().at("created").as_array().empty());
  EXPECT_EQ(text(again.json().at("duplicated").at(0), "id"), text(made, "id"));
}

TEST(CollectionsCreate, GetShowsWhatTheBatchCreated) {
  Server& server = Server::shared();
  Participant p(server);
  json::object made = p.create_one(item(server, unique("get")));
  Reply shown = p.get("/api/v1/collections/" + text(made, "id"));
  ASSERT_EQ(shown.status, 200) << shown.body;
  EXPECT_EQ(shown.json(), json::value(made));
}

TEST(CollectionsValidation, EveryFieldIsCheckedWithItsPath) {
  Server& server = Server::shared();
  Participant p(server);
  struct Case {
    std::function<void(json::object&)> change;
    std::string error_code;
    std::string path;  // under collections.<index>.
  };
  const std::vector<Case> cases = {
      {[](json::object& o) { o.erase("external_id"); }, "missing_field", "external_id"},
      {[](json::object& o) { o["external_id"] = ""; }, "validation_error", "external_id"},
      {[](json::object& o) { o["external_id"] = std::string(256, 'x'); }, "validation_error",
       "external_id"},
      {[](json::object& o) { o["external_id"] = 7; }, "validation_error", "external_id"},
      {[](json::object& o) { o.erase("tenant_account_id"); }, "missing_field",
       "tenant_account_id"},
      {[](json::object& o) { o["tenant_account_id"] = "acc_123"; }, "validation_error",
       "tenant_account_id"},
      {[](json::object& o) { o.erase("usage_mode"); }, "missing_field", "usage_mode"},
      {[](json::object& o) { o["usage_mode"] = "once"; }, "validation_error", "usage_mode"},
      {[](json::object& o) { o.erase("minimum_attempt_amount"); }, "missing_field",
       "minimum_attempt_amount"},
      {[](json::object& o) { o["minimum_attempt_amount"] = money(-5); }, "validation_error",
       "minimum_attempt_amount.amount"},
      {[](json::object& o) { o["maximum_attempt_amount"] = json::object{{"amount", "10"}, {"currency", "COP"}}; },
       "validation_error", "maximum_attempt_amount.amount"},
      {[](json::object& o) { o["total_minimum_amount"] = money(10000, "usd"); },
       "validation_error", "total_minimum_amount.currency"},
      {[](json::object& o) { o["total_maximum_amount"] = json::object{{"amount", 5}}; },
       "missing_field", "total_maximum_amount.currency"},
      {[](json::object& o) { o["total_maximum_amount"] = 100000; }, "validation_error",
       "total_maximum_amount"},
      {[](json::object& o) { o["expires_at"] = "tomorrow"; }, "validation_error", "expires_at"},
      {[](json::object& o) { o["expires_at"] = "2001-01-01T00:00:00Z"; }, "validation_error",
       "expires_at"},
      {[](json::object& o) { o["nickname"] = std::string(101, 'n'); }, "validation_error",
       "nickname"},
      {[](json::object& o) { o["reference"] = std::string(256, 'r'); }, "validation_error",
       "reference"},
      {[](json::object& o) { o["metadata"] = json::object{{"nested", json::object{}}}; },
       "validation_error", "metadata.nested"},
      {[](json::object& o) { o["key"] = "3001234567"; }, "validation_error", "key"},
      {[](json::object& o) { o["key"] = json::object{{"type", "iban"}, {"value", "1"}}; },
       "validation_error", "key.type"},
      {[](json::object& o) { o["key"] = json::object{{"type", "email"}}; }, "missing_field",
       "key.value"},
      {[](json::object& o) { o["key"] = json::object{{"type", "cellphone"}, {"value", "2001234567"}}; },
       "validation_error", "key.value"},
      {[](json::object& o) { o["key"] = json::object{{"type", "cellphone"}, {"value", "300123456"}}; },
       "validation_error", "key.value"},
      {[](json::object& o) { o["key"] = json::object{{"type", "email"}, {"value", "ana@example"}}; },
       "validation_error", "key.value"},
      {[](json::object& o) { o["key"] = json::object{{"type", "alphanumeric"}, {"value", "ANA"}}; },
       "validation_error", "key.value"},
      {[](json::object& o) { o["key"] = json::object{{"type", "alphanumeric"}, {"value", "@an a"}}; },
       "validation_error", "key.value"},
      {[](json::object& o) { o["key"] = json::object{{"type", "identification"}, {"value", "10203A"}}; },
       "validation_error", "key.value"},
      {[](json::object& o) { o["key"] = json::object{{"type", "merchant_code"}, {"value", "123"}}; },
       "validation_error", "key.value"},
      {[](json::object& o) { o["colour"] = "red"; }, "validation_error", "colour"},
      // The limits must agree.
      {[](json::object& o) { o["minimum_attempt_amount"] = money(60000); }, "validation_error",
       "maximum_attempt_amount.amount"},
      {[](json::object& o) { o["total_minimum_amount"] = money(200000); }, "validation_error",
       "total_maximum_amount.amount"},
      {[](json::object& o) { o["maximum_attempt_amount"] = money(200000); }, "validation_error",
       "total_maximum_amount.amount"},
      // Business rules on the tenant account.
      {[](json::object& o) { o["tenant_account_id"] = "bbtacc_AAAAAAAAAAAAAAAAAAAAAA"; },
       "tenant_account_not_found", "tenant_account_id"},
  };
  json::array items;
  for (const Case& c : cases) {
    json::object body = item(server, unique("invalid"));
    c.change(body);
    items.push_back(body);
  }
  items.push_back(json::array{1, 2});  // not an object
  Reply reply = p.create(items);
  ASSERT_EQ(reply.status, 201) << reply.body;
  json::value body = reply.json();
  EXPECT_TRUE(body.at("created").as_array().empty()) << reply.body;
  const json::array& rejected = body.at("rejected").as_array();
  ASSERT_EQ(rejected.size(), cases.size() + 1) << reply.body;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string prefix = "collections." + std::to_string(i);
    EXPECT_EQ(rejected[i].at("index").as_int64(), static_cast<std::int64_t>(i));
    EXPECT_EQ(text(rejected[i], "error_code"), cases[i].error_code) << i << " " << rejected[i];
    EXPECT_EQ(text(rejected[i], "path"), prefix + "." + cases[i].path) << i << " " << rejected[i];
    EXPECT_FALSE(text(rejected[i], "message").empty());
    EXPECT_GE(rejected[i].at("errors").as_array().size(), 1u);
  }
  const json::value& not_object = rejected.back();
  EXPECT_EQ(text(not_object, "path"), "collections." + std::to_string(cases.size()));
  EXPECT_TRUE(not_object.at("external_id").is_null());
  // A missing external_id is reported with external_id null; the others carry theirs.
  EXPECT_TRUE(rejected[0].at("external_id").is_null());
  EXPECT_TRUE(text(rejected[1], "external_id").empty());
}

TEST(CollectionsValidation, AnItemListsEveryProblemItHas) {
  Server& server = Server::shared();
  Participant p(server);
  json::object body = item(server, unique("many"));
  body["usage_mode"] = "sometimes";
  body["nickname"] = 5;
  body.erase("total_maximum_amount");
  Reply reply = p.create(json::array{body});
  ASSERT_EQ(reply.status, 201) << reply.body;
  const json::value rejected = reply.json().at("rejected").at(0);
  // 400-kind problems first (the item's error_code), then the missing field.
  EXPECT_EQ(text(rejected, "error_code"), "validation_error");
  std::vector<std::string> paths;
  for (const json::value& problem : rejected.at("errors").as_array()) {
    paths.push_back(text(problem, "path"));
  }
  EXPECT_EQ(paths, (std::vector<std::string>{"collections.0.usage_mode", "collections.0.nickname",
                                             "collections.0.total_maximum_amount"}));
}

TEST(CollectionsCreate, ProblemsOutsideTheItemsFailTheWholeRequest) {
  Server& server = Server::shared();
  Participant p(server);
  struct Case {
    std::string body;
    long status;
    std::string code;
    std::string path;
  };
  for (const Case& bad : std::vector<Case>{
           {"not json", 400, "validation_error", ""},
           {"{}", 422, "missing_field", "collections"},
           {R"({"collections":null})", 422, "missing_field", "collections"},
           {R"({"collections":{}})", 400, "validation_error", "collections"},
           {R"({"collections":[]})", 400, "validation_error", "collections"},
           {R"({"collections":[{}],"extra":1})", 400, "validation_error", "extra"},
       }) {
    Reply reply = server.post("/api/v1/collections", bad.body, {p.bearer});
    EXPECT_EQ(reply.status, bad.status) << bad.body << " " << reply.body;
    EXPECT_EQ(reply.error_code(), bad.code) << bad.body;
    if (!bad.path.empty()) {
      EXPECT_EQ(reply.error_path(), bad.path) << bad.body;
    }
  }
  EXPECT_EQ(server.post("/api/v1/collections", batch(json::array{item(server, "x")})).error_code(),
            "missing_authorization_header");
}

TEST(CollectionsCreate, AThousandItemsAreAcceptedAndOneMoreIsNot) {
  Server server;
  Participant p(server);
  json::array items;
  for (int i = 0; i < 1000; ++i) {
    items.push_back(item(server, "bulk-" + std::to_string(i)));
  }
  items.push_back(item(server, "bulk-1000"));
  Reply refused = p.create(items);
  EXPECT_EQ(refused.status, 400) << refused.body.substr(0, 300);
  EXPECT_EQ(refused.error_path(), "collections");
  EXPECT_EQ(p.get("/api/v1/collections").json().at("pagination").at("total_items").as_int64(), 0)
      << "a refused batch creates nothing";
  items.pop_back();
  Reply accepted = p.create(items);
  ASSERT_EQ(accepted.status, 201) << accepted.body.substr(0, 300);
  EXPECT_EQ(accepted.json().at("created").as_array().size(), 1000u);
  EXPECT_EQ(p.get("/api/v1/collections").json().at("pagination").at("total_items").as_int64(),
            1000);
  server.check_ledger();
}

TEST(CollectionsCreate, LimitsMustBeInTheTenantAccountsCurrency) {
  Server server({{"--currencies", "COP,USD"}});
  Participant p(server);
  json::object dollars = item(server, "usd");
  for (const char* field : {"minimum_attempt_amount", "maximum_attempt_amount",
                            "total_minimum_amount", "total_maximum_amount"}) {
    dollars[field].as_object()["currency"] = "USD";
  }
  json::object mixed = item(server, "mixed");
  mixed["total_maximum_amount"] = money(100000, "USD");
  Reply reply = p.create(json::array{dollars, mixed, item(server, "pesos")});
  ASSERT_EQ(reply.status, 201) << reply.body;
  json::value body = reply.json();
  ASSERT_EQ(body.at("rejected").as_array().size(), 2u) << reply.body;
  EXPECT_EQ(text(body.at("rejected").at(0), "error_code"), "currency_mismatch");
  EXPECT_EQ(text(body.at("rejected").at(0), "path"),
            "collections.0.minimum_attempt_amount.currency");
  EXPECT_EQ(text(body.at("rejected").at(1), "error_code"), "currency_mismatch");
  EXPECT_EQ(text(body.at("rejected").at(1), "path"), "collections.1.total_maximum_amount.currency");
  ASSERT_EQ(body.at("created").as_array().size(), 1u);
  // A PATCH keeps the collection's currency too.
  std::string id = text(body.at("created").at(0), "id");
  Reply patched = p.patch(id, json::serialize(json::object{{"total_maximum_amount", money(5, "USD")}}));
  EXPECT_EQ(patched.status, 422) << patched.body;
  EXPECT_EQ(patched.error_code(), "currency_mismatch");
  EXPECT_EQ(patched.error_path(), "total_maximum_amount.currency");
}

TEST(CollectionsList, PaginatesNewestFirstAndFilters) {
  Server server;
  Participant p(server);
  std::vector<std::string> ids;
  for (int i = 0; i < 12; ++i) {
    ids.push_back(text(p.create_one(item(server, "list-" + std::to_string(i))), "id"));
  }
  Reply first = p.get("/api/v1/collections");
  ASSERT_EQ(first.status, 200) << first.body;
  json::value page = first.json();
  ASSERT_EQ(page.at("collections").as_array().size(), 10u);
  EXPECT_EQ(text(page.at("collections").at(0), "id"), ids[11]);
  EXPECT_EQ(text(page.at("collections").at(9), "id"), ids[2]);
  EXPECT_EQ(page.at("pagination"),
            json::value(json::object{{"page_number", 1}, {"page_size", 10}, {"total_items", 12},
                                     {"total_pages", 2}}));
  json::value second = p.get("/api/v1/collections?page_number=2").json();
  ASSERT_EQ(second.at("collections").as_array().size(), 2u);
  EXPECT_EQ(text(second.at("collections").at(1), "id"), ids[0]);
  EXPECT_TRUE(p.get("/api/v1/collections?page_number=3").json().at("collections").as_array().empty());

  json::value by_external = p.get("/api/v1/collections?external_id=list-4").json();
  ASSERT_EQ(by_external.at("collections").as_array().size(), 1u);
  EXPECT_EQ(text(by_external.at("collections").at(0), "id"), ids[4]);
  EXPECT_EQ(by_external.at("pagination").at("total_items").as_int64(), 1);

  ASSERT_EQ(p.remove(ids[3]).status, 204);
  ASSERT_EQ(p.remove(ids[7]).status, 204);
  json::value discarded = p.get("/api/v1/collections?state=discarded").json();
  ASSERT_EQ(discarded.at("collections").as_array().size(), 2u);
  EXPECT_EQ(text(discarded.at("collections").at(0), "id"), ids[7]);
  EXPECT_EQ(p.get("/api/v1/collections?state=ready&page_size=500").json().at("collections").as_array().size(),
            10u);
  EXPECT_TRUE(p.get("/api/v1/collections?state=ready&external_id=list-3").json().at("collections").as_array().empty());

  for (const std::string bad : {"state=open", "page_size=5", "page_size=501", "page_number=0",
                                 "colour=red", "state=ready&state=paid"}) {
    Reply reply = p.get("/api/v1/collections?" + bad);
    EXPECT_EQ(reply.status, 400) << bad;
    EXPECT_EQ(reply.error_code(), "validation_error") << bad;
    EXPECT_EQ(reply.error_path(), bad.substr(0, bad.find('='))) << bad;
  }
}

TEST(CollectionsGet, UnknownAndOtherTenantsCollectionsAreNotFound) {
  Server server;
  Participant p(server);
  json::object made = p.create_one(item(server, "mine"));
  const std::string id = text(made, "id");
  Reply unknown = p.get("/api/v1/collections/bbcol_AAAAAAAAAAAAAAAAAAAAAA");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.error_code(), "collection_not_found");
  Reply malformed = p.get("/api/v1/collections/col_1");
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(malformed.error_path(), "id");

  Participant other = other_tenant(server);
  Reply stolen = other.get("/api/v1/collections/" + id);
  EXPECT_EQ(stolen.status, 404);
  EXPECT_EQ(stolen.error_code(), "collection_not_found");
  EXPECT_EQ(other.patch(id, R"({"nickname":"x"})").status, 404);
  EXPECT_EQ(other.remove(id).status, 404);
  EXPECT_TRUE(other.get("/api/v1/collections").json().at("collections").as_array().empty());
  EXPECT_EQ(other.get("/api/v1/collections/find_successful_by?external_id=mine").error_code(),
            "item_not_found");
  // Another tenant may use the same external_id: it is unique per tenant.
  json::object theirs = item(server, "mine");
  theirs["tenant_account_id"] = text(other.get("/api/v1/tenant/accounts?role=receptor").json().at(0), "id");
  EXPECT_NE(text(other.create_one(theirs), "id"), id);
  // And our own account is not theirs to collect into.
  Reply into_ours = other.create(json::array{item(server, "into-ours")});
  EXPECT_EQ(text(into_ours.json().at("rejected").at(0), "error_code"), "tenant_account_not_found");
  EXPECT_EQ(text(p.get("/api/v1/collections/" + id).json(), "state"), "ready");
}

TEST(CollectionsUpdate, EachFieldChanges) {
  Server& server = Server::shared();
  Participant p(server);
  const std::string id = text(p.create_one(item(server, unique("patch"))), "id");
  auto patch = [&](const json::object& body) {
    Reply reply = p.patch(id, json::serialize(body));
    EXPECT_EQ(reply.status, 200) << json::serialize(body) << " " << reply.body;
    return reply.status == 200 ? reply.json() : json::value();
  };
  EXPECT_EQ(text(patch({{"nickname", "rent"}}), "nickname"), "rent");
  EXPECT_TRUE(patch({{"nickname", nullptr}}).at("nickname").is_null());

  json::value disabled = patch({{"enabled", false}});
  EXPECT_EQ(disabled.at("enabled").as_bool(), false);
  EXPECT_EQ(text(disabled, "state"), "ready");
  EXPECT_TRUE(disabled.at("key").is_null()) << "a disabled collection has no active key";
  EXPECT_EQ(text(disabled.at("keys").at(0), "state"), "inactive");
  json::value enabled = patch({{"enabled", true}});
  EXPECT_EQ(text(enabled.at("keys").at(0), "state"), "active");
  EXPECT_EQ(text(enabled.at("key"), "value"), text(enabled.at("keys").at(0), "value"));

  const std::string later = tenant_time_in(p, 86400);
  json::value expiring = patch({{"expires_at", later}});
  EXPECT_TRUE(text(expiring, "expires_at").starts_with(later.substr(0, 19))) << expiring;
  EXPECT_TRUE(patch({{"expires_at", nullptr}}).at("expires_at").is_null());

  json::value limits = patch({{"minimum_attempt_amount", money(2000)},
                              {"maximum_attempt_amount", money(2000)},
                              {"total_minimum_amount", money(4000)},
                              {"total_maximum_amount", money(8000)}});
  EXPECT_EQ(limits.at("minimum_attempt_amount"), json::value(money(2000)));
  EXPECT_EQ(limits.at("maximum_attempt_amount"), json::value(money(2000)));
  EXPECT_EQ(limits.at("total_minimum_amount"), json::value(money(4000)));
  EXPECT_EQ(limits.at("total_maximum_amount"), json::value(money(8000)));
  EXPECT_EQ(limits.at("remaining_amount"), json::value(money(8000)));
  EXPECT_EQ(p.get("/api/v1/collections/" + id).json(), limits);
  EXPECT_EQ(patch({}), limits) << "an empty PATCH changes nothing but updated_at";
}

TEST(CollectionsUpdate, LimitsMustStayConsistent) {
  Server& server = Server::shared();
  Participant p(server);
  // 10.00..500.00 per attempt, 100.00..1,000.00 in all.
  const std::string id = text(p.create_one(item(server, unique("consistent"))), "id");
  struct Case {
    json::object body;
    long status;
    std::string code;
    std::string path;
  };
  const std::vector<Case> cases = {
      {{{"minimum_attempt_amount", money(60000)}}, 400, "validation_error",
       "minimum_attempt_amount.amount"},
      {{{"maximum_attempt_amount", money(500)}}, 400, "validation_error",
       "maximum_attempt_amount.amount"},
      {{{"total_minimum_amount", money(200000)}}, 400, "validation_error",
       "total_minimum_amount.amount"},
      {{{"total_maximum_amount", money(9000)}}, 400, "validation_error",
       "total_maximum_amount.amount"},
      {{{"maximum_attempt_amount", money(200000)}}, 400, "validation_error",
       "maximum_attempt_amount.amount"},
      {{{"minimum_attempt_amount", money(70000)}, {"maximum_attempt_amount", money(60000)}}, 400,
       "validation_error", "maximum_attempt_amount.amount"},
      {{{"total_maximum_amount", nullptr}}, 400, "validation_error", "total_maximum_amount"},
      {{{"total_maximum_amount", money(0)}}, 400, "validation_error",
       "total_maximum_amount.amount"},
      {{{"enabled", "yes"}}, 400, "validation_error", "enabled"},
      {{{"enabled", nullptr}}, 400, "validation_error", "enabled"},
      {{{"expires_at", "soon"}}, 400, "validation_error", "expires_at"},
      {{{"expires_at", "2001-01-01T00:00:00Z"}}, 400, "validation_error", "expires_at"},
      {{{"nickname", std::string(101, 'n')}}, 400, "validation_error", "nickname"},
      {{{"usage_mode", "single_use"}}, 400, "validation_error", "usage_mode"},
      {{{"external_id", "other"}}, 400, "validation_error", "external_id"},
  };
  for (const Case& c : cases) {
    Reply reply = p.patch(id, json::serialize(c.body));
    EXPECT_EQ(reply.status, c.status) << c.body << " " << reply.body;
    EXPECT_EQ(reply.error_code(), c.code) << c.body;
    EXPECT_EQ(reply.error_path(), c.path) << c.body;
  }
  Reply not_json = p.patch(id, "{");
  EXPECT_EQ(not_json.status, 400);
  Reply malformed_id = p.patch("bbcol_x", "{}");
  EXPECT_EQ(malformed_id.status, 400);
  EXPECT_EQ(malformed_id.error_path(), "id");
  Reply unknown = p.patch("bbcol_AAAAAAAAAAAAAAAAAAAAAA", "{}");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.error_code(), "collection_not_found");
  // Nothing of the refused PATCHes was applied.
  json::value unchanged = p.get("/api/v1/collections/" + id).json();
  EXPECT_EQ(unchanged.at("minimum_attempt_amount"), json::value(money(1000)));
  EXPECT_EQ(unchanged.at("total_maximum_amount"), json::value(money(100000)));
  EXPECT_EQ(unchanged.at("enabled").as_bool(), true);
  // Moving both ends of a pair together is fine.
  Reply both = p.patch(id, json::serialize(json::object{{"minimum_attempt_amount", money(70000)},
                                                        {"maximum_attempt_amount", money(80000)}}));
  EXPECT_EQ(both.status, 200) << both.body;
}

TEST(CollectionsDelete, DiscardsAndTerminalStatesRefuseChanges) {
  Server& server = Server::shared();
  Participant p(server);
  const std::string external_id = unique("delete");
  const std::string id = text(p.create_one(item(server, external_id)), "id");
  Reply removed = p.remove(id);
  EXPECT_EQ(removed.status, 204);
  EXPECT_TRUE(removed.body.empty());
  json::value shown = p.get("/api/v1/collections/" + id).json();
  EXPECT_EQ(text(shown, "state"), "discarded");
  EXPECT_TRUE(shown.at("key").is_null());
  EXPECT_EQ(text(shown.at("keys").at(0), "state"), "inactive");
  Reply patched = p.patch(id, R"({"nickname":"late"})");
  EXPECT_EQ(patched.status, 409);
  EXPECT_EQ(patched.error_code(), "collection_invalid_state");
  Reply again = p.remove(id);
  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(again.error_code(), "collection_invalid_state");
  Reply unknown = p.remove("bbcol_AAAAAAAAAAAAAAAAAAAAAA");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.error_code(), "collection_not_found");
  // A discarded collection is not successful.
  Reply found = p.get("/api/v1/collections/find_successful_by?external_id=" + external_id);
  EXPECT_EQ(found.status, 409);
  EXPECT_EQ(found.error_code(), "invalid_state");
}

TEST(CollectionsFindSuccessfulBy, AnswersNotFoundAndNotYet) {
  Server& server = Server::shared();
  Participant p(server);
  const std::string external_id = unique("find");
  p.create_one(item(server, external_id));
  Reply ready = p.get("/api/v1/collections/find_successful_by?external_id=" + external_id);
  EXPECT_EQ(ready.status, 409) << ready.body;
  EXPECT_EQ(ready.error_code(), "invalid_state");
  Reply none = p.get("/api/v1/collections/find_successful_by?external_id=" + unique("nobody"));
  EXPECT_EQ(none.status, 404);
  EXPECT_EQ(none.error_code(), "item_not_found");
  Reply missing = p.get("/api/v1/collections/find_successful_by");
  EXPECT_EQ(missing.status, 422);
  EXPECT_EQ(missing.error_code(), "missing_field");
  EXPECT_EQ(missing.error_path(), "external_id");
  Reply extra = p.get("/api/v1/collections/find_successful_by?external_id=a&state=paid");
  EXPECT_EQ(extra.status, 400);
  EXPECT_EQ(extra.error_path(), "state");
  // The literal path is not taken for an id, and it has no other method.
  EXPECT_EQ(server.send({"DELETE", "/api/v1/collections/find_successful_by", "", {p.bearer}}).status,
            405);
}

TEST(CollectionsExpiry, AClockAdvanceFailsExpiredCollections) {
  Server server;  // its own tenant clock
  Participant p(server);
  json::object soon = item(server, "soon");
  soon["expires_at"] = tenant_time_in(p, 3600);
  json::object later = item(server, "later");
  later["expires_at"] = tenant_time_in(p, 3 * 3600);
  const std::string soon_id = text(p.create_one(soon), "id");
  const std::string later_id = text(p.create_one(later), "id");
  const std::string never_id = text(p.create_one(item(server, "never")), "id");
  Reply advanced = server.post("/api/v1/sandbox/clock/advance", R"({"seconds": 7200})", {p.bearer});
  ASSERT_EQ(advanced.status, 200) << advanced.body;
  json::value failed = wait_for_state(p, soon_id, "failed");
  ASSERT_EQ(text(failed, "state"), "failed");
  EXPECT_EQ(text(failed, "state_reason"), "expired");
  EXPECT_TRUE(failed.at("key").is_null());
  EXPECT_EQ(text(failed.at("keys").at(0), "state"), "inactive");
  EXPECT_EQ(text(p.get("/api/v1/collections/" + later_id).json(), "state"), "ready");
  EXPECT_EQ(text(p.get("/api/v1/collections/" + never_id).json(), "state"), "ready");
  EXPECT_EQ(p.get("/api/v1/collections?state=failed").json().at("collections").as_array().size(), 1u);
  Reply patched = p.patch(soon_id, R"({"expires_at":null})");
  EXPECT_EQ(patched.status, 409);
  EXPECT_EQ(patched.error_code(), "collection_invalid_state");
  EXPECT_EQ(p.remove(soon_id).status, 409);
  // A PATCHed expiry is honoured too.
  ASSERT_EQ(p.patch(never_id, json::serialize(json::object{{"expires_at", tenant_time_in(p, 60)}})).status,
            200);
  ASSERT_EQ(server.post("/api/v1/sandbox/clock/advance", R"({"seconds": 120})", {p.bearer}).status, 200);
  EXPECT_EQ(text(wait_for_state(p, never_id, "failed"), "state_reason"), "expired");
  EXPECT_EQ(text(p.get("/api/v1/collections/" + later_id).json(), "state"), "ready");
  server.check_ledger();
}

TEST(CollectionsKeys, AKeyIsUniqueAcrossTheWholeDirectory) {
  Server server;
  Participant p(server);
  Participant other = other_tenant(server);
  const std::string other_account =
      text(other.get("/api/v1/tenant/accounts?role=receptor").json().at(0), "id");
  auto keyed = [&](const Server& s, const std::string& account, const std::string& external_id,
                   const std::string& type, const std::string& value) {
    json::object body = item(s, external_id);
    body["tenant_account_id"] = account;
    body["key"] = json::object{{"type", type}, {"value", value}};
    return body;
  };
  json::value mine = p.create_one(keyed(server, receptor(server), "k1", "cellphone", "3001234567"));
  EXPECT_EQ(text(mine.at("key"), "value"), "3001234567");
  p.create_one(keyed(server, receptor(server), "k2", "email", "Ana@Example.com"));
  json::value alias = p.create_one(keyed(server, receptor(server), "k3", "alphanumeric", "@tienda7"));
  EXPECT_EQ(text(alias.at("key"), "value"), "@TIENDA7");

  Reply theirs = other.create(json::array{
      keyed(server, other_account, "o1", "cellphone", "3001234567"),
      keyed(server, other_account, "o2", "email", "ana@example.com"),
      keyed(server, other_account, "o3", "alphanumeric", "@TIENDA7"),
      keyed(server, other_account, "o4", "identification", "3001234567"),  // another type
  });
  ASSERT_EQ(theirs.status, 201) << theirs.body;
  json::value body = theirs.json();
  ASSERT_EQ(body.at("rejected").as_array().size(), 3u) << theirs.body;
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(text(body.at("rejected").at(i), "error_code"), "key_already_exists");
    EXPECT_EQ(text(body.at("rejected").at(i), "path"),
              "collections." + std::to_string(i) + ".key.value");
  }
  ASSERT_EQ(body.at("created").as_array().size(), 1u);
  EXPECT_EQ(text(body.at("created").at(0).at("key"), "type"), "identification");
  // Nothing of a rejected item remains: its external_id is free.
  EXPECT_EQ(other.get("/api/v1/collections?external_id=o1").json().at("collections").as_array().size(), 0u);
  // Same tenant, same key, and a discarded collection's key stays taken.
  ASSERT_EQ(p.remove(text(mine, "id")).status, 204);
  Reply again = p.create(json::array{keyed(server, receptor(server), "k4", "cellphone", "3001234567")});
  EXPECT_EQ(text(again.json().at("rejected").at(0), "error_code"), "key_already_exists");
}

TEST(CollectionsScopes, AReadonlyTokenOnlyReads) {
  Server& server = Server::shared();
  Participant writer(server);
  const std::string external_id = unique("scopes");
  const std::string id = text(writer.create_one(item(server, external_id)), "id");
  Participant reader(server, "collections:readonly");
  EXPECT_EQ(reader.get("/api/v1/collections").status, 200);
  EXPECT_EQ(reader.get("/api/v1/collections/" + id).status, 200);
  EXPECT_EQ(reader.get("/api/v1/collections/find_successful_by?external_id=" + external_id).status,
            409);
  for (const Reply& refused : {reader.create(json::array{item(server, unique("ro"))}),
                               reader.patch(id, R"({"nickname":"x"})"), reader.remove(id)}) {
    EXPECT_EQ(refused.status, 403) << refused.body;
    EXPECT_EQ(refused.error_code(), "not_authorized");
  }
  Participant stranger(server, "tenant_accounts:readonly");
  for (const Reply& refused : {stranger.get("/api/v1/collections"),
                               stranger.get("/api/v1/collections/" + id),
                               stranger.get("/api/v1/collections/find_successful_by?external_id=a")}) {
    EXPECT_EQ(refused.status, 403) << refused.body;
    EXPECT_EQ(refused.error_code(), "not_authorized");
  }
  // The core API's keys are not participant credentials.
  EXPECT_EQ(server.get("/api/v1/collections", {server.bearer_core()}).status, 401);
  EXPECT_EQ(text(writer.get("/api/v1/collections/" + id).json(), "state"), "ready");
}

TEST(CollectionsCreate, AnIdempotentRetryReplaysTheBatch) {
  Server& server = Server::shared();
  Participant p(server);
  const std::string key = "x-idempotency-key: " + harness::new_uuid();
  const std::string body = batch(json::array{item(server, unique("idem"))});
  Reply first = server.post("/api/v1/collections", body, {p.bearer, key});
  ASSERT_EQ(first.status, 201);
  Reply replay = server.post("/api/v1/collections", body, {p.bearer, key});
  EXPECT_EQ(replay.body, first.body);
  EXPECT_EQ(replay.header("idempotent-replayed"), "true");
}

TEST(CollectionsRobustness, MutatedItemsAndPatchesNeverEarnA5xx) {
  Server& server = Server::shared();
  Participant p(server);
  const std::string id = text(p.create_one(item(server, unique("fuzz"))), "id");
  const json::array odd_values = json::parse(
      R"([null, true, 0, -1, 9223372036854775807, 18446744073709551615, 1.5, 1e300, "", "x",
          "2026-13-45T99:00:00Z", [], [1, "a"], {}, {"amount": 1}, {"type": "email"},
          {"amount": -1, "currency": "COP"}, {"type": "email", "value": "a@b.co", "x": 1}])")
                                  .as_array();
  json::object template_item = item(server, "template");
  template_item["expires_at"] = "2099-01-01T00:00:00Z";
  template_item["nickname"] = "n";
  template_item["reference"] = "r";
  template_item["metadata"] = json::object{{"a", "b"}};
  template_item["key"] = json::object{{"type", "cellphone"}, {"value", "3009999999"}};
  json::array items;
  std::vector<json::value> odd(odd_values.begin(), odd_values.end());
  odd.emplace_back(std::string(2000, 'z'));
  for (const auto& field : template_item) {
    for (const json::value& odd_value : odd) {
      json::object mutated = template_item;
      mutated["external_id"] = unique("fuzz");
      mutated[field.key()] = odd_value;
      items.push_back(mutated);
      Reply patched = p.patch(id, json::serialize(json::object{{field.key(), odd_value}}));
      EXPECT_LT(patched.status, 500) << field.key() << "=" << odd_value << " " << patched.body;
    }
  }
  Reply reply = p.create(items);
  ASSERT_EQ(reply.status, 201) << reply.body.substr(0, 500);
  const json::value body = reply.json();
  EXPECT_EQ(body.at("created").as_array().size() + body.at("duplicated").as_array().size() +
                body.at("rejected").as_array().size(),
            items.size());
}
