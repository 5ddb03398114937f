// Polling the events outbox over HTTP: GET /v1/events and GET /api/v1/events (newest first by
// page, or oldest first after a position), GET .../events/{id}; every filter and its errors,
// tenant isolation, scopes, positions in commit order, and the catalogue of docs/webhooks.md
// against the events a broad run of actions really emits.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "harness.hpp"
#include "payment_fixtures.hpp"
#include "webhook_receiver.hpp"
#include "webhooks_document.hpp"

using harness::Reply;
using harness::Server;
using harness::text;
using payment_fixtures::money;
namespace json = boost::json;

namespace {

// A fresh tenant of a server: its events are only those a test makes.
struct Tenant {
  const Server& server;
  std::string id;
  std::string core;         // Authorization header of its API key (every core scope)
  std::string participant;  // Authorization header of a token (every participant scope)
  std::string account_id;
  std::string receptor;    // tenant account
  std::string originator;  // tenant account
  std::string client_id;
  std::string client_secret;
  std::size_t initial_events = 0;  // what creating the tenant emitted (its default card group)

  Reply get(const std::string& path) const { return server.get(path, {core}); }
  Reply post(const std::string& path, const std::string& body) const {
    return server.post(path, body, {path.starts_with("/api/") ? participant : core});
  }
  // A token of its client narrowed to `scope`.
  std::string token(const std::string& scope) const {
    json::object body{{"grant_type", "client_credentials"},
                      {"client_id", client_id},
                      {"client_secret", client_secret},
                      {"scope", scope}};
    Reply reply = server.post("/api/v1/oauth/token", json::serialize(body));
    EXPECT_EQ(reply.status, 200) << reply.body;
    return reply.status == 200 ? "Authorization: Bearer " + text(reply.json(), "access_token")
                               : "";
  }
  // An API key of this tenant with these scopes.
  std::string key(const std::string& scopes) const {
    json::value made = json::parse(
        server.command({"keys", "create", "--tenant", id, "--scopes", scopes, "--json"}));
    return "Authorization: Bearer " + text(made, "api_key");
  }
};

std::vector<json::value> wait_for_events(const Tenant& tenant, std::size_t count,
                                         const std::string& filter = "");

Tenant new_tenant(const Server& server, const std::string& name = "events") {
  int code = 0;
  json::value made =
      json::parse(server.command({"tenant", "create", "--name", name, "--json"}, &code));
  EXPECT_EQ(code, 0);
  Tenant tenant{server,
                text(made, "tenant_id"),
                "Authorization: Bearer " + text(made, "api_key"),
                "",
                text(made, "account_id"),
                std::string(made.at("tenant_account_ids").at(0).as_string()),
                std::string(made.at("tenant_account_ids").at(1).as_string()),
                text(made, "client_id"),
                text(made, "client_secret")};
  json::object body{{"grant_type", "client_credentials"},
                    {"client_id", tenant.client_id},
                    {"client_secret", tenant.client_secret}};
  Reply token = server.post("/api/v1/oauth/token", json::serialize(body));
  EXPECT_EQ(token.status, 200) << token.body;
  tenant.participant = "Authorization: Bearer " + text(token.json(), "access_token");
  // The tenant's default card configuration group is announced when the tenant is made.
  tenant.initial_events = wait_for_events(tenant, 1).size();
  return tenant;
}

// An account holder: one account_holder.created event. Returns its id.
std::string make_holder(const Tenant& tenant) {
  Reply made =
      tenant.post("/v1/ledger/account_holders", harness::account_holder_body(harness::new_uuid()));
  EXPECT_EQ(made.status, 201) << made.body;
  return made.status == 201 ? text(made.json(), "id") : "";
}

void advance(const Tenant& tenant, long long seconds) {
  Reply advanced =
      tenant.post("/v1/sandbox/clock/advance", R"({"seconds":)" + std::to_string(seconds) + "}");
  ASSERT_EQ(advanced.status, 200) << advanced.body;
}

// Every event of the tenant, oldest first, read with after= (checked to page correctly).
std::vector<json::value> all_events(const Tenant& tenant, const std::string& filter = "") {
  std::vector<json::value> out;
  long long after = 0;
  for (int pages = 0; pages < 1000; ++pages) {
    Reply page = tenant.get("/v1/events?page_size=500&after=" + std::to_string(after) + filter);
    EXPECT_EQ(page.status, 200) << page.body;
    if (page.status != 200) break;
    const json::value body = page.json();
    for (const json::value& event : body.at("events").as_array()) out.push_back(event);
    after = body.at("next_after").as_int64();
    if (!body.at("has_more").as_bool()) break;
  }
  return out;
}

// Polls (bounded) until the tenant has at least `count` readable events matching `filter`: an
// event is readable once the sequencer, a background worker, gave it a position.
std::vector<json::value> wait_for_events(const Tenant& tenant, std::size_t count,
                                         const std::string& filter) {
  std::vector<json::value> events;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    events = all_events(tenant, filter);
    if (events.size() >= count) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < deadline);
  EXPECT_GE(events.size(), count) << "events" << filter;
  return events;
}

std::vector<std::string> ids_of(const json::array& events) {
  std::vector<std::string> ids;
  for (const json::value& event : events) ids.push_back(text(event, "id"));
  return ids;
}
std::vector<std::string> ids_of(const std::vector<json::value>& events) {
  return ids_of(json::array(events.begin(), events.end()));
}

std::set<std::string> types_of(const std::vector<json::value>& events) {
  std::set<std::string> types;
  for (const json::value& event : events) types.insert(text(event, "type"));
  return types;
}

void expect_error(const Reply& reply, long status, const std::string& code,
                  const std::string& path) {
  EXPECT_EQ(reply.status, status) << reply.body;
  EXPECT_EQ(reply.error_code(), code) << reply.body;
  EXPECT_EQ(reply.error_path(), path) << reply.body;
}

