// /v1/cards/cardholders: create, show, update (PATCH), list; every field's validation with its
// path; tenants isolated; scopes.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <set>

#include "harness.hpp"

using harness::Reply;
using harness::Server;
namespace json = boost::json;

namespace {

const char* k_path = "/v1/cards/cardholders";

json::object full_cardholder() {
  return json::object{
      {"first_name", "Ana"},
      {"middle_name", "Maria"},
      {"last_name", "Rojas"},
      {"second_last_name", "Diaz"},
      {"birthdate", "1990-02-28"},
      {"nationality", "CO"},
      {"email", "ana@example.co"},
      {"phone_number", "+573001234567"},
      {"address", json::object{{"city", "Bogota"}, {"country", "CO"}, {"line_1", "Calle 1 # 2-3"},
                               {"state", "DC"}, {"zip_code", "110111"}}},
      {"document", json::object{{"country_code", "CO"}, {"number", "1020304050"},
                                {"person_type", "natural"}, {"type", "CC"}}}};
}

json::object minimal_cardholder() { return json::object{{"first_name", "Ana"}, {"last_name", "Rojas"}}; }

Reply send(const Server& server, const std::string& method, const std::string& path,
           const std::string& body = "", std::vector<std::string> headers = {}) {
  if (headers.empty()) headers.push_back(server.bearer_core());
  return server.send({method, path, body, headers});
}

Reply create(const json::object& body, const Server& server = Server::shared()) {
  return send(server, "POST", k_path, json::serialize(body));
}

std::string id_of(const Reply& reply) { return std::string(reply.json().at("id").as_string()); }

// Expects a 400 validation_error naming `path` (among others).
void expect_invalid(const Reply& reply, const std::string& path, const std::string& what) {
  EXPECT_EQ(reply.status, 400) << what << ": " << reply.body;
  EXPECT_EQ(reply.error_code(), "validation_error") << what;
  EXPECT_TRUE(reply.error_paths().count(path)) << what << " wants " << path << ": " << reply.body;
}

// YYYY-MM-DD of the real UTC day `days` from today.
std::string date_in_days(int days) {
  namespace chrono = std::chrono;
  chrono::year_month_day date(chrono::floor<chrono::days>(chrono::system_clock::now()) +
                              chrono::days(days));
  char text[16];
  std::snprintf(text, sizeof text, "%04d-%02u-%02u", static_cast<int>(date.year()),
                static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()));
  return text;
}

std::string other_tenant_key(const Server& server) {
  int code = 0;
  json::object other = json::parse(server.command({"tenant", "create", "--name", "other", "--json"},
                                                  &code)).as_object();
  EXPECT_EQ(code, 0);
  return "Authorization: Bearer " + std::string(other.at("api_key").as_string());
}

}  // namespace

TEST(Cardholders, CreateReturnsEveryFieldAndShowMatches) {
  Reply reply = create(full_cardholder());
  ASSERT_EQ(reply.status, 201) << reply.body;
  json::object holder = reply.json().as_object();
  EXPECT_EQ(std::string(holder.at("id").as_string()).substr(0, 5), "carh_");
  EXPECT_EQ(holder.at("id").as_string().size(), 27u);
  for (const char* field : {"first_name", "middle_name", "last_name", "second_last_name",
                            "birthdate", "nationality", "email", "phone_number"}) {
    EXPECT_EQ(holder.at(field), full_cardholder().at(field)) << field;
  }
  EXPECT_EQ(holder.at("address").at("city").as_string(), "Bogota");
  EXPECT_TRUE(holder.at("address").at("line_2").is_null());
  EXPECT_EQ(holder.at("document"), full_cardholder().at("document"));
  EXPECT_FALSE(holder.at("inserted_at").as_string().empty());
  EXPECT_EQ(holder.at("inserted_at"), holder.at("updated_at"));

  Server& server = Server::shared();
  Reply shown = send(server, "GET", std::string(k_path) + "/" + id_of(reply));
  EXPECT_EQ(shown.status, 200);
  EXPECT_EQ(shown.body, reply.body);
}

