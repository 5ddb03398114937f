// Webhook endpoints: where deliveries may go (check_url, check_address), the event type
// catalogue and subscriptions, and the stored endpoint (limit, start position, secrets sealed,
// rotation overlap, deletion) on both engines.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "api/error_status.hpp"
#include "core/crypto.hpp"
#include "core/ids.hpp"
#include "core/limits.hpp"
#include "domain/auth/credentials.hpp"
#include "domain/collections/collections.hpp"
#include "domain/events/events.hpp"
#include "domain/transfers/outgoing_transfers.hpp"
#include "domain/webhooks/endpoints.hpp"
#include "domain/webhooks/secrets.hpp"
#include "test_stores.hpp"

using namespace tesoro;
using webhooks::Destinations;

namespace {

const Destinations k_sandbox_any{true, {"*"}};
const Destinations k_production_any{false, {"*"}};

// The message of the refusal, or "" when the URL is accepted.
std::string refusal(std::string_view url, const Destinations& destinations) {
  auto error = webhooks::check_url(url, destinations);
  if (!error) return "";
  EXPECT_EQ(tesoro::api::http_status(*error), 400) << url;
  EXPECT_EQ(error->first_code(), "validation_error") << url;
  EXPECT_EQ(error->errors.front().path, "url") << url;
  return error->errors.front().message;
}

bool accepted(std::string_view url, const Destinations& destinations) {
  return refusal(url, destinations).empty();
}

}  // namespace

TEST(WebhookUrls, PublicHttpsUrlsAreAccepted) {
  for (const char* url :
       {"https://hooks.example.com/tesoro", "https://hooks.example.com", "https://EXAMPLE.com/x",
        "https://hooks.example.com:8443/a/b?c=d&e=f", "https://8.8.8.8/hook",
        "https://[2001:4860:4860::8888]/hook", "https://xn--bcher-kva.example/",
        "https://example.com./trailing-dot", "https://a-b.c-d.example.co/"}) {
    EXPECT_TRUE(accepted(url, k_production_any)) << url << ": " << refusal(url, k_production_any);
    EXPECT_TRUE(accepted(url, k_sandbox_any)) << url;
  }
}

TEST(WebhookUrls, ShapeProblemsAreRefused) {
  for (const char* url : {"",
                          "not a url",
                          "hooks.example.com/path",
                          "/relative/path",
                          "https:no-authority",
                          "https:///no-host",
                          "https://:443/",
                          "ftp://example.com/",
                          "ws://example.com/",
                          "file:///etc/passwd",
                          "https://user:pass@example.com/",
                          "https://user@example.com/",
                          "https://@example.com/",
                          "https://example.com/#fragment",
                          "https://example.com/hook%00",
                          "https://example.com/hook?x=%0A",
                          "https://example.com/%1f",
                          "https://example.com/#",
                          "https://example.com:0/",
                          "https://example.com:65536/",
                          "https://example.com:99999/",
                          "https://example.com:/",
                          "https://exa mple.com/",
                          "https://exa_mple.com/",
                          "https://-bad.example.com/",
                          "https://bad-.example.com/",
                          "https://a..b.com/",
                          "https://[v1.fe]/",
                          "https://example.com%2fevil/",
                          "https://127.1/",
                          "https://0x7f.0.0.1/",
                          "https://2130706433/",
                          "https://10.1/"}) {
    EXPECT_FALSE(accepted(url, k_sandbox_any)) << url;
  }
  std::string long_url = "https://example.com/" + std::string(limits::k_webhook_url_max_bytes, 'a');
  EXPECT_NE(refusal(long_url, k_sandbox_any).find("at most"), std::string::npos);
  EXPECT_NE(refusal("https://u:p@example.com/", k_sandbox_any).find("user information"),
            std::string::npos);
  EXPECT_NE(refusal("ftp://example.com/", k_sandbox_any).find("http or https"), std::string::npos);
  auto at_path = webhooks::check_url("nope", k_sandbox_any, "endpoints.2.url");
  ASSERT_TRUE(at_path);
  EXPECT_EQ(at_path->errors.front().path, "endpoints.2.url");
}

TEST(WebhookUrls, HttpOnlyInTheSandbox) {
  EXPECT_TRUE(accepted("http://hooks.example.com/", k_sandbox_any));
  EXPECT_NE(refusal("http://hooks.example.com/", k_production_any).find("https"),
            std::string::npos);
  EXPECT_TRUE(accepted("HTTPS://hooks.example.com/", k_production_any));
}

