// Activation links of physical cards: POST/GET /v1/cards/activation_links, the HTML page at
// /activate/{token} (GET shows, POST activates), expiry on the tenant clock, the token never
// logged, --public-url, scopes. Error paths included.
#include <gtest/gtest.h>

#include <ctime>
#include <iomanip>
#include <sstream>

#include "harness.hpp"

using harness::Reply;
using harness::Server;
namespace json = boost::json;

namespace {

std::string text(const json::value& value, std::string_view key) {
  return std::string(value.at(key).as_string());
}

// The tenant's bearer header: `bearer`, or the server's default tenant's when empty.
std::string bearer_of(const Server& server, const std::string& bearer) {
  return bearer.empty() ? server.bearer_core() : bearer;
}

std::string new_account(const Server& server, const std::string& bearer) {
  Reply account = server.post("/v1/ledger/accounts",
                              R"({"name":"Cards","type":"savings_account","currency":"COP"})",
                              {bearer_of(server, bearer)});
  EXPECT_EQ(account.status, 201) << account.body;
  return text(account.json(), "id");
}

// A card of a new account; `more` is more JSON fields, starting with a comma.
json::value new_card(const Server& server, const std::string& more,
                     const std::string& bearer = "") {
  Reply card = server.post("/v1/cards",
                           R"({"account_id":")" + new_account(server, bearer) + R"(")" + more +
                               "}",
                           {bearer_of(server, bearer)});
  EXPECT_EQ(card.status, 201) << card.body;
  return card.json();
}

const char* k_physical_with_holder =
    R"(,"type":"physical","cardholder":{"first_name":"Ana","last_name":"Rojas"})";

Reply create_link(const Server& server, const std::string& card_id,
                  const std::string& bearer = "") {
  return server.post("/v1/cards/activation_links", R"({"card_id":")" + card_id + R"("})",
                     {bearer_of(server, bearer)});
}

json::value new_link(const Server& server, const std::string& card_id,
                     const std::string& bearer = "") {
  Reply link = create_link(server, card_id, bearer);
  EXPECT_EQ(link.status, 201) << link.body;
  return link.json();
}

// The path of a link's url on this server (/activate/<token>).
std::string page_path(const Server& server, const json::value& link) {
  std::string url = text(link, "url");
  EXPECT_TRUE(url.starts_with(server.base_url() + "/activate/")) << url;
  return url.substr(server.base_url().size());
}

Reply post_page(const Server& server, const std::string& path) {
  return server.post(path, "", {"Content-Type: application/x-www-form-urlencoded"});
}

std::string card_state(const Server& server, const std::string& card_id,
                       const std::string& bearer = "") {
  Reply card = server.get("/v1/cards/" + card_id, {bearer_of(server, bearer)});
  EXPECT_EQ(card.status, 200) << card.body;
  return text(card.json(), "state");
}

json::value get_link(const Server& server, const std::string& id) {
  Reply link = server.get("/v1/cards/activation_links/" + id, {server.bearer_core()});
  EXPECT_EQ(link.status, 200) << link.body;
  return link.json();
}

std::time_t seconds_of(const std::string& iso) {
  std::tm parts{};
  std::istringstream in(iso);
  in >> std::get_time(&parts, "%Y-%m-%dT%H:%M:%S");
  EXPECT_FALSE(in.fail()) << iso;
  return timegm(&parts);
}

std::string new_key(const Server& server, const std::string& scopes) {
  std::string tenant = text(server.credentials(), "tenant_id");
  json::value key = json::parse(
      server.command({"keys", "create", "--tenant", tenant, "--scopes", scopes, "--json"}));
  return "Authorization: Bearer " + text(key, "api_key");
}

void expect_page_headers(const Reply& reply) {
  EXPECT_EQ(reply.header("content-type"), "text/html; charset=utf-8");
  EXPECT_EQ(reply.header("content-security-policy"),
            "default-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'");
  EXPECT_EQ(reply.header("x-content-type-options"), "nosniff");
  EXPECT_EQ(reply.header("referrer-policy"), "no-referrer");
  EXPECT_EQ(reply.header("cache-control"), "no-store");
  EXPECT_EQ(reply.body.find("<script"), std::string::npos);
  EXPECT_EQ(reply.body.find("http"), std::string::npos) << "no external asset, no absolute link";
}

}  // namespace

