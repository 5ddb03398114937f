#include <gtest/gtest.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "api/error_status.hpp"
#include "core/check.hpp"
#include "core/crypto.hpp"
#include "core/error.hpp"
#include "core/ids.hpp"
#include "core/money.hpp"
#include "core/result.hpp"
#include "core/time.hpp"
#include "http/request_head.hpp"
#include "http/router.hpp"
#include "store/idempotency.hpp"

using namespace tesoro;

// A temporary Result's value is a value, not a reference into the temporary: a range-for over
// f().value() iterates a live object (it was a stack-use-after-scope under ASan).
static_assert(std::is_same_v<decltype(std::declval<Result<std::vector<int>>>().value()),
                             std::vector<int>>);
static_assert(std::is_same_v<decltype(std::declval<Result<std::vector<int>>&>().value()),
                             std::vector<int>&>);
static_assert(std::is_same_v<decltype(std::declval<Result<int>>().error()), Error>);

TEST(Result, ATemporarysValueOutlivesIt) {
  auto make = [] { return Result<std::vector<std::string>>(std::vector<std::string>{"a", "b"}); };
  std::string joined;
  for (const std::string& item : make().value()) joined += item;
  EXPECT_EQ(joined, "ab");
}

// TESORO_CHECK stays on in Release: a failed invariant logs it and aborts.
TEST(CheckDeathTest, AFailedCheckLogsAndAborts) {
  EXPECT_DEATH(TESORO_CHECK(1 + 1 == 3, std::string("the context")),
               "invariant.failed.*1 \\+ 1 == 3.*the context");
  int evaluated = 0;
  TESORO_CHECK(true, (++evaluated, std::string("never built")));
  EXPECT_EQ(evaluated, 0) << "the context is built only when the check fails";
}

TEST(RequestHead, HostAndTransferEncodingFollowRfc9112) {
  using http::head_problem;
  using http::RequestHead;
  EXPECT_FALSE(head_problem(RequestHead{11, 1, 0, "", 1}));
  EXPECT_FALSE(head_problem(RequestHead{11, 1, 1, " Chunked ", 0}));
  EXPECT_FALSE(head_problem(RequestHead{10, 0, 0, "", 0}));
  EXPECT_TRUE(head_problem(RequestHead{11, 0, 0, "", 0}));
  EXPECT_TRUE(head_problem(RequestHead{11, 2, 0, "", 0}));
  for (std::string_view coding : {"xchunked", "chunked, identity", "gzip", "identity", ""}) {
    EXPECT_TRUE(head_problem(RequestHead{11, 1, 1, coding, 0})) << coding;
  }
  EXPECT_TRUE(head_problem(RequestHead{11, 1, 2, "chunked", 0}));
  EXPECT_TRUE(head_problem(RequestHead{11, 1, 1, "chunked", 1}));
  EXPECT_TRUE(head_problem(RequestHead{10, 0, 1, "chunked", 0}));
}

TEST(Ids, GeneratedIdsMatchThePatternAndDiffer) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    std::string id = ids::generate("acch");
    EXPECT_TRUE(ids::is_valid(id)) << id;
    EXPECT_TRUE(ids::has_prefix(id, "acch"));
    EXPECT_FALSE(ids::has_prefix(id, "acc"));
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(Ids, IdsOfManyThreadsAreValidAndAllDiffer) {
  // Each thread draws through its own pool: many pool refills, no two ids alike.
  constexpr int k_threads = 4, k_each = 20000;
  std::vector<std::vector<std::string>> made(k_threads);
  std::vector<std::thread> threads;
  for (int t = 0; t < k_threads; ++t) {
    threads.emplace_back([&made, t] {
      for (int i = 0; i < k_each; ++i) made[t].push_back(ids::generate("ctx"));
    });
  }
  for (auto& thread : threads) thread.join();
  std::set<std::string> seen;
  for (const auto& list : made) {
    for (const std::string& id : list) {
      ASSERT_TRUE(ids::has_prefix(id, "ctx")) << id;
      ASSERT_EQ(id.size(), 4u + 22u) << id;
      seen.insert(id);
    }
  }
  EXPECT_EQ(seen.size(), std::size_t{k_threads * k_each});
}