TEST(Cardholders, OptionalFieldsArePresentAsNull) {
  Reply reply = create(minimal_cardholder());
  ASSERT_EQ(reply.status, 201) << reply.body;
  json::object holder = reply.json().as_object();
  for (const char* field : {"middle_name", "second_last_name", "birthdate", "nationality", "email",
                            "phone_number", "address", "document"}) {
    ASSERT_TRUE(holder.contains(field)) << field;
    EXPECT_TRUE(holder.at(field).is_null()) << field;
  }
  json::object nulls = minimal_cardholder();
  nulls["email"] = nullptr;
  nulls["document"] = nullptr;
  EXPECT_EQ(create(nulls).status, 201);
}

TEST(Cardholders, RequiredFieldsAre422WithTheirPaths) {
  for (const char* field : {"first_name", "last_name"}) {
    json::object body = full_cardholder();
    body.erase(field);
    Reply reply = create(body);
    EXPECT_EQ(reply.status, 422) << field;
    EXPECT_EQ(reply.error_code(), "missing_field");
    EXPECT_EQ(reply.error_paths(), std::set<std::string>{field});
  }
  for (const char* field : {"country_code", "number", "person_type", "type"}) {
    json::object body = full_cardholder();
    body["document"].as_object().erase(field);
    Reply reply = create(body);
    EXPECT_EQ(reply.status, 422) << field;
    EXPECT_EQ(reply.error_paths(), std::set<std::string>{std::string("document.") + field});
  }
  json::object body = full_cardholder();
  body["address"].as_object().erase("zip_code");
  EXPECT_EQ(create(body).error_paths(), std::set<std::string>{"address.zip_code"});
}

TEST(Cardholders, EveryFieldIsValidated) {
  struct Case {
    const char* field;
    json::value value;
    const char* path;
  };
  std::string long_name(101, 'a');
  const std::vector<Case> cases = {
      {"first_name", "", "first_name"},
      {"first_name", json::value(long_name), "first_name"},
      {"last_name", 7, "last_name"},
      {"middle_name", "", "middle_name"},
      {"second_last_name", json::value(long_name), "second_last_name"},
      {"birthdate", "2023-02-29", "birthdate"},
      {"birthdate", "1990-13-01", "birthdate"},
      {"birthdate", "1990-1-01", "birthdate"},
      {"birthdate", "01-02-1990", "birthdate"},
      {"birthdate", "1990-01-01T00:00:00Z", "birthdate"},
      {"birthdate", "1899-12-31", "birthdate"},
      {"birthdate", json::value(date_in_days(0)), "birthdate"},
      {"birthdate", json::value(date_in_days(1)), "birthdate"},
      {"nationality", "co", "nationality"},
      {"nationality", "COL", "nationality"},
      {"email", "ana@", "email"},
      {"phone_number", "3001234567", "phone_number"},
      {"address", "Bogota", "address"},
      {"document", json::array{}, "document"},
      {"color", "red", "color"},
  };
  for (const Case& c : cases) {
    json::object body = full_cardholder();
    body[c.field] = c.value;
    expect_invalid(create(body), c.path, std::string(c.field) + "=" + json::serialize(c.value));
  }
  const std::vector<std::pair<const char*, json::value>> document_cases = {
      {"country_code", "Colombia"}, {"number", json::value(std::string(31, '1'))},
      {"number", ""}, {"person_type", "robot"}, {"type", "XX"}, {"extra", 1}};
  for (const auto& [field, value] : document_cases) {
    json::object body = full_cardholder();
    body["document"].as_object()[field] = value;
    expect_invalid(create(body), std::string("document.") + field, field);
  }
  json::object body = full_cardholder();
  body["address"].as_object()["country"] = "col";
  expect_invalid(create(body), "address.country", "address.country");
}

TEST(Cardholders, AllProblemsAreListedTogether) {
  json::object body = minimal_cardholder();
  body.erase("last_name");
  body["nationality"] = "co";
  body["birthdate"] = "yesterday";
  Reply reply = create(body);
  EXPECT_EQ(reply.status, 400);
  EXPECT_EQ(reply.error_paths(), (std::set<std::string>{"last_name", "nationality", "birthdate"}));
}

