// Card numbers (Luhn, the sandbox issuer prefix) and the AES-256-GCM sealing they are stored with.
#include <gtest/gtest.h>

#include <array>
#include <set>
#include <stdexcept>

#include "core/card_numbers.hpp"
#include "core/crypto.hpp"
#include "core/limits.hpp"

using namespace tesoro;

namespace {

const std::string k_aad = "ten_AAAAAAAAAAAAAAAAAAAAAA:car_BBBBBBBBBBBBBBBBBBBBBB";

crypto::Sealer test_sealer() { return crypto::Sealer(crypto::random_bytes(32)); }

// `sealed` with byte `index` of its decoded form flipped, encoded again.
std::string flip_byte(const std::string& sealed, std::size_t index) {
  bool ok = false;
  std::string raw = crypto::base64_decode(sealed, ok);
  EXPECT_TRUE(ok);
  raw.at(index) = static_cast<char>(raw.at(index) ^ 0x01);
  return crypto::base64(raw);
}

}  // namespace

TEST(CardNumbers, LuhnAcceptsKnownValidNumbers) {
  for (const char* number : {"79927398713", "4111111111111111", "4242424242424242",
                             "5555555555554444", "378282246310005", "6011111111111117", "18",
                             "00"}) {
    EXPECT_TRUE(card_numbers::luhn_valid(number)) << number;
  }
}

TEST(CardNumbers, LuhnRefusesWrongChecksumsAndNonDigits) {
  for (const char* number : {"79927398710", "79927398714", "4111111111111112", "4242424242424241",
                             "378282246310006", "19", "", "0", "4111 1111 1111 1111",
                             "4111-1111-1111-1111", "411111111111111a", "+4111111111111111",
                             "\xd9\xa4\xd9\xa1"}) {
    EXPECT_FALSE(card_numbers::luhn_valid(number)) << number;
  }
}

TEST(CardNumbers, CheckDigitCompletesAValidNumber) {
  EXPECT_EQ(card_numbers::luhn_check_digit("7992739871"), '3');
  EXPECT_EQ(card_numbers::luhn_check_digit("411111111111111"), '1');
  EXPECT_EQ(card_numbers::luhn_check_digit("37828224631000"), '5');
  EXPECT_EQ(card_numbers::luhn_check_digit("1"), '8');
}

TEST(CardNumbers, GeneratedNumbersAreValidSixteenDigitsWithTheSandboxPrefix) {
  std::set<std::string> seen;
  // How often each digit appears at each random position: every one must show up.
  std::array<std::array<int, 10>, 9> counts{};
  for (int i = 0; i < 10000; ++i) {
    std::string number = card_numbers::generate_card_number();
    ASSERT_EQ(number.size(), 16u) << number;
    ASSERT_EQ(number.substr(0, 6), card_numbers::k_sandbox_iin) << number;
    ASSERT_TRUE(card_numbers::luhn_valid(number)) << number;
    for (std::size_t position = 0; position < 9; ++position) {
      char digit = number[6 + position];
      ASSERT_TRUE(digit >= '0' && digit <= '9') << number;
      ++counts[position][static_cast<std::size_t>(digit - '0')];
    }
    seen.insert(number);
  }
  // 10^9 numbers to draw from: a repeat among 10,000 is a 5% event; many would be a broken source.
  EXPECT_GE(seen.size(), 9990u);
  for (std::size_t position = 0; position < 9; ++position) {
    for (int count : counts[position]) EXPECT_GT(count, 800) << "position " << position;
  }
}

TEST(Sealer, SealThenOpenGivesThePlaintextBack) {
  crypto::Sealer sealer = test_sealer();
  for (const std::string& plain : {std::string("4000001234567899"), std::string(),
                                  std::string(1000, 'x'), std::string("\0\x01\xff", 3)}) {
    std::string sealed = sealer.seal(plain, k_aad);
    std::optional<std::string> opened = sealer.open(sealed, k_aad);
    ASSERT_TRUE(opened.has_value());
    EXPECT_EQ(*opened, plain);
  }
}

TEST(Sealer, SealedTextHasTheDocumentedLayoutAndNeverShowsThePlaintext) {
  crypto::Sealer sealer = test_sealer();
  for (int i = 0; i < 1000; ++i) {
    std::string number = card_numbers::generate_card_number();
    std::string sealed = sealer.seal(number, k_aad);
    EXPECT_EQ(sealed.find(number), std::string::npos);
    bool ok = false;
    std::string raw = crypto::base64_decode(sealed, ok);
    ASSERT_TRUE(ok);
    EXPECT_EQ(raw.size(), 12 + number.size() + 16);  // nonce | ciphertext | tag
    EXPECT_EQ(raw.find(number), std::string::npos);
    // Not even the last four where the plaintext has them. (Searching the whole sealed text for
    // four digits found them by chance about once in 300 runs: base64 has digits too.)
    EXPECT_NE(raw.substr(12 + 12, 4), number.substr(12)) << "not even the last four";
  }
}

TEST(Sealer, TwoSealsOfOneTextDiffer) {
  crypto::Sealer sealer = test_sealer();
  std::string first = sealer.seal("4000001234567899", k_aad);
  std::string second = sealer.seal("4000001234567899", k_aad);
  EXPECT_NE(first, second);
  bool ok = false;
  EXPECT_NE(crypto::base64_decode(first, ok).substr(0, 12),
            crypto::base64_decode(second, ok).substr(0, 12))
      << "a fresh nonce each time";
  EXPECT_EQ(sealer.open(first, k_aad).value_or("?"), "4000001234567899");
  EXPECT_EQ(sealer.open(second, k_aad).value_or("?"), "4000001234567899");
}