TEST(ActivationLinks, CreateAnswersTheUrlOnceThenGetAndListShowTheLink) {
  Server& server = Server::shared();
  json::value card = new_card(server, k_physical_with_holder);
  std::string card_id = text(card, "id");
  json::value link = new_link(server, card_id);
  std::string id = text(link, "id");
  EXPECT_TRUE(id.starts_with("cal_")) << id;
  EXPECT_EQ(text(link, "card_id"), card_id);
  EXPECT_EQ(text(link, "state"), "pending");
  EXPECT_TRUE(link.at("used_at").is_null());
  EXPECT_EQ(text(link, "inserted_at"), text(link, "updated_at"));
  EXPECT_EQ(seconds_of(text(link, "expires_at")) - seconds_of(text(link, "inserted_at")),
            72 * 3600);
  std::string token = page_path(server, link).substr(std::string("/activate/").size());
  EXPECT_EQ(token.size(), 43u) << "32 random bytes, base64url without padding";

  // The token is not stored: a read of the link has no url.
  json::value shown = get_link(server, id);
  EXPECT_TRUE(shown.at("url").is_null());
  for (const char* field : {"id", "card_id", "state", "expires_at", "inserted_at", "updated_at"}) {
    EXPECT_EQ(shown.at(field), link.at(field)) << field;
  }

  json::value second = new_link(server, card_id);
  EXPECT_NE(text(second, "url"), text(link, "url"));
  Reply listed = server.get("/v1/cards/activation_links?card_id=" + card_id, {server.bearer_core()});
  ASSERT_EQ(listed.status, 200) << listed.body;
  const json::value listed_body = listed.json();
  const json::array& items = listed_body.at("activation_links").as_array();
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(text(items[0], "id"), text(second, "id")) << "newest first";
  EXPECT_EQ(text(items[1], "id"), id);
  EXPECT_EQ(listed_body.at("pagination").at("total_items").as_int64(), 2);

  Reply all = server.get("/v1/cards/activation_links?page_size=10", {server.bearer_core()});
  ASSERT_EQ(all.status, 200);
  EXPECT_EQ(text(all.json().at("activation_links").at(0), "id"), text(second, "id"));
  Reply none = server.get("/v1/cards/activation_links?card_id=car_AAAAAAAAAAAAAAAAAAAAAA",
                          {server.bearer_core()});
  ASSERT_EQ(none.status, 200);
  EXPECT_EQ(none.json().at("activation_links").as_array().size(), 0u);
}

TEST(ActivationLinks, TheTokenIsNotStoredInClear) {
  Server server;  // its own database, searched whole
  std::string card_id = text(new_card(server, k_physical_with_holder), "id");
  std::string key = "x-idempotency-key: " + harness::new_uuid();
  auto post = [&] {
    return server.post("/v1/cards/activation_links", R"({"card_id":")" + card_id + R"("})",
                       {server.bearer_core(), key});
  };
  Reply created = post();
  ASSERT_EQ(created.status, 201) << created.body;
  std::string url = text(created.json(), "url");
  std::string token = url.substr(url.rfind('/') + 1);
  ASSERT_GE(token.size(), 40u) << url;
  // The replay still answers the url: the stored response is sealed, not dropped.
  EXPECT_EQ(post().body, created.body);
  std::string everything = harness::stored_bytes(server);
  ASSERT_NE(everything.find(text(created.json(), "id")), std::string::npos) << "the link's row";
  EXPECT_EQ(everything.find(token), std::string::npos) << "the activation token in clear";
}