// What the document's OpenSSL check (its second block) prints for a delivery, run by sh in a
// folder of its own.
std::string openssl_check(const std::string& secret, const std::string& id,
                          const std::string& timestamp, const std::string& signature,
                          const std::string& body) {
  const std::vector<std::string> blocks = webhooks_document::code("### With OpenSSL only", "sh");
  EXPECT_EQ(blocks.size(), 2u) << "the OpenSSL recipe of docs/webhooks.md";
  if (blocks.size() != 2) return "";
  char folder[] = "/tmp/tesoro-webhooks-doc-XXXXXX";
  EXPECT_NE(::mkdtemp(folder), nullptr);
  const std::string script = "secret=" + harness::shell_quote(secret) +
                             "\nwebhook_id=" + harness::shell_quote(id) +
                             "\nwebhook_timestamp=" + harness::shell_quote(timestamp) +
                             "\nwebhook_signature=" + harness::shell_quote(signature) +
                             "\nprintf '%s' " + harness::shell_quote(body) + " > body.json\n" +
                             blocks[1];
  std::string out = harness::run_capture("cd " + std::string(folder) + " && sh -c " +
                                         harness::shell_quote(script) + " 2>&1");
  harness::run_capture("rm -rf " + std::string(folder));
  return out;
}

}  // namespace

// The shell recipe of docs/webhooks.md, run as printed: its own example (the Standard Webhooks
// specification's published vector) passes, a changed body or signature fails, a rotation's
// two signatures pass on either, and the document's example delivery verifies with the secret
// it names.
TEST(WebhooksDocument, TheOpenSslRecipeVerifiesWhatItShouldAndNothingElse) {
  const std::vector<std::string> blocks = webhooks_document::code("### With OpenSSL only", "sh");
  ASSERT_EQ(blocks.size(), 2u);
  char folder[] = "/tmp/tesoro-webhooks-doc-XXXXXX";
  ASSERT_NE(::mkdtemp(folder), nullptr);
  const std::string as_printed = harness::run_capture(
      "cd " + std::string(folder) + " && sh -c " + harness::shell_quote(blocks[0] + blocks[1]) +
      " 2>&1");
  harness::run_capture("rm -rf " + std::string(folder));
  EXPECT_TRUE(as_printed.starts_with("signature valid\n")) << as_printed;
  EXPECT_NE(as_printed.find("timestamp is"), std::string::npos) << "the 2021 vector is stale";

  const std::string secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  const std::string id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
  const std::string good = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
  const std::string body = R"({"test": 2432232314})";
  EXPECT_TRUE(openssl_check(secret, id, "1614265330", good, body).starts_with("signature valid"));
  EXPECT_TRUE(openssl_check(secret, id, "1614265330", good, R"({"test": 2432232315})")
                  .starts_with("signature INVALID"));
  EXPECT_TRUE(openssl_check(secret, id, "1614265331", good, body).starts_with("signature INVALID"));
  EXPECT_TRUE(openssl_check("whsec_" + std::string(32, 'A'), id, "1614265330", good, body)
                  .starts_with("signature INVALID"));
  const std::string other = "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
  EXPECT_TRUE(openssl_check(secret, id, "1614265330", other + " " + good, body)
                  .starts_with("signature valid"));
  EXPECT_TRUE(openssl_check(secret, id, "1614265330", good + " " + other, body)
                  .starts_with("signature valid"));

  // The example delivery: its headers, its body (the line after the blank one) and the secrets
  // the text names, before and after the rotation.
  const std::vector<std::string> deliveries = webhooks_document::code("### What a delivery looks like", "http");
  ASSERT_EQ(deliveries.size(), 1u);
  std::istringstream request(deliveries[0]);
  std::map<std::string, std::string> headers;
  std::string line;
  std::string delivered_body;
  while (std::getline(request, line)) {
    if (line.empty()) {
      std::getline(request, delivered_body);
      break;
    }
    const std::size_t colon = line.find(": ");
    if (colon != std::string::npos) headers[line.substr(0, colon)] = line.substr(colon + 2);
  }
  const json::value event = json::parse(delivered_body);
  EXPECT_EQ(text(event, "id"), headers["webhook-id"]);
  EXPECT_EQ(openssl_check("whsec_T/2T0P2MosV7O7Vjeou9N9s8swiwkYemq6wDdWBIgww=",
                          headers["webhook-id"], headers["webhook-timestamp"],
                          headers["webhook-signature"], delivered_body)
                .rfind("signature valid", 0),
            0u);
  std::string rotated;
  for (const std::string& doc_line : webhooks_document::lines()) {
    if (doc_line.starts_with("webhook-signature: v1,") && doc_line.find(' ', 22) != std::string::npos) {
      rotated = doc_line.substr(std::string("webhook-signature: ").size());
    }
  }
  ASSERT_FALSE(rotated.empty()) << "the rotation example";
  for (const char* either : {"whsec_T/2T0P2MosV7O7Vjeou9N9s8swiwkYemq6wDdWBIgww=",
                             "whsec_XmDHcLlOoTwhBN4NAF8iIYnU03A1XaXCAYC5pL3kpkg="}) {
    EXPECT_EQ(openssl_check(either, headers["webhook-id"], headers["webhook-timestamp"], rotated,
                            delivered_body)
                  .rfind("signature valid", 0),
              0u)
        << either;
  }
}