TEST(WebhookUrls, LoopbackOnlyInTheSandbox) {
  for (const char* url :
       {"http://localhost:9000/hook", "http://LOCALHOST/", "http://api.localhost/",
        "http://127.0.0.1:8080/", "http://127.9.8.7/", "http://[::1]:9000/",
        "http://[::ffff:127.0.0.1]/", "https://localhost./"}) {
    EXPECT_TRUE(accepted(url, k_sandbox_any)) << url << ": " << refusal(url, k_sandbox_any);
    std::string https(url);
    if (https.starts_with("http://")) https = "https://" + https.substr(7);
    EXPECT_NE(refusal(https, k_production_any).find("loopback"), std::string::npos) << https;
  }
  // With a list that is not `*`, loopback must be listed like any host.
  Destinations listed{true, {"hooks.example.com"}};
  EXPECT_FALSE(accepted("http://127.0.0.1:9000/", listed));
  EXPECT_FALSE(accepted("http://localhost:9000/", listed));
  EXPECT_TRUE(accepted("http://localhost:9000/", Destinations{true, {"localhost"}}));
  // Named or not, never in production.
  EXPECT_FALSE(accepted("https://localhost/", Destinations{false, {"localhost"}}));
  EXPECT_FALSE(accepted("https://127.0.0.1/", Destinations{false, {"127.0.0.1"}}));
}

TEST(WebhookUrls, RestrictedAddressesNeedToBeNamedExactly) {
  for (const char* host : {"10.0.0.1",
                           "10.255.255.255",
                           "172.16.0.1",
                           "172.31.255.255",
                           "192.168.1.1",
                           "169.254.169.254",
                           "100.64.0.1",
                           "100.127.255.255",
                           "224.0.0.1",
                           "239.1.2.3",
                           "0.0.0.0",
                           "0.1.2.3",
                           "255.255.255.255",
                           "240.0.0.1",
                           "[fc00::1]",
                           "[fd12:3456::1]",
                           "[fe80::1]",
                           "[febf::1]",
                           "[fec0::1]",
                           "[ff02::1]",
                           "[::]",
                           "[::ffff:10.0.0.1]",
                           "[::ffff:169.254.169.254]",
                           "[::ffff:0a00:0001]",
                           "[64:ff9b::10.0.0.1]"}) {
    std::string url = "https://" + std::string(host) + "/hook";
    EXPECT_NE(refusal(url, k_sandbox_any).find("private"), std::string::npos) << url;
    EXPECT_FALSE(accepted(url, k_production_any)) << url;
    // A pattern does not name it; the exact address does (brackets optional for IPv6).
    std::string bare(host);
    if (bare.front() == '[') bare = bare.substr(1, bare.size() - 2);
    EXPECT_FALSE(accepted(url, Destinations{false, {"*", "*.example.com"}})) << url;
    EXPECT_TRUE(accepted(url, Destinations{false, {bare}})) << url;
    EXPECT_TRUE(accepted(url, Destinations{false, {"example.com", std::string(host)}})) << url;
  }
  // Neighbours of the blocks are public.
  for (const char* host : {"11.0.0.1", "172.15.255.255", "172.32.0.1", "192.169.0.1", "169.253.0.1",
                           "100.63.255.255", "100.128.0.1", "223.255.255.255", "1.1.1.1",
                           "[2606:4700::1111]", "[fbff::1]", "[fe7f::1]"}) {
    std::string url = "https://" + std::string(host) + "/";
    EXPECT_TRUE(accepted(url, k_production_any)) << url;
  }
  // An IPv4-mapped form names the same address as its IPv4 text in the list.
  EXPECT_TRUE(accepted("https://[::ffff:10.0.0.1]/", Destinations{false, {"::FFFF:a00:1"}}));
}

TEST(WebhookUrls, HostsMustMatchTheAllowList) {
  Destinations list{false, {"hooks.example.com", "*.partner.co", "8.8.4.4"}};
  EXPECT_TRUE(accepted("https://hooks.example.com/", list));
  EXPECT_TRUE(accepted("https://HOOKS.example.com./", list));
  EXPECT_TRUE(accepted("https://a.partner.co/", list));
  EXPECT_TRUE(accepted("https://a.b.partner.co/", list));
  EXPECT_TRUE(accepted("https://8.8.4.4/", list));
  for (const char* url :
       {"https://example.com/", "https://other.example.com/", "https://partner.co/",
        "https://evilpartner.co/", "https://hooks.example.com.evil.io/", "https://8.8.8.8/"}) {
    EXPECT_NE(refusal(url, list).find("--webhook-allowed-hosts"), std::string::npos) << url;
  }
  EXPECT_FALSE(accepted("https://anything.example/", Destinations{false, {}}));
  // Entries are compared without the spaces a hand-written list may put around them.
  EXPECT_TRUE(accepted("https://hooks.example.com/", Destinations{false, {" hooks.example.com "}}));
  EXPECT_TRUE(accepted("https://a.partner.co/", Destinations{false, {" *.Partner.co "}}));
  EXPECT_TRUE(accepted("https://any.example/", Destinations{false, {" * "}}));
}