TEST(Cardholders, BirthdateEdges) {
  json::object body = minimal_cardholder();
  for (const std::string& date : {std::string("1900-01-01"), std::string("2000-02-29"),
                                  date_in_days(-1)}) {
    body["birthdate"] = date;
    EXPECT_EQ(create(body).status, 201) << date;
  }
}

// "In the past" is judged on the tenant's clock: once it runs ahead, a date that is still to
// come in real time may be a birthdate.
TEST(Cardholders, BirthdateIsJudgedOnTheTenantClock) {
  Server server;
  json::object body = minimal_cardholder();
  body["birthdate"] = date_in_days(5);
  EXPECT_EQ(create(body, server).status, 400);
  ASSERT_EQ(server.post("/v1/sandbox/clock/advance", R"({"seconds":864000})", {server.bearer_core()})
                .status,
            200);
  Reply later = create(body, server);
  EXPECT_EQ(later.status, 201) << later.body;
}

TEST(Cardholders, PatchSetsKeepsAndClears) {
  Server& server = Server::shared();
  Reply created = create(full_cardholder());
  ASSERT_EQ(created.status, 201);
  std::string path = std::string(k_path) + "/" + id_of(created);
  Reply patched = send(server, "PATCH", path,
                       R"({"first_name":"Luisa","middle_name":null,"address":null,
                           "document":{"country_code":"CO","number":"900123","person_type":"legal","type":"NIT"},
                           "email":"luisa@example.co"})");
  ASSERT_EQ(patched.status, 200) << patched.body;
  json::object holder = patched.json().as_object();
  EXPECT_EQ(holder.at("first_name").as_string(), "Luisa");
  EXPECT_TRUE(holder.at("middle_name").is_null());
  EXPECT_TRUE(holder.at("address").is_null());
  EXPECT_EQ(holder.at("document").at("type").as_string(), "NIT");
  EXPECT_EQ(holder.at("email").as_string(), "luisa@example.co");
  // Absent fields are kept.
  EXPECT_EQ(holder.at("last_name").as_string(), "Rojas");
  EXPECT_EQ(holder.at("second_last_name").as_string(), "Diaz");
  EXPECT_EQ(holder.at("birthdate").as_string(), "1990-02-28");
  EXPECT_EQ(holder.at("phone_number").as_string(), "+573001234567");
  EXPECT_EQ(holder.at("inserted_at"), created.json().at("inserted_at"));
  EXPECT_GE(std::string(holder.at("updated_at").as_string()),
            std::string(created.json().at("updated_at").as_string()));
  EXPECT_EQ(send(server, "GET", path).body, patched.body);

  Reply empty = send(server, "PATCH", path, "{}");
  EXPECT_EQ(empty.status, 200);
  EXPECT_EQ(empty.json().at("first_name").as_string(), "Luisa");
}

TEST(Cardholders, PatchValidation) {
  Server& server = Server::shared();
  Reply created = create(minimal_cardholder());
  ASSERT_EQ(created.status, 201);
  std::string path = std::string(k_path) + "/" + id_of(created);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"first_name":null})", "first_name"},
      {R"({"last_name":""})", "last_name"},
      {R"({"last_name":null})", "last_name"},
      {R"({"birthdate":"2023-02-29"})", "birthdate"},
      {R"({"nationality":"xx"})", "nationality"},
      {R"({"document":{"country_code":"CO"}})", "document.number"},
      {R"({"phone_number":"+0"})", "phone_number"},
      {R"({"nickname":"x"})", "nickname"},
  };
  for (const auto& [body, want] : cases) {
    Reply reply = send(server, "PATCH", path, body);
    EXPECT_GE(reply.status, 400) << body;
    EXPECT_TRUE(reply.error_paths().count(want)) << body << ": " << reply.body;
  }
  EXPECT_EQ(send(server, "GET", path).body, created.body);  // nothing changed
  EXPECT_EQ(send(server, "PATCH", path, "[1]").status, 400);
}

