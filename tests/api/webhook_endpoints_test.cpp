// Webhook endpoints on both surfaces (/v1/webhook_endpoints with an API key,
// /api/v1/webhook_endpoints with an access token): create, list, show, PATCH, DELETE,
// rotate_secret; the secret shown once; URL rules (sandbox, production, allow-list); event type
// validation; the per-tenant limit; tenants isolated; scopes.
//
// Endpoints that are enabled point at a closed port of 127.0.0.1, and endpoints naming public
// hosts are created disabled: no test may reach past this machine, whatever delivers events.
#include <gtest/gtest.h>

#include <iterator>
#include <regex>
#include <set>

#include "harness.hpp"

using harness::Reply;
using harness::Server;
using harness::text;
namespace json = boost::json;

namespace {

const char* k_local_url = "http://127.0.0.1:9/tesoro-hooks";  // the discard port: nobody listens

// A tenant's callers of one surface: the collection path and the Authorization header.
struct Caller {
  std::string base;
  std::string bearer;
};

struct Tenant {
  std::string id;
  Caller core;
  Caller participant;
};

Caller participant_caller(const Server& server, const std::string& client_id,
                          const std::string& client_secret, const std::string& scope = "") {
  json::object body{{"grant_type", "client_credentials"},
                    {"client_id", client_id},
                    {"client_secret", client_secret}};
  if (!scope.empty()) body["scope"] = scope;
  Reply token = server.post("/api/v1/oauth/token", json::serialize(body));
  EXPECT_EQ(token.status, 200) << token.body;
  return {"/api/v1/webhook_endpoints",
          "Authorization: Bearer " + text(token.json(), "access_token")};
}

// A new tenant of the server (its own endpoints, its own limit), with both surfaces' callers.
Tenant new_tenant(const Server& server, const std::string& environment = "sandbox") {
  int code = 0;
  json::value created = json::parse(server.command(
      {"tenant", "create", "--name", "hooks", "--environment", environment, "--json"}, &code));
  EXPECT_EQ(code, 0);
  Tenant tenant;
  tenant.id = text(created, "tenant_id");
  tenant.core = {"/v1/webhook_endpoints", "Authorization: Bearer " + text(created, "api_key")};
  tenant.participant =
      participant_caller(server, text(created, "client_id"), text(created, "client_secret"));
  return tenant;
}

Reply call(const Server& server, const Caller& caller, const std::string& method,
           const std::string& suffix = "", const std::string& body = "",
           std::vector<std::string> headers = {}) {
  headers.push_back(caller.bearer);
  return server.send({method, caller.base + suffix, body, headers});
}

Reply create(const Server& server, const Caller& caller, const json::object& body) {
  return call(server, caller, "POST", "", json::serialize(body));
}

json::object local_endpoint() { return json::object{{"url", k_local_url}}; }

std::string id_of(const Reply& reply) { return text(reply.json(), "id"); }

// whsec_ followed by the base64 of 32 bytes (44 characters, one `=` of padding).
bool is_secret(const std::string& secret) {
  static const std::regex k_shape("^whsec_[A-Za-z0-9+/]{43}=$");
  return std::regex_match(secret, k_shape);
}

void expect_invalid(const Reply& reply, const std::string& path, const std::string& what) {
  EXPECT_EQ(reply.status, 400) << what << ": " << reply.body;
  EXPECT_EQ(reply.error_code(), "validation_error") << what;
  EXPECT_TRUE(reply.error_paths().count(path)) << what << " wants " << path << ": " << reply.body;
}

// The message of the first error item.
std::string message_of(const Reply& reply) {
  return std::string(reply.json().at("errors").at(0).at("message").as_string());
}

Tenant& shared_tenant() {
  static Tenant tenant = new_tenant(Server::shared());
  return tenant;
}

class WebhookEndpoints : public ::testing::TestWithParam<std::string> {
 protected:
  Server& server = Server::shared();
  // The surface under test, of a fresh tenant: its endpoint count starts at zero.
  Tenant tenant = new_tenant(server);
  Caller caller() const { return GetParam() == "core" ? tenant.core : tenant.participant; }
};

}  // namespace