TEST(ActivationLinks, CreateAndReadErrorsHaveTheirPaths) {
  Server& server = Server::shared();
  auto create = [&](const std::string& body) {
    return server.post("/v1/cards/activation_links", body, {server.bearer_core()});
  };
  Reply missing = create("{}");
  EXPECT_EQ(missing.status, 422);
  EXPECT_EQ(missing.error_code(), "missing_field");
  EXPECT_EQ(missing.error_path(), "card_id");
  for (const std::string& body : {std::string(R"({"card_id":"car_short"})"),
                                  std::string(R"({"card_id":"acc_AAAAAAAAAAAAAAAAAAAAAA"})"),
                                  std::string(R"({"card_id":7})")}) {
    Reply bad = create(body);
    EXPECT_EQ(bad.status, 400) << body;
    EXPECT_EQ(bad.error_path(), "card_id") << body;
  }
  json::value physical = new_card(server, R"(,"type":"physical")");
  Reply unknown_field =
      create(R"({"card_id":")" + text(physical, "id") + R"(","url":"https://evil.example"})");
  EXPECT_EQ(unknown_field.status, 400);
  EXPECT_EQ(unknown_field.error_path(), "url");
  EXPECT_EQ(create("[]").status, 400);
  Reply unknown = create(R"({"card_id":"car_AAAAAAAAAAAAAAAAAAAAAA"})");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.error_code(), "item_not_found");
  EXPECT_EQ(unknown.error_path(), "card_id");

  Reply virtual_card = create_link(server, text(new_card(server, ""), "id"));
  EXPECT_EQ(virtual_card.status, 409);
  EXPECT_EQ(virtual_card.error_code(), "card_invalid_state");
  EXPECT_EQ(virtual_card.error_path(), "card_id");

  Reply bad_id = server.get("/v1/cards/activation_links/car_AAAAAAAAAAAAAAAAAAAAAA",
                            {server.bearer_core()});
  EXPECT_EQ(bad_id.status, 400);
  EXPECT_EQ(bad_id.error_path(), "plastic_card_activation_id");
  Reply absent = server.get("/v1/cards/activation_links/cal_AAAAAAAAAAAAAAAAAAAAAA",
                            {server.bearer_core()});
  EXPECT_EQ(absent.status, 404);
  EXPECT_EQ(absent.error_code(), "item_not_found");
  Reply bad_filter = server.get("/v1/cards/activation_links?card_id=nope", {server.bearer_core()});
  EXPECT_EQ(bad_filter.status, 400);
  EXPECT_EQ(bad_filter.error_path(), "card_id");
  Reply bad_page = server.get("/v1/cards/activation_links?page_size=5", {server.bearer_core()});
  EXPECT_EQ(bad_page.status, 400);
  EXPECT_EQ(bad_page.error_path(), "page_size");
  EXPECT_EQ(server.get("/v1/cards/activation_links?state=pending", {server.bearer_core()}).status,
            400);
}

TEST(ActivationLinks, ThePageActivatesTheCardOnce) {
  Server& server = Server::shared();
  json::value card = new_card(server, k_physical_with_holder);
  std::string card_id = text(card, "id");
  json::value link = new_link(server, card_id);
  json::value other_link = new_link(server, card_id);
  std::string path = page_path(server, link);

  Reply shown = server.get(path);
  ASSERT_EQ(shown.status, 200) << shown.body;
  expect_page_headers(shown);
  EXPECT_NE(shown.body.find(text(card, "last_four")), std::string::npos);
  EXPECT_NE(shown.body.find("Ana Rojas"), std::string::npos);
  EXPECT_NE(shown.body.find("<form method=\"post\">"), std::string::npos);
  EXPECT_NE(shown.body.find("Activate card"), std::string::npos);
  EXPECT_EQ(shown.body.find(path), std::string::npos) << "the page does not repeat the token";
  EXPECT_EQ(card_state(server, card_id), "pending_activation") << "a GET changes nothing";

  Reply activated = post_page(server, path);
  ASSERT_EQ(activated.status, 200) << activated.body;
  expect_page_headers(activated);
  EXPECT_NE(activated.body.find("Card activated"), std::string::npos);
  EXPECT_EQ(card_state(server, card_id), "active");
  json::value used = get_link(server, text(link, "id"));
  EXPECT_EQ(text(used, "state"), "used");
  EXPECT_FALSE(used.at("used_at").is_null());
  EXPECT_EQ(text(used, "used_at"), text(used, "updated_at"));

  Reply again = post_page(server, path);
  EXPECT_EQ(again.status, 410);
  expect_page_headers(again);
  EXPECT_NE(again.body.find("already been used"), std::string::npos);
  EXPECT_EQ(server.get(path).status, 410);
  EXPECT_EQ(server.post(path, "").status, 410) << "an empty body is a form post too";

  // The card's other link stays pending but leads nowhere: its card is active already.
  std::string other_path = page_path(server, other_link);
  Reply other_page = server.get(other_path);
  EXPECT_EQ(other_page.status, 409);
  expect_page_headers(other_page);
  EXPECT_NE(other_page.body.find("not waiting for activation"), std::string::npos);
  EXPECT_EQ(post_page(server, other_path).status, 409);
  EXPECT_EQ(text(get_link(server, text(other_link, "id")), "state"), "pending");
  Reply no_more = create_link(server, card_id);
  EXPECT_EQ(no_more.status, 409) << "an active card gets no new link";
  EXPECT_EQ(no_more.error_code(), "card_invalid_state");
}

