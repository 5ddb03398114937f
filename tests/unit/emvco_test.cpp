#include "core/emvco.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <string>

#include "emvco_vectors.hpp"

using namespace tesoro;

namespace {

using test_vectors::k_colombian;
using test_vectors::k_pix_dynamic;
using test_vectors::k_pix_static;
using test_vectors::k_pix_static_fixed;

// The Payload the Colombian vector encodes.
emvco::Payload colombian_payload() {
  emvco::Payload payload;
  payload.dynamic = true;
  payload.network = "CRB";
  payload.key_type = "alphanumeric";
  payload.key_value = "@PRUEBA123";
  payload.merchant_category_code = "0000";
  payload.amount_minor = 1'500'000;
  payload.merchant_name = "TIENDA DE PRUEBA";
  payload.merchant_city = "BOGOTA";
  payload.postal_code = "110111";
  payload.terminal_label = "TERM0001";
  payload.purpose = "00";
  payload.transaction_id = "P1234567891234";
  return payload;
}

// The Colombian payload changed by `change`.
emvco::Payload colombian_with(const std::function<void(emvco::Payload&)>& change) {
  emvco::Payload payload = colombian_payload();
  change(payload);
  return payload;
}

// `body` followed by a correct tag 63.
std::string with_crc(std::string body) {
  body += "6304";
  char crc[5];
  std::snprintf(crc, sizeof crc, "%04X", emvco::crc16(body));
  return body + crc;
}

// `text` without its last 8 characters (the whole tag 63), to rebuild with another body.
std::string body_of(std::string_view text) { return std::string(text.substr(0, text.size() - 8)); }

std::string top_level_tags(const std::vector<emvco::DataObject>& objects) {
  std::string tags;
  for (const auto& object : objects) tags += object.tag + " ";
  return tags;
}

void expect_parse_fails(std::string_view text, std::string_view message_part) {
  auto parsed = emvco::parse(text);
  ASSERT_FALSE(parsed.ok()) << text;
  EXPECT_EQ(parsed.error().first_code(), "validation_error");
  EXPECT_NE(parsed.error().errors.at(0).message.find(message_part), std::string::npos)
      << parsed.error().errors.at(0).message << " (wanted '" << message_part << "')";
}

void expect_build_fails(const emvco::Payload& payload, std::string_view path) {
  auto built = emvco::build(payload);
  ASSERT_FALSE(built.ok()) << "built " << *built;
  EXPECT_EQ(built.error().first_code(), "validation_error");
  ASSERT_FALSE(built.error().errors.empty());
  EXPECT_EQ(built.error().errors[0].path.value_or(""), path) << built.error().errors.at(0).message;
}

}  // namespace

TEST(EmvcoCrc, CheckValueOf123456789Is29B1) {
  EXPECT_EQ(emvco::crc16("123456789"), 0x29B1);
  EXPECT_EQ(emvco::crc16(""), 0xFFFF);  // the initial value, untouched
}

TEST(EmvcoParse, PixStaticVectorAsPublishedHasALengthItsValueLacks) {
  // The reference-notes copy declares 62 with length 08 but holds 7 characters ("0503***"): its
  // CRC matches its text, yet no TLV reading of it works. The same vector with 6207 parses.
  EXPECT_EQ(emvco::crc16(k_pix_static.substr(0, k_pix_static.size() - 4)), 0x170E);
  expect_parse_fails(k_pix_static, "cut short at offset 110");
}

TEST(EmvcoParse, PixStaticVectorParsesWithItsCrc) {
  auto parsed = emvco::parse(k_pix_static_fixed);
  ASSERT_TRUE(parsed.ok()) << parsed.error().errors.at(0).message;
  EXPECT_EQ(top_level_tags(*parsed), "00 26 52 53 54 58 59 60 62 63 ");
  const auto* key = emvco::find(*parsed, "26");
  ASSERT_NE(key, nullptr);
  ASSERT_EQ(key->children.size(), 2u);
  EXPECT_EQ(key->children[0].tag, "00");
  EXPECT_EQ(key->children[0].value, "BR.GOV.BCB.PIX");
  EXPECT_EQ(key->children[1].tag, "01");
  EXPECT_EQ(key->children[1].value, "+5511943214321");
  EXPECT_EQ(emvco::find(*parsed, "54")->value, "66.66");
  EXPECT_EQ(emvco::find(*parsed, "59")->value, "EMPRESA");
  EXPECT_TRUE(emvco::find(*parsed, "59")->children.empty());  // not a template
  const auto* additional = emvco::find(*parsed, "62");
  ASSERT_EQ(additional->children.size(), 1u);
  EXPECT_EQ(additional->children[0].tag, "05");
  EXPECT_EQ(additional->children[0].value, "***");
  EXPECT_EQ(parsed->back().value, "04ED");
}

