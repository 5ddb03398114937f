// Targets over HTTP (POST /api/v1/targets/resolve, GET /api/v1/targets/{id}): the Target and its
// masking, plain key inference, the synthetic directory's stability and documented keys,
// collection keys of this tenant and of another, inactive keys, validation with every problem
// listed, scopes, idempotent replays, and a target that outlives its expiry on the tenant clock.
#include <gtest/gtest.h>

#include <regex>

#include "payment_fixtures.hpp"

using harness::Reply;
using harness::Server;
using namespace payment_fixtures;
namespace json = boost::json;

namespace {

std::string resolve_body(const std::string& value, const std::string& extra = "") {
  return R"({"format":"plain_key","value":")" + value + "\"" + extra + "}";
}

Reply resolve(const Server& server, const Tenant& tenant, const std::string& body,
              const std::vector<std::string>& more_headers = {}) {
  std::vector<std::string> headers = {tenant.bearer};
  headers.insert(headers.end(), more_headers.begin(), more_headers.end());
  return server.post("/api/v1/targets/resolve", body, headers);
}

// The Target of a key that resolves (201).
json::value target_of(const Server& server, const Tenant& tenant, const std::string& value,
                      const std::string& extra = "") {
  Reply reply = resolve(server, tenant, resolve_body(value, extra));
  EXPECT_EQ(reply.status, 201) << value << " -> " << reply.body;
  return reply.status == 201 ? reply.json() : json::value();
}

void expect_not_found(const Reply& reply, const std::string& what) {
  EXPECT_EQ(reply.status, 404) << what << " -> " << reply.body;
  EXPECT_EQ(reply.error_code(), "target_not_found") << what;
  EXPECT_EQ(reply.error_path(), "value") << what;
}

// Every word shows its first character (one code point, maybe several bytes) and '*' for each
// other character.
bool masked_name(const std::string& name) {
  std::size_t i = 0;
  while (i < name.size()) {
    if (name[i] == ' ') return false;  // an empty word
    ++i;
    while (i < name.size() && (static_cast<unsigned char>(name[i]) & 0xC0) == 0x80) ++i;
    while (i < name.size() && name[i] == '*') ++i;
    if (i == name.size()) return true;
    if (name[i] != ' ') return false;
    ++i;
  }
  return false;
}

// '*' for all but the last 4 characters.
bool masked_number(const std::string& number, std::size_t length) {
  return number.size() == length &&
         number.find_first_not_of('*') == length - 4 &&
         number.substr(length - 4).find('*') == std::string::npos;
}

bool valid_nit(const std::string& nit) {
  static const int k_weights[] = {3, 7, 13, 17, 19, 23, 29, 37, 41};
  if (!std::regex_match(nit, std::regex("[0-9]{9}-[0-9]"))) return false;
  int sum = 0;
  for (int i = 0; i < 9; ++i) sum += (nit[8 - i] - '0') * k_weights[i];
  const int remainder = sum % 11;
  return nit.back() - '0' == (remainder <= 1 ? remainder : 11 - remainder);
}

TEST(Targets, AKeyResolvesToAMaskedTargetThatCanBeReadAgain) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  const std::string key = fresh_key();
  std::string lower = key;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  Reply reply = resolve(server, tenant, resolve_body(lower));
  ASSERT_EQ(reply.status, 201) << reply.body;
  const json::value target = reply.json();
  EXPECT_TRUE(std::regex_match(text(target, "id"), std::regex("bbtgt_[A-Za-z0-9_-]{22}")));
  EXPECT_TRUE(std::regex_match(text(target, "resolution_request_id"),
                               std::regex("bbtgr_[A-Za-z0-9_-]{22}")));
  EXPECT_EQ(text(target, "resolution_type"), "plain_key");
  EXPECT_EQ(text(target, "key_type"), "alphanumeric");
  EXPECT_EQ(text(target, "key_value"), key);  // normalised
  EXPECT_TRUE(valid_nit(text(target, "participant_nit"))) << reply.body;
  EXPECT_TRUE(std::regex_match(text(target, "spbvi"), std::regex("[0-9]{4}")));
  EXPECT_TRUE(std::regex_match(text(target, "payment_id"),
                               std::regex("CO\\.COM\\.CRB\\.TRXID[0-9A-Z]{19}")));
  EXPECT_TRUE(target.at("transaction_amount").is_null());
  const json::value& creditor = target.at("creditor");
  EXPECT_TRUE(masked_name(text(creditor, "full_name"))) << reply.body;
  const std::string type = text(creditor, "type");
  ASSERT_TRUE(type == "natural" || type == "legal") << type;
  // A person's CC has 10 digits; a company's NIT 9, a dash and its check digit.
  EXPECT_EQ(text(creditor, "document_type"), type == "natural" ? "CC" : "NIT");
  EXPECT_TRUE(masked_number(text(creditor, "document_number"), type == "natural" ? 10 : 11))
      << reply.body;
  const json::value& account = target.at("creditor_account");
  EXPECT_EQ(text(account, "currency_code"), "COP");
  EXPECT_TRUE(masked_number(text(account, "number"), 11)) << reply.body;
  EXPECT_FALSE(text(account, "type").empty());
  // Valid for 15 minutes on the tenant clock.
  EXPECT_EQ(micros_of(text(target, "expires_at")) - micros_of(text(target, "inserted_at")),
            15LL * 60 * 1'000'000);

  Reply again = server.get("/api/v1/targets/" + text(target, "id"), {tenant.bearer});
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(again.body, reply.body);
}