TEST(Ids, EveryRandomPositionTakesEveryCharacterOfTheAlphabet) {
  // A fixed or narrowed position (a wrong shift in the encoding) shows as a missing character.
  std::array<std::set<char>, 16> at;
  for (int i = 0; i < 20000; ++i) {
    std::string random = ids::generate("ab").substr(3 + ids::k_time_chars);
    ASSERT_EQ(random.size(), at.size());
    for (std::size_t k = 0; k < at.size(); ++k) at[k].insert(random[k]);
  }
  for (std::size_t k = 0; k < at.size(); ++k) EXPECT_EQ(at[k].size(), 64u) << "position " << k;
}

TEST(Ids, AnIdIsItsPrefixTheTimeInTheSortedAlphabetAndTheRandomBytesInBase64) {
  const unsigned char random[ids::k_random_bytes] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  // 123456789 ticks are 0, 7, 22, 60, 52, 21 in six bits each; the bytes as base64url has them.
  EXPECT_EQ(ids::encode("bbot", 123456789, random), "bbot_-6LwoKAQIDBAUGBwgJCgsM");
  EXPECT_EQ(ids::encode("ab", 0, random).substr(0, 9), "ab_------");
}

TEST(Ids, IdsSortByTheirTimeWhateverTheirRandomPart) {
  unsigned char low[ids::k_random_bytes] = {}, high[ids::k_random_bytes];
  std::fill(std::begin(high), std::end(high), 0xff);
  // Each time character, with every value of the ones after it: a later tick sorts after.
  for (std::uint64_t tick : {0ull, 1ull, 63ull, 64ull, 4095ull, 4096ull, 123456789ull,
                             (1ull << 36) - 2}) {
    std::string earlier = ids::encode("ctx", tick, high), later = ids::encode("ctx", tick + 1, low);
    EXPECT_LT(earlier, later) << tick;
    EXPECT_TRUE(ids::has_prefix(earlier, "ctx")) << earlier;
    EXPECT_TRUE(ids::has_prefix(later, "ctx")) << later;
  }
  // Every character of the sorted alphabet in ASCII order: the time characters of 0..63.
  std::string previous;
  for (std::uint64_t tick = 0; tick < 64; ++tick) {
    std::string id = ids::encode("ab", tick, low);
    EXPECT_EQ(id.substr(3, 5), "-----");
    if (!previous.empty()) {
      EXPECT_LT(previous[8], id[8]) << tick;
    }
    previous = id;
  }
}

TEST(Ids, TheTimeIsThirtySecondsOfASecondSince2020AndClamps) {
  using std::chrono::system_clock;
  auto epoch = system_clock::from_time_t(1577836800);  // 2020-01-01T00:00:00Z
  EXPECT_EQ(ids::time_ticks(epoch), 0u);
  EXPECT_EQ(ids::time_ticks(epoch - std::chrono::hours(24)), 0u);
  EXPECT_EQ(ids::time_ticks(epoch + std::chrono::seconds(1)), 32u);
  EXPECT_EQ(ids::time_ticks(epoch + std::chrono::milliseconds(31)), 0u);
  EXPECT_EQ(ids::time_ticks(epoch + std::chrono::microseconds(31250)), 1u);
  EXPECT_EQ(ids::time_ticks(epoch + std::chrono::hours(24 * 365 * 80)), (1ull << 36) - 1);
  // generate stamps the current time.
  auto before = ids::time_ticks(system_clock::now());
  std::string id = ids::generate("ab");
  auto after = ids::time_ticks(system_clock::now());
  unsigned char zero[ids::k_random_bytes] = {};
  EXPECT_GE(id.substr(3, 6), ids::encode("ab", before, zero).substr(3, 6));
  EXPECT_LE(id.substr(3, 6), ids::encode("ab", after, zero).substr(3, 6));
}

