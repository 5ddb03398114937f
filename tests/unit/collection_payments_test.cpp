// Collection payments below the API: network transaction ids, the QR payload's merchant name,
// random payers, and the attempt rules and invariants the API cannot reach (a canceled code, an
// inactive tenant account, a broken ledger for `tesoro verify`), on both engines.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/ids.hpp"
#include "domain/collections/attempts.hpp"
#include "domain/collections/qr_codes.hpp"

using namespace tesoro;

TEST(NetworkTransactionIds, AreNineteenBase36CharactersThatSortByTime) {
  std::set<std::string> seen;
  for (int i = 0; i < 2000; ++i) {
    std::string id = ids::network_transaction_id();
    ASSERT_EQ(id.size(), ids::k_network_transaction_id_chars);
    EXPECT_EQ(id.find_first_not_of("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"), std::string::npos)
        << id;
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 2000u);
  unsigned char low[12] = {}, high[12];
  std::fill(std::begin(high), std::end(high), 0xff);
  for (std::uint64_t tick : {0ull, 35ull, 36ull, 1295ull, 123456789ull, (1ull << 36) - 2}) {
    EXPECT_LT(ids::encode_network_transaction_id(tick, high),
              ids::encode_network_transaction_id(tick + 1, low))
        << tick;
  }
  EXPECT_EQ(ids::encode_network_transaction_id(0, low), std::string(19, '0'));
  EXPECT_EQ(ids::encode_network_transaction_id(36, low).substr(0, 7), "0000010");
}

TEST(QrMerchantName, IsPlainCapitalsOfAtMost25Characters) {
  EXPECT_EQ(collections::merchant_name("Tienda de prueba"), "TIENDA DE PRUEBA");
  EXPECT_EQ(collections::merchant_name("Panadería Núñez & Cía."), "PANADERIA NUNEZ & CIA.");
  EXPECT_EQ(collections::merchant_name("ÁÉÍÓÚÜÑ áéíóúüñ Çç"), "AEIOUUN AEIOUUN CC");
  EXPECT_EQ(collections::merchant_name("  two   spaces\tand\ttabs  "), "TWO SPACES AND TABS");
  EXPECT_EQ(collections::merchant_name("Inversiones del Valle del Cauca S.A.S."),
            "INVERSIONES DEL VALLE DEL");
  EXPECT_EQ(collections::merchant_name("Café ☕ “Quote”"), "CAFE QUOTE");
  EXPECT_EQ(collections::merchant_name(""), "TESORO");
  EXPECT_EQ(collections::merchant_name("☕☕"), "TESORO");
  // Never more than 25, never a trailing space.
  std::string cut = collections::merchant_name("abcdefghijklmnopqrstuvwx yz");
  EXPECT_EQ(cut, "ABCDEFGHIJKLMNOPQRSTUVWX");
}

TEST(RandomPayers, LookColombian) {
  std::set<std::string> names;
  for (int i = 0; i < 200; ++i) {
    collections::Payer payer = collections::random_payer();
    EXPECT_EQ(payer.document_type, "CC");
    ASSERT_EQ(payer.document_number.size(), 10u);
    EXPECT_EQ(payer.document_number.substr(0, 2), "10");
    EXPECT_EQ(payer.document_number.find_first_not_of("0123456789"), std::string::npos);
    EXPECT_EQ(std::count(payer.name.begin(), payer.name.end(), ' '), 2) << payer.name;
    names.insert(payer.name);
  }
  EXPECT_GT(names.size(), 50u);
}
