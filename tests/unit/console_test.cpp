// The console's domain: scrypt password hashes (format, parameters, constant-time check),
// users (unique lower-case emails) and sessions (sign-in with its rate limit counted in the
// database, lookup, sign-out, expiry, CSRF tokens, the principal) on both engines.
#include <gtest/gtest.h>

#include "api/error_status.hpp"
#include "api/console.hpp"
#include "core/crypto.hpp"
#include "core/limits.hpp"
#include "domain/auth/credentials.hpp"
#include "domain/console/passwords.hpp"
#include "domain/console/sessions.hpp"
#include "domain/console/users.hpp"
#include "test_stores.hpp"

using namespace tesoro;

namespace {

std::string hex(std::string_view bytes) {
  static constexpr char k_digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += k_digits[c >> 4];
    out += k_digits[c & 15];
  }
  return out;
}

constexpr time::Micros k_start = 1'750'000'000LL * time::k_micros_per_second;
constexpr time::Micros k_second = time::k_micros_per_second;

}  // namespace

TEST(ConsolePasswords, ScryptMatchesTheRfc7914Vector) {
  // RFC 7914 section 12, the second vector: N = 1024, r = 8, p = 16.
  auto derived = crypto::scrypt("password", "NaCl", 10, 8, 16, 64ULL << 20, 64);
  ASSERT_TRUE(derived);
  EXPECT_EQ(hex(*derived),
            "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162"
            "2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640");
  // More memory than allowed: refused, not computed.
  EXPECT_FALSE(crypto::scrypt("password", "NaCl", 20, 8, 1, 64ULL << 20, 32));
}

TEST(ConsolePasswords, HashCarriesItsParametersAndSaltAndVerifies) {
  std::string hash = console::hash_password("correct horse");
  EXPECT_TRUE(hash.starts_with("$scrypt$ln=" + std::to_string(limits::k_console_scrypt_log2_n) +
                               ",r=8,p=1$"))
      << hash;
  EXPECT_EQ(hash.find("correct horse"), std::string::npos);
  EXPECT_TRUE(console::verify_password("correct horse", hash));
  EXPECT_FALSE(console::verify_password("correct horsf", hash));
  EXPECT_FALSE(console::verify_password("", hash));
  // A fresh salt each time.
  EXPECT_NE(console::hash_password("correct horse"), hash);
}

TEST(ConsolePasswords, OlderParametersStillVerifyAndBrokenHashesNever) {
  // A hash made with other parameters (as an older release might have): its own say how.
  auto derived = crypto::scrypt("pw", "0123456789abcdef", 10, 4, 2, 64ULL << 20, 32);
  ASSERT_TRUE(derived);
  auto unpadded = [](std::string text) {
    while (text.ends_with('=')) text.pop_back();
    return text;
  };
  std::string older = "$scrypt$ln=10,r=4,p=2$" + unpadded(crypto::base64("0123456789abcdef")) +
                      "$" + unpadded(crypto::base64(*derived));
  EXPECT_TRUE(console::verify_password("pw", older));
  EXPECT_FALSE(console::verify_password("pX", older));
  for (const char* broken :
       {"", "$scrypt$", "$scrypt$ln=10,r=4,p=2$abc", "$argon2id$v=19$m=65536,t=3,p=4$abc$def",
        "$scrypt$ln=x,r=4,p=2$YWJj$ZGVm", "$scrypt$ln=10,r=4$YWJj$ZGVm",
        "$scrypt$ln=10,r=4,p=2$$ZGVm", "$scrypt$ln=10,r=4,p=2$YWJj$",
        "$scrypt$ln=10,r=4,p=2$YWJj$ZGVm$x",
        // Beyond the maxima: refused without the computation.
        "$scrypt$ln=21,r=8,p=1$YWJj$ZGVm", "$scrypt$ln=18,r=64,p=1$YWJj$ZGVm"}) {
    EXPECT_FALSE(console::verify_password("pw", broken)) << broken;
  }
}

TEST(ConsolePasswords, OneTimePasswordsAreLongAndRandom) {
  std::string a = console::new_password(), b = console::new_password();
  EXPECT_EQ(a.size(), (limits::k_console_password_bytes * 4 + 2) / 3);
  EXPECT_NE(a, b);
  console::NewPassword made = console::make_password();
  EXPECT_TRUE(console::verify_password(made.plain, made.hash));
}