TEST(Events, TheListIsNewestFirstByPositionWithPaginationAndEachEventHasItsFields) {
  Tenant tenant = new_tenant(Server::shared());
  std::vector<std::string> holders;
  for (int i = 0; i < 12; ++i) holders.push_back(make_holder(tenant));
  const std::string holders_only = "&type=account_holder.created";
  ASSERT_EQ(wait_for_events(tenant, 12, holders_only).size(), 12u);

  Reply first = tenant.get("/v1/events?page_size=10" + holders_only);
  ASSERT_EQ(first.status, 200) << first.body;
  const json::value page = first.json();
  const json::array& events = page.at("events").as_array();
  ASSERT_EQ(events.size(), 10u);
  EXPECT_EQ(page.at("pagination").at("page_number").as_int64(), 1);
  EXPECT_EQ(page.at("pagination").at("page_size").as_int64(), 10);
  EXPECT_EQ(page.at("pagination").at("total_items").as_int64(), 12);
  EXPECT_EQ(page.at("pagination").at("total_pages").as_int64(), 2);
  for (std::size_t i = 1; i < events.size(); ++i) {
    EXPECT_GT(events[i - 1].at("position").as_int64(), events[i].at("position").as_int64());
  }
  // The newest is the last holder's, and every event carries its data as an object.
  const json::value& newest = events.at(0);
  EXPECT_EQ(newest.as_object().size(), 5u) << newest;
  EXPECT_TRUE(text(newest, "id").starts_with("evt_")) << newest;
  EXPECT_EQ(text(newest, "type"), "account_holder.created");
  EXPECT_EQ(text(newest.at("data"), "account_holder_id"), holders.back());
  EXPECT_EQ(text(newest, "timestamp").size(), 27u) << newest;  // 2025-01-31T12:00:00.000000Z
  EXPECT_EQ(text(newest, "timestamp").back(), 'Z');

  Reply second = tenant.get("/v1/events?page_size=10&page_number=2" + holders_only);
  ASSERT_EQ(second.status, 200) << second.body;
  const json::value rest = second.json();
  ASSERT_EQ(rest.at("events").as_array().size(), 2u);
  EXPECT_EQ(text(rest.at("events").at(1).at("data"), "account_holder_id"), holders.front());
  Reply past = tenant.get("/v1/events?page_number=3" + holders_only);
  ASSERT_EQ(past.status, 200) << past.body;
  EXPECT_TRUE(past.json().at("events").as_array().empty());
  // The default page is 10.
  EXPECT_EQ(tenant.get("/v1/events").json().at("events").as_array().size(), 10u);

  // GET by id answers the list's item, on both surfaces; the list is the same on both.
  Reply one = tenant.get("/v1/events/" + text(newest, "id"));
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(one.json(), newest);
  Reply participant_one =
      tenant.server.get("/api/v1/events/" + text(newest, "id"), {tenant.participant});
  ASSERT_EQ(participant_one.status, 200) << participant_one.body;
  EXPECT_EQ(participant_one.body, one.body);
  Reply participant_list =
      tenant.server.get("/api/v1/events?page_size=10" + holders_only, {tenant.participant});
  ASSERT_EQ(participant_list.status, 200) << participant_list.body;
  EXPECT_EQ(participant_list.body, first.body);
}

TEST(Events, AfterReadsEveryEventExactlyOnceWhileNewOnesArrive) {
  Tenant tenant = new_tenant(Server::shared());
  for (int i = 0; i < 7; ++i) make_holder(tenant);
  wait_for_events(tenant, tenant.initial_events + 7);

  // A consumer pages with the cursor the answers hand it, while events keep being made.
  std::vector<json::value> seen;
  long long after = 0;
  int produced = static_cast<int>(tenant.initial_events) + 7;
  for (int round = 0; round < 200; ++round) {
    Reply page = tenant.get("/v1/events?page_size=10&after=" + std::to_string(after));
    ASSERT_EQ(page.status, 200) << page.body;
    const json::value body = page.json();
    EXPECT_FALSE(body.as_object().contains("pagination")) << body;
    const json::array& events = body.at("events").as_array();
    for (const json::value& event : events) {
      EXPECT_GT(event.at("position").as_int64(), after) << "oldest first, after the cursor";
      seen.push_back(event);
    }
    const long long next = body.at("next_after").as_int64();
    EXPECT_EQ(next, events.empty() ? after : events.back().at("position").as_int64());
    after = next;
    if (produced < 40 + static_cast<int>(tenant.initial_events)) {
      for (int i = 0; i < 3; ++i) make_holder(tenant);
      produced += 3;
    } else if (!body.at("has_more").as_bool()) {
      if (static_cast<int>(seen.size()) >= produced) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the last ones' positions
    }
  }
  ASSERT_EQ(static_cast<int>(seen.size()), produced);
  const std::vector<std::string> seen_ids = ids_of(seen);
  std::set<std::string> unique(seen_ids.begin(), seen_ids.end());
  EXPECT_EQ(unique.size(), seen.size()) << "no event twice";
  for (std::size_t i = 1; i < seen.size(); ++i) {
    EXPECT_GT(seen[i].at("position").as_int64(), seen[i - 1].at("position").as_int64());
  }
  // Every event of the tenant, as the numbered pages list them, was seen.
  Reply listed = tenant.get("/v1/events?page_size=500");
  ASSERT_EQ(listed.status, 200) << listed.body;
  std::vector<std::string> newest_first = ids_of(listed.json().at("events").as_array());
  std::vector<std::string> oldest_first(newest_first.rbegin(), newest_first.rend());
  EXPECT_EQ(oldest_first, seen_ids);

  // has_more says whether a full page left events behind; past the end the cursor stays.
  Reply full = tenant.get("/v1/events?page_size=10&after=0");
  EXPECT_TRUE(full.json().at("has_more").as_bool());
  Reply end = tenant.get("/v1/events?after=" + std::to_string(after));
  ASSERT_EQ(end.status, 200) << end.body;
  EXPECT_TRUE(end.json().at("events").as_array().empty());
  EXPECT_EQ(end.json().at("next_after").as_int64(), after);
  EXPECT_FALSE(end.json().at("has_more").as_bool());
}

