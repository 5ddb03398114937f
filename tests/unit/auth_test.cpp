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