TEST(EmvcoParse, PixDynamicVectorParsesWithItsCrc) {
  auto parsed = emvco::parse(k_pix_dynamic);
  ASSERT_TRUE(parsed.ok()) << parsed.error().errors.at(0).message;
  EXPECT_EQ(top_level_tags(*parsed), "00 01 26 52 53 58 59 60 62 63 ");
  EXPECT_EQ(emvco::find(*parsed, "01")->value, "12");
  const auto* key = emvco::find(*parsed, "26");
  ASSERT_EQ(key->children.size(), 2u);
  EXPECT_EQ(key->children[1].tag, "25");
  EXPECT_EQ(key->children[1].value, "pix.example.com/qr/93598be0-1bd0-4997-8318-81776a1d8a99");
  EXPECT_EQ(emvco::find(*parsed, "60")->value, "SAO PAULO");
  EXPECT_EQ(emvco::find(*parsed, "54"), nullptr);
}

TEST(EmvcoParse, PixVectorsAreNotColombian) {
  EXPECT_FALSE(emvco::read(k_pix_static_fixed).ok());
  EXPECT_FALSE(emvco::read(k_pix_dynamic).ok());
}

TEST(EmvcoBuild, ColombianVectorIsReproducedByteForByteAndReadBack) {
  auto built = emvco::build(colombian_payload());
  ASSERT_TRUE(built.ok()) << built.error().errors.at(0).message;
  EXPECT_EQ(*built, k_colombian);

  auto parsed = emvco::parse(k_colombian);
  ASSERT_TRUE(parsed.ok()) << parsed.error().errors.at(0).message;
  EXPECT_EQ(top_level_tags(*parsed), "00 01 26 49 52 53 54 58 59 60 61 62 90 63 ");
  auto read = emvco::read(k_colombian);
  ASSERT_TRUE(read.ok()) << read.error().errors.at(0).message;
  EXPECT_EQ(*read, colombian_payload());
  EXPECT_EQ(emvco::payment_id(*read), "CO.COM.CRB.TRXIDP1234567891234");
  EXPECT_EQ(emvco::payment_id(*read).size(), 30u);
}

TEST(EmvcoBuild, TagsAscendWithTheCrcLastInUppercaseHex) {
  emvco::Payload payload = colombian_payload();
  payload.merchant_name = "tienda z";  // lowercase data, so only the CRC's case is checked
  for (std::string id : {"A", "B7", "Zq9", "0000000000000000001"}) {
    payload.transaction_id = id;
    auto built = emvco::build(payload);
    ASSERT_TRUE(built.ok()) << built.error().errors.at(0).message;
    auto parsed = emvco::parse(*built);
    ASSERT_TRUE(parsed.ok()) << parsed.error().errors.at(0).message;
    for (std::size_t i = 1; i + 1 < parsed->size(); ++i) {
      EXPECT_LT((*parsed)[i - 1].tag, (*parsed)[i].tag) << *built;
    }
    EXPECT_EQ(parsed->back().tag, "63");
    std::string crc = parsed->back().value;
    for (char c : crc) EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'A' && c <= 'F')) << crc;
    EXPECT_EQ(built->substr(built->size() - 8, 4), "6304");
  }
}

TEST(EmvcoBuild, EachKeyTypeHasItsSubTagInTemplate26) {
  const std::pair<const char*, const char*> cases[] = {{"identification", "01"},
                                                       {"cellphone", "02"},
                                                       {"email", "03"},
                                                       {"alphanumeric", "04"},
                                                       {"merchant_code", "05"}};
  for (auto [key_type, sub_tag] : cases) {
    emvco::Payload payload = colombian_payload();
    payload.key_type = key_type;
    payload.key_value = std::string(key_type) == "email" ? "pagos@tienda.co" : "3001010101";
    auto built = emvco::build(payload);
    ASSERT_TRUE(built.ok()) << built.error().errors.at(0).message;
    auto parsed = emvco::parse(*built);
    ASSERT_TRUE(parsed.ok());
    const auto* key = emvco::find(*parsed, "26");
    ASSERT_EQ(key->children.size(), 2u);
    EXPECT_EQ(key->children[0].value, "CO.COM.CRB.LLA");
    EXPECT_EQ(key->children[1].tag, sub_tag) << key_type;
    EXPECT_EQ(key->children[1].value, payload.key_value);
    auto read = emvco::read(*built);
    ASSERT_TRUE(read.ok()) << read.error().errors.at(0).message;
    EXPECT_EQ(*read, payload);
  }
}

