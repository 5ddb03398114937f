// The Random seam (core/random.hpp): a test that replaces the source knows every id, secret and
// number drawn through it, and the cryptographic source is back when the replacement ends.
#include <gtest/gtest.h>

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
    // An id: its time characters, then the 12 bytes drawn (0 to 11), encoded.
    const std::string id = ids::generate("acc");
    unsigned char expected[ids::k_random_bytes];
    for (unsigned char i = 0; i < ids::k_random_bytes; ++i) expected[i] = i;
    const std::string known = ids::encode("acc", 0, expected);
    EXPECT_EQ(id.substr(id.size() - 16), known.substr(known.size() - 16));
    EXPECT_EQ(source.pooled_draws, 1);
    // A webhook signing secret: the next 32 bytes (12 to 43), never from the pool.
    EXPECT_EQ(webhooks::new_secret(), "whsec_" + crypto::base64(bytes_from(12, 32)));
    EXPECT_EQ(source.secret_draws, 1);
    // A token and a card number follow from the bytes after them.
    EXPECT_EQ(crypto::random_token(3), crypto::base64url(bytes_from(44, 3)));
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
           crypto::random_string("0123456789", 10);
  };
  EXPECT_EQ(draw(), draw());
}

}  // namespace
}  // namespace tesoro