TEST(ActivationLinks, ThePageRefusesOtherBodiesUnknownTokensAndOtherMethods) {
  Server& server = Server::shared();
  json::value card = new_card(server, R"(,"type":"physical")");
  std::string path = page_path(server, new_link(server, text(card, "id")));
  Reply json_body = server.post(path, R"({"activate":true})");
  EXPECT_EQ(json_body.status, 400);
  expect_page_headers(json_body);
  EXPECT_EQ(card_state(server, text(card, "id")), "pending_activation");
  // A form field (a named button) is fine.
  Reply with_field =
      server.post(path, "go=1", {"Content-Type: application/x-www-form-urlencoded"});
  EXPECT_EQ(with_field.status, 200) << with_field.body;
  EXPECT_EQ(card_state(server, text(card, "id")), "active");

  std::string unknown_token(43, 'A');
  for (const std::string& unknown :
       {"/activate/" + unknown_token, std::string("/activate/short"), "/activate/" + std::string(43, '.')}) {
    Reply shown = server.get(unknown);
    EXPECT_EQ(shown.status, 404) << unknown;
    expect_page_headers(shown);
    EXPECT_NE(shown.body.find("does not exist"), std::string::npos);
    EXPECT_EQ(post_page(server, unknown).status, 404) << unknown;
  }
  Reply put = server.send({"PUT", path, "", {}});
  EXPECT_EQ(put.status, 405);
  EXPECT_EQ(put.error_code(), "method_not_allowed");
}