TEST(ConsoleEmails, NormalisedAndChecked) {
  EXPECT_EQ(console::normalise_email("Ana.Rojas@Example.COM"), "ana.rojas@example.com");
  EXPECT_EQ(console::default_owner_email("ten_AbC-d_9"), "owner+ten_abc-d_9@tesoro.local");
  EXPECT_FALSE(console::check_email(console::default_owner_email("ten_AbC-d_9")));
  EXPECT_FALSE(console::check_email("a@b.co"));
  for (const char* bad : {"", "ana", "ana@", "@b.co", "a b@c.co", "a@b", "a\t@b.co"}) {
    auto refused = console::check_email(bad);
    ASSERT_TRUE(refused) << bad;
    EXPECT_EQ(tesoro::api::http_status(*refused), 400);
    EXPECT_EQ(refused->errors.front().path, "email");
  }
  EXPECT_TRUE(console::check_email(std::string(250, 'a') + "@b.co"));
}

class ConsoleStore : public test_stores::EngineStoreTest {
 protected:
  std::string tenant(const std::string& environment = "sandbox") {
    return test_stores::write_ok<std::string>(*temp->store, [&](store::Tx& tx) {
      return auth::create_tenant(tx, "Acme", environment, k_start);
    });
  }
  // A user with a known password, hashed once per test.
  console::User user(const std::string& tenant_id, const std::string& email,
                     const std::string& password) {
    std::string hash = console::hash_password(password);
    return test_stores::write_ok<console::User>(*temp->store, [&](store::Tx& tx) {
      return console::create_user(tx, tenant_id, email, hash, k_start);
    });
  }
  Result<console::SignedIn> sign_in(const std::string& email, const std::string& password,
                                    time::Micros now = k_start,
                                    const std::string& address = "10.0.0.1",
                                    const std::string& environment = "sandbox") {
    return console::sign_in(*temp->store, {email, password, address}, environment, now);
  }
  // A tenant whose user ana@example.com (password s3cret) signed in twice.
  std::pair<console::SignedIn, console::SignedIn> two_sessions() {
    user(tenant(), "ana@example.com", "s3cret");
    auto first = sign_in("ana@example.com", "s3cret");
    auto second = sign_in("ana@example.com", "s3cret");
    EXPECT_TRUE(first && second);
    return {first.value(), second.value()};
  }
  Result<console::Session> find(const std::string& token, time::Micros now = k_start) {
    return temp->store->read<console::Session>(
        [&](store::Tx& tx) { return console::find_session(tx, token, "sandbox", now); });
  }
};

TEST_P(ConsoleStore, UsersHaveUniqueLowerCaseEmails) {
  std::string first = tenant(), second = tenant();
  console::User ana = user(first, "Ana@Example.com", "pw");
  EXPECT_TRUE(ana.id.starts_with("cusr_"));
  EXPECT_EQ(ana.email, "ana@example.com");
  auto duplicate = temp->store->write<console::User>([&](store::Tx& tx) {
    return console::create_user(tx, second, "ANA@example.com", "x", k_start);
  });
  ASSERT_FALSE(duplicate);
  // A refusal of the command line (`tesoro users create`), outside the API's catalog.
  EXPECT_FALSE(duplicate.error().code.has_value());
  EXPECT_EQ(duplicate.error().first_code(), "email_taken");
  auto unknown_tenant = temp->store->write<console::User>([&](store::Tx& tx) {
    return console::create_user(tx, "ten_AAAAAAAAAAAAAAAAAAAAAA", "b@example.com", "x", k_start);
  });
  ASSERT_FALSE(unknown_tenant);
  EXPECT_EQ(tesoro::api::http_status(unknown_tenant.error()), 404);
  user(first, "bo@example.com", "pw");
  auto listed = temp->store->read<std::vector<console::User>>(
      [&](store::Tx& tx) { return console::list_users(tx, first); });
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].email, "ana@example.com");
  EXPECT_EQ((*listed)[1].email, "bo@example.com");
  EXPECT_TRUE(temp->store
                  ->read<std::vector<console::User>>(
                      [&](store::Tx& tx) { return console::list_users(tx, second); })
                  ->empty());
}