TEST_P(WebhookEndpoints, CreateAnswersTheEndpointWithItsSecretOnce) {
  json::object body{{"url", k_local_url},
                    {"description", "orders service"},
                    {"event_types", json::array{"collection.paid", "payout.*"}}};
  Reply created = create(server, caller(), body);
  ASSERT_EQ(created.status, 201) << created.body;
  json::object endpoint = created.json().as_object();
  std::string id = text(endpoint, "id");
  EXPECT_TRUE(id.starts_with("whe_")) << id;
  EXPECT_EQ(id.size(), 26u);
  EXPECT_EQ(endpoint.at("url"), k_local_url);
  EXPECT_EQ(endpoint.at("description"), "orders service");
  EXPECT_EQ(endpoint.at("event_types"), (json::array{"collection.paid", "payout.*"}));
  EXPECT_EQ(endpoint.at("enabled"), true);
  EXPECT_TRUE(endpoint.at("disabled_reason").is_null());
  EXPECT_EQ(endpoint.at("inserted_at"), endpoint.at("updated_at"));
  std::string secret = text(endpoint, "secret");
  EXPECT_TRUE(is_secret(secret)) << secret;

  Reply shown = call(server, caller(), "GET", "/" + id);
  ASSERT_EQ(shown.status, 200) << shown.body;
  EXPECT_FALSE(shown.json().as_object().contains("secret"));
  json::object without_secret = endpoint;
  without_secret.erase("secret");
  EXPECT_EQ(shown.json(), json::value(without_secret));
  EXPECT_EQ(shown.body.find(secret.substr(6)), std::string::npos);

  Reply listed = call(server, caller(), "GET");
  ASSERT_EQ(listed.status, 200) << listed.body;
  EXPECT_EQ(listed.json().at("webhook_endpoints").as_array().size(), 1u);
  EXPECT_EQ(listed.json().at("webhook_endpoints").at(0), json::value(without_secret));
  EXPECT_EQ(listed.json().at("pagination").at("total_items").as_int64(), 1);
  EXPECT_EQ(listed.body.find(secret.substr(6)), std::string::npos);
  // Secrets never reach the log.
  EXPECT_EQ(server.log_text().find(secret.substr(6)), std::string::npos);
}

TEST_P(WebhookEndpoints, OptionalFieldsHaveDefaults) {
  Reply created = create(server, caller(), local_endpoint());
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_TRUE(created.json().at("description").is_null());
  EXPECT_EQ(created.json().at("event_types"), json::array());
  EXPECT_EQ(created.json().at("enabled"), true);
  json::object disabled{
      {"url", "https://hooks.example.com/x"}, {"enabled", false}, {"description", nullptr}};
  Reply off = create(server, caller(), disabled);
  ASSERT_EQ(off.status, 201) << off.body;
  EXPECT_EQ(off.json().at("enabled"), false);
  EXPECT_EQ(off.json().at("disabled_reason"), "disabled");
  EXPECT_TRUE(off.json().at("description").is_null());
}

TEST_P(WebhookEndpoints, ListIsPaginatedNewestFirst) {
  std::vector<std::string> ids;
  for (int i = 0; i < 12; ++i) {
    Reply created = create(server, caller(), local_endpoint());
    ASSERT_EQ(created.status, 201) << created.body;
    ids.push_back(id_of(created));
  }
  Reply first = call(server, caller(), "GET", "?page_size=10");
  ASSERT_EQ(first.status, 200) << first.body;
  const json::array page = first.json().at("webhook_endpoints").as_array();
  ASSERT_EQ(page.size(), 10u);
  EXPECT_EQ(text(page[0], "id"), ids.back());
  EXPECT_EQ(first.json().at("pagination").at("total_items").as_int64(), 12);
  EXPECT_EQ(first.json().at("pagination").at("total_pages").as_int64(), 2);
  Reply second = call(server, caller(), "GET", "?page_number=2&page_size=10");
  ASSERT_EQ(second.json().at("webhook_endpoints").as_array().size(), 2u);
  EXPECT_EQ(text(second.json().at("webhook_endpoints").at(1), "id"), ids.front());
  expect_invalid(call(server, caller(), "GET", "?page_size=9"), "page_size", "small page");
  expect_invalid(call(server, caller(), "GET", "?enabled=true"), "enabled", "unknown filter");
}