TEST(Events, PositionsFollowCommitOrderAndEmissionOrderWithinAUnit) {
  const Server& server = Server::shared();
  Tenant tenant = new_tenant(server);
  Tenant other = new_tenant(server, "other");
  // Commits one after another, some of another tenant in between: positions rise in that
  // order (they are global, so the tenant's own are increasing but not consecutive).
  std::vector<std::string> holders;
  for (int i = 0; i < 4; ++i) {
    holders.push_back(make_holder(tenant));
    make_holder(other);
  }
  std::vector<json::value> events = wait_for_events(tenant, 4, "&type=account_holder.created");
  ASSERT_EQ(events.size(), 4u);
  for (std::size_t i = 0; i < holders.size(); ++i) {
    EXPECT_EQ(text(events[i].at("data"), "account_holder_id"), holders[i]);
  }
  std::vector<json::value> theirs = wait_for_events(other, 4, "&type=account_holder.created");
  ASSERT_EQ(theirs.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_LT(events[i].at("position").as_int64(), theirs[i].at("position").as_int64());
    if (i + 1 < 4) {
      EXPECT_LT(theirs[i].at("position").as_int64(), events[i + 1].at("position").as_int64());
    }
  }
  // One unit emits collection.created then collection.ready: consecutive, in that order.
  payment_fixtures::Tenant payer{tenant.participant, tenant.receptor};
  const json::value collection = payment_fixtures::create_collection(server, payer);
  std::vector<json::value> collections = wait_for_events(tenant, 2, "&type=collection.*");
  ASSERT_EQ(collections.size(), 2u);
  EXPECT_EQ(text(collections[0], "type"), "collection.created");
  EXPECT_EQ(text(collections[1], "type"), "collection.ready");
  EXPECT_EQ(collections[1].at("position").as_int64(), collections[0].at("position").as_int64() + 1);
  EXPECT_EQ(text(collections[1].at("data"), "id"), text(collection, "id"));
}