TEST_P(ConsoleStore, SignInGivesASessionStoredOnlyAsItsHash) {
  std::string tenant_id = tenant();
  console::User ana = user(tenant_id, "ana@example.com", "s3cret");
  auto signed_in = sign_in("ANA@example.com", "s3cret");
  ASSERT_TRUE(signed_in) << signed_in.error().message;
  const console::Session& session = signed_in->session;
  EXPECT_TRUE(session.id.starts_with("cses_"));
  EXPECT_TRUE(signed_in->token.starts_with("cst_"));
  EXPECT_EQ(session.tenant_id, tenant_id);
  EXPECT_EQ(session.tenant_name, "Acme");
  EXPECT_EQ(session.user_id, ana.id);
  EXPECT_EQ(session.user_email, "ana@example.com");
  EXPECT_EQ(session.expires_at, k_start + limits::k_console_session_ttl_seconds * k_second);
  EXPECT_EQ(test_stores::read_integer(*temp->store,
                                      "SELECT COUNT(*) FROM console_sessions WHERE token_hash = ?",
                                      {crypto::sha256_hex(signed_in->token)}),
            1);
  EXPECT_EQ(
      test_stores::read_integer(
          *temp->store, "SELECT COUNT(*) FROM console_sessions WHERE token_hash = ? OR id = ?",
          {signed_in->token, signed_in->token}),
      0);
  auto found = find(signed_in->token, k_start + k_second);
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->id, session.id);
  EXPECT_EQ(found->user_email, "ana@example.com");
  // Another token, a malformed one, one of another shape: the same 401.
  for (const std::string& token :
       {std::string("cst_") + std::string(43, 'A'), std::string("cst_short"), std::string(""),
        signed_in->token + "x"}) {
    auto refused = find(token);
    ASSERT_FALSE(refused) << token;
    EXPECT_EQ(tesoro::api::http_status(refused.error()), 401);
    EXPECT_EQ(refused.error().first_code(), "expired_token");
  }
}

TEST_P(ConsoleStore, WrongPasswordAndUnknownEmailAreTheSame401) {
  std::string tenant_id = tenant();
  user(tenant_id, "ana@example.com", "s3cret");
  auto wrong = sign_in("ana@example.com", "S3cret");
  auto unknown = sign_in("nobody@example.com", "s3cret");
  ASSERT_FALSE(wrong);
  ASSERT_FALSE(unknown);
  for (const Error& error : {wrong.error(), unknown.error()}) {
    EXPECT_EQ(tesoro::api::http_status(error), 401);
    EXPECT_EQ(error.first_code(), "invalid_credentials");
    EXPECT_EQ(error.errors.front().message, "wrong email or password");
  }
  // A tenant of the other environment cannot sign in on this server.
  std::string production = tenant("production");
  user(production, "prod@example.com", "pw");
  auto other = sign_in("prod@example.com", "pw");
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().first_code(), "invalid_credentials");
  EXPECT_TRUE(sign_in("prod@example.com", "pw", k_start, "10.0.0.1", "production"));
}

// Failures of one email from one address slow that address down, more with each failure; the
// same email from elsewhere is not affected (a stranger cannot keep its owner out).
TEST_P(ConsoleStore, FailuresOfAnEmailFromAnAddressGrowItsDelays) {
  std::string tenant_id = tenant();
  user(tenant_id, "ana@example.com", "s3cret");
  const std::int64_t max = limits::k_console_failures_per_email_max;
  const std::string guesser = "10.0.1.1";
  for (std::int64_t i = 0; i < max; ++i) {
    auto failed = sign_in("ana@example.com", "nope", k_start + i * k_second, guesser);
    ASSERT_FALSE(failed);
    EXPECT_EQ(tesoro::api::http_status(failed.error()), 401) << i;
  }
  // The newest failure was at max - 1 seconds: the next attempt waits 1 s after it, and a
  // refused attempt is not counted.
  const time::Micros newest = k_start + (max - 1) * k_second;
  auto refused = sign_in("Ana@example.com", "s3cret", newest + k_second / 2, guesser);
  ASSERT_FALSE(refused);
  EXPECT_EQ(tesoro::api::http_status(refused.error()), 429);
  EXPECT_EQ(refused.error().first_code(), "rate_limit_exceeded");
  EXPECT_EQ(refused.error().retry_after_seconds, 1);
  // The owner, from another address, signs in meanwhile.
  EXPECT_TRUE(sign_in("ana@example.com", "s3cret", newest + k_second / 2, "10.0.2.1"));
  // Each further failure doubles the wait: 1, 2, 4, 8 seconds.
  time::Micros at = newest;
  for (std::int64_t wait : {1, 2, 4, 8}) {
    auto early = sign_in("ana@example.com", "nope", at + wait * k_second - 1, guesser);
    ASSERT_FALSE(early);
    EXPECT_EQ(tesoro::api::http_status(early.error()), 429) << wait;
    at += wait * k_second;
    auto counted = sign_in("ana@example.com", "nope", at, guesser);
    ASSERT_FALSE(counted);
    EXPECT_EQ(tesoro::api::http_status(counted.error()), 401) << wait;
  }
  // Never longer than the window: after it the failures have left it.
  const time::Micros window_passed = at + limits::k_console_failure_window_seconds * k_second;
  auto allowed = sign_in("ana@example.com", "s3cret", window_passed, guesser);
  ASSERT_TRUE(allowed) << allowed.error().message;
  // A success clears that address's failures of the email.
  EXPECT_EQ(test_stores::read_integer(
                *temp->store, "SELECT COUNT(*) FROM console_sign_in_failures WHERE email = "
                              "'ana@example.com' AND remote_address = '10.0.1.1'"),
            0);
}