TEST(Targets, TheSameKeyAlwaysFindsTheSameCreditorUnderNewIds) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  Tenant other = other_tenant(server, "targets-same-key");
  const json::value first = target_of(server, tenant, "3105550123");
  const json::value second = target_of(server, other, "+573105550123");
  for (const char* field : {"key_type", "key_value", "participant_nit", "spbvi"}) {
    EXPECT_EQ(text(first, field), text(second, field)) << field;
  }
  EXPECT_EQ(first.at("creditor"), second.at("creditor"));
  EXPECT_EQ(first.at("creditor_account"), second.at("creditor_account"));
  EXPECT_NE(text(first, "id"), text(second, "id"));
  EXPECT_NE(text(first, "resolution_request_id"), text(second, "resolution_request_id"));
  EXPECT_NE(text(first, "payment_id"), text(second, "payment_id"));
}

TEST(Targets, PlainKeysAreTypedByTheirShape) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  struct Case {
    std::string value;
    std::string key_type;
    std::string key_value;
  };
  const std::vector<Case> cases = {
      {"3001234567", "cellphone", "3001234567"},
      {"+573001234567", "cellphone", "3001234567"},
      {"Ana.Perez@Example.COM", "email", "ana.perez@example.com"},
      {"@tienda7", "alphanumeric", "@TIENDA7"},
      {"1020304050", "identification", "1020304050"},
      {"12345", "identification", "12345"},
      {"1234", "merchant_code", "1234"},
      {"1234567890123456", "merchant_code", "1234567890123456"},
  };
  for (const Case& c : cases) {
    const json::value target = target_of(server, tenant, c.value);
    if (!target.is_object()) continue;
    EXPECT_EQ(text(target, "key_type"), c.key_type) << c.value;
    EXPECT_EQ(text(target, "key_value"), c.key_value) << c.value;
  }
  // An identification is its owner's document: shown masked, of the same length.
  const json::value citizen = target_of(server, tenant, "1020304050");
  EXPECT_EQ(text(citizen.at("creditor"), "document_type"), "CC");
  EXPECT_EQ(text(citizen.at("creditor"), "document_number"), "******4050");
}