TEST(Events, TheTypeFilterTakesACatalogueTypeOrAPrefixPattern) {
  Tenant tenant = new_tenant(Server::shared());
  make_holder(tenant);
  make_holder(tenant);
  Reply funded = tenant.post("/v1/sandbox/accounts/" + tenant.account_id + "/fund",
                             R"({"amount":)" + money(5'000) + "}");
  ASSERT_EQ(funded.status, 201) << funded.body;
  wait_for_events(tenant, tenant.initial_events + 3);

  auto types_listed = [&](const std::string& type) {
    Reply reply = tenant.get("/v1/events?page_size=100&type=" + type);
    EXPECT_EQ(reply.status, 200) << type << ": " << reply.body;
    std::multiset<std::string> types;
    const json::value body = reply.json();
    for (const json::value& event : body.at("events").as_array()) types.insert(text(event, "type"));
    EXPECT_EQ(body.at("pagination").at("total_items").as_int64(),
              static_cast<long long>(types.size()));
    return types;
  };
  using Types = std::multiset<std::string>;
  EXPECT_EQ(types_listed("account_holder.created"),
            (Types{"account_holder.created", "account_holder.created"}));
  EXPECT_EQ(types_listed("account.credited"), (Types{"account.credited"}));
  // `account.*` is account events only: account_holder.created does not start with `account.`.
  EXPECT_EQ(types_listed("account.*"), (Types{"account.credited"}));
  EXPECT_EQ(types_listed("account_holder.*"),
            (Types{"account_holder.created", "account_holder.created"}));
  // A catalogue type nobody emitted here lists nothing; so does a pattern with `_` in it.
  EXPECT_TRUE(types_listed("payout.settled").empty());
  EXPECT_TRUE(types_listed("card_transaction.*").empty());
  // after= filters the same way.
  std::vector<json::value> credited = all_events(tenant, "&type=account.*");
  ASSERT_EQ(credited.size(), 1u);
  EXPECT_EQ(text(credited[0], "type"), "account.credited");

  for (const char* bad : {"account.opened", "nothing.*", "*", ".*", "account", "account.%2A%2A",
                          "collection.*.paid", "ACCOUNT.CREDITED"}) {
    expect_error(tenant.get("/v1/events?type=" + std::string(bad)), 400, "validation_error",
                 "type");
  }
}

TEST(Events, TheTimestampFiltersAreInclusiveOnTheTenantClock) {
  Tenant tenant = new_tenant(Server::shared());
  make_holder(tenant);
  advance(tenant, 3600);
  make_holder(tenant);
  const std::string holders_only = "&type=account_holder.created";
  std::vector<json::value> events = wait_for_events(tenant, 2, holders_only);
  ASSERT_EQ(events.size(), 2u);
  const std::string early = text(events[0], "timestamp");
  const std::string late = text(events[1], "timestamp");
  EXPECT_GE(payment_fixtures::micros_of(late) - payment_fixtures::micros_of(early),
            3600'000'000LL);

  auto listed = [&](const std::string& query) {
    Reply reply = tenant.get("/v1/events?" + query + holders_only);
    EXPECT_EQ(reply.status, 200) << query << ": " << reply.body;
    std::vector<std::string> stamps;
    const json::value body = reply.json();
    for (const json::value& event : body.at("events").as_array()) {
      stamps.push_back(text(event, "timestamp"));
    }
    return stamps;
  };
  using Stamps = std::vector<std::string>;
  EXPECT_EQ(listed("timestamp[gte]=" + late), (Stamps{late}));
  EXPECT_EQ(listed("timestamp[lte]=" + early), (Stamps{early}));
  EXPECT_EQ(listed("timestamp%5Bgte%5D=" + early + "&timestamp%5Blte%5D=" + early),
            (Stamps{early}));
  EXPECT_EQ(listed("timestamp[gte]=" + early + "&timestamp[lte]=" + late), (Stamps{late, early}));
  EXPECT_TRUE(listed("timestamp[gte]=" + late + "&timestamp[lte]=" + early).empty());
  // An offset other than Z is the same instant; after= takes the filters too.
  const std::string early_in_bogota = [&] {
    std::time_t at = payment_fixtures::micros_of(early) / 1'000'000 - 5 * 3600;
    char out[40];
    std::strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%S", std::gmtime(&at));
    return std::string(out) + "." + early.substr(20, 6) + "-05:00";
  }();
  EXPECT_EQ(listed("timestamp[lte]=" + early_in_bogota), (Stamps{early}));
  std::vector<json::value> after_filtered = all_events(tenant, "&timestamp[gte]=" + late);
  // (the tenant's first event, its card group, came before `late`)
  ASSERT_EQ(after_filtered.size(), 1u);
  EXPECT_EQ(text(after_filtered[0], "timestamp"), late);

  expect_error(tenant.get("/v1/events?timestamp[gte]=yesterday"), 400, "validation_error",
               "timestamp[gte]");
  expect_error(tenant.get("/v1/events?timestamp[lte]=2025-01-31T12:00:00"), 400,
               "validation_error", "timestamp[lte]");
}

TEST(Events, QueryErrorsAnswer400WithTheirPath) {
  Tenant tenant = new_tenant(Server::shared());
  for (const char* bad : {"-1", "abc", "1.5", "", "1000000000000000000"}) {
    expect_error(tenant.get("/v1/events?after=" + std::string(bad)), 400, "validation_error",
                 "after");
  }
  expect_error(tenant.get("/v1/events?after=0&page_number=2"), 400, "validation_error",
               "page_number");
  expect_error(tenant.get("/v1/events?after=0&page_size=501"), 400, "validation_error",
               "page_size");
  expect_error(tenant.get("/v1/events?after=0&page_size=9"), 400, "validation_error", "page_size");
  expect_error(tenant.get("/v1/events?page_number=0"), 400, "validation_error", "page_number");
  expect_error(tenant.get("/v1/events?after=1&after=2"), 400, "validation_error", "after");
  expect_error(tenant.get("/v1/events?since=0"), 400, "validation_error", "since");
  expect_error(tenant.server.get("/api/v1/events?after=x", {tenant.participant}), 400,
               "validation_error", "after");
  // Every problem is listed.
  Reply several = tenant.get("/v1/events?after=-1&type=nope&delivery_success=maybe");
  ASSERT_EQ(several.status, 400) << several.body;
  EXPECT_EQ(several.json().at("errors").as_array().size(), 3u) << several.body;

  expect_error(tenant.get("/v1/events/not-an-event"), 400, "validation_error", "id");
  expect_error(tenant.get("/v1/events/whe_AAAAAAAAAAAAAAAAAAAAAA"), 400, "validation_error", "id");
  expect_error(tenant.get("/v1/events/evt_AAAAAAAAAAAAAAAAAAAAAA"), 404, "item_not_found", "");
  expect_error(tenant.server.get("/api/v1/events/evt_AAAAAAAAAAAAAAAAAAAAAA", {tenant.participant}),
               404, "item_not_found", "");
}

TEST(Events, DeliverySuccessFiltersByDeliveriesAndChecksItsEndpoint) {
  Tenant tenant = new_tenant(Server::shared());
  make_holder(tenant);
  make_holder(tenant);
  const std::size_t all = wait_for_events(tenant, tenant.initial_events + 2).size();
  // Without endpoints nothing was delivered: false is every event, true none.
  Reply missed = tenant.get("/v1/events?delivery_success=false");
  ASSERT_EQ(missed.status, 200) << missed.body;
  EXPECT_EQ(missed.json().at("pagination").at("total_items").as_int64(),
            static_cast<long long>(all));
  Reply received = tenant.get("/v1/events?delivery_success=true");
  ASSERT_EQ(received.status, 200) << received.body;
  EXPECT_EQ(received.json().at("pagination").at("total_items").as_int64(), 0);
  EXPECT_EQ(all_events(tenant, "&delivery_success=false").size(), all);

  expect_error(tenant.get("/v1/events?delivery_success=yes"), 400, "validation_error",
               "delivery_success");
  expect_error(tenant.get("/v1/events?delivery_success=TRUE"), 400, "validation_error",
               "delivery_success");
  expect_error(tenant.get("/v1/events?endpoint_id=whe_AAAAAAAAAAAAAAAAAAAAAA"), 400,
               "validation_error", "endpoint_id");
  expect_error(tenant.get("/v1/events?delivery_success=false&endpoint_id=evt_AAAAAAAAAAAAAAAAAAAAAA"),
               400, "validation_error", "endpoint_id");
  expect_error(tenant.get("/v1/events?delivery_success=false&endpoint_id=whe_AAAAAAAAAAAAAAAAAAAAAA"),
               404, "item_not_found", "endpoint_id");
  expect_error(tenant.get("/v1/events?after=0&delivery_success=true&endpoint_id=whe_AAAAAAAAAAAAAAAAAAAAAA"),
               404, "item_not_found", "endpoint_id");
  // Another tenant's endpoint is as unknown as one that does not exist.
  Tenant other = new_tenant(tenant.server, "other");
  Reply theirs = other.post("/v1/webhook_endpoints", R"({"url":"https://hooks.example.com/x"})");
  ASSERT_EQ(theirs.status, 201) << theirs.body;
  expect_error(tenant.get("/v1/events?delivery_success=false&endpoint_id=" +
                          text(theirs.json(), "id")),
               404, "item_not_found", "endpoint_id");
}

// delivery_success against real deliveries: one endpoint accepts the account holder events it
// subscribes to, another fails every event; a replay the failing one then accepts moves that
// event to its delivered side.
TEST(Events, DeliverySuccessSplitsTheEventsByWhatEachEndpointReceived) {
  Tenant tenant = new_tenant(Server::shared());
  harness::WebhookReceiver accepting;
  harness::WebhookReceiver failing;
  failing.set_default({500});
  auto add_endpoint = [&](const std::string& url, const std::string& event_types) {
    Reply made = tenant.post("/v1/webhook_endpoints",
                             R"({"url":")" + url + R"(","event_types":)" + event_types + "}");
    EXPECT_EQ(made.status, 201) << made.body;
    return made.status == 201 ? text(made.json(), "id") : "";
  };
  const std::string accepting_id = add_endpoint(accepting.url(), R"(["account_holder.*"])");
  const std::string failing_id = add_endpoint(failing.url(), "[]");
  make_holder(tenant);
  make_holder(tenant);
  Reply funded = tenant.post("/v1/sandbox/accounts/" + tenant.account_id + "/fund",
                             R"({"amount":)" + money(5'000) + "}");
  ASSERT_EQ(funded.status, 201) << funded.body;
  const std::vector<std::string> all = ids_of(wait_for_events(tenant, tenant.initial_events + 3));
  ASSERT_EQ(all.size(), tenant.initial_events + 3);
  const std::vector<std::string> holders = ids_of(all_events(tenant, "&type=account_holder.*"));
  const std::vector<std::string> credited = ids_of(all_events(tenant, "&type=account.credited"));
  ASSERT_EQ(holders.size(), 2u);
  ASSERT_EQ(credited.size(), 1u);
  std::vector<std::string> not_holders;
  for (const std::string& id : all) {
    if (std::find(holders.begin(), holders.end(), id) == holders.end()) not_holders.push_back(id);
  }
  ASSERT_TRUE(accepting.wait_for(2));
  ASSERT_TRUE(failing.wait_for(3));

  auto ids = [&](const std::string& filter) { return ids_of(all_events(tenant, filter)); };
  const std::string to_accepting = "&endpoint_id=" + accepting_id;
  const std::string to_failing = "&endpoint_id=" + failing_id;
  // An attempt is written a moment after its answer.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (ids("&delivery_success=true" + to_accepting).size() < 2 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(ids("&delivery_success=true" + to_accepting), holders);
  EXPECT_EQ(ids("&delivery_success=false" + to_accepting), not_holders)
      << "the types it does not take and the events from before it count as not received";
  EXPECT_TRUE(ids("&delivery_success=true" + to_failing).empty());
  EXPECT_EQ(ids("&delivery_success=false" + to_failing), all);
  // Without endpoint_id: received by some endpoint, or by none.
  EXPECT_EQ(ids("&delivery_success=true"), holders);
  EXPECT_EQ(ids("&delivery_success=false"), not_holders);
  // The numbered pages filter the same way, and the filters combine.
  Reply missed = tenant.get("/v1/events?delivery_success=false" + to_failing);
  ASSERT_EQ(missed.status, 200) << missed.body;
  EXPECT_EQ(missed.json().at("pagination").at("total_items").as_int64(),
            static_cast<long long>(all.size()));
  EXPECT_EQ(ids("&delivery_success=false&type=account.*" + to_failing), credited);

  // The failing endpoint recovers and is sent the credit again: a delivery that succeeded.
  failing.set_default({200});
  Reply replay = tenant.post("/v1/webhook_endpoints/" + failing_id + "/deliveries/" +
                                 credited.at(0) + "/replay",
                             "{}");
  ASSERT_EQ(replay.status, 202) << replay.body;
  std::vector<std::string> received;
  const auto replay_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    received = ids("&delivery_success=true" + to_failing);
    if (std::find(received.begin(), received.end(), credited.at(0)) != received.end()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < replay_deadline);
  EXPECT_NE(std::find(received.begin(), received.end(), credited.at(0)), received.end());
  const std::vector<std::string> still_missed = ids("&delivery_success=false" + to_failing);
  EXPECT_EQ(std::find(still_missed.begin(), still_missed.end(), credited.at(0)),
            still_missed.end());
  const std::vector<std::string> somewhere = ids("&delivery_success=true");
  EXPECT_NE(std::find(somewhere.begin(), somewhere.end(), credited.at(0)), somewhere.end());
}

// A batch's transfers' created events (on SQLite kept in the transfers' rows, migration 23;
// on PostgreSQL rows of their own) are events as any other to every reader: listed by page and
// after a position in commit order between the events before and after the batch, counted,
// filtered, found by id, delivered to an endpoint, and replayed.
TEST(Events, ABatchsCreatedEventsAreReadListedAndDeliveredAsAnyOther) {
  Tenant tenant = new_tenant(Server::shared(), "batch events");
  harness::WebhookReceiver receiver;
  Reply endpoint =
      tenant.post("/v1/webhook_endpoints",
                  R"({"url":")" + receiver.url() +
                      R"(","event_types":["outgoing_transfer.created"]})");
  ASSERT_EQ(endpoint.status, 201) << endpoint.body;
  const std::string endpoint_id = text(endpoint.json(), "id");
  Reply funded = tenant.post("/api/v1/sandbox/tenant/accounts/" + tenant.originator + "/fund",
                             R"({"amount":)" + money(1'000'000) + "}");
  ASSERT_EQ(funded.status, 201) << funded.body;
  const std::string before = make_holder(tenant);
  json::array items;
  for (int i = 0; i < 3; ++i) {
    const json::object query{{"format", "plain_key"},
                             {"value", "300555010" + std::to_string(i)}};
    items.push_back(json::object{{"external_id", "batch-event-" + std::to_string(i)},
                                 {"amount", json::parse(money(1'000 + i))},
                                 {"query", query}});
  }
  Reply batch = tenant.post("/api/v1/outgoing_transfers",
                            json::serialize(json::object{{"tenant_account_id", tenant.originator},
                                                         {"transfers", items}}));
  ASSERT_EQ(batch.status, 201) << batch.body;
  std::vector<std::string> transfer_ids;
  const json::value answer = batch.json();
  for (const json::value& t : answer.at("accepted_transfers").as_array()) {
    transfer_ids.push_back(text(t, "id"));
  }
  ASSERT_EQ(transfer_ids.size(), 3u) << batch.body;
  const std::string after = make_holder(tenant);

  // After a position, oldest first: the holder, the three in the batch's order, the holder.
  const std::vector<json::value> events = wait_for_events(tenant, tenant.initial_events + 6);
  std::vector<std::string> order;
  std::map<std::string, json::value> created;  // by transfer id
  long long last_position = 0;
  for (const json::value& event : events) {
    EXPECT_GT(event.at("position").as_int64(), last_position);
    last_position = event.at("position").as_int64();
    const std::string type = text(event, "type");
    if (type == "outgoing_transfer.created") {
      const std::string transfer = text(event.at("data"), "id");
      order.push_back(transfer);
      created.emplace(transfer, event);
      EXPECT_EQ(text(event.at("data"), "state"), "created");
    } else if (type == "account_holder.created") {
      order.push_back(text(event.at("data"), "account_holder_id"));
    }
  }
  EXPECT_EQ(order, (std::vector<std::string>{before, transfer_ids[0], transfer_ids[1],
                                             transfer_ids[2], after}));
  ASSERT_EQ(created.size(), 3u);

  // By page, newest first, and counted; filtered by type. Up to the last of them: the
  // transfers' later steps (a second apart on the tenant clock, which runs with real time here)
  // add events after it while the test runs.
  const std::string until = "&timestamp[lte]=" + text(events.back(), "timestamp");
  Reply page = tenant.get("/v1/events?page_size=10" + until);
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_EQ(page.json().at("pagination").at("total_items").as_int64(),
            static_cast<long long>(events.size()));
  EXPECT_EQ(text(page.json().at("events").at(1), "id"), text(created.at(transfer_ids[2]), "id"));
  Reply typed = tenant.get("/v1/events?type=outgoing_transfer.created");
  ASSERT_EQ(typed.status, 200) << typed.body;
  const json::value typed_page = typed.json();
  EXPECT_EQ(typed_page.at("pagination").at("total_items").as_int64(), 3);
  ASSERT_EQ(typed_page.at("events").as_array().size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(text(typed_page.at("events").at(i).at("data"), "id"), transfer_ids[2 - i]);
  }
  Reply second = tenant.get("/v1/events?page_size=10&page_number=2" + until);
  ASSERT_EQ(second.status, 200) << second.body;
  EXPECT_EQ(second.json().at("events").as_array().size(),
            events.size() > 10 ? events.size() - 10 : 0u);
  EXPECT_EQ(all_events(tenant, "&type=account_holder.*").size(), 2u);

  // By id, as listed; an id of the same shape that no event has is 404.
  for (const auto& [transfer, listed] : created) {
    Reply one = tenant.get("/v1/events/" + text(listed, "id"));
    ASSERT_EQ(one.status, 200) << one.body;
    EXPECT_EQ(one.json(), listed);
  }
  std::string unknown = text(created.begin()->second, "id");
  unknown.back() = unknown.back() == 'A' ? 'B' : 'A';
  EXPECT_EQ(tenant.get("/v1/events/" + unknown).status, 404);
  Tenant other = new_tenant(Server::shared(), "other");
  EXPECT_EQ(other.get("/v1/events/" + text(created.begin()->second, "id")).status, 404);

  // Delivered to the endpoint, each once, with the event's body; then found by the delivery
  // filter, and one replayed.
  ASSERT_TRUE(receiver.wait_for(3));
  EXPECT_TRUE(receiver.stays_at(3, 500));
  std::set<std::string> delivered;
  for (const auto& request : receiver.requests()) {
    const json::value body = json::parse(request.body);
    delivered.insert(text(body, "id"));
    EXPECT_EQ(body.at("data"), created.at(text(body.at("data"), "id")).at("data"));
  }
  std::set<std::string> listed_ids;
  for (const auto& [transfer, listed] : created) listed_ids.insert(text(listed, "id"));
  EXPECT_EQ(delivered, listed_ids);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (all_events(tenant, "&delivery_success=true").size() < 3 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(all_events(tenant, "&delivery_success=true&endpoint_id=" + endpoint_id).size(), 3u);
  // Counted by type (the transfers' later steps have types of their own).
  auto missed_of = [&](const std::string& type) {
    Reply missed = tenant.get("/v1/events?delivery_success=false&type=" + type);
    EXPECT_EQ(missed.status, 200) << missed.body;
    return missed.json().at("pagination").at("total_items").as_int64();
  };
  EXPECT_EQ(missed_of("outgoing_transfer.created"), 0);
  EXPECT_EQ(missed_of("account_holder.*"), 2);
  Reply replay = tenant.post("/v1/webhook_endpoints/" + endpoint_id + "/deliveries/" +
                                 text(created.at(transfer_ids[1]), "id") + "/replay",
                             "{}");
  ASSERT_EQ(replay.status, 202) << replay.body;
  ASSERT_TRUE(receiver.wait_for(4));
  EXPECT_EQ(text(json::parse(receiver.requests().back().body), "id"),
            text(created.at(transfer_ids[1]), "id"));
}

TEST(Events, ATenantSeesOnlyItsOwnEvents) {
  const Server& server = Server::shared();
  Tenant tenant = new_tenant(server);
  Tenant other = new_tenant(server, "other");
  make_holder(tenant);
  make_holder(other);
  make_holder(other);
  std::vector<json::value> mine = wait_for_events(tenant, tenant.initial_events + 1);
  std::vector<json::value> theirs = wait_for_events(other, other.initial_events + 2);
  ASSERT_EQ(mine.size(), tenant.initial_events + 1);
  ASSERT_EQ(theirs.size(), other.initial_events + 2);
  EXPECT_EQ(tenant.get("/v1/events").json().at("pagination").at("total_items").as_int64(),
            static_cast<long long>(mine.size()));
  for (const json::value& event : theirs) {
    EXPECT_EQ(tenant.get("/v1/events/" + text(event, "id")).status, 404);
  }
  const std::string their_event = text(theirs[0], "id");
  expect_error(tenant.get("/v1/events/" + their_event), 404, "item_not_found", "");
  expect_error(server.get("/api/v1/events/" + their_event, {tenant.participant}), 404,
               "item_not_found", "");
  EXPECT_EQ(other.get("/v1/events/" + their_event).status, 200);
}

TEST(Events, TheWebhooksScopeGuardsBothSurfaces) {
  const Server& server = Server::shared();
  Tenant tenant = new_tenant(server);
  const std::string event = text(all_events(tenant).at(0), "id");

  for (const std::string& path : {std::string("/v1/events"), "/v1/events/" + event}) {
    expect_error(server.get(path, {tenant.key("ledger:admin,cards:admin,payouts:admin")}), 403,
                 "not_authorized", "");
    EXPECT_EQ(server.get(path, {tenant.key("webhooks:read")}).status, 200) << path;
    EXPECT_EQ(server.get(path).status, 401) << path;
    EXPECT_EQ(server.get(path, {tenant.participant}).status, 401) << "a token is not a key";
  }
  for (const std::string& path : {std::string("/api/v1/events"), "/api/v1/events/" + event}) {
    expect_error(server.get(path, {tenant.token("collections outgoing_transfers")}), 403,
                 "not_authorized", "");
    EXPECT_EQ(server.get(path, {tenant.token("webhooks")}).status, 200) << path;
    EXPECT_EQ(server.get(path).status, 401) << path;
  }
}

// Drives a broad set of actions and checks that every event type they emit is in the catalogue
// of docs/webhooks.md, which is what keeps that document true.
TEST(Events, EveryEmittedTypeIsInTheCatalogueOfTheWebhooksDocument) {
  Server server;  // a clock of its own to advance
  Tenant tenant = new_tenant(server, "catalogue");
  const std::set<std::string> documented = webhooks_document::event_types();
  ASSERT_GE(documented.size(), 30u) << "the catalogue table of docs/webhooks.md";

  // Ledger: an account holder, an account of theirs, funded.
  const std::string holder = make_holder(tenant);
  Reply account = tenant.post("/v1/ledger/accounts",
                              R"({"name":"main","type":"savings_account","currency":"COP",)"
                              R"("account_holder_id":")" + holder + "\"}");
  ASSERT_EQ(account.status, 201) << account.body;
  const std::string account_id = text(account.json(), "id");
  ASSERT_EQ(tenant.post("/v1/sandbox/accounts/" + account_id + "/fund",
                        R"({"amount":)" + money(10'000'000) + "}")
                .status,
            201);

  // Cards: a card with a balance, an approved authorization captured, a declined one, a block.
  Reply card = tenant.post("/v1/cards", R"({"account_id":")" + account_id +
                                            R"(","type":"virtual","initial_balance":)" +
                                            money(100'000) + "}");
  ASSERT_EQ(card.status, 201) << card.body;
  const std::string card_id = text(card.json(), "id");
  auto authorize = [&](long long amount) {
    Reply made = tenant.post("/v1/sandbox/cards/" + card_id + "/authorizations",
                             R"({"amount":)" + money(amount) +
                                 R"(,"merchant":{"name":"Acme","mcc":"5812","mid":"M1",)"
                                 R"("country":"CO"},"channel":"online_purchase"})");
    EXPECT_EQ(made.status, 201) << made.body;
    return text(made.json(), "id");
  };
  const std::string approved = authorize(30'000);
  ASSERT_EQ(tenant.post("/v1/sandbox/card_transactions/" + approved + "/capture", "{}").status,
            200);
  authorize(1'000'000);  // more than the balance: declined
  Reply blocked =
      tenant.server.send({"PATCH", "/v1/cards/" + card_id, R"({"state":"blocked"})", {tenant.core}});
  ASSERT_EQ(blocked.status, 200) << blocked.body;

  // Collections: a collection, a QR code, a sandbox payment that completes it.
  payment_fixtures::Tenant payer{tenant.participant, tenant.receptor};
  const json::value collection = payment_fixtures::create_collection(
      server, payer, payment_fixtures::with_limits(1'000, 20'000, 10'000, 20'000));
  Reply qr = payment_fixtures::create_qr(server, payer, text(collection, "id"),
                                         R"({"usage_mode":"multiple_use","amount":)" +
                                             money(20'000) + "}");
  ASSERT_EQ(qr.status, 201) << qr.body;
  Reply paid = payment_fixtures::attempt(
      server, payer,
      payment_fixtures::attempt_body(20'000, payment_fixtures::key_of(collection),
                                     R"(,"payment_id":")" + text(qr.json(), "payment_id") + "\""));
  ASSERT_EQ(paid.status, 202) << paid.body;

  // An outgoing transfer and a payout, moved to their end by advancing the clock.
  ASSERT_EQ(tenant.post("/api/v1/sandbox/tenant/accounts/" + tenant.originator + "/fund",
                        R"({"amount":)" + money(1'000'000) + "}")
                .status,
            201);
  json::object transfer{{"external_id", harness::new_uuid()},
                        {"amount", json::parse(money(10'000))},
                        {"query", json::object{{"format", "plain_key"}, {"value", "3001234567"}}}};
  Reply sent = tenant.post(
      "/api/v1/outgoing_transfers",
      json::serialize(json::object{{"tenant_account_id", tenant.originator},
                                   {"transfers", json::array{transfer}}}));
  ASSERT_EQ(sent.status, 201) << sent.body;
  ASSERT_EQ(sent.json().at("accepted_transfers").as_array().size(), 1u) << sent.body;
  Reply payout = tenant.post(
      "/v1/core/payouts",
      R"({"account_id":")" + account_id + R"(","external_id":")" + harness::new_uuid() +
          R"(","method":"co_breb","amount":)" + money(25'000) +
          R"(,"target":{"key_type":"cellphone","key_value":"3001234567"}})");
  ASSERT_EQ(payout.status, 201) << payout.body;
  advance(tenant, 30);
  wait_for_events(tenant, 1, "&type=outgoing_transfer.successful");
  wait_for_events(tenant, 1, "&type=payout.settled");

  const std::set<std::string> emitted = types_of(all_events(tenant));
  for (const char* expected :
       {"account_holder.created", "account.credited", "account.debited", "card.active",
        "card.blocked", "card_balance_operation.created",
        "card_transaction.authorization_approved", "card_transaction.authorization_declined",
        "card_transaction.capture", "collection.created", "collection.ready", "collection.paid",
        "collection.attempt_successful", "outgoing_transfer.created",
        "outgoing_transfer.successful", "payout.pending", "payout.settled"}) {
    EXPECT_TRUE(emitted.contains(expected)) << expected << " was not emitted";
  }
  for (const std::string& type : emitted) {
    EXPECT_TRUE(documented.contains(type)) << type << " is not in docs/webhooks.md";
    // The type filter takes every type the server emits.
    EXPECT_EQ(tenant.get("/v1/events?type=" + type).status, 200) << type;
  }
}