TEST(WebhookAddresses, TheDispatcherChecksEveryResolvedAddress) {
  // A public name may resolve to anything: the address decides.
  EXPECT_TRUE(webhooks::check_address("hooks.example.com", "93.184.216.34", k_production_any));
  EXPECT_TRUE(webhooks::check_address("hooks.example.com", "2606:2800:220:1::1", k_production_any));
  for (const char* address : {"10.0.0.1", "192.168.0.10", "169.254.169.254", "100.64.1.1",
                              "0.0.0.0", "224.0.0.251", "255.255.255.255", "fc00::2", "fe80::1",
                              "ff02::1", "::", "::ffff:10.0.0.1", "::ffff:192.168.1.1"}) {
    EXPECT_FALSE(webhooks::check_address("hooks.example.com", address, k_production_any))
        << address;
    EXPECT_FALSE(webhooks::check_address("hooks.example.com", address, k_sandbox_any)) << address;
    // Named exactly, by address or by host name, it is the operator's choice.
    EXPECT_TRUE(
        webhooks::check_address("hooks.example.com", address, Destinations{false, {"*", address}}))
        << address;
    EXPECT_TRUE(
        webhooks::check_address("hooks.internal", address, Destinations{false, {"hooks.internal"}}))
        << address;
    EXPECT_FALSE(
        webhooks::check_address("a.internal", address, Destinations{false, {"*.internal"}}))
        << address;
  }
  // Loopback: the sandbox only, whatever name led there.
  for (const char* address : {"127.0.0.1", "127.0.1.1", "::1", "::ffff:127.0.0.1"}) {
    EXPECT_TRUE(webhooks::check_address("localhost", address, k_sandbox_any)) << address;
    EXPECT_TRUE(webhooks::check_address("hooks.example.com", address, k_sandbox_any)) << address;
    EXPECT_FALSE(webhooks::check_address("hooks.example.com", address, k_production_any))
        << address;
    EXPECT_FALSE(
        webhooks::check_address("localhost", address, Destinations{false, {"localhost", address}}))
        << address;
  }
  // The host is checked again: the allow-list may have changed since registration.
  Destinations narrow{false, {"hooks.example.com"}};
  EXPECT_TRUE(webhooks::check_address("hooks.example.com", "93.184.216.34", narrow));
  EXPECT_FALSE(webhooks::check_address("other.example.com", "93.184.216.34", narrow));
  // Not an address at all.
  EXPECT_FALSE(webhooks::check_address("hooks.example.com", "hooks.example.com", k_sandbox_any));
  EXPECT_FALSE(webhooks::check_address("hooks.example.com", "", k_sandbox_any));
  EXPECT_FALSE(webhooks::check_address("hooks.example.com", "300.1.1.1", k_sandbox_any));
  // An IP literal host: its own rules, then the address (the same one).
  EXPECT_TRUE(webhooks::check_address("8.8.8.8", "8.8.8.8", k_production_any));
  EXPECT_TRUE(webhooks::check_address("[::1]", "::1", k_sandbox_any));
  EXPECT_FALSE(webhooks::check_address("10.0.0.1", "10.0.0.1", k_sandbox_any));
  EXPECT_TRUE(webhooks::check_address("10.0.0.1", "10.0.0.1", Destinations{false, {"10.0.0.1"}}));
}

TEST(WebhookEventTypes, TheCatalogueHasEveryStateEventOfTheModules) {
  const std::vector<std::string>& types = webhooks::event_types();
  auto has = [&](const std::string& type) {
    return std::find(types.begin(), types.end(), type) != types.end();
  };
  for (const std::string& state : collections::states()) EXPECT_TRUE(has("collection." + state));
  for (const std::string& state : transfers::states()) {
    EXPECT_TRUE(has("outgoing_transfer." + state)) << state;
  }
  for (const char* type : {"account.credited", "account.debited", "card.active",
                           "card_transaction.authorization_approved", "payout.settled",
                           "collection.attempt_successful", "activation_link.used"}) {
    EXPECT_TRUE(has(type)) << type;
  }
  std::set<std::string> unique(types.begin(), types.end());
  EXPECT_EQ(unique.size(), types.size());
}

