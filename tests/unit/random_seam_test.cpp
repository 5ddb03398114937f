// The Random seam (core/random.hpp): a test that replaces the source knows every id, secret and
// number drawn through it, and the cryptographic source is back when the replacement ends.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "core/card_numbers.hpp"
#include "core/crypto.hpp"
#include "core/ids.hpp"
#include "core/random.hpp"
#include "domain/webhooks/secrets.hpp"

namespace tesoro {
namespace {

// Bytes 0, 1, 2, ... in draw order, counting the draws of each kind.
class Counting final : public random::Source {
 public:
  void fill(unsigned char* out, std::size_t count, bool secret) override {
    for (std::size_t i = 0; i < count; ++i) out[i] = next_++;
    ++(secret ? secret_draws : pooled_draws);
  }
  // 2026-01-02T03:04:05.5Z: the instant every id made meanwhile carries.
  std::chrono::system_clock::time_point id_time() override {
    return std::chrono::system_clock::time_point(std::chrono::milliseconds(1767323045500));
  }
  int secret_draws = 0;
  int pooled_draws = 0;

 private:
  unsigned char next_ = 0;
};

std::string bytes_from(unsigned char first, std::size_t count) {
  std::string bytes;
  for (std::size_t i = 0; i < count; ++i) bytes += static_cast<char>(first + i);
  return bytes;
}

TEST(RandomSeam, IdsAndSecretsDrawnThroughAReplacedSourceAreKnown) {
  Counting source;
  {
    random::Replaced replaced(source);
    // An id: the source's instant, then the 12 bytes drawn (0 to 11), encoded: every character
    // known.
    const std::string id = ids::generate("acc");
    unsigned char expected[ids::k_random_bytes];
    for (unsigned char i = 0; i < ids::k_random_bytes; ++i) expected[i] = i;
    EXPECT_EQ(id, ids::encode("acc", ids::time_ticks(source.id_time()), expected));
    EXPECT_EQ(id, "acc_" + ids::generate("acc").substr(4, ids::k_time_chars) + "AAECAwQFBgcICQoL");
    EXPECT_EQ(source.pooled_draws, 2);
    // A webhook signing secret: the next 32 bytes (24 to 55, after the two ids'), never from
    // the pool.
    EXPECT_EQ(webhooks::new_secret(), "whsec_" + crypto::base64(bytes_from(24, 32)));
    EXPECT_EQ(source.secret_draws, 1);
    // A token and a card number follow from the bytes after them.
    EXPECT_EQ(crypto::random_token(3), crypto::base64url(bytes_from(56, 3)));
    const std::string card = card_numbers::generate_card_number();
    EXPECT_TRUE(card_numbers::luhn_valid(card));
    EXPECT_EQ(source.secret_draws, 3);
  }
  // The cryptographic source again: nothing more is drawn from the replaced one.
  const int draws = source.secret_draws + source.pooled_draws;
  EXPECT_NE(crypto::random_bytes(16), crypto::random_bytes(16));
  EXPECT_NE(ids::generate("acc"), ids::generate("acc"));
  EXPECT_EQ(source.secret_draws + source.pooled_draws, draws);
}

TEST(RandomSeam, TwoRunsWithTheSameSourceDrawTheSameValues) {
  auto draw = [] {
    Counting source;
    random::Replaced replaced(source);
    return webhooks::new_secret() + " " + card_numbers::generate_card_number() + " " +
           crypto::random_string("0123456789", 10) + " " + ids::generate("jen") + " " +
           ids::network_transaction_id() + " " +
           ids::end_to_end_id(1767323045500 * std::int64_t{1000});
  };
  const std::string first = draw();
  EXPECT_EQ(first, draw());
  // Made on another day, with the cryptographic source: the ids differ, time and random alike.
  EXPECT_NE(ids::generate("jen").substr(0, 4 + ids::k_time_chars),
            first.substr(first.find("jen_"), 4 + ids::k_time_chars));
}

// The network's transaction ids take their leading characters from the same instant: base 36 of
// its 1/32 s ticks.
TEST(RandomSeam, NetworkTransactionIdsCarryTheSourcesInstant) {
  Counting source;
  random::Replaced replaced(source);
  unsigned char bytes[12];
  for (unsigned char i = 0; i < 12; ++i) bytes[i] = i;
  EXPECT_EQ(ids::network_transaction_id(),
            ids::encode_network_transaction_id(ids::time_ticks(source.id_time()), bytes));
}

}  // namespace
}  // namespace tesoro
