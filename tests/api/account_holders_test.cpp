// POST/GET /v1/ledger/account_holders: every rule of the contract and of decisions.md.
#include <gtest/gtest.h>

#include "harness.hpp"

using harness::Reply;
using harness::Server;
namespace json = boost::json;

namespace {

json::object valid_holder(const std::string& external_id) {
  return json::object{
      {"address", json::object{{"city", "Bogota"}, {"country", "CO"}, {"line_1", "Calle 1 # 2-3"},
                               {"state", "DC"}, {"zip_code", "110111"}}},
      {"person", json::object{{"country_code", "CO"}, {"document_number", "1020304050"},
                              {"document_type", "CC"}, {"first_name", "Ana"},
                              {"last_name", "Rojas"}, {"person_type", "natural"}}},
      {"external_id", external_id}};
}

Reply create(const json::object& body) {
  Server& server = Server::shared();
  return server.post("/v1/ledger/account_holders", json::serialize(body), {server.bearer_core()});
}

}  // namespace

TEST(AccountHolders, CreateReturnsTheRecord) {
  json::object body = valid_holder("ah-" + harness::new_uuid());
  body["email"] = "ana@example.co";
  body["phone_number"] = "+573001234567";
  body["metadata"] = json::object{{"segment", "gold"}, {"score", 7}, {"vip", true}, {"rate", "1.50"}, {"big", 18446744073709551615ULL}};
  Reply reply = create(body);
  ASSERT_EQ(reply.status, 201) << reply.body;
  json::object holder = reply.json().as_object();
  EXPECT_EQ(std::string(holder.at("id").as_string()).substr(0, 5), "acch_");
  EXPECT_EQ(holder.at("id").as_string().size(), 27u);
  EXPECT_EQ(holder.at("state").as_string(), "active");
  EXPECT_EQ(holder.at("external_id"), body.at("external_id"));
  EXPECT_EQ(holder.at("email").as_string(), "ana@example.co");
  EXPECT_EQ(holder.at("phone_number").as_string(), "+573001234567");
  EXPECT_EQ(holder.at("metadata").at("score").as_string(), "7");
  EXPECT_EQ(holder.at("metadata").at("vip").as_string(), "true");
  EXPECT_EQ(holder.at("metadata").at("segment").as_string(), "gold");
  EXPECT_EQ(holder.at("metadata").at("rate").as_string(), "1.50");
  EXPECT_EQ(holder.at("metadata").at("big").as_string(), "18446744073709551615");
  EXPECT_EQ(holder.at("address").at("city").as_string(), "Bogota");
  EXPECT_TRUE(holder.at("address").as_object().contains("line_2"));
  EXPECT_EQ(holder.at("person").at("document_type").as_string(), "CC");
  EXPECT_TRUE(holder.at("person").as_object().contains("middle_name"));
  EXPECT_FALSE(holder.at("inserted_at").as_string().empty());
  EXPECT_EQ(holder.at("inserted_at"), holder.at("updated_at"));

  Server& server = Server::shared();
  Reply fetched = server.get("/v1/ledger/account_holders/" + std::string(holder.at("id").as_string()),
                             {server.bearer_core()});
  EXPECT_EQ(fetched.status, 200);
  EXPECT_EQ(fetched.body, reply.body);
}

TEST(AccountHolders, RequiredFieldsAre422WithPaths) {
  for (const char* field : {"address", "person", "external_id"}) {
    json::object body = valid_holder("req-" + harness::new_uuid());
    body.erase(field);
    Reply reply = create(body);
    EXPECT_EQ(reply.status, 422) << field;
    EXPECT_EQ(reply.error_code(), "missing_field");
    EXPECT_EQ(reply.error_path(), field);
  }
  json::object body = valid_holder("req-" + harness::new_uuid());
  body["address"].as_object().erase("city");
  Reply reply = create(body);
  EXPECT_EQ(reply.status, 422);
  EXPECT_EQ(reply.error_path(), "address.city");
}

// The contract: external_id is "string or null, required key". Null creates the holder; an
// absent key is still 422; null ids never clash with each other.
TEST(AccountHolders, NullExternalIdCreatesAndAbsentIsMissing) {
  json::object body = valid_holder("x");
  body["external_id"] = nullptr;
  for (int i = 0; i < 2; ++i) {
    Reply reply = create(body);
    ASSERT_EQ(reply.status, 201) << reply.body;
    EXPECT_TRUE(reply.json().at("external_id").is_null());
    Server& server = Server::shared();
    Reply fetched = server.get("/v1/ledger/account_holders/" +
                                   std::string(reply.json().at("id").as_string()),
                               {server.bearer_core()});
    EXPECT_TRUE(fetched.json().at("external_id").is_null());
  }
  body.erase("external_id");
  Reply absent = create(body);
  EXPECT_EQ(absent.status, 422);
  EXPECT_EQ(absent.error_code(), "missing_field");
  EXPECT_EQ(absent.error_path(), "external_id");
  body["external_id"] = "";
  EXPECT_EQ(create(body).status, 400);
}

TEST(AccountHolders, PhoneNumberPattern) {
  for (const char* bad : {"3001234567", "+0123", "+1", "+1234567890123456", "+57 300", "+57a"}) {
    json::object body = valid_holder("ph-" + harness::new_uuid());
    body["phone_number"] = bad;
    Reply reply = create(body);
    EXPECT_EQ(reply.status, 400) << bad;
    EXPECT_EQ(reply.error_path(), "phone_number") << bad;
  }
  json::object body = valid_holder("ph-" + harness::new_uuid());
  body["phone_number"] = "+12";
  EXPECT_EQ(create(body).status, 201);
}