TEST_P(WebhookEndpoints, PatchChangesOnlyTheFieldsSent) {
  json::object body{
      {"url", k_local_url}, {"description", "first"}, {"event_types", json::array{"collection.*"}}};
  Reply created = create(server, caller(), body);
  ASSERT_EQ(created.status, 201) << created.body;
  std::string id = id_of(created);
  // Later on the tenant's clock: updated_at follows it.
  Reply advanced = server.send(
      {"POST", "/v1/sandbox/clock/advance", R"({"seconds":120})", {tenant.core.bearer}});
  ASSERT_EQ(advanced.status, 200) << advanced.body;

  Reply renamed = call(server, caller(), "PATCH", "/" + id, R"({"description":"second"})");
  ASSERT_EQ(renamed.status, 200) << renamed.body;
  EXPECT_EQ(renamed.json().at("description"), "second");
  EXPECT_EQ(renamed.json().at("url"), k_local_url);
  EXPECT_EQ(renamed.json().at("event_types"), json::array{"collection.*"});
  EXPECT_NE(renamed.json().at("updated_at"), created.json().at("updated_at"));
  EXPECT_EQ(renamed.json().at("inserted_at"), created.json().at("inserted_at"));
  EXPECT_FALSE(renamed.json().as_object().contains("secret"));

  json::object changes{{"url", "http://localhost:9/other"},
                       {"description", nullptr},
                       {"event_types", json::array{"card.blocked", "card_transaction.*"}}};
  Reply changed = call(server, caller(), "PATCH", "/" + id, json::serialize(changes));
  ASSERT_EQ(changed.status, 200) << changed.body;
  EXPECT_EQ(changed.json().at("url"), "http://localhost:9/other");
  EXPECT_TRUE(changed.json().at("description").is_null());
  EXPECT_EQ(changed.json().at("event_types"), (json::array{"card.blocked", "card_transaction.*"}));

  Reply off = call(server, caller(), "PATCH", "/" + id, R"({"enabled":false})");
  ASSERT_EQ(off.status, 200) << off.body;
  EXPECT_EQ(off.json().at("enabled"), false);
  EXPECT_EQ(off.json().at("disabled_reason"), "disabled");
  Reply on = call(server, caller(), "PATCH", "/" + id, R"({"enabled":true,"event_types":[]})");
  ASSERT_EQ(on.status, 200) << on.body;
  EXPECT_EQ(on.json().at("enabled"), true);
  EXPECT_TRUE(on.json().at("disabled_reason").is_null());
  EXPECT_EQ(on.json().at("event_types"), json::array());
  EXPECT_EQ(call(server, caller(), "GET", "/" + id).json(), on.json());
}