TEST(EmvcoBuild, NetworkNamesAllThreeGuisAndTag49) {
  emvco::Payload payload = colombian_payload();
  payload.network = "RBM";
  auto built = emvco::build(payload);
  ASSERT_TRUE(built.ok());
  auto parsed = emvco::parse(*built);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(emvco::find(*parsed, "26")->children[0].value, "CO.COM.RBM.LLA");
  EXPECT_EQ(emvco::find(*parsed, "49")->children[0].value, "CO.COM.RBM.RED");
  EXPECT_EQ(emvco::find(*parsed, "49")->children[1].value, "RBM");
  EXPECT_EQ(emvco::find(*parsed, "90")->children[0].value, "CO.COM.RBM.TRXID");
  EXPECT_EQ(emvco::find(*parsed, "53")->value, "170");
  EXPECT_EQ(emvco::find(*parsed, "58")->value, "CO");
  EXPECT_EQ(emvco::payment_id(payload), "CO.COM.RBM.TRXIDP1234567891234");
}

TEST(EmvcoBuild, AmountsAreWrittenWithTwoDecimals) {
  EXPECT_EQ(emvco::format_amount(1), "0.01");
  EXPECT_EQ(emvco::format_amount(10), "0.10");
  EXPECT_EQ(emvco::format_amount(100), "1.00");
  EXPECT_EQ(emvco::format_amount(1'500'000), "15000.00");
  EXPECT_EQ(emvco::format_amount(emvco::k_amount_max_minor), "9999999999.99");

  const std::pair<std::int64_t, const char*> cases[] = {
      {1, "0.01"}, {1'500'000, "15000.00"}, {999'999'999'999, "9999999999.99"}};
  for (auto [minor, text] : cases) {
    emvco::Payload payload = colombian_payload();
    payload.amount_minor = minor;
    auto built = emvco::build(payload);
    ASSERT_TRUE(built.ok()) << built.error().errors.at(0).message;
    auto parsed = emvco::parse(*built);
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(emvco::find(*parsed, "54")->value, text);
    EXPECT_EQ(emvco::read(*built)->amount_minor, minor);
  }
}

TEST(EmvcoBuild, StaticPayloadsCarry11AndNoAmount) {
  emvco::Payload payload = colombian_payload();
  payload.dynamic = false;
  payload.amount_minor.reset();
  payload.transaction_id = std::string(emvco::k_static_transaction_id);
  auto built = emvco::build(payload);
  ASSERT_TRUE(built.ok()) << built.error().errors.at(0).message;
  EXPECT_TRUE(built->starts_with("000201010211")) << *built;
  auto parsed = emvco::parse(*built);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(emvco::find(*parsed, "01")->value, "11");
  EXPECT_EQ(emvco::find(*parsed, "54"), nullptr);
  EXPECT_EQ(emvco::find(*parsed, "90")->children[1].value, "000000");
  auto read = emvco::read(*built);
  ASSERT_TRUE(read.ok());
  EXPECT_FALSE(read->dynamic);
  EXPECT_FALSE(read->amount_minor.has_value());
  EXPECT_EQ(*read, payload);
  EXPECT_EQ(emvco::payment_id(payload), "CO.COM.CRB.TRXID000000");
}

TEST(EmvcoBuild, AStaticPayloadWithAnAmountCarriesTag54) {
  // multiple_use QR codes are static and may have an amount (contract rule 2).
  emvco::Payload payload = colombian_payload();
  payload.dynamic = false;
  payload.amount_minor = 250'000;
  auto built = emvco::build(payload);
  ASSERT_TRUE(built.ok());
  auto parsed = emvco::parse(*built);
  EXPECT_EQ(emvco::find(*parsed, "01")->value, "11");
  EXPECT_EQ(emvco::find(*parsed, "54")->value, "2500.00");
}

TEST(EmvcoBuild, PostalCodeIsOptional) {
  emvco::Payload payload = colombian_payload();
  payload.postal_code.reset();
  auto built = emvco::build(payload);
  ASSERT_TRUE(built.ok());
  EXPECT_EQ(emvco::find(*emvco::parse(*built), "61"), nullptr);
  EXPECT_EQ(*emvco::read(*built), payload);
}

TEST(EmvcoBuild, FieldsAtTheirLimitsAreAccepted) {
  emvco::Payload payload = colombian_payload();
  payload.merchant_name = std::string(25, 'N');
  payload.merchant_city = std::string(15, 'C');
  payload.transaction_id = std::string(19, '7');
  payload.terminal_label = std::string(25, 'T');
  payload.postal_code = std::string(10, '1');
  payload.network = "ABCD";
  payload.amount_minor = emvco::k_amount_max_minor;
  payload.key_type = "email";
  payload.key_value = std::string(76, 'e');  // 99 - 4 - len("CO.COM.ABCD.LLA") - 4
  auto built = emvco::build(payload);
  ASSERT_TRUE(built.ok()) << built.error().errors.at(0).message;
  EXPECT_EQ(built->size(), 341u);  // the longest payload build() can make, under 512
  auto read = emvco::read(*built);
  ASSERT_TRUE(read.ok()) << read.error().errors.at(0).message;
  EXPECT_EQ(*read, payload);
  EXPECT_EQ(emvco::payment_id(payload).size(), 36u);  // the attempt's payment_id limit
}

TEST(EmvcoBuild, LengthLimitsAreRejected) {
  expect_build_fails(colombian_with([](auto& p) { p.merchant_name = std::string(26, 'N'); }),
                     "merchant_name");
  expect_build_fails(colombian_with([](auto& p) { p.merchant_city = std::string(16, 'C'); }),
                     "merchant_city");
  expect_build_fails(colombian_with([](auto& p) { p.transaction_id = std::string(20, '7'); }),
                     "transaction_id");
  // "10000000000.00" is 14 characters.
  expect_build_fails(
      colombian_with([](auto& p) { p.amount_minor = emvco::k_amount_max_minor + 1; }),
      "amount_minor");
  expect_build_fails(colombian_with([](auto& p) { p.terminal_label = std::string(26, 'T'); }),
                     "terminal_label");
  expect_build_fails(colombian_with([](auto& p) { p.postal_code = std::string(11, '1'); }),
                     "postal_code");
  expect_build_fails(colombian_with([](auto& p) {
                       p.network = "ABCD";
                       p.key_value = std::string(77, 'e');
                     }),
                     "key_value");
}

TEST(EmvcoBuild, BadValuesAreRejected) {
  expect_build_fails(colombian_with([](auto& p) { p.amount_minor = 0; }), "amount_minor");
  expect_build_fails(colombian_with([](auto& p) { p.amount_minor = -100; }), "amount_minor");
  expect_build_fails(colombian_with([](auto& p) { p.merchant_name = ""; }), "merchant_name");
  expect_build_fails(colombian_with([](auto& p) { p.merchant_name = "Panadería"; }),
                     "merchant_name");
  expect_build_fails(colombian_with([](auto& p) { p.merchant_city = "BOG\nOTA"; }),
                     "merchant_city");
  expect_build_fails(colombian_with([](auto& p) { p.merchant_city = ""; }), "merchant_city");
  expect_build_fails(colombian_with([](auto& p) { p.postal_code = ""; }), "postal_code");
  expect_build_fails(colombian_with([](auto& p) { p.terminal_label = ""; }), "terminal_label");
  expect_build_fails(colombian_with([](auto& p) { p.purpose = "0"; }), "purpose");
  expect_build_fails(colombian_with([](auto& p) { p.purpose = "AB"; }), "purpose");
  expect_build_fails(colombian_with([](auto& p) { p.transaction_id = ""; }), "transaction_id");
  expect_build_fails(colombian_with([](auto& p) { p.transaction_id = "P-1"; }), "transaction_id");
  expect_build_fails(colombian_with([](auto& p) { p.key_type = "iban"; }), "key_type");
  expect_build_fails(colombian_with([](auto& p) { p.key_type = ""; }), "key_type");
  expect_build_fails(colombian_with([](auto& p) { p.key_value = ""; }), "key_value");
  expect_build_fails(colombian_with([](auto& p) { p.merchant_category_code = "541"; }),
                     "merchant_category_code");
  expect_build_fails(colombian_with([](auto& p) { p.merchant_category_code = "54a1"; }),
                     "merchant_category_code");
  expect_build_fails(colombian_with([](auto& p) { p.network = ""; }), "network");
  expect_build_fails(colombian_with([](auto& p) { p.network = "crb"; }), "network");
  expect_build_fails(colombian_with([](auto& p) { p.network = "ABCDE"; }), "network");
  expect_build_fails(colombian_with([](auto& p) { p.network = "C.B"; }), "network");
}

TEST(EmvcoParse, ACorruptedCrcFails) {
  std::string text(k_colombian);
  text.back() = '4';  // 7024
  expect_parse_fails(text, "CRC 7024 does not match");
  text = std::string(k_colombian);
  text.replace(text.size() - 4, 4, "70G3");
  expect_parse_fails(text, "not 4 hexadecimal digits");
}

TEST(EmvcoParse, ALowercaseCrcIsAccepted) {
  std::string text(k_pix_static_fixed);
  text.replace(text.size() - 4, 4, "04ed");
  EXPECT_TRUE(emvco::parse(text).ok());
}

TEST(EmvcoParse, AChangedBodyWithTheOldCrcFails) {
  std::string text(k_colombian);
  text.replace(text.find("15000.00"), 8, "95000.00");
  expect_parse_fails(text, "does not match");
}

TEST(EmvcoParse, BadLengthsFail) {
  // 59 claims 30 characters; 14 remain.
  expect_parse_fails(with_crc("0002015930TIENDA"), "past the end of the payload");
  // A length that is not two digits.
  expect_parse_fails(with_crc("00020159A6TIENDA"), "not 2 digits");
  // A tag that is not two digits.
  expect_parse_fails(with_crc("000201X906TIENDA"), "not 2 digits");
  // An empty value.
  expect_parse_fails(with_crc("0002015900"), "is empty");
  // Template 26 whose inner key runs past the template.
  expect_parse_fails(with_crc("000201261200140123456789"), "past the end of its template");
}

TEST(EmvcoParse, TruncatedPayloadsFail) {
  EXPECT_FALSE(emvco::parse("").ok());
  for (std::size_t cut : {1u, 3u, 4u, 8u, 9u, 40u, 100u}) {
    std::string_view text = k_colombian.substr(0, k_colombian.size() - cut);
    EXPECT_FALSE(emvco::parse(text).ok()) << "cut " << cut;
  }
  expect_parse_fails(k_colombian.substr(0, k_colombian.size() - 6), "cut short");
  expect_parse_fails(k_colombian.substr(0, k_colombian.size() - 8),
                     "tag 63 (CRC) does not come last");
}

TEST(EmvcoParse, AMissingOrLate00Fails) {
  std::string body = body_of(k_colombian);
  expect_parse_fails(with_crc(body.substr(6)),
                     "tag 00 (payload format indicator) does not come first");
  // 00 after 01.
  expect_parse_fails(with_crc("010212000201" + body.substr(12)), "does not come first");
  expect_parse_fails(with_crc("000202" + body.substr(6)), "tag 00 is '02', not 01");
}

TEST(EmvcoParse, A63BeforeTheEndOrATagTwiceFails) {
  expect_parse_fails(std::string(k_colombian) + "0102AB", "tag 63 (CRC) does not come last");
  std::string body = body_of(k_colombian);
  expect_parse_fails(with_crc(body + "5802CO"), "tag 58 appears more than once");
}

TEST(EmvcoParse, NonAsciiAndOverlongPayloadsFail) {
  std::string body = body_of(k_colombian);
  std::string accented = body;
  accented.replace(accented.find("5916TIENDA DE PRUEBA"), 20, "5916TIENDA DE PRUEB\xc3\x81");
  expect_parse_fails(with_crc(accented), "not printable ASCII");
  std::string padded = body;
  while (padded.size() < 520) padded += "8104ABCD";  // a template holding a 4-character object
  expect_parse_fails(with_crc(padded), "longer than 512");
}

TEST(EmvcoParse, UnknownTagsAndTemplatesAreKept) {
  std::string body = body_of(k_colombian);
  // 80 channel (a template), 91 security hash: read() ignores both.
  body.insert(body.find("9038"), "80060002IM");
  body += "91080004ABCD";
  auto parsed = emvco::parse(with_crc(body));
  ASSERT_TRUE(parsed.ok()) << parsed.error().errors.at(0).message;
  const auto* channel = emvco::find(*parsed, "80");
  ASSERT_NE(channel, nullptr);
  ASSERT_EQ(channel->children.size(), 1u);
  EXPECT_EQ(channel->children[0].value, "IM");
  auto read = emvco::read(with_crc(body));
  ASSERT_TRUE(read.ok()) << read.error().errors.at(0).message;
  EXPECT_EQ(*read, colombian_payload());
}

TEST(EmvcoRead, PayloadsThatAreNotColombianFail) {
  std::string body = body_of(k_colombian);
  auto replaced = [&](std::string_view from, std::string_view to) {
    std::string text = body;
    std::size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    return with_crc(text);
  };
  auto expect_read_fails = [](const std::string& text, std::string_view message_part) {
    ASSERT_TRUE(emvco::parse(text).ok()) << text;  // a valid EMVCo payload...
    auto read = emvco::read(text);
    ASSERT_FALSE(read.ok()) << text;  // ...that is not a Colombian one
    EXPECT_NE(read.error().errors.at(0).message.find(message_part), std::string::npos)
        << read.error().errors.at(0).message;
  };
  expect_read_fails(replaced("5802CO", "5802BR"), "tag 58");
  expect_read_fails(replaced("5303170", "5303986"), "tag 53");
  expect_read_fails(replaced("0103CRB", "0103RBM"), "differs");
  expect_read_fails(replaced("0016CO.COM.CRB.TRXID", "0016CO.COM.RBM.TRXID"), "tag 90 GUI");
  expect_read_fails(replaced("010212", "010213"), "tag 01");
  expect_read_fails(replaced("6218"
                             "0708TERM0001"
                             "080200",
                             "6206"
                             "080200"),
                    "no sub-tag 07");
  expect_read_fails(replaced("6218"
                             "0708TERM0001"
                             "080200",
                             "6212"
                             "0708TERM0001"),
                    "no sub-tag 08");
  expect_read_fails(replaced("26320014CO.COM.CRB.LLA0410@PRUEBA123",
                             "26460014CO.COM.CRB.LLA0410@PRUEBA1230310a@b.co.com"),
                    "more than one key");
  expect_read_fails(replaced("0410@PRUEBA123", "0610@PRUEBA123"), "no key");
  expect_read_fails(replaced("540815000.00", "54040.00"), "amount_minor");
  expect_read_fails(replaced("540815000.00", "54041,00"), "not an amount");
  expect_read_fails(replaced("5916TIENDA DE PRUEBA", "5926TIENDA DE PRUEBA 123456789"),
                    "merchant_name");
}

TEST(EmvcoRead, AmountsWithoutTwoDecimalsAreRead) {
  std::string body = body_of(k_colombian);
  for (auto [text, minor] : {std::pair{"540515000", 1'500'000}, std::pair{"54061500.5", 150'050}}) {
    std::string changed = body;
    changed.replace(changed.find("540815000.00"), 12, text);
    auto read = emvco::read(with_crc(changed));
    ASSERT_TRUE(read.ok()) << read.error().errors.at(0).message;
    EXPECT_EQ(read->amount_minor, minor) << text;
  }
}

TEST(EmvcoAsciiField, AccentsAreDroppedAndTheTextFits) {
  EXPECT_EQ(emvco::ascii_field("Panadería Ñandú", 25), "Panaderia Nandu");
  EXPECT_EQ(emvco::ascii_field("  Café   del\tPuerto  ", 25), "Cafe del Puerto");
  EXPECT_EQ(emvco::ascii_field("Bogotá D.C. \xF0\x9F\x98\x80 centro", 15), "Bogota D.C. cen");
  EXPECT_EQ(emvco::ascii_field("Medellín", 15), "Medellin");
  EXPECT_EQ(emvco::ascii_field("abc def", 4), "abc");     // no trailing space after the cut
  EXPECT_EQ(emvco::ascii_field("\xC3", 10), "");          // a cut UTF-8 sequence
  EXPECT_EQ(emvco::ascii_field("\x80\xBFok", 10), "ok");  // stray continuation bytes
  EXPECT_EQ(emvco::ascii_field("\xC3ok", 10), "ok");      // a lead byte without its continuation
}