TEST(Ids, AForkedChildDoesNotRepeatTheParentsNextIds) {
  ids::generate("ab");  // the pool now holds this thread's next values
  int pipe_ends[2];
  ASSERT_EQ(pipe(pipe_ends), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::string id = ids::generate("ab");
    ssize_t written = write(pipe_ends[1], id.data(), id.size());
    _exit(written == static_cast<ssize_t>(id.size()) ? 0 : 1);
  }
  close(pipe_ends[1]);
  std::string parent = ids::generate("ab");
  char buffer[64] = {};
  ssize_t got = read(pipe_ends[0], buffer, sizeof buffer);
  close(pipe_ends[0]);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_EQ(got, static_cast<ssize_t>(parent.size()));
  EXPECT_NE(std::string(buffer, got), parent);
}

TEST(Crypto, PooledRandomBytesCrossBlocksWithoutRepeating) {
  // Draws larger than the pool and draws that straddle a refill give fresh bytes each time.
  std::vector<unsigned char> a(10000), b(10000);
  crypto::pooled_random_bytes(a.data(), a.size());
  crypto::pooled_random_bytes(b.data(), b.size());
  EXPECT_NE(a, b);
  std::set<std::string> chunks;
  for (int i = 0; i < 2000; ++i) {
    unsigned char raw[17];
    crypto::pooled_random_bytes(raw, sizeof raw);
    chunks.insert(std::string(reinterpret_cast<char*>(raw), sizeof raw));
  }
  EXPECT_EQ(chunks.size(), 2000u);
}

TEST(Ids, PatternRejectsMalformed) {
  EXPECT_TRUE(ids::is_valid("ab_AAAAAAAAAAAAAAAAAAAAAA"));
  EXPECT_TRUE(ids::is_valid("abcdefg_AAAAAAAAAAAAAAAAAAAA-_"));
  EXPECT_FALSE(ids::is_valid("a_AAAAAAAAAAAAAAAAAAAAAA"));
  EXPECT_FALSE(ids::is_valid("abcdefgh_AAAAAAAAAAAAAAAAAAAAAA"));
  EXPECT_FALSE(ids::is_valid("Ab_AAAAAAAAAAAAAAAAAAAAAA"));
  EXPECT_FALSE(ids::is_valid("ab_AAAAAAAAAAAAAAAAAAAAA"));
  EXPECT_FALSE(ids::is_valid("ab_AAAAAAAAAAAAAAAAAAAA.A"));
  EXPECT_FALSE(ids::is_valid(""));
}

namespace {
// The reference formatting: gmtime_r and snprintf, as time::iso was first written.
std::string iso_by_gmtime(time::Micros at) {
  std::time_t seconds = static_cast<std::time_t>(at / time::k_micros_per_second);
  long micros = static_cast<long>(at % time::k_micros_per_second);
  if (micros < 0) {
    micros += time::k_micros_per_second;
    seconds -= 1;
  }
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  char buffer[80];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", parts.tm_year + 1900,
                parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec, micros);
  return buffer;
}
}  // namespace