TEST_P(WebhookEndpoints, PatchValidatesLikeCreateAndChangesNothingWhenRefused) {
  Reply created = create(server, caller(), local_endpoint());
  ASSERT_EQ(created.status, 201) << created.body;
  std::string id = id_of(created);
  auto patch = [&](const std::string& body) {
    return call(server, caller(), "PATCH", "/" + id, body);
  };
  expect_invalid(patch(R"({"url":null})"), "url", "null url");
  expect_invalid(patch(R"({"url":"ftp://example.com/"})"), "url", "ftp");
  expect_invalid(patch(R"({"url":"https://10.0.0.1/"})"), "url", "private address");
  expect_invalid(patch(R"({"event_types":null})"), "event_types", "null types");
  expect_invalid(patch(R"({"event_types":["collection.paid","nope"]})"), "event_types.1",
                 "unknown type");
  expect_invalid(patch(R"({"enabled":"yes"})"), "enabled", "not a boolean");
  expect_invalid(patch(R"({"enabled":null})"), "enabled", "null enabled");
  expect_invalid(patch(R"({"secret":"whsec_x"})"), "secret", "secret is not writable");
  expect_invalid(patch(R"({"description":"ok","colour":"red"})"), "colour", "unknown field");
  EXPECT_EQ(patch("[]").error_code(), "validation_error");
  Reply both = patch(R"({"url":"nope","event_types":["nope"]})");
  EXPECT_EQ(both.error_paths(), (std::set<std::string>{"url", "event_types.0"})) << both.body;
  json::object shown = call(server, caller(), "GET", "/" + id).json().as_object();
  json::object original = created.json().as_object();
  original.erase("secret");
  EXPECT_EQ(shown, original);
}

TEST_P(WebhookEndpoints, DeleteAnswers204AndTheEndpointIsGone) {
  Reply created = create(server, caller(), local_endpoint());
  ASSERT_EQ(created.status, 201) << created.body;
  std::string id = id_of(created);
  Reply deleted = call(server, caller(), "DELETE", "/" + id);
  EXPECT_EQ(deleted.status, 204) << deleted.body;
  EXPECT_TRUE(deleted.body.empty());
  EXPECT_EQ(call(server, caller(), "GET", "/" + id).status, 404);
  EXPECT_EQ(call(server, caller(), "DELETE", "/" + id).error_code(), "item_not_found");
  EXPECT_EQ(call(server, caller(), "GET").json().at("pagination").at("total_items").as_int64(), 0);
}

TEST_P(WebhookEndpoints, RotateSecretAnswersANewSecretOnce) {
  Reply created = create(server, caller(), local_endpoint());
  ASSERT_EQ(created.status, 201) << created.body;
  std::string id = id_of(created);
  std::string original = text(created.json(), "secret");
  Reply rotated = call(server, caller(), "POST", "/" + id + "/rotate_secret");
  ASSERT_EQ(rotated.status, 200) << rotated.body;
  std::string secret = text(rotated.json(), "secret");
  EXPECT_TRUE(is_secret(secret)) << secret;
  EXPECT_NE(secret, original);
  EXPECT_EQ(text(rotated.json(), "id"), id);
  EXPECT_EQ(rotated.json().at("url"), k_local_url);
  Reply again = call(server, caller(), "POST", "/" + id + "/rotate_secret", "{}");
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_NE(text(again.json(), "secret"), secret);
  Reply shown = call(server, caller(), "GET", "/" + id);
  EXPECT_FALSE(shown.json().as_object().contains("secret"));
  EXPECT_EQ(server.log_text().find(secret.substr(6)), std::string::npos);
  expect_invalid(call(server, caller(), "POST", "/" + id + "/rotate_secret", R"({"x":1})"), "x",
                 "rotate takes no fields");
  EXPECT_EQ(call(server, caller(), "POST", "/whe_0000000000000000000000/rotate_secret").status,
            404);
}

TEST_P(WebhookEndpoints, CreateRefusesBadFieldsWithTheirPaths) {
  auto refused = [&](json::object body, const std::string& path, const std::string& what) {
    expect_invalid(create(server, caller(), body), path, what);
  };
  Reply missing = create(server, caller(), json::object{});
  EXPECT_EQ(missing.status, 422) << missing.body;
  EXPECT_EQ(missing.error_code(), "missing_field");
  EXPECT_EQ(missing.error_path(), "url");
  EXPECT_EQ(create(server, caller(), {{"url", nullptr}}).error_code(), "missing_field");
  refused({{"url", 42}}, "url", "not a string");
  refused({{"url", "not a url"}}, "url", "not a URL");
  refused({{"url", "hooks.example.com/x"}}, "url", "no scheme");
  refused({{"url", "ftp://example.com/x"}}, "url", "ftp scheme");
  refused({{"url", "https://user:pass@example.com/"}}, "url", "user info");
  refused({{"url", "https://example.com/#frag"}}, "url", "fragment");
  // An encoded control character would fail every delivery: refused at registration.
  refused({{"url", std::string(k_local_url) + "%00x"}}, "url", "encoded NUL");
  refused({{"url", "https://example.com/a?b=%0d%0aX-Injected:%201"}}, "url", "encoded CR LF");
  refused({{"url", "https://example.com/%7F"}}, "url", "encoded DEL");
  refused({{"url", "https://10.0.0.1/"}}, "url", "private address");
  refused({{"url", "https://192.168.1.20:8443/"}}, "url", "private address");
  refused({{"url", "http://169.254.169.254/latest/meta-data"}}, "url", "link-local address");
  refused({{"url", "http://[::ffff:10.0.0.1]/"}}, "url", "mapped private address");
  refused({{"url", "https://example.com/" + std::string(2048, 'a')}}, "url", "too long");
  refused({{"url", k_local_url}, {"event_types", json::array{"collection.paid", "nope.nope"}}},
          "event_types.1", "unknown event type");
  refused({{"url", k_local_url}, {"event_types", json::array{"payout.*", "payout.*"}}},
          "event_types.1", "twice");
  refused({{"url", k_local_url}, {"event_types", json::array{"*"}}}, "event_types.0", "star");
  refused({{"url", k_local_url}, {"event_types", json::array{7}}}, "event_types.0", "a number");
  refused({{"url", k_local_url}, {"event_types", "collection.paid"}}, "event_types", "a string");
  refused({{"url", k_local_url}, {"enabled", "true"}}, "enabled", "a string");
  refused({{"url", k_local_url}, {"description", std::string(501, 'd')}}, "description",
          "long description");
  refused({{"url", k_local_url}, {"secret", "whsec_mine"}}, "secret", "own secret");
  json::array too_many;
  for (int i = 0; i < 101; ++i) too_many.emplace_back("collection.paid");
  refused({{"url", k_local_url}, {"event_types", too_many}}, "event_types", "too many types");
  Reply several =
      create(server, caller(), {{"url", "ftp://x.example/"}, {"event_types", json::array{"x.y"}}});
  EXPECT_EQ(several.error_paths(), (std::set<std::string>{"url", "event_types.0"})) << several.body;
  EXPECT_NE(message_of(create(server, caller(), {{"url", "https://10.0.0.1/"}})).find("private"),
            std::string::npos);
  // Nothing was created.
  EXPECT_EQ(call(server, caller(), "GET").json().at("pagination").at("total_items").as_int64(), 0);
}

TEST_P(WebhookEndpoints, SandboxAcceptsHttpAndLoopback) {
  for (const char* url : {"http://127.0.0.1:9/a", "http://localhost:9/b", "http://[::1]:9/c",
                          "https://127.0.0.1:9/d"}) {
    Reply created = create(server, caller(), {{"url", url}});
    EXPECT_EQ(created.status, 201) << url << ": " << created.body;
  }
}

TEST_P(WebhookEndpoints, ATenantHasAtMostTwentyEndpoints) {
  std::string last;
  for (int i = 0; i < 20; ++i) {
    Reply created = create(server, caller(), local_endpoint());
    ASSERT_EQ(created.status, 201) << i << ": " << created.body;
    last = id_of(created);
  }
  Reply refused = create(server, caller(), local_endpoint());
  EXPECT_EQ(refused.status, 422) << refused.body;
  EXPECT_EQ(refused.error_code(), "webhook_endpoint_limit_reached");
  EXPECT_NE(message_of(refused).find("20"), std::string::npos);
  // Another tenant is not affected; a deletion makes room.
  EXPECT_EQ(create(server, shared_tenant().core, local_endpoint()).status, 201);
  EXPECT_EQ(call(server, caller(), "DELETE", "/" + last).status, 204);
  EXPECT_EQ(create(server, caller(), local_endpoint()).status, 201);
}

TEST_P(WebhookEndpoints, UnknownAndOtherTenantsEndpointsAre404) {
  Reply theirs = create(server, shared_tenant().core, local_endpoint());
  ASSERT_EQ(theirs.status, 201) << theirs.body;
  for (const std::string& id : {id_of(theirs), std::string("whe_0000000000000000000000")}) {
    for (auto [method, suffix, body] :
         {std::tuple{"GET", "", ""}, std::tuple{"PATCH", "", R"({"description":"x"})"},
          std::tuple{"DELETE", "", ""}, std::tuple{"POST", "/rotate_secret", ""}}) {
      Reply reply = call(server, caller(), method, "/" + id + suffix, body);
      EXPECT_EQ(reply.status, 404) << method << " " << id << ": " << reply.body;
      EXPECT_EQ(reply.error_code(), "item_not_found") << method;
    }
  }
  // Their endpoint is untouched, and absent from this tenant's list.
  EXPECT_TRUE(call(server, shared_tenant().core, "GET", "/" + id_of(theirs))
                  .json()
                  .at("description")
                  .is_null());
  EXPECT_EQ(call(server, caller(), "GET").json().at("pagination").at("total_items").as_int64(), 0);
  // Not an endpoint id at all: 400 at `id`.
  expect_invalid(call(server, caller(), "GET", "/car_0000000000000000000000"), "id",
                 "other prefix");
  expect_invalid(call(server, caller(), "DELETE", "/nope"), "id", "no id");
}

TEST_P(WebhookEndpoints, AnIdempotentCreateReplaysTheSameSecret) {
  std::string key = "x-idempotency-key: " + harness::new_uuid();
  Reply first = call(server, caller(), "POST", "", json::serialize(local_endpoint()), {key});
  ASSERT_EQ(first.status, 201) << first.body;
  Reply replay = call(server, caller(), "POST", "", json::serialize(local_endpoint()), {key});
  EXPECT_EQ(replay.status, 201);
  EXPECT_EQ(replay.body, first.body);
  EXPECT_EQ(replay.header("idempotent-replayed"), "true");
  EXPECT_EQ(call(server, caller(), "GET").json().at("pagination").at("total_items").as_int64(), 1);
  Reply other = call(server, caller(), "POST", "", R"({"url":"http://localhost:9/"})", {key});
  EXPECT_EQ(other.status, 409);
  EXPECT_EQ(other.error_code(), "idempotency_key_reused");
}

INSTANTIATE_TEST_SUITE_P(Surfaces, WebhookEndpoints, ::testing::Values("core", "participant"),
                         [](const auto& info) { return info.param; });

TEST(WebhookEndpointsBothSurfaces, OneTenantSeesTheSameEndpointsOnEach) {
  Server& server = Server::shared();
  Tenant tenant = new_tenant(server);
  Reply created = create(server, tenant.core, local_endpoint());
  ASSERT_EQ(created.status, 201) << created.body;
  std::string id = id_of(created);
  Reply shown = call(server, tenant.participant, "GET", "/" + id);
  ASSERT_EQ(shown.status, 200) << shown.body;
  EXPECT_EQ(text(shown.json(), "id"), id);
  Reply changed = call(server, tenant.participant, "PATCH", "/" + id, R"({"description":"p"})");
  EXPECT_EQ(changed.status, 200);
  EXPECT_EQ(call(server, tenant.core, "GET", "/" + id).json().at("description"), "p");
  EXPECT_EQ(call(server, tenant.participant, "DELETE", "/" + id).status, 204);
  EXPECT_EQ(call(server, tenant.core, "GET", "/" + id).status, 404);
}

TEST(WebhookEndpointsScopes, CoreKeysNeedTheWebhooksGroup) {
  Server& server = Server::shared();
  // The init key holds every core group at admin, webhooks included.
  Caller init{"/v1/webhook_endpoints", server.bearer_core()};
  Reply created = create(server, init, local_endpoint());
  ASSERT_EQ(created.status, 201) << created.body;
  std::string id = id_of(created);
  std::string tenant(server.credentials().at("tenant_id").as_string());
  auto key = [&](const std::string& scopes) {
    json::value made = json::parse(
        server.command({"keys", "create", "--tenant", tenant, "--scopes", scopes, "--json"}));
    return Caller{"/v1/webhook_endpoints", "Authorization: Bearer " + text(made, "api_key")};
  };
  Caller other_groups = key("ledger:admin,cards:admin,spending_controls:admin,payouts:admin");
  for (auto [method, suffix] : {std::pair{"GET", ""}, std::pair{"POST", ""}}) {
    Reply refused = call(server, other_groups, method, suffix, "{}");
    EXPECT_EQ(refused.status, 403) << method;
    EXPECT_EQ(refused.error_code(), "not_authorized");
  }
  Caller reader = key("webhooks:read");
  EXPECT_EQ(call(server, reader, "GET").status, 200);
  EXPECT_EQ(call(server, reader, "GET", "/" + id).status, 200);
  Reply refused = create(server, reader, local_endpoint());
  EXPECT_EQ(refused.status, 403);
  EXPECT_NE(message_of(refused).find("webhooks:write"), std::string::npos) << refused.body;
  EXPECT_EQ(call(server, reader, "PATCH", "/" + id, "{}").status, 403);
  EXPECT_EQ(call(server, reader, "POST", "/" + id + "/rotate_secret").status, 403);
  Caller writer = key("webhooks:write");
  EXPECT_EQ(call(server, writer, "POST", "/" + id + "/rotate_secret").status, 200);
  Reply not_admin = call(server, writer, "DELETE", "/" + id);
  EXPECT_EQ(not_admin.status, 403);
  EXPECT_NE(message_of(not_admin).find("webhooks:admin"), std::string::npos);
  EXPECT_EQ(call(server, key("webhooks:admin"), "DELETE", "/" + id).status, 204);
  // An access token is not an API key, and the other way round.
  Caller token_on_core{"/v1/webhook_endpoints", "Authorization: Bearer " + server.access_token()};
  EXPECT_EQ(call(server, token_on_core, "GET").status, 401);
  Caller key_on_participant{"/api/v1/webhook_endpoints", server.bearer_core()};
  EXPECT_EQ(call(server, key_on_participant, "GET").status, 401);
}

TEST(WebhookEndpointsScopes, AccessTokensNeedTheWebhooksScope) {
  Server& server = Server::shared();
  const json::object& init = server.credentials();
  Caller narrow = participant_caller(server, text(init, "client_id"), text(init, "client_secret"),
                                     "collections outgoing_transfers tenant_accounts");
  for (auto [method, body] :
       {std::pair{"GET", ""}, std::pair{"POST", R"({"url":"http://localhost:9/"})"}}) {
    Reply refused = call(server, narrow, method, "", body);
    EXPECT_EQ(refused.status, 403) << method;
    EXPECT_EQ(refused.error_code(), "not_authorized");
    EXPECT_NE(message_of(refused).find("webhooks"), std::string::npos);
  }
  Caller full =
      participant_caller(server, text(init, "client_id"), text(init, "client_secret"), "webhooks");
  EXPECT_EQ(call(server, full, "GET").status, 200);
  EXPECT_EQ(server.send({"GET", "/api/v1/webhook_endpoints", "", {}}).status, 401);
}

TEST(WebhookEndpointsProduction, HttpsRequiredAndLoopbackRefused) {
  Server server({{"--environment", "production"}});
  Tenant tenant = new_tenant(server, "production");
  for (const Caller& caller : {tenant.core, tenant.participant}) {
    Reply http =
        create(server, caller, {{"url", "http://hooks.example.com/x"}, {"enabled", false}});
    expect_invalid(http, "url", "http in production");
    EXPECT_NE(message_of(http).find("https"), std::string::npos) << http.body;
    for (const char* url : {"https://127.0.0.1:9/", "https://localhost/", "https://[::1]/",
                            "https://api.localhost/"}) {
      Reply loopback = create(server, caller, {{"url", url}, {"enabled", false}});
      expect_invalid(loopback, "url", url);
      EXPECT_NE(message_of(loopback).find("loopback"), std::string::npos) << loopback.body;
    }
    expect_invalid(create(server, caller, {{"url", "https://10.1.2.3/"}, {"enabled", false}}),
                   "url", "private in production");
    Reply created =
        create(server, caller, {{"url", "https://hooks.example.com/x"}, {"enabled", false}});
    ASSERT_EQ(created.status, 201) << created.body;
    EXPECT_TRUE(is_secret(text(created.json(), "secret")));
    Reply to_http = call(server, caller, "PATCH", "/" + id_of(created),
                         R"({"url":"http://hooks.example.com/x"})");
    expect_invalid(to_http, "url", "PATCH to http in production");
  }
}

TEST(WebhookEndpointsAllowList, OnlyListedHostsAndNamedPrivateAddresses) {
  Server server({{"--webhook-allowed-hosts", "hooks.example.com,*.partner.co,10.0.0.7"}});
  Tenant tenant = new_tenant(server);
  for (const Caller& caller : {tenant.core, tenant.participant}) {
    for (const char* url : {"https://hooks.example.com/a", "https://eu.partner.co/b",
                            "http://a.b.partner.co:8080/c", "https://10.0.0.7/d"}) {
      Reply created = create(server, caller, {{"url", url}, {"enabled", false}});
      EXPECT_EQ(created.status, 201) << url << ": " << created.body;
    }
    for (const char* url : {"https://example.com/", "https://partner.co/", "https://8.8.8.8/",
                            "https://10.0.0.8/", "http://127.0.0.1:9/", "http://localhost:9/"}) {
      Reply refused = create(server, caller, {{"url", url}, {"enabled", false}});
      expect_invalid(refused, "url", url);
    }
    Reply unlisted = create(server, caller, {{"url", "https://example.com/"}, {"enabled", false}});
    EXPECT_NE(message_of(unlisted).find("--webhook-allowed-hosts"), std::string::npos);
  }
  Reply created =
      create(server, tenant.core, {{"url", "https://hooks.example.com/a"}, {"enabled", false}});
  ASSERT_EQ(created.status, 201);
  expect_invalid(
      call(server, tenant.core, "PATCH", "/" + id_of(created), R"({"url":"https://example.org/"})"),
      "url", "PATCH to an unlisted host");
}


TEST(WebhookEndpointsStorage, TheSecretIsNotStoredInClear) {
  Server server;
  Tenant tenant = new_tenant(server);
  std::string key = "x-idempotency-key: " + harness::new_uuid();
  Reply created = call(server, tenant.core, "POST", "", json::serialize(local_endpoint()), {key});
  ASSERT_EQ(created.status, 201) << created.body;
  Reply rotated = call(server, tenant.core, "POST", "/" + id_of(created) + "/rotate_secret", "",
                       {"x-idempotency-key: " + harness::new_uuid()});
  ASSERT_EQ(rotated.status, 200) << rotated.body;
  std::vector<std::string> secrets = {text(created.json(), "secret"),
                                      text(rotated.json(), "secret")};
  // The replay still answers the secret: the stored response is sealed, not dropped.
  EXPECT_EQ(call(server, tenant.core, "POST", "", json::serialize(local_endpoint()), {key}).body,
            created.body);
  std::string everything = harness::stored_bytes(server);
  ASSERT_NE(everything.find(id_of(created)), std::string::npos) << "the endpoint's row is there";
  for (const std::string& secret : secrets) {
    EXPECT_EQ(everything.find(secret.substr(6)), std::string::npos) << "a secret in clear";
  }
}