TEST(ActivationLinks, TextOnThePageIsEscaped) {
  Server& server = Server::shared();
  json::value card = new_card(
      server, R"(,"type":"physical","cardholder":{"first_name":"<b>Ana</b>","last_name":"O'Neil & \"Co\""})");
  Reply shown = server.get(page_path(server, new_link(server, text(card, "id"))));
  ASSERT_EQ(shown.status, 200) << shown.body;
  EXPECT_EQ(shown.body.find("<b>"), std::string::npos);
  EXPECT_NE(shown.body.find("&lt;b&gt;Ana&lt;/b&gt; O&#39;Neil &amp; &quot;Co&quot;"),
            std::string::npos)
      << shown.body;
}

TEST(ActivationLinks, ExpireAfter72HoursOnTheTenantClock) {
  Server server;
  json::value card = new_card(server, R"(,"type":"physical")");
  json::value link = new_link(server, text(card, "id"));
  std::string path = page_path(server, link);
  Reply advanced =
      server.post("/v1/sandbox/clock/advance", R"({"seconds":259201})", {server.bearer_core()});
  ASSERT_EQ(advanced.status, 200) << advanced.body;
  Reply shown = server.get(path);
  EXPECT_EQ(shown.status, 410);
  expect_page_headers(shown);
  EXPECT_NE(shown.body.find("expired"), std::string::npos);
  EXPECT_EQ(post_page(server, path).status, 410);
  EXPECT_EQ(card_state(server, text(card, "id")), "pending_activation");
  EXPECT_EQ(text(get_link(server, text(link, "id")), "state"), "expired");
  Reply listed = server.get("/v1/cards/activation_links", {server.bearer_core()});
  EXPECT_EQ(text(listed.json().at("activation_links").at(0), "state"), "expired");
  // A new link starts from the tenant's (advanced) time and works.
  json::value fresh = new_link(server, text(card, "id"));
  EXPECT_EQ(post_page(server, page_path(server, fresh)).status, 200);
  EXPECT_EQ(card_state(server, text(card, "id")), "active");
}

TEST(ActivationLinks, AnotherTenantsLinksAndCardsAreNotFound) {
  Server server;
  json::value card = new_card(server, R"(,"type":"physical")");
  json::value link = new_link(server, text(card, "id"));
  json::value other = json::parse(server.command({"tenant", "create", "--name", "other", "--json"}));
  std::string bearer = "Authorization: Bearer " + text(other, "api_key");
  EXPECT_EQ(server.get("/v1/cards/activation_links/" + text(link, "id"), {bearer}).status, 404);
  EXPECT_EQ(create_link(server, text(card, "id"), bearer).status, 404);
  Reply listed = server.get("/v1/cards/activation_links", {bearer});
  EXPECT_EQ(listed.json().at("activation_links").as_array().size(), 0u);
}

TEST(ActivationLinks, TheTokenNeverReachesTheLog) {
  Server server;
  json::value card = new_card(server, R"(,"type":"physical")");
  std::string path = page_path(server, new_link(server, text(card, "id")));
  std::string token = path.substr(std::string("/activate/").size());
  EXPECT_EQ(server.get(path + "?from=mail").status, 200);
  EXPECT_EQ(server.send({"PUT", path, "", {}}).status, 405);  // an error line too
  EXPECT_EQ(server.get("/" + path).status, 200);              // //activate/... routes the same
  EXPECT_EQ(post_page(server, path).status, 200);
  EXPECT_EQ(post_page(server, path).status, 410);
  std::string log = server.log_text();
  EXPECT_EQ(log.find(token), std::string::npos);
  EXPECT_NE(log.find("/activate/[redacted]"), std::string::npos);
}

TEST(ActivationLinks, PublicUrlIsTheBaseOfLinksInProductionToo) {
  Server server({{"--environment", "production", "--public-url", "https://cards.example.com/t/"}});
  json::value tenant = json::parse(server.command(
      {"tenant", "create", "--name", "live", "--environment", "production", "--json"}));
  std::string bearer = "Authorization: Bearer " + text(tenant, "api_key");
  json::value card = new_card(server, R"(,"type":"physical")", bearer);
  json::value link = new_link(server, text(card, "id"), bearer);
  std::string url = text(link, "url");
  ASSERT_TRUE(url.starts_with("https://cards.example.com/t/activate/")) << url;
  std::string path = url.substr(std::string("https://cards.example.com/t").size());
  EXPECT_EQ(server.get(path).status, 200);
  EXPECT_EQ(post_page(server, path).status, 200);
  EXPECT_EQ(card_state(server, text(card, "id"), bearer), "active");
}

TEST(ActivationLinks, ScopesGuardLinks) {
  Server& server = Server::shared();
  json::value card = new_card(server, R"(,"type":"physical")");
  std::string reader = new_key(server, "cards:read");
  Reply refused = create_link(server, text(card, "id"), reader);
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(refused.error_code(), "not_authorized");
  EXPECT_EQ(server.get("/v1/cards/activation_links", {reader}).status, 200);
  EXPECT_EQ(server.get("/v1/cards/activation_links", {new_key(server, "ledger:admin")}).status,
            403);
  EXPECT_EQ(server.get("/v1/cards/activation_links").status, 401);
  EXPECT_EQ(create_link(server, text(card, "id"), new_key(server, "cards:write")).status, 201);
}