TEST(Targets, TheTransactionAmountIsKept) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  const json::value target = target_of(server, tenant, fresh_key(), ",\"amount\":" + money(250'000));
  EXPECT_EQ(amount_of(target, "transaction_amount"), 250'000);
  EXPECT_EQ(text(target.at("transaction_amount"), "currency"), "COP");
  const json::value without = target_of(server, tenant, fresh_key(), R"(,"amount":null)");
  EXPECT_TRUE(without.at("transaction_amount").is_null());
}

TEST(Targets, DocumentedSandboxKeysNeverResolveOrResolveToFailLater) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  for (const std::string value :
       {"3001234404", "@NUNCA404", "pago404@example.com", "1020304404", "1234567890123404"}) {
    expect_not_found(resolve(server, tenant, resolve_body(value)), value);
  }
  // The failing keys resolve like any other: their transfers fail later.
  for (const std::string value :
       {"3001234991", "@RIESGO992", "lento993@example.com", "1020304994"}) {
    target_of(server, tenant, value);
  }
  // Not a key of any type.
  for (const std::string value : {"tienda", "", "123", "ana@example", "+574001234567"}) {
    expect_not_found(resolve(server, tenant, resolve_body(value)), value);
  }
}

TEST(Targets, CollectionKeysResolveToTheirBeneficiaryInAnyTenantWhileActive) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  Tenant other = other_tenant(server, "targets-creditor");
  // Ends in 404: a collection's key is not one of the documented sandbox keys.
  CollectionSpec spec;
  spec.key = fresh_key() + "404";
  json::value theirs = create_collection(server, other, spec);
  json::value mine = create_collection(server, tenant);
  for (const auto& [collection, tenant_name] :
       {std::pair{theirs, std::string("targets-creditor")},
        std::pair{mine, std::string()}}) {
    const json::value target = target_of(server, tenant, key_of(collection));
    if (!target.is_object()) continue;
    EXPECT_EQ(text(target, "key_value"), key_of(collection));
    // This Tesoro's own participant code, and the tenant account's beneficiary (a company, by
    // `tesoro init` and `tenant create`: NIT 900123456).
    EXPECT_TRUE(text(target, "participant_nit").starts_with("900500000-"));
    EXPECT_TRUE(valid_nit(text(target, "participant_nit")));
    EXPECT_EQ(text(target, "spbvi"), "1000");
    const json::value& creditor = target.at("creditor");
    EXPECT_EQ(text(creditor, "document_type"), "NIT");
    EXPECT_EQ(text(creditor, "document_number"), "*****3456");
    EXPECT_EQ(text(creditor, "type"), "legal");
    if (!tenant_name.empty()) {
      EXPECT_EQ(text(creditor, "full_name"), "t" + std::string(tenant_name.size() - 1, '*'));
    }
    EXPECT_TRUE(masked_name(text(creditor, "full_name")));
    EXPECT_EQ(text(target.at("creditor_account"), "type"), "savings_account");
  }
  // Discarded: its key is inactive and resolves no more.
  ASSERT_EQ(server.send({"DELETE", "/api/v1/collections/" + text(theirs, "id"), "",
                         {other.bearer}})
                .status,
            204);
  expect_not_found(resolve(server, tenant, resolve_body(key_of(theirs))), "discarded");
}

TEST(Targets, TheRequestIsValidatedWithEveryProblemListed) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  Reply empty = resolve(server, tenant, "{}");
  EXPECT_EQ(empty.status, 422) << empty.body;
  EXPECT_EQ(empty.error_code(), "missing_field");
  EXPECT_NE(empty.body.find("\"path\":\"format\""), std::string::npos);
  EXPECT_NE(empty.body.find("\"path\":\"value\""), std::string::npos);
  struct Case {
    std::string body;
    std::string path;
  };
  const std::vector<Case> cases = {
      {R"({"format":"qr_code","value":"@TIENDA"})", "format"},
      {R"({"format":"plain_key","value":3001234567})", "value"},
      {resolve_body("@TIENDA", ",\"amount\":" + money(0)), "amount.amount"},
      {resolve_body("@TIENDA", ",\"amount\":" + money(-5)), "amount.amount"},
      {resolve_body("@TIENDA", ",\"amount\":" + money(10, "USD")), "amount.currency"},
      {resolve_body("@TIENDA", R"(,"amount":{"currency":"COP"})"), "amount.amount"},
      {resolve_body("@TIENDA", R"(,"amount":1000)"), "amount"},
      {resolve_body("@TIENDA", R"(,"query":{})"), "query"},
  };
  for (const Case& c : cases) {
    Reply reply = resolve(server, tenant, c.body);
    if (c.body.find(R"("amount":{"currency")") != std::string::npos) {
      EXPECT_EQ(reply.status, 422) << c.body << " -> " << reply.body;
      EXPECT_EQ(reply.error_code(), "missing_field") << c.body;
    } else {
      EXPECT_EQ(reply.status, 400) << c.body << " -> " << reply.body;
      EXPECT_EQ(reply.error_code(), "validation_error") << c.body;
    }
    EXPECT_EQ(reply.error_path(), c.path) << c.body;
  }
  // Problems of both kinds: 400, every one listed.
  Reply both = resolve(server, tenant, R"({"format":"qr_code","tip":1})");
  EXPECT_EQ(both.status, 400) << both.body;
  for (const char* path : {"format", "value", "tip"}) {
    EXPECT_NE(both.body.find("\"path\":\"" + std::string(path) + "\""), std::string::npos) << path;
  }
  Reply not_json = resolve(server, tenant, "format=plain_key");
  EXPECT_EQ(not_json.status, 400);
  EXPECT_EQ(not_json.error_code(), "validation_error");
}