TEST(AccountHolders, EmailFormat) {
  for (const char* bad : {"ana", "ana@", "@x.co", "ana@x", "a na@x.co", "a@@x.co"}) {
    json::object body = valid_holder("em-" + harness::new_uuid());
    body["email"] = bad;
    Reply reply = create(body);
    EXPECT_EQ(reply.status, 400) << bad;
    EXPECT_EQ(reply.error_path(), "email") << bad;
  }
}

TEST(AccountHolders, MetadataIsFlatAndBounded) {
  json::object nested = valid_holder("md-" + harness::new_uuid());
  nested["metadata"] = json::object{{"inner", json::object{{"a", "b"}}}};
  Reply reply = create(nested);
  EXPECT_EQ(reply.status, 400);
  EXPECT_EQ(reply.error_path(), "metadata.inner");

  for (const char* number : {"1.5", "1e400", "123456789012345678901234567890", "-0.0"}) {
    std::string body = json::serialize(valid_holder("md-" + harness::new_uuid()));
    body.insert(body.size() - 1, std::string(R"(,"metadata":{"n":)") + number + "}");
    Server& server = Server::shared();
    Reply inexact = server.post("/v1/ledger/account_holders", body, {server.bearer_core()});
    EXPECT_EQ(inexact.status, 400) << number;
    EXPECT_EQ(inexact.error_path(), "metadata.n") << number;
  }

  json::object many = valid_holder("md-" + harness::new_uuid());
  json::object metadata;
  for (int i = 0; i < 51; ++i) metadata["k" + std::to_string(i)] = "v";
  many["metadata"] = metadata;
  EXPECT_EQ(create(many).status, 400);
}

TEST(AccountHolders, WrongTypesAndUnknownFieldsAre400) {
  json::object body = valid_holder("ty-" + harness::new_uuid());
  body["external_id"] = 12;
  body["person"].as_object()["document_type"] = "XX";
  body["address"].as_object()["country"] = "col";
  body["nickname"] = "x";
  Reply reply = create(body);
  EXPECT_EQ(reply.status, 400);
  std::set<std::string> paths;
  json::value parsed = reply.json();
  for (const auto& item : parsed.at("errors").as_array()) paths.insert(std::string(item.at("path").as_string()));
  EXPECT_TRUE(paths.count("external_id"));
  EXPECT_TRUE(paths.count("person.document_type"));
  EXPECT_TRUE(paths.count("address.country"));
  EXPECT_TRUE(paths.count("nickname"));
}

TEST(AccountHolders, ExternalIdUniquePerTenant) {
  std::string external_id = "uniq-" + harness::new_uuid();
  ASSERT_EQ(create(valid_holder(external_id)).status, 201);
  Reply again = create(valid_holder(external_id));
  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(again.error_code(), "external_id_already_exists");
}

TEST(AccountHolders, GetByIdErrors) {
  Server& server = Server::shared();
  Reply malformed = server.get("/v1/ledger/account_holders/nope", {server.bearer_core()});
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(malformed.error_code(), "validation_error");
  EXPECT_EQ(malformed.error_path(), "id");
  Reply unknown = server.get("/v1/ledger/account_holders/acch_AAAAAAAAAAAAAAAAAAAAAA", {server.bearer_core()});
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.error_code(), "item_not_found");
}

TEST(AccountHolders, ListIsPaginatedNewestFirst) {
  Server server;  // own tenant data, so counts are exact
  for (int i = 0; i < 12; ++i) {
    json::object body = valid_holder("list-" + std::to_string(i));
    ASSERT_EQ(server.post("/v1/ledger/account_holders", json::serialize(body), {server.bearer_core()}).status, 201);
  }
  Reply first = server.get("/v1/ledger/account_holders", {server.bearer_core()});
  ASSERT_EQ(first.status, 200);
  json::object page = first.json().as_object();
  EXPECT_EQ(page.at("account_holders").as_array().size(), 10u);
  EXPECT_EQ(page.at("account_holders").at(0).at("external_id").as_string(), "list-11");
  EXPECT_EQ(page.at("pagination").at("page_number").as_int64(), 1);
  EXPECT_EQ(page.at("pagination").at("page_size").as_int64(), 10);
  EXPECT_EQ(page.at("pagination").at("total_items").as_int64(), 12);
  EXPECT_EQ(page.at("pagination").at("total_pages").as_int64(), 2);
  Reply second = server.get("/v1/ledger/account_holders?page_number=2", {server.bearer_core()});
  EXPECT_EQ(second.json().at("account_holders").as_array().size(), 2u);
  EXPECT_EQ(second.json().at("account_holders").at(1).at("external_id").as_string(), "list-0");
  Reply past = server.get("/v1/ledger/account_holders?page_number=9", {server.bearer_core()});
  EXPECT_EQ(past.status, 200);
  EXPECT_EQ(past.json().at("account_holders").as_array().size(), 0u);

  for (const char* bad : {"page_size=9", "page_size=501", "page_number=0", "page_number=x", "color=red"}) {
    Reply reply = server.get(std::string("/v1/ledger/account_holders?") + bad, {server.bearer_core()});
    EXPECT_EQ(reply.status, 400) << bad;
    EXPECT_EQ(reply.error_code(), "validation_error") << bad;
  }
}