TEST(Sealer, RefusesEveryTamperedByte) {
  crypto::Sealer sealer = test_sealer();
  std::string sealed = sealer.seal("4000001234567899", k_aad);
  std::size_t size = 12 + 16 + 16;
  for (std::size_t index = 0; index < size; ++index) {  // nonce, ciphertext and tag
    EXPECT_FALSE(sealer.open(flip_byte(sealed, index), k_aad).has_value()) << "byte " << index;
  }
  bool ok = false;
  std::string raw = crypto::base64_decode(sealed, ok);
  EXPECT_FALSE(sealer.open(crypto::base64(raw.substr(0, raw.size() - 1)), k_aad).has_value());
  EXPECT_FALSE(sealer.open(crypto::base64(raw + "x"), k_aad).has_value());
  EXPECT_FALSE(sealer.open(crypto::base64(raw.substr(0, 27)), k_aad).has_value());  // < nonce+tag
  EXPECT_FALSE(sealer.open("", k_aad).has_value());
  EXPECT_FALSE(sealer.open("not base64 at all!", k_aad).has_value());
  EXPECT_TRUE(sealer.open(sealed, k_aad).has_value()) << "the original still opens";
}

TEST(Sealer, RefusesAnotherAssociatedDataOrKey) {
  crypto::Sealer sealer = test_sealer();
  std::string sealed = sealer.seal("4000001234567899", k_aad);
  std::string other_card = "ten_AAAAAAAAAAAAAAAAAAAAAA:car_CCCCCCCCCCCCCCCCCCCCCC";
  EXPECT_FALSE(sealer.open(sealed, other_card).has_value());
  EXPECT_FALSE(sealer.open(sealed, "").has_value());
  EXPECT_FALSE(sealer.open(sealed, k_aad + " ").has_value());
  EXPECT_FALSE(test_sealer().open(sealed, k_aad).has_value());
  std::string unbound = sealer.seal("4000001234567899", "");
  EXPECT_FALSE(sealer.open(unbound, k_aad).has_value());
  EXPECT_EQ(sealer.open(unbound, "").value_or("?"), "4000001234567899");
}

TEST(Sealer, WhatItRemembersOpensOnlyAsOpenWould) {
  crypto::Sealer sealer = test_sealer();
  std::string sealed = sealer.seal("whsec_secret", k_aad);
  EXPECT_EQ(sealer.open_remembered(sealed, k_aad).value_or("?"), "whsec_secret");
  EXPECT_EQ(sealer.open_remembered(sealed, k_aad).value_or("?"), "whsec_secret") << "remembered";
  // Remembered under its associated data and this key only.
  EXPECT_FALSE(sealer.open_remembered(sealed, k_aad + " ").has_value());
  EXPECT_FALSE(sealer.open_remembered(sealed, "").has_value());
  EXPECT_FALSE(test_sealer().open_remembered(sealed, k_aad).has_value());
  std::string tampered = sealed;
  tampered[20] = tampered[20] == 'A' ? 'B' : 'A';
  EXPECT_FALSE(sealer.open_remembered(tampered, k_aad).has_value());
  // A new secret for the same row is a new sealed text: opened afresh, not the old one.
  std::string rotated = sealer.seal("whsec_rotated", k_aad);
  EXPECT_EQ(sealer.open_remembered(rotated, k_aad).value_or("?"), "whsec_rotated");
  // Past its capacity it forgets and opens again.
  for (std::size_t i = 0; i <= limits::k_sealer_remembered_texts; ++i) {
    ASSERT_TRUE(sealer.open_remembered(sealer.seal("s" + std::to_string(i), k_aad), k_aad));
  }
  EXPECT_EQ(sealer.open_remembered(sealed, k_aad).value_or("?"), "whsec_secret");
  // A moved-to Sealer keeps opening; the moved-from one opens nothing.
  crypto::Sealer moved(std::move(sealer));
  EXPECT_EQ(moved.open_remembered(sealed, k_aad).value_or("?"), "whsec_secret");
  EXPECT_FALSE(sealer.open_remembered(sealed, k_aad).has_value());  // NOLINT(bugprone-use-after-move)
}

TEST(Sealer, OneKeyOpensWhatAnotherInstanceOfItSealed) {
  std::string key = crypto::random_bytes(32);
  crypto::Sealer first(key);
  crypto::Sealer moved = crypto::Sealer(key);
  crypto::Sealer second(std::move(moved));
  EXPECT_EQ(second.open(first.seal("4000001234567899", k_aad), k_aad).value_or("?"),
            "4000001234567899");
}

TEST(Sealer, RefusesAKeyThatIsNot32Bytes) {
  EXPECT_THROW(crypto::Sealer(crypto::random_bytes(31)), std::invalid_argument);
  EXPECT_THROW(crypto::Sealer(crypto::random_bytes(33)), std::invalid_argument);
  EXPECT_THROW(crypto::Sealer(""), std::invalid_argument);
}

TEST(Sealer, FingerprintsAreStablePerKeyAndHideTheNumber) {
  crypto::Sealer sealer = test_sealer();
  const std::string number = card_numbers::generate_card_number();
  const std::string fingerprint = sealer.fingerprint(number);
  EXPECT_EQ(sealer.fingerprint(number), fingerprint);  // a unique index can compare them
  EXPECT_EQ(fingerprint.size(), 64u);
  EXPECT_EQ(fingerprint.find(number), std::string::npos);
  EXPECT_NE(sealer.fingerprint(card_numbers::generate_card_number()), fingerprint);
  // Without the key the fingerprint cannot be recomputed, so the 10^9 numbers cannot be tried.
  EXPECT_NE(test_sealer().fingerprint(number), fingerprint);
  EXPECT_NE(crypto::sha256_hex(number), fingerprint);
}