TEST_P(ConsoleStore, FailuresPerAddressAreLimited) {
  std::string tenant_id = tenant();
  user(tenant_id, "ana@example.com", "s3cret");
  for (std::int64_t i = 0; i < limits::k_console_failures_per_address_max; ++i) {
    auto failed = sign_in("guess" + std::to_string(i) + "@example.com", "x", k_start, "10.9.9.9");
    ASSERT_FALSE(failed);
    EXPECT_EQ(tesoro::api::http_status(failed.error()), 401);
  }
  auto refused = sign_in("ana@example.com", "s3cret", k_start + k_second / 2, "10.9.9.9");
  ASSERT_FALSE(refused);
  EXPECT_EQ(tesoro::api::http_status(refused.error()), 429);
  EXPECT_TRUE(sign_in("ana@example.com", "s3cret", k_start + k_second / 2, "10.9.9.10"));
  // The address may try again a second after its newest failure.
  EXPECT_TRUE(sign_in("ana@example.com", "s3cret", k_start + k_second, "10.9.9.9"));
}

TEST_P(ConsoleStore, SignOutAndExpiryEndTheSession) {
  auto [first_session, second_session] = two_sessions();
  const console::SignedIn* first = &first_session;
  const console::SignedIn* second = &second_session;
  ASSERT_TRUE(temp->store->write<Unit>(
      [&](store::Tx& tx) { return console::sign_out(tx, first->session, k_start + k_second); }));
  EXPECT_EQ(tesoro::api::http_status(find(first->token, k_start + 2 * k_second).error()), 401);
  EXPECT_TRUE(find(second->token, k_start + 2 * k_second));  // only that session ended
  const time::Micros expiry = second->session.expires_at;
  EXPECT_TRUE(find(second->token, expiry - 1));
  EXPECT_EQ(tesoro::api::http_status(find(second->token, expiry).error()), 401);
  // The sweeper deletes sessions a day after they expire, and failures out of the window.
  ASSERT_FALSE(sign_in("ana@example.com", "wrong"));
  auto swept = [&](time::Micros now) {
    return test_stores::write_ok<std::int64_t>(*temp->store, [&](store::Tx& tx) {
      return Result<std::int64_t>(console::sweep(tx, now, 100));
    });
  };
  EXPECT_EQ(swept(k_start + k_second), 0);
  EXPECT_EQ(swept(expiry + limits::k_console_session_retention_seconds * k_second + 1), 3);
}

TEST_P(ConsoleStore, CsrfTokenAndPrincipalComeFromTheSession) {
  auto [first_session, second_session] = two_sessions();
  const console::SignedIn* first = &first_session;
  const console::SignedIn* second = &second_session;
  const std::string& tenant_id = first->session.tenant_id;
  std::string csrf = console::csrf_token(first->token);
  EXPECT_EQ(csrf, console::csrf_token(first->token));
  EXPECT_NE(csrf, console::csrf_token(second->token));
  EXPECT_EQ(csrf.find(first->token), std::string::npos);
  // What the pipeline checks a state change's X-CSRF-Token against (api::console_csrf_refusal).
  http::Request change;
  change.method = "POST";
  change.headers.emplace_back(std::string(api::k_console_csrf_header), csrf);
  EXPECT_FALSE(api::console_csrf_refusal(change, console::csrf_token(first->token)));
  EXPECT_TRUE(api::console_csrf_refusal(change, console::csrf_token(second->token)));
  change.headers.clear();
  EXPECT_TRUE(api::console_csrf_refusal(change, csrf));
  auth::Principal core = console::principal(first->session, auth::Surface::core);
  EXPECT_EQ(core.tenant_id, tenant_id);
  EXPECT_EQ(core.credential_id, first->session.id);
  for (const std::string& group : auth::core_groups()) {
    EXPECT_TRUE(auth::core_allows(core, group, auth::Level::admin)) << group;
  }
  auth::Principal participant = console::principal(first->session, auth::Surface::participant);
  for (const std::string& scope : auth::participant_scopes()) {
    EXPECT_TRUE(auth::participant_allows(participant, scope)) << scope;
  }
  EXPECT_FALSE(auth::core_allows(participant, "ledger", auth::Level::read));
}

TESORO_ON_BOTH_ENGINES(ConsoleStore);