TEST(Cardholders, UnknownMalformedAndOtherTenantsIds) {
  Server& server = Server::shared();
  Reply malformed = send(server, "GET", std::string(k_path) + "/nope");
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(malformed.error_paths(), std::set<std::string>{"id"});
  Reply patch_malformed = send(server, "PATCH", std::string(k_path) + "/car_AAAAAAAAAAAAAAAAAAAAAA", "{}");
  EXPECT_EQ(patch_malformed.status, 400);
  std::string unknown = std::string(k_path) + "/carh_AAAAAAAAAAAAAAAAAAAAAA";
  EXPECT_EQ(send(server, "GET", unknown).error_code(), "item_not_found");
  EXPECT_EQ(send(server, "PATCH", unknown, "{}").status, 404);

  Reply mine = create(minimal_cardholder());
  std::string other = other_tenant_key(server);
  std::string path = std::string(k_path) + "/" + id_of(mine);
  Reply theirs = send(server, "GET", path, "", {other});
  EXPECT_EQ(theirs.status, 404);
  EXPECT_EQ(theirs.error_code(), "item_not_found");
  EXPECT_EQ(send(server, "PATCH", path, R"({"first_name":"X"})", {other}).status, 404);
  EXPECT_EQ(send(server, "GET", path).json().at("first_name").as_string(), "Ana");
}

TEST(Cardholders, ListIsPaginatedNewestFirst) {
  Server server;
  for (int i = 0; i < 11; ++i) {
    json::object body = minimal_cardholder();
    body["first_name"] = "n" + std::to_string(i);
    ASSERT_EQ(create(body, server).status, 201);
  }
  Reply first = send(server, "GET", k_path);
  ASSERT_EQ(first.status, 200) << first.body;
  json::object page = first.json().as_object();
  ASSERT_EQ(page.at("cardholders").as_array().size(), 10u);
  EXPECT_EQ(page.at("cardholders").at(0).at("first_name").as_string(), "n10");
  EXPECT_EQ(page.at("pagination").at("total_items").as_int64(), 11);
  EXPECT_EQ(page.at("pagination").at("total_pages").as_int64(), 2);
  Reply second = send(server, "GET", std::string(k_path) + "?page_number=2");
  EXPECT_EQ(second.json().at("cardholders").at(0).at("first_name").as_string(), "n0");
  EXPECT_EQ(send(server, "GET", std::string(k_path) + "?page_size=9").status, 400);
  // Another tenant sees none of them.
  Reply other = send(server, "GET", k_path, "", {other_tenant_key(server)});
  EXPECT_EQ(other.json().at("pagination").at("total_items").as_int64(), 0);
}

TEST(Cardholders, ScopesApply) {
  Server& server = Server::shared();
  std::string tenant(server.credentials().at("tenant_id").as_string());
  json::object key = json::parse(server.command({"keys", "create", "--tenant", tenant, "--scopes",
                                                 "cards:read", "--json"})).as_object();
  std::string header = "Authorization: Bearer " + std::string(key.at("api_key").as_string());
  Reply created = create(minimal_cardholder());
  std::string path = std::string(k_path) + "/" + id_of(created);
  EXPECT_EQ(send(server, "GET", path, "", {header}).status, 200);
  EXPECT_EQ(send(server, "GET", k_path, "", {header}).status, 200);
  Reply refused = send(server, "POST", k_path, json::serialize(minimal_cardholder()), {header});
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(refused.error_code(), "not_authorized");
  EXPECT_EQ(send(server, "PATCH", path, "{}", {header}).status, 403);
  json::object ledger = json::parse(server.command({"keys", "create", "--tenant", tenant, "--scopes",
                                                    "ledger:admin", "--json"})).as_object();
  EXPECT_EQ(send(server, "GET", path, "",
                 {"Authorization: Bearer " + std::string(ledger.at("api_key").as_string())})
                .status,
            403);
}