TEST(Time, IsoIsByteIdenticalToGmtimeFormatting) {
  constexpr time::Micros k_day = 86'400 * time::k_micros_per_second;
  std::vector<time::Micros> cases = {0, 1, -1, 999'999, -999'999, -1'000'000, k_day - 1, k_day,
                                     -k_day, -k_day - 1,
                                     951'782'400'000'000,   // 2000-02-29
                                     4'107'542'400'000'000,  // 2100-03-01
                                     -62'167'219'200'000'000,  // 0000-01-01
                                     -62'167'219'200'000'001,  // year -1: the fallback
                                     253'402'300'799'999'999,  // 9999-12-31T23:59:59.999999
                                     253'402'300'800'000'000};  // 10000-01-01: the fallback
  // Every day (at a varying time of day) from 1900 to 2400, and random instants far around.
  for (time::Micros at = -2'208'988'800'000'000; at < 13'569'465'600'000'000;
       at += k_day + 3'723'000'001) {
    cases.push_back(at);
  }
  std::uint64_t state = 88172645463325252ull;
  for (int i = 0; i < 20000; ++i) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    cases.push_back(static_cast<time::Micros>(state % 600'000'000'000'000'000ull) -
                    300'000'000'000'000'000);
  }
  for (time::Micros at : cases) {
    ASSERT_EQ(time::iso(at), iso_by_gmtime(at)) << at;
    std::string local = iso_by_gmtime(at);
    local.pop_back();
    ASSERT_EQ(time::iso_local(at), local) << at;
  }
}

TEST(Time, IsoRoundTripAndOrdering) {
  time::Micros at = 1'795'000'000'123'456;
  std::string text = time::iso(at);
  EXPECT_EQ(text.size(), 27u);
  EXPECT_EQ(text.back(), 'Z');
  EXPECT_EQ(time::parse_iso(text), at);
  EXPECT_LT(time::iso(at), time::iso(at + 1));
  EXPECT_EQ(time::parse_iso("2026-11-21T10:00:00+05:00"), time::parse_iso("2026-11-21T05:00:00Z"));
  EXPECT_FALSE(time::parse_iso("2026-02-30T00:00:00Z"));
  EXPECT_FALSE(time::parse_iso("2026-11-21 10:00:00Z"));
  EXPECT_FALSE(time::parse_iso("2026-11-21T10:00:00"));
  EXPECT_EQ(time::iso_local(at).back(), '6');
}

// HMAC-SHA256 is built on the hash (core/crypto.cpp): RFC 4231's vectors (keys shorter than,
// as long as and longer than the block, which is hashed first), then every key length from 0 to
// 200 bytes against OpenSSL's own HMAC().
TEST(Crypto, HmacSha256IsRfc4231sAndOpenSslsHmac) {
  const std::string long_key(131, '\xaa');
  EXPECT_EQ(crypto::hmac_sha256_hex(std::string(20, '\x0b'), "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(crypto::hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(crypto::hmac_sha256_hex(long_key, "Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  std::string data;
  for (int i = 0; i < 300; ++i) data += static_cast<char>(i * 7);
  for (std::size_t length = 0; length <= 200; ++length) {
    std::string key;
    for (std::size_t i = 0; i < length; ++i) key += static_cast<char>(i * 13 + 1);
    unsigned char expected[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
         reinterpret_cast<const unsigned char*>(data.data()), length, expected, &size);
    EXPECT_EQ(crypto::hmac_sha256(key, data.substr(0, length)),
              std::string(reinterpret_cast<const char*>(expected), size))
        << length;
  }
}

TEST(Crypto, KnownVectors) {
  EXPECT_EQ(crypto::sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(crypto::hmac_sha256_hex("key", "The quick brown fox jumps over the lazy dog"),
            "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8");
  EXPECT_EQ(crypto::base64("foobar"), "Zm9vYmFy");
  EXPECT_EQ(crypto::base64("fo"), "Zm8=");
  // RFC 4648's vectors, every length of padding, both alphabets, and appending.
  const char* const k_vectors[][3] = {{"", "", ""},           {"f", "Zg==", "Zg"},
                                      {"fo", "Zm8=", "Zm8"},  {"foo", "Zm9v", "Zm9v"},
                                      {"foob", "Zm9vYg==", "Zm9vYg"},
                                      {"fooba", "Zm9vYmE=", "Zm9vYmE"},
                                      {"\xFB\xFF\xBF", "+/+/", "-_-_"}};
  for (const auto& vector : k_vectors) {
    EXPECT_EQ(crypto::base64(vector[0]), vector[1]);
    EXPECT_EQ(crypto::base64url(vector[0]), vector[2]);
    std::string appended = "data:";
    crypto::append_base64(appended, vector[0]);
    EXPECT_EQ(appended, std::string("data:") + vector[1]);
  }
  bool ok = false;
  EXPECT_EQ(crypto::base64_decode("Zm9vYmE=", ok), "fooba");
  EXPECT_TRUE(ok);
  crypto::base64_decode("Zm9v!", ok);
  EXPECT_FALSE(ok);
  EXPECT_TRUE(crypto::constant_time_equal("abc", "abc"));
  EXPECT_FALSE(crypto::constant_time_equal("abc", "abd"));
  EXPECT_FALSE(crypto::constant_time_equal("abc", "ab"));
}

TEST(Idempotency, KeyFormat) {
  EXPECT_TRUE(idempotency::is_valid_key("123e4567-e89b-42d3-a456-426614174000"));
  EXPECT_TRUE(idempotency::is_valid_key("123E4567-E89B-42D3-A456-426614174000"));
  EXPECT_FALSE(idempotency::is_valid_key("123e4567e89b42d3a456426614174000"));
  EXPECT_FALSE(idempotency::is_valid_key("123e4567-e89b-42d3-a456-42661417400g"));
  EXPECT_FALSE(idempotency::is_valid_key(""));
  EXPECT_NE(idempotency::fingerprint("POST", "/a", "{}"), idempotency::fingerprint("POST", "/b", "{}"));
}

TEST(Idempotency, WhatIsStored) {
  EXPECT_TRUE(idempotency::is_storable(201, ""));
  EXPECT_TRUE(idempotency::is_storable(409, "external_id_already_exists"));
  EXPECT_TRUE(idempotency::is_storable(422, "insufficient_funds"));
  EXPECT_TRUE(idempotency::is_storable(404, "item_not_found"));
  EXPECT_FALSE(idempotency::is_storable(422, "missing_field"));
  for (int status : {400, 401, 403, 413, 429, 500, 503}) EXPECT_FALSE(idempotency::is_storable(status, "x"));
}

TEST(Router, LiteralsBeatCapturesAndMethodsAreChecked) {
  http::Router router;
  auto by_id = router.add("GET", "/api/v1/collections/{id}");
  auto find = router.add("GET", "/api/v1/collections/find_successful_by");
  router.add("DELETE", "/api/v1/collections/{id}");
  auto match = router.match("GET", "/api/v1/collections/find_successful_by");
  EXPECT_EQ(match.outcome, http::RouteMatch::Outcome::found);
  EXPECT_EQ(match.route_index, find);
  match = router.match("GET", "/api/v1/collections/bbcol_x");
  EXPECT_EQ(match.route_index, by_id);
  ASSERT_EQ(match.params.size(), 1u);
  EXPECT_EQ(match.params[0].first, "id");
  EXPECT_EQ(match.params[0].second, "bbcol_x");
  match = router.match("PATCH", "/api/v1/collections/x");
  EXPECT_EQ(match.outcome, http::RouteMatch::Outcome::method_not_allowed);
  EXPECT_EQ(match.allow, "GET, DELETE");
  EXPECT_EQ(router.match("GET", "/api/v1/collections").outcome, http::RouteMatch::Outcome::not_found);
  EXPECT_EQ(router.match("GET", "/api/v1/collections/a/b").outcome, http::RouteMatch::Outcome::not_found);
}

TEST(Router, TheMostSpecificTemplateIsTheResourceWhateverTheMethod) {
  http::Router router;
  auto show = router.add("GET", "/v1/cards/{id}");
  auto update = router.add("PATCH", "/v1/cards/{card_id}");
  auto look = router.add("GET", "/v1/cards/{card_id}/look");
  router.add("GET", "/v1/cards/cardholders");
  auto holder = router.add("GET", "/v1/cards/cardholders/{id}");
  // A literal resource that takes no PATCH is 405, not a PATCH of a card named "cardholders".
  auto match = router.match("PATCH", "/v1/cards/cardholders");
  EXPECT_EQ(match.outcome, http::RouteMatch::Outcome::method_not_allowed);
  EXPECT_EQ(match.allow, "GET");
  // Same shape, other capture names: one resource.
  match = router.match("PATCH", "/v1/cards/car_x");
  ASSERT_EQ(match.outcome, http::RouteMatch::Outcome::found);
  EXPECT_EQ(match.route_index, update);
  EXPECT_EQ(match.params.at(0).first, "card_id");
  EXPECT_EQ(router.match("GET", "/v1/cards/car_x").route_index, show);
  match = router.match("DELETE", "/v1/cards/car_x");
  EXPECT_EQ(match.allow, "GET, PATCH");
  // The earlier literal wins between two templates with as many literals.
  EXPECT_EQ(router.match("GET", "/v1/cards/cardholders/look").route_index, holder);
  EXPECT_EQ(router.match("GET", "/v1/cards/car_x/look").route_index, look);
}

TEST(MoneyDisplay, GroupsThousandsAndShowsTheMinorDigitsOfTheCurrency) {
  EXPECT_EQ(money::display(1'155'200'000, "COP"), "COP 11,552,000.00");
  EXPECT_EQ(money::display(5, "COP"), "COP 0.05");
  EXPECT_EQ(money::display(100, "USD"), "USD 1.00");
  EXPECT_EQ(money::display(5000, "CLP"), "CLP 5,000");
  EXPECT_EQ(money::display(-123456, "COP"), "COP -1,234.56");
  EXPECT_EQ(money::display(INT64_MIN, "COP"), "COP -92,233,720,368,547,758.08");
  EXPECT_EQ(money::display(1500, "XYZ"), "XYZ 1,500");
}

TEST(MoneyDisplay, AmountExceedsMaxLimitNamesTheAmountAndTheMaximum) {
  Error error = errors::amount_exceeds_max_limit(1'200'000'000, 1'155'200'000, "COP",
                                                 "transfers.0.amount.amount");
  EXPECT_EQ(tesoro::api::http_status(error), 422);
  EXPECT_EQ(error.first_code(), "amount_exceeds_max_limit");
  EXPECT_EQ(error.errors[0].path, "transfers.0.amount.amount");
  EXPECT_EQ(error.errors[0].message,
            "the amount COP 12,000,000.00 exceeds the maximum of COP 11,552,000.00 per transfer");
}

// One sampler for every random string of an alphabet (card numbers, account numbers, keys):
// the bytes at or above the largest multiple of the alphabet's size are dropped, never folded
// onto the first characters.
TEST(Crypto, AppendUniformDropsTheBytesThatWouldFavourTheFirstCharacters) {
  std::string out;
  // Ten digits: 250 = 25 runs of 0-9; 250..255 dropped.
  crypto::append_uniform(out, std::string("\xFA\xFF\x03\x0D\xF9", 5), "0123456789", 3);
  EXPECT_EQ(out, "339");
  // 36 characters: 252 = 7 runs; 252 dropped, 251 kept (251 % 36 = 35: the last character).
  std::string key;
  crypto::append_uniform(key, std::string("\xFC\xFB\x00", 3), "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 5);
  EXPECT_EQ(key, "9A");
  // It stops at `count`, whatever bytes are left.
  std::string two;
  crypto::append_uniform(two, std::string("\x01\x02\x03\x04", 4), "ab", 2);
  EXPECT_EQ(two, "ba");
}

TEST(Crypto, RandomStringIsItsLengthOfItsAlphabetAndTakesEveryCharacter) {
  std::set<char> seen;
  for (int i = 0; i < 200; ++i) {
    const std::string digits = crypto::random_string("0123456789", 10);
    ASSERT_EQ(digits.size(), 10u);
    for (char c : digits) {
      ASSERT_TRUE(c >= '0' && c <= '9') << digits;
      seen.insert(c);
    }
  }
  EXPECT_EQ(seen.size(), 10u);  // 2,000 draws: a missing digit has odds of about 10 * 0.9^2000
  EXPECT_NE(crypto::random_string("0123456789", 10), crypto::random_string("0123456789", 10));
  EXPECT_THROW(crypto::random_string("a", 4), std::invalid_argument);
  EXPECT_EQ(crypto::random_string("ab", 0), "");
}
