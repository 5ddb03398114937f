#include <gtest/gtest.h>

#include <chrono>

#include "api/context.hpp"
#include "api/error_status.hpp"
#include "api/json.hpp"
#include "app/credential_cache.hpp"
#include "app/rate_limiter.hpp"
#include "core/limits.hpp"
#include "domain/auth/credentials.hpp"

using namespace tesoro;

TEST(Scopes, CoreLevelsAreOrdered) {
  auth::Principal principal{"t", "k", auth::CredentialKind::api_key, {"ledger:write", "cards:read"}, "sandbox"};
  EXPECT_TRUE(auth::core_allows(principal, "ledger", auth::Level::read));
  EXPECT_TRUE(auth::core_allows(principal, "ledger", auth::Level::write));
  EXPECT_FALSE(auth::core_allows(principal, "ledger", auth::Level::admin));
  EXPECT_TRUE(auth::core_allows(principal, "cards", auth::Level::read));
  EXPECT_FALSE(auth::core_allows(principal, "cards", auth::Level::write));
  EXPECT_FALSE(auth::core_allows(principal, "payouts", auth::Level::read));
  principal.kind = auth::CredentialKind::oauth_token;
  EXPECT_FALSE(auth::core_allows(principal, "ledger", auth::Level::read));
}

TEST(Scopes, ParticipantFullScopeIncludesReadonly) {
  auth::Principal principal{"t", "c", auth::CredentialKind::oauth_token, {"collections", "tenant_accounts:readonly"}, "sandbox"};
  EXPECT_TRUE(auth::participant_allows(principal, "collections"));
  EXPECT_TRUE(auth::participant_allows(principal, "collections:readonly"));
  EXPECT_TRUE(auth::participant_allows(principal, "tenant_accounts:readonly"));
  EXPECT_FALSE(auth::participant_allows(principal, "outgoing_transfers:readonly"));
  auth::Principal readonly{"t", "c", auth::CredentialKind::oauth_token, {"collections:readonly"}, "sandbox"};
  EXPECT_FALSE(auth::participant_allows(readonly, "collections"));
}

TEST(Scopes, ValidationAndSplitting) {
  EXPECT_TRUE(auth::is_core_scope("spending_controls:admin"));
  EXPECT_TRUE(auth::is_core_scope("webhooks:read"));
  EXPECT_FALSE(auth::is_core_scope("ledger"));
  EXPECT_FALSE(auth::is_core_scope("ledger:owner"));
  EXPECT_FALSE(auth::is_core_scope("bank:read"));
  EXPECT_TRUE(auth::is_participant_scope("webhooks"));
  EXPECT_FALSE(auth::is_participant_scope("webhooks:readonly"));
  auto scopes = auth::split_scopes(" a, b ,,a", ',');
  ASSERT_EQ(scopes.size(), 2u);
  EXPECT_EQ(scopes[0], "a");
  EXPECT_EQ(scopes[1], "b");
}

TEST(RateLimiter, BucketRefillsOverTime) {
  app::RateLimiter limiter(10, 3);
  auto now = std::chrono::steady_clock::now();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.take("k", now).allowed);
  auto refused = limiter.take("k", now);
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.limit, 3);
  EXPECT_EQ(refused.remaining, 0);
  EXPECT_GE(refused.retry_after_seconds, 1);
  EXPECT_TRUE(limiter.take("other", now).allowed);  // buckets are per key
  EXPECT_TRUE(limiter.take("k", now + std::chrono::milliseconds(150)).allowed);
}

TEST(RateLimiter, HeaderValuesDescribeOneWindow) {
  app::RateLimiter limiter(25, 50);  // the sandbox defaults: a quota of 50 per 2 s window
  auto now = std::chrono::steady_clock::now();
  auto first = limiter.take("k", now);
  EXPECT_EQ(first.limit, 50);
  EXPECT_EQ(first.window_seconds, 2);
  EXPECT_EQ(first.remaining, 49);
  EXPECT_EQ(first.reset_seconds, 1);
  app::RateLimiter::Decision last = first;
  while (last.allowed) {
    last = limiter.take("k", now);
    EXPECT_LE(last.reset_seconds, last.window_seconds);
  }
  EXPECT_EQ(last.remaining, 0);
  EXPECT_EQ(last.retry_after_seconds, 1);
  EXPECT_EQ(last.reset_seconds, last.retry_after_seconds);
}

#include "test_stores.hpp"