TEST(WebhookEventTypes, KnownTypesAndPrefixPatternsPass) {
  EXPECT_FALSE(webhooks::check_event_types({}));
  EXPECT_FALSE(webhooks::check_event_types(
      {"collection.paid", "collection.*", "payout.*", "card_transaction.capture", "card.*"}));
  auto error = webhooks::check_event_types({"collection.paid", "collection.nope", "*",
                                            "collection.paid", "nothing.*", "collection.",
                                            "collection.p*", "card_transaction.*"});
  ASSERT_TRUE(error);
  EXPECT_EQ(tesoro::api::http_status(*error), 400);
  std::vector<std::string> paths;
  for (const ErrorItem& item : error->errors) paths.push_back(item.path.value_or(""));
  EXPECT_EQ(paths, (std::vector<std::string>{"event_types.1", "event_types.2", "event_types.3",
                                             "event_types.4", "event_types.5", "event_types.6"}));
  EXPECT_EQ(error->errors[2].message, "is listed twice");
  std::vector<std::string> too_many(limits::k_webhook_event_types_max + 1, "collection.paid");
  auto many = webhooks::check_event_types(too_many);
  ASSERT_TRUE(many);
  EXPECT_EQ(many->errors.front().path, "event_types");
}

TEST(WebhookEventTypes, SubscriptionsMatchExactTypesAndPrefixes) {
  EXPECT_TRUE(events::type_matches({}, "collection.paid"));
  EXPECT_TRUE(events::type_matches({"collection.paid"}, "collection.paid"));
  EXPECT_FALSE(events::type_matches({"collection.paid"}, "collection.ready"));
  EXPECT_TRUE(events::type_matches({"payout.*", "collection.*"}, "collection.attempt_successful"));
  EXPECT_FALSE(events::type_matches({"card.*"}, "card_transaction.capture"));
  EXPECT_TRUE(events::type_matches({"card.*"}, "card.blocked"));
  EXPECT_FALSE(events::type_matches({"collection.*"}, "collections.paid"));
}

namespace {

class WebhookEndpointsStore : public test_stores::EngineStoreTest {
 protected:
  crypto::Sealer sealer{crypto::random_bytes(32)};
  std::string tenant_id;
  const time::Micros now = time::now_micros();

  void SetUp() override {
    EngineStoreTest::SetUp();
    if (IsSkipped()) return;
    tenant_id = test_stores::write_ok<std::string>(
        *temp->store, [&](store::Tx& tx) { return auth::create_tenant(tx, "t", "sandbox", now); });
  }

  Result<webhooks::Created> create(const std::string& url = "https://hooks.example.com/") {
    return temp->store->write<webhooks::Created>([&](store::Tx& tx) {
      return webhooks::create_endpoint(tx, sealer, tenant_id, {url, std::nullopt, {}, true},
                                       k_sandbox_any, now);
    });
  }

  std::vector<std::string> secrets_at(const std::string& id, time::Micros real_now) {
    return temp->store
        ->read<std::vector<std::string>>([&](store::Tx& tx) -> Result<std::vector<std::string>> {
          return webhooks::signing_secrets(tx, sealer, tenant_id, id, real_now);
        })
        .value();
  }
};

}  // namespace

TEST_P(WebhookEndpointsStore, SecretIsStoredSealedAndSigns) {
  auto created = create();
  ASSERT_TRUE(created.ok()) << created.error().message;
  EXPECT_TRUE(created->endpoint.id.starts_with("whe_"));
  EXPECT_TRUE(webhooks::secret_key(created->secret).has_value());
  EXPECT_EQ(webhooks::secret_key(created->secret)->size(), limits::k_secret_bytes);
  std::int64_t in_clear = test_stores::read_integer(
      *temp->store, "SELECT COUNT(*) FROM webhook_endpoints WHERE secret_sealed LIKE ?",
      {"%" + created->secret.substr(6) + "%"});
  EXPECT_EQ(in_clear, 0);
  EXPECT_EQ(secrets_at(created->endpoint.id, now), std::vector<std::string>{created->secret});
  EXPECT_TRUE(secrets_at("whe_unknownunknownunknown0", now).empty());
}

