#include <gtest/gtest.h>

#include <chrono>

#include "app/rate_limiter.hpp"
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
  auto www_authenticate = [](const Error& error) {
    for (const auto& [name, value] : error.headers) {
      if (name == "WWW-Authenticate") return value;
    }
    return std::string();
  };
  auto missing = auth::bearer_credential(nullptr, auth::Surface::participant);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().first_code(), "missing_authorization_header");
  EXPECT_EQ(www_authenticate(missing.error()), "Bearer realm=\"tesoro\"");
  std::string basic = "Basic YTpi";
  auto other_scheme = auth::bearer_credential(&basic, auth::Surface::core);
  ASSERT_FALSE(other_scheme.ok());
  EXPECT_EQ(other_scheme.error().first_code(), "expired_token");
  EXPECT_EQ(www_authenticate(other_scheme.error()), "Bearer realm=\"tesoro\"");
  std::string empty = "Bearer  ";
  auto malformed = auth::bearer_credential(&empty, auth::Surface::core);
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(www_authenticate(malformed.error()),
            "Bearer realm=\"tesoro\", error=\"invalid_token\"");
  std::string good = "bearer  sk_sandbox_x ";
  auto credential = auth::bearer_credential(&good, auth::Surface::core);
  ASSERT_TRUE(credential.ok());
  EXPECT_EQ(credential.value(), "sk_sandbox_x");
}