TEST(Tokens, ExpireAfterTheirLifetimeAndRefreshRotates) {
  test_stores::TempStore temp(store::Engine::sqlite);
  auto now = time::now_micros();
  struct Setup {
    auth::CreatedClient client;
    auth::TokenGrant grant;
  };
  auto setup = temp.store->write<Setup>([&](store::Tx& tx) -> Result<Setup> {
    auto tenant = auth::create_tenant(tx, "t", "sandbox", now);
    auto client = auth::create_client(tx, tenant.value(), {"collections", "webhooks"}, now);
    auto grant = auth::grant_client_credentials(tx, client->client_id, client->client_secret,
                                                std::string("collections:readonly"), "sandbox", now);
    return Setup{client.value(), grant.value()};
  }).value();
  EXPECT_EQ(setup.grant.scopes, std::vector<std::string>{"collections:readonly"});
  auto authenticate_at = [&](time::Micros at) {
    return temp.store->read<auth::Principal>([&](store::Tx& tx) {
      return auth::authenticate(tx, auth::Surface::participant, setup.grant.access_token,
                                "sandbox", at);
    });
  };
  EXPECT_TRUE(authenticate_at(now + 3599 * time::k_micros_per_second).ok());
  auto expired = authenticate_at(now + 3600 * time::k_micros_per_second);
  ASSERT_FALSE(expired.ok());
  EXPECT_EQ(expired.error().first_code(), "expired_token");
  EXPECT_EQ(expired.error().errors[0].message, "the access token expired; request a new one");
  // The same token is refused by a server of the other environment.
  auto other_environment = temp.store->read<auth::Principal>([&](store::Tx& tx) {
    return auth::authenticate(tx, auth::Surface::participant, setup.grant.access_token,
                              "production", now);
  });
  EXPECT_FALSE(other_environment.ok());
  // A refresh may narrow scopes but not widen them.
  auto widened = temp.store->write<auth::TokenGrant>([&](store::Tx& tx) {
    return auth::grant_refresh_token(tx, setup.grant.refresh_token, std::string("outgoing_transfers"), "sandbox", now);
  });
  ASSERT_FALSE(widened.ok());
  EXPECT_EQ(widened.error().first_code(), "invalid_scope");
}

TEST(Credentials, HintIsTheSchemePrefixAndFourCharactersAtMost) {
  EXPECT_EQ(auth::credential_hint("sk_sandbox_AbCdEfGhIjKl"), "sk_sandbox_AbCd");
  EXPECT_EQ(auth::credential_hint("sk_production_AbCdEf"), "sk_production_AbCd");
  EXPECT_EQ(auth::credential_hint("at_WxYz0123456789"), "at_WxYz");
  EXPECT_EQ(auth::credential_hint("no-prefix-secret"), "no-p");
  EXPECT_EQ(auth::credential_hint("sk_"), "sk_");
  EXPECT_EQ(auth::credential_hint("at_\n\x01zz"), "at_??zz");
  // An underscore deep in a secret is no scheme prefix.
  EXPECT_EQ(auth::credential_hint("abcdefgh_ijkl"), "abcd");
}

TEST(Credentials, BearerCredentialRefusalsFollowRfc6750) {
  // What the client reads: the header api/ says the refusal's challenge as.
  auto www_authenticate = [](const Error& error) {
    return error.challenge ? api::www_authenticate(*error.challenge) : std::string();
  };
  auto missing = api::bearer_credential(nullptr, auth::Surface::participant);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().first_code(), "missing_authorization_header");
  EXPECT_EQ(www_authenticate(missing.error()), "Bearer realm=\"tesoro\"");
  std::string basic = "Basic YTpi";
  auto other_scheme = api::bearer_credential(&basic, auth::Surface::core);
  ASSERT_FALSE(other_scheme.ok());
  EXPECT_EQ(other_scheme.error().first_code(), "expired_token");
  EXPECT_EQ(www_authenticate(other_scheme.error()), "Bearer realm=\"tesoro\"");
  std::string empty = "Bearer  ";
  auto malformed = api::bearer_credential(&empty, auth::Surface::core);
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(www_authenticate(malformed.error()),
            "Bearer realm=\"tesoro\", error=\"invalid_token\"");
  auth::Principal principal;
  principal.credential_id = "key_1";
  EXPECT_EQ(www_authenticate(auth::insufficient_scope(principal, "cards:write")),
            "Bearer realm=\"tesoro\", error=\"insufficient_scope\", scope=\"cards:write\"");
  const Error client_refused = auth::oauth_error(ErrorCode::invalid_client, "unknown client");
  EXPECT_TRUE(client_refused.oauth);
  EXPECT_EQ(www_authenticate(client_refused), "Basic realm=\"tesoro\"");
  EXPECT_EQ(www_authenticate(auth::oauth_error(ErrorCode::invalid_scope, "no such scope")), "")
      << "a 400 of the token endpoint challenges nothing";
  std::string good = "bearer  sk_sandbox_x ";
  auto credential = api::bearer_credential(&good, auth::Surface::core);
  ASSERT_TRUE(credential.ok());
  EXPECT_EQ(credential.value(), "sk_sandbox_x");
}