TEST_P(WebhookEndpointsStore, RotationKeepsThePreviousSecretForTheOverlap) {
  auto created = create();
  ASSERT_TRUE(created.ok());
  const std::string& id = created->endpoint.id;
  auto rotate = [&](time::Micros real_now) {
    return test_stores::write_ok<webhooks::Created>(*temp->store, [&](store::Tx& tx) {
      return webhooks::rotate_secret(tx, sealer, tenant_id, id, now, real_now);
    });
  };
  webhooks::Created first = rotate(now);
  EXPECT_NE(first.secret, created->secret);
  const time::Micros overlap = limits::k_webhook_secret_overlap_seconds * time::k_micros_per_second;
  EXPECT_EQ(secrets_at(id, now + overlap - 1),
            (std::vector<std::string>{first.secret, created->secret}));
  EXPECT_EQ(secrets_at(id, now + overlap), std::vector<std::string>{first.secret});
  // A second rotation within the window: the secret it replaces overlaps, the oldest ends.
  webhooks::Created second = rotate(now + 10);
  EXPECT_EQ(secrets_at(id, now + 20), (std::vector<std::string>{second.secret, first.secret}));
  EXPECT_EQ(secrets_at(id, now + 10 + overlap), std::vector<std::string>{second.secret});
  auto unknown = temp->store->write<webhooks::Created>(
      [&](store::Tx& tx) { return webhooks::rotate_secret(tx, sealer, "other", id, now, now); });
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(tesoro::api::http_status(unknown.error()), 404);
}

TEST_P(WebhookEndpointsStore, StartsAfterTheLastPositionedEvent) {
  auto first = create();
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->endpoint.start_position, 0);
  test_stores::write_ok<int>(*temp->store, [&](store::Tx& tx) -> Result<int> {
    events::emit(tx, tenant_id, "payout.pending", "{}", now);
    events::emit(tx, tenant_id, "payout.settled", "{}", now);
    return 0;
  });
  test_stores::write_ok<std::int64_t>(*temp->store, [](store::Tx& tx) -> Result<std::int64_t> {
    return events::assign_positions(tx, 10);
  });
  std::int64_t last = test_stores::read_integer(*temp->store, "SELECT MAX(position) FROM events");
  auto second = create();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->endpoint.start_position, last);
  EXPECT_GT(last, 0);
}

TEST_P(WebhookEndpointsStore, ATenantHasAtMostTheLimit) {
  for (std::int64_t i = 0; i < limits::k_webhook_endpoints_max; ++i) ASSERT_TRUE(create().ok());
  auto refused = create();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(tesoro::api::http_status(refused.error()), 422);
  EXPECT_EQ(refused.error().first_code(), "webhook_endpoint_limit_reached");
}

TEST_P(WebhookEndpointsStore, DeletingFailsItsPendingDeliveries) {
  auto created = create();
  ASSERT_TRUE(created.ok());
  const std::string& id = created->endpoint.id;
  test_stores::write_ok<int>(*temp->store, [&](store::Tx& tx) -> Result<int> {
    for (const char* state : {"pending", "pending", "delivered"}) {
      tx.exec(
          "INSERT INTO webhook_deliveries (tenant_id, id, endpoint_id, event_id, "
          "event_position, event_type, state, attempts, next_attempt_at_micros, replay, "
          "inserted_at, updated_at) VALUES (?, ?, ?, 'evt_x', 1, 'payout.pending', ?, 0, 1, "
          "0, 'x', 'x')",
          {tenant_id, ids::generate("whq"), id, std::string(state)});
    }
    return 0;
  });
  auto deleted = temp->store->write<Unit>(
      [&](store::Tx& tx) { return webhooks::delete_endpoint(tx, tenant_id, id, now); });
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(
      test_stores::read_integer(*temp->store,
                                "SELECT COUNT(*) FROM webhook_deliveries WHERE state = 'failed' "
                                "AND next_attempt_at_micros IS NULL"),
      2);
  EXPECT_EQ(test_stores::read_integer(*temp->store,
                                      "SELECT COUNT(*) FROM webhook_deliveries "
                                      "WHERE state = 'delivered'"),
            1);
  auto again = temp->store->write<Unit>(
      [&](store::Tx& tx) { return webhooks::delete_endpoint(tx, tenant_id, id, now); });
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(tesoro::api::http_status(again.error()), 404);
}

TESORO_ON_BOTH_ENGINES(WebhookEndpointsStore);