TEST(Targets, ReadingATargetAnswersOnlyItsOwnTenant) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  Tenant other = other_tenant(server, "targets-reader");
  const json::value target = target_of(server, tenant, fresh_key());
  Reply theirs = server.get("/api/v1/targets/" + text(target, "id"), {other.bearer});
  EXPECT_EQ(theirs.status, 404) << theirs.body;
  EXPECT_EQ(theirs.error_code(), "target_not_found");
  Reply unknown = server.get("/api/v1/targets/bbtgt_AAAAAAAAAAAAAAAAAAAAAA", {tenant.bearer});
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.error_code(), "target_not_found");
  EXPECT_EQ(unknown.error_path(), "id");
  for (const std::string id : {"bbtgr_AAAAAAAAAAAAAAAAAAAAAA", "bbtgt_short", "nonsense"}) {
    Reply malformed = server.get("/api/v1/targets/" + id, {tenant.bearer});
    EXPECT_EQ(malformed.status, 400) << id << " -> " << malformed.body;
    EXPECT_EQ(malformed.error_code(), "validation_error");
    EXPECT_EQ(malformed.error_path(), "id");
  }
  EXPECT_EQ(server.get("/api/v1/targets/resolve", {tenant.bearer}).status, 405);
}

TEST(Targets, ScopesGuardResolutionAndReading) {
  Server& server = Server::shared();
  Tenant full = init_tenant(server, "target_resolutions");
  const json::value target = target_of(server, full, fresh_key());
  const std::string path = "/api/v1/targets/" + text(target, "id");
  EXPECT_EQ(server.get(path, {full.bearer}).status, 200);
  Tenant reader = init_tenant(server, "target_resolutions:readonly");
  Reply refused = resolve(server, reader, resolve_body(fresh_key()));
  EXPECT_EQ(refused.status, 403) << refused.body;
  EXPECT_EQ(refused.error_code(), "not_authorized");
  EXPECT_EQ(server.get(path, {reader.bearer}).status, 200);
  Tenant collections_only = init_tenant(server, "collections outgoing_transfers");
  EXPECT_EQ(resolve(server, collections_only, resolve_body(fresh_key())).status, 403);
  EXPECT_EQ(server.get(path, {collections_only.bearer}).status, 403);
  EXPECT_EQ(server.post("/api/v1/targets/resolve", resolve_body(fresh_key())).status, 401);
}

TEST(Targets, AReplayWithTheSameIdempotencyKeyRecordsOneTarget) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  const std::string key = "x-idempotency-key: " + harness::new_uuid();
  const std::string body = resolve_body(fresh_key());
  Reply first = resolve(server, tenant, body, {key});
  ASSERT_EQ(first.status, 201) << first.body;
  Reply again = resolve(server, tenant, body, {key});
  EXPECT_EQ(again.status, 201);
  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(again.header("idempotent-replayed"), "true");
  EXPECT_EQ(query_column(server, "SELECT COUNT(*) FROM targets WHERE value = '" +
                                     body.substr(body.find('@'), 13) + "'"),
            std::vector<std::string>{"1"});
  // A key not found is stored too: the replay answers the same 404.
  const std::string missing_key = "x-idempotency-key: " + harness::new_uuid();
  Reply not_found = resolve(server, tenant, resolve_body("@NUNCA404"), {missing_key});
  Reply replayed = resolve(server, tenant, resolve_body("@NUNCA404"), {missing_key});
  EXPECT_EQ(replayed.status, 404);
  EXPECT_EQ(replayed.body, not_found.body);
}

TEST(Targets, ATargetIsStillReadableAfterItExpiresOnTheTenantClock) {
  Server server;  // a clock of its own to advance
  Tenant tenant = init_tenant(server);
  const json::value target = target_of(server, tenant, fresh_key());
  Reply advanced =
      server.post("/api/v1/sandbox/clock/advance", R"({"seconds":901})", {tenant.bearer});
  ASSERT_EQ(advanced.status, 200) << advanced.body;
  EXPECT_GT(micros_of(text(advanced.json(), "now")), micros_of(text(target, "expires_at")));
  Reply read = server.get("/api/v1/targets/" + text(target, "id"), {tenant.bearer});
  EXPECT_EQ(read.status, 200) << read.body;
  EXPECT_EQ(read.json(), target);
  // A new resolution is valid for 15 minutes from the advanced clock.
  const json::value fresh = target_of(server, tenant, fresh_key());
  EXPECT_GE(micros_of(text(fresh, "inserted_at")), micros_of(text(advanced.json(), "now")));
}

TEST(Targets, MutatedBodiesNeverEarnA5xx) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  std::mt19937 random(20261125);
  const std::string valid = resolve_body("@TIENDA123", ",\"amount\":" + money(1'000));
  for (int i = 0; i < 120; ++i) {
    std::string body = harness::mutate_body(valid, random);
    Reply reply = resolve(server, tenant, body);
    ASSERT_GT(reply.status, 0) << body;
    EXPECT_LT(reply.status, 500) << body << " -> " << reply.body;
  }
}

}  // namespace