// The operator's credential functions on both engines: tenants and OAuth clients listed, clients
// revoked. Times are fixed, not read, so that inserted_at and revoked_at can be checked exactly.
class CredentialsTest : public test_stores::EngineStoreTest {
 protected:
  std::string tenant(const std::string& name, time::Micros at) {
    return temp->store->write<std::string>([&](store::Tx& tx) {
      return auth::create_tenant(tx, name, "sandbox", at);
    }).value();
  }

  auth::CreatedClient client(const std::string& tenant_id, time::Micros at) {
    return temp->store->write<auth::CreatedClient>([&](store::Tx& tx) {
      return auth::create_client(tx, tenant_id, {"collections", "webhooks"}, at);
    }).value();
  }

  Result<std::vector<auth::ClientSummary>> clients_of(const std::string& tenant_id) {
    return temp->store->read<std::vector<auth::ClientSummary>>(
        [&](store::Tx& tx) { return auth::list_clients(tx, tenant_id); });
  }

  Result<auth::ClientSummary> revoke(const std::string& client_id, time::Micros at,
                                     const std::string& tenant_id = "") {
    return temp->store->write<auth::ClientSummary>(
        [&](store::Tx& tx) { return auth::revoke_client(tx, client_id, at, tenant_id); });
  }

  const time::Micros t0 = time::parse_iso("2030-01-02T03:04:05Z").value();
};

TEST_P(CredentialsTest, TenantsAreListedOldestFirst) {
  auto has_tenants = [&] {
    return temp->store->write<bool>([](store::Tx& tx) -> Result<bool> {
      return auth::has_tenants_locked(tx);
    }).value();
  };
  auto list = [&] {
    return temp->store->read<std::vector<auth::TenantSummary>>(
        [](store::Tx& tx) -> Result<std::vector<auth::TenantSummary>> {
          return auth::list_tenants(tx);
        }).value();
  };
  EXPECT_FALSE(has_tenants());
  EXPECT_TRUE(list().empty());
  std::string later = tenant("later", t0 + time::k_micros_per_second);
  std::string earlier = tenant("earlier", t0);
  EXPECT_TRUE(has_tenants());
  auto tenants = list();
  ASSERT_EQ(tenants.size(), 2u);
  EXPECT_EQ(tenants[0].id, earlier);
  EXPECT_EQ(tenants[0].name, "earlier");
  EXPECT_EQ(tenants[0].environment, "sandbox");
  EXPECT_EQ(tenants[0].inserted_at, time::iso(t0));
  EXPECT_EQ(tenants[1].id, later);
  EXPECT_EQ(tenants[1].inserted_at, time::iso(t0 + time::k_micros_per_second));
}

TEST_P(CredentialsTest, ClientsAreListedPerTenantOldestFirst) {
  auto unknown = clients_of("ten_unknown");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(tesoro::api::http_status(unknown.error()), 404);
  EXPECT_EQ(unknown.error().first_code(), "item_not_found");
  std::string mine = tenant("mine", t0);
  std::string other = tenant("other", t0);
  EXPECT_TRUE(clients_of(mine).value().empty());
  auto second = client(mine, t0 + 2 * time::k_micros_per_second);
  auto first = client(mine, t0 + time::k_micros_per_second);
  client(other, t0);
  auto clients = clients_of(mine).value();
  ASSERT_EQ(clients.size(), 2u) << "another tenant's clients are not listed";
  EXPECT_EQ(clients[0].client_id, first.client_id);
  EXPECT_EQ(clients[0].scopes, (std::vector<std::string>{"collections", "webhooks"}));
  EXPECT_EQ(clients[0].environment, "sandbox");
  EXPECT_EQ(clients[0].inserted_at, time::iso(t0 + time::k_micros_per_second));
  EXPECT_FALSE(clients[0].revoked_at.has_value());
  EXPECT_EQ(clients[1].client_id, second.client_id);
}

TEST_P(CredentialsTest, ARevokedClientsTokensAreRefused) {
  auto unknown = revoke("cli_unknown", t0);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(tesoro::api::http_status(unknown.error()), 404);
  EXPECT_EQ(unknown.error().first_code(), "item_not_found");
  std::string tenant_id = tenant("t", t0);
  auto revoked_client = client(tenant_id, t0);
  auto kept_client = client(tenant_id, t0);
  auto grant = [&](const auth::CreatedClient& of) {
    return temp->store->write<auth::TokenGrant>([&](store::Tx& tx) {
      return auth::grant_client_credentials(tx, of.client_id, of.client_secret, std::nullopt,
                                            "sandbox", t0);
    });
  };
  auto authenticate = [&](const std::string& access_token) {
    return temp->store->read<auth::Principal>([&](store::Tx& tx) {
      return auth::authenticate(tx, auth::Surface::participant, access_token, "sandbox", t0);
    });
  };
  auto revoked_tokens = grant(revoked_client).value();
  auto kept_tokens = grant(kept_client).value();
  ASSERT_TRUE(authenticate(revoked_tokens.access_token).ok());

  ASSERT_TRUE(revoke(revoked_client.client_id, t0 + time::k_micros_per_second).ok());
  auto refused = authenticate(revoked_tokens.access_token);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(tesoro::api::http_status(refused.error()), 401);
  EXPECT_EQ(refused.error().errors[0].message,
            "the access token or its OAuth client was revoked");
  EXPECT_FALSE(grant(revoked_client).ok()) << "no new tokens for a revoked client";
  EXPECT_TRUE(authenticate(kept_tokens.access_token).ok()) << "other clients untouched";

  // Revoking again succeeds and keeps the first revoked_at.
  auto again = revoke(revoked_client.client_id, t0 + 5 * time::k_micros_per_second);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->revoked_at, time::iso(t0 + time::k_micros_per_second));
  for (const auth::ClientSummary& summary : clients_of(tenant_id).value()) {
    if (summary.client_id == revoked_client.client_id) {
      EXPECT_EQ(summary.revoked_at, time::iso(t0 + time::k_micros_per_second));
    } else {
      EXPECT_FALSE(summary.revoked_at.has_value());
    }
  }
}

TESORO_ON_BOTH_ENGINES(CredentialsTest);

// Within a tenant (the console's revocations): another tenant's key or client is not found and
// stays as it was.
TEST_P(CredentialsTest, RevokingWithinATenantLeavesOtherTenantsAlone) {
  std::string mine = tenant("mine", t0), theirs = tenant("theirs", t0);
  auto their_client = client(theirs, t0);
  auto their_key = temp->store->write<auth::CreatedKey>([&](store::Tx& tx) {
    return auth::create_api_key(tx, theirs, {"ledger:read"}, t0);
  }).value();
  EXPECT_TRUE(their_key.key_prefix.starts_with("sk_sandbox_"));
  EXPECT_EQ(their_key.api_key.substr(0, their_key.key_prefix.size()), their_key.key_prefix);
  auto client_refused = revoke(their_client.client_id, t0, mine);
  ASSERT_FALSE(client_refused.ok());
  EXPECT_EQ(tesoro::api::http_status(client_refused.error()), 404);
  auto key_refused = temp->store->write<auth::KeySummary>([&](store::Tx& tx) {
    return auth::revoke_api_key(tx, their_key.id, t0, mine);
  });
  ASSERT_FALSE(key_refused.ok());
  EXPECT_EQ(tesoro::api::http_status(key_refused.error()), 404);
  EXPECT_FALSE(clients_of(theirs).value()[0].revoked_at.has_value());
  auto keys = temp->store->read<std::vector<auth::KeySummary>>(
      [&](store::Tx& tx) { return auth::list_api_keys(tx, theirs); });
  EXPECT_FALSE(keys.value()[0].revoked_at.has_value());
  auto revoked = temp->store->write<auth::KeySummary>([&](store::Tx& tx) {
    return auth::revoke_api_key(tx, their_key.id, t0, theirs);
  });
  ASSERT_TRUE(revoked.ok());
  EXPECT_EQ(revoked->revoked_at, time::iso(t0));
  EXPECT_EQ(revoked->key_prefix, their_key.key_prefix);
}

// The principals a node keeps: found by the credential's hash until forgotten; a full cache is
// emptied, so it never holds more than its limit.
TEST(CredentialCache, KeepsFindsForgetsAndEmptiesWhenFull) {
  app::CredentialCache cache;
  auth::Principal principal{"t", "k", auth::CredentialKind::api_key, {"ledger:read"}, "sandbox"};
  EXPECT_FALSE(cache.find("h1"));
  cache.keep("h1", principal);
  ASSERT_TRUE(cache.find("h1"));
  EXPECT_EQ(*cache.find("h1"), principal);
  principal.clock_offset_micros = 60;
  cache.keep("h1", principal);  // kept again: the newer principal
  EXPECT_EQ(cache.find("h1")->clock_offset_micros, 60);
  cache.forget("h1");
  EXPECT_FALSE(cache.find("h1"));
  for (std::size_t i = 0; i < limits::k_credential_cache_entries; ++i) {
    cache.keep("h" + std::to_string(i), principal);
  }
  EXPECT_TRUE(cache.find("h0"));
  cache.keep("one more", principal);
  EXPECT_FALSE(cache.find("h0")) << "a full cache is emptied";
  EXPECT_TRUE(cache.find("one more"));
}
