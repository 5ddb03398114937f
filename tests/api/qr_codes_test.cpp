// QR codes of collections over HTTP (POST /api/v1/collections/{collection_id}/qr): the
// record, the payload read back with the codec's parser, the image read by a real QR reader
// (zbarimg), each of the contract's six rules and every error path; and GET of the same path,
// the collection's codes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "core/emvco.hpp"
#include "payment_fixtures.hpp"

using harness::Reply;
using harness::Server;
using namespace payment_fixtures;
namespace json = boost::json;

namespace {

const std::string k_dynamic = R"({"usage_mode":"single_use","amount":)";

std::string dynamic_body(long long amount, const std::string& extra = "") {
  return k_dynamic + money(amount) + R"(,"expiration_seconds":600)" + extra + "}";
}

struct Decoded {
  std::string text;  // what the reader read
  std::uint32_t width = 0;
  std::uint32_t height = 0;
};

// Decodes the data URL's PNG with zbarimg and reads its size from the PNG header.
Decoded scan(const std::string& data_url) {
  const std::string prefix = "data:image/png;base64,";
  EXPECT_EQ(data_url.rfind(prefix, 0), 0u) << data_url.substr(0, 40);
  char pattern[] = "/tmp/tesoro-qr-XXXXXX";
  std::filesystem::path dir = ::mkdtemp(pattern);
  {
    std::ofstream(dir / "image.b64") << data_url.substr(prefix.size());
  }
  const std::string png = (dir / "image.png").string();
  harness::run_capture("base64 -d " + harness::shell_quote((dir / "image.b64").string()) + " > " +
                       harness::shell_quote(png));
  Decoded decoded;
  // QR codes only: with every symbology on, zbar now and then also reads a linear barcode out
  // of a code's modules and prints it on a second line.
  decoded.text = harness::run_capture("zbarimg -q --raw -Sdisable -Sqrcode.enable " +
                                      harness::shell_quote(png) + " 2>/dev/null");
  if (!decoded.text.empty() && decoded.text.back() == '\n') decoded.text.pop_back();
  std::ifstream file(png, std::ios::binary);
  unsigned char header[24] = {};
  file.read(reinterpret_cast<char*>(header), sizeof header);
  auto big_endian = [&](int at) {
    return std::uint32_t{header[at]} << 24 | std::uint32_t{header[at + 1]} << 16 |
           std::uint32_t{header[at + 2]} << 8 | header[at + 3];
  };
  EXPECT_EQ(std::string(reinterpret_cast<char*>(header) + 12, 4), "IHDR");
  decoded.width = big_endian(16);
  decoded.height = big_endian(20);
  std::filesystem::remove_all(dir);
  return decoded;
}

}  // namespace

TEST(QrCodes, ADynamicCodeHasTheContractsRecordAndAPayloadThatReadsBack) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  CollectionSpec spec;
  spec.maximum_attempt = 2'000'000;
  json::value collection = create_collection(server, tenant, spec);
  std::string id = text(collection, "id");
  Reply reply = create_qr(server, tenant, id, dynamic_body(1'500'000));
  ASSERT_EQ(reply.status, 201) << reply.body;
  json::value qr = reply.json();
  EXPECT_TRUE(text(qr, "id").starts_with("bbqr_"));
  EXPECT_EQ(text(qr, "collection_id"), id);
  EXPECT_EQ(text(qr, "usage_mode"), "single_use");
  EXPECT_EQ(amount_of(qr, "amount"), 1'500'000);
  EXPECT_EQ(text(qr.at("amount"), "currency"), "COP");
  EXPECT_FALSE(qr.at("canceled").as_bool());
  EXPECT_EQ(text(qr, "error_correction_level"), "medium");
  EXPECT_EQ(qr.at("image_width").as_int64(), 400);
  EXPECT_EQ(qr.at("failed_attempts").as_int64(), 0);
  EXPECT_EQ(qr.at("successful_attempts").as_int64(), 0);
  EXPECT_EQ(text(qr, "key_type"), "alphanumeric");
  EXPECT_EQ(text(qr, "key_value"), key_of(collection));
  EXPECT_EQ(text(qr, "inserted_at"), text(qr, "updated_at"));
  // expires_at: inserted_at + 600 s on the tenant clock.
  EXPECT_EQ(micros_of(text(qr, "expires_at")) - micros_of(text(qr, "inserted_at")),
            600'000'000LL);

  const std::string emvco = text(qr, "emvco");
  auto read = tesoro::emvco::read(emvco);
  ASSERT_TRUE(read.ok()) << emvco;  // read checks the CRC
  EXPECT_TRUE(read->dynamic);
  EXPECT_EQ(read->amount_minor, 1'500'000);
  EXPECT_EQ(read->key_type, "alphanumeric");
  EXPECT_EQ(read->key_value, key_of(collection));
  EXPECT_EQ(read->network, "CRB");
  EXPECT_LE(read->transaction_id.size(), 19u);
  EXPECT_EQ(text(qr, "payment_id"), tesoro::emvco::payment_id(*read));
  EXPECT_EQ(text(qr, "payment_id"), "CO.COM.CRB.TRXID" + read->transaction_id);
  EXPECT_NE(emvco.find("5802CO"), std::string::npos);
  EXPECT_NE(emvco.find("5303170"), std::string::npos);
  EXPECT_NE(emvco.find("540815000.00"), std::string::npos);  // tag 54, 8 characters
  // The CRC is CRC-16/CCITT-FALSE over everything up to and including "6304".
  char crc[5];
  std::snprintf(crc, sizeof crc, "%04X", tesoro::emvco::crc16(emvco.substr(0, emvco.size() - 4)));
  EXPECT_EQ(emvco.substr(emvco.size() - 8), std::string("6304") + crc);
}

TEST(QrCodes, TheImageScansBackToTheEmvcoAtEveryLevelAndWidth) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  std::string id = text(create_collection(server, tenant), "id");
  for (const std::string level : {"low", "medium", "quarter", "high"}) {
    for (int width : {400, 2048}) {
      Reply reply = create_qr(server, tenant, id,
                              dynamic_body(250'000, R"(,"error_correction_level":")" + level +
                                                        R"(","image_width":)" +
                                                        std::to_string(width)));
      ASSERT_EQ(reply.status, 201) << reply.body;
      json::value qr = reply.json();
      EXPECT_EQ(text(qr, "error_correction_level"), level);
      EXPECT_EQ(qr.at("image_width").as_int64(), width);
      Decoded decoded = scan(text(qr, "image"));
      EXPECT_EQ(decoded.text, text(qr, "emvco")) << level << " " << width;
      EXPECT_EQ(decoded.width, static_cast<std::uint32_t>(width));
      EXPECT_EQ(decoded.height, static_cast<std::uint32_t>(width));
    }
  }
  // A static code without an amount scans too.
  Reply reply = create_qr(server, tenant, id, R"({"usage_mode":"multiple_use","image_width":777})");
  ASSERT_EQ(reply.status, 201) << reply.body;
  Decoded decoded = scan(text(reply.json(), "image"));
  EXPECT_EQ(decoded.text, text(reply.json(), "emvco"));
  EXPECT_EQ(decoded.width, 777u);
}

TEST(QrCodes, AStaticCodeHasNoExpiryAndAPaymentIdOfItsOwn) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  std::string id = text(create_collection(server, tenant), "id");
  std::set<std::string> payment_ids;
  for (const std::string& body : {std::string(R"({"usage_mode":"multiple_use"})"),
                                 R"({"usage_mode":"multiple_use","amount":)" + money(5000) + "}"}) {
    Reply reply = create_qr(server, tenant, id, body);
    ASSERT_EQ(reply.status, 201) << reply.body;
    json::value qr = reply.json();
    EXPECT_EQ(text(qr, "usage_mode"), "multiple_use");
    EXPECT_TRUE(qr.at("expires_at").is_null());
    auto read = tesoro::emvco::read(text(qr, "emvco"));
    ASSERT_TRUE(read.ok()) << text(qr, "emvco");
    EXPECT_FALSE(read->dynamic);
    // The Colombian standard's static transaction id; the payment_id stays unique.
    EXPECT_EQ(read->transaction_id, "000000");
    EXPECT_TRUE(text(qr, "payment_id").starts_with("CO.COM.CRB.TRXID"));
    EXPECT_LE(text(qr, "payment_id").size(), 36u);
    payment_ids.insert(text(qr, "payment_id"));
    if (qr.at("amount").is_null()) {
      EXPECT_FALSE(read->amount_minor.has_value());
    } else {
      EXPECT_EQ(read->amount_minor, 5000);
    }
  }
  EXPECT_EQ(payment_ids.size(), 2u);
}

TEST(QrCodes, Rule1ASingleUseCodeNeedsAnAmountAndAnExpiration) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  std::string id = text(create_collection(server, tenant), "id");
  Reply neither = create_qr(server, tenant, id, R"({"usage_mode":"single_use"})");
  EXPECT_EQ(neither.status, 422) << neither.body;
  EXPECT_EQ(neither.error_code(), "missing_field");
  json::value body = neither.json();
  ASSERT_EQ(body.at("errors").as_array().size(), 2u) << neither.body;
  EXPECT_EQ(text(body.at("errors").at(0), "path"), "amount");
  EXPECT_EQ(text(body.at("errors").at(1), "path"), "expiration_seconds");
  Reply no_expiry =
      create_qr(server, tenant, id, k_dynamic + money(1000) + R"(,"expiration_seconds":null})");
  EXPECT_EQ(no_expiry.status, 422);
  EXPECT_EQ(no_expiry.error_path(), "expiration_seconds");
  Reply no_amount =
      create_qr(server, tenant, id, R"({"usage_mode":"single_use","expiration_seconds":60})");
  EXPECT_EQ(no_amount.status, 422);
  EXPECT_EQ(no_amount.error_path(), "amount");
}

TEST(QrCodes, Rule2AStaticCodeTakesNoExpiration) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  std::string id = text(create_collection(server, tenant), "id");
  Reply reply = create_qr(server, tenant, id,
                          R"({"usage_mode":"multiple_use","expiration_seconds":60})");
  EXPECT_EQ(reply.status, 400) << reply.body;
  EXPECT_EQ(reply.error_code(), "validation_error");
  EXPECT_EQ(reply.error_path(), "expiration_seconds");
}

TEST(QrCodes, Rule3TheAmountLiesWithinTheBoundsAndTheRemainingBalance) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  CollectionSpec spec = with_limits(1000, 50'000, 10'000, 60'000);
  json::value collection = create_collection(server, tenant, spec);
  std::string id = text(collection, "id");
  for (long long amount : {999LL, 50'001LL}) {
    Reply reply = create_qr(server, tenant, id, dynamic_body(amount));
    EXPECT_EQ(reply.status, 422) << amount << " " << reply.body;
    EXPECT_EQ(reply.error_code(), "amount_out_of_range");
    EXPECT_EQ(reply.error_path(), "amount.amount");
  }
  for (long long amount : {1000LL, 50'000LL}) {
    EXPECT_EQ(create_qr(server, tenant, id, dynamic_body(amount)).status, 201) << amount;
  }
  // 40,000 paid: 20,000 remain, so 20,001 is out of range although within the bounds.
  Reply paid = attempt(server, tenant, attempt_body(40'000, key_of(collection)));
  ASSERT_EQ(paid.status, 202) << paid.body;
  ASSERT_EQ(text(paid.json(), "attempt_state"), "successful") << paid.body;
  Reply over = create_qr(server, tenant, id, dynamic_body(20'001));
  EXPECT_EQ(over.status, 422) << over.body;
  EXPECT_EQ(over.error_code(), "amount_out_of_range");
  EXPECT_EQ(text(over.json().at("errors").at(0), "message"),
            "the amount is more than the collection's remaining balance (COP 200.00)");
  EXPECT_EQ(create_qr(server, tenant, id, dynamic_body(20'000)).status, 201);
  // A static code's optional amount follows the same rule.
  Reply static_over = create_qr(server, tenant, id,
                                R"({"usage_mode":"multiple_use","amount":)" + money(20'001) + "}");
  EXPECT_EQ(static_over.status, 422);
  EXPECT_EQ(static_over.error_code(), "amount_out_of_range");
}

TEST(QrCodes, WhatAPayloadCannotHoldIsRefused) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  // Tag 54 holds 13 characters: 9999999999.99.
  CollectionSpec huge;
  huge.maximum_attempt = huge.total_minimum = huge.total_maximum = 9'000'000'000'000LL;
  std::string id = text(create_collection(server, tenant, huge), "id");
  Reply over = create_qr(server, tenant, id, dynamic_body(1'000'000'000'000LL));
  EXPECT_EQ(over.status, 422) << over.body;
  EXPECT_EQ(over.error_code(), "amount_out_of_range");
  EXPECT_EQ(over.error_path(), "amount.amount");
  EXPECT_EQ(create_qr(server, tenant, id, dynamic_body(999'999'999'999LL)).status, 201);
  // Tag 26 has room for a key of 77 characters: a long email key does not fit.
  CollectionSpec long_email;
  long_email.key_type = "email";
  const std::string unique = fresh_key().substr(1);  // 12 capitals or digits
  long_email.key = unique + std::string(58, 'a') + "@example.com";
  std::string email_id = text(create_collection(server, tenant, long_email), "id");
  Reply too_long = create_qr(server, tenant, email_id, R"({"usage_mode":"multiple_use"})");
  EXPECT_EQ(too_long.status, 400) << too_long.body;
  EXPECT_EQ(too_long.error_code(), "validation_error");
  EXPECT_EQ(too_long.error_path(), "key_value");
  CollectionSpec short_email;
  short_email.key_type = "email";
  short_email.key = "Pagos." + unique + "@Example.com";
  std::string short_id = text(create_collection(server, tenant, short_email), "id");
  Reply fits = create_qr(server, tenant, short_id, R"({"usage_mode":"multiple_use"})");
  ASSERT_EQ(fits.status, 201) << fits.body;
  EXPECT_EQ(text(fits.json(), "key_type"), "email");
  std::string lower = "pagos." + unique + "@example.com";
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  EXPECT_EQ(text(fits.json(), "key_value"), lower);
  auto read = tesoro::emvco::read(text(fits.json(), "emvco"));
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->key_type, "email");
}

TEST(QrCodes, AnAmountInAnotherCurrencyThanTheCollectionsIsAMismatch) {
  Server server({{"--currencies", "COP,USD"}});
  Tenant tenant = init_tenant(server);
  json::value collection = create_collection(server, tenant);
  std::string id = text(collection, "id");
  Reply reply = create_qr(server, tenant, id,
                          k_dynamic + money(1000, "USD") + R"(,"expiration_seconds":60})");
  EXPECT_EQ(reply.status, 422) << reply.body;
  EXPECT_EQ(reply.error_code(), "currency_mismatch");
  EXPECT_EQ(reply.error_path(), "amount.currency");
  // An attempt in USD on a COP collection is rejected, not refused.
  Reply attempted = attempt(server, tenant, attempt_body(1000, key_of(collection), "", "USD"));
  ASSERT_EQ(attempted.status, 202) << attempted.body;
  EXPECT_EQ(text(attempted.json(), "attempt_state"), "rejected");
  EXPECT_EQ(text(attempted.json(), "attempt_state_reason"), "currency_mismatch");
  server.check_ledger();
}

TEST(QrCodes, Rule4KeyTypeAndValueComeTogetherAndNameAnActiveKeyOfTheCollection) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  json::value collection = create_collection(server, tenant);
  std::string id = text(collection, "id");
  Reply type_only = create_qr(server, tenant, id,
                              R"({"usage_mode":"multiple_use","key_type":"alphanumeric"})");
  EXPECT_EQ(type_only.status, 422) << type_only.body;
  EXPECT_EQ(type_only.error_code(), "missing_field");
  EXPECT_EQ(type_only.error_path(), "key_value");
  Reply value_only = create_qr(server, tenant, id,
                               R"({"usage_mode":"multiple_use","key_value":")" +
                                   key_of(collection) + R"("})");
  EXPECT_EQ(value_only.status, 422);
  EXPECT_EQ(value_only.error_path(), "key_type");

  Reply given = create_qr(server, tenant, id,
                          R"({"usage_mode":"multiple_use","key_type":"alphanumeric","key_value":")" +
                              key_of(collection) + R"("})");
  ASSERT_EQ(given.status, 201) << given.body;
  EXPECT_EQ(text(given.json(), "key_value"), key_of(collection));

  // Another collection's key, and a key nobody has, are not keys of this collection.
  json::value other = create_collection(server, tenant);
  for (const std::string& key : {key_of(other), fresh_key()}) {
    Reply reply = create_qr(server, tenant, id,
                            R"({"usage_mode":"multiple_use","key_type":"alphanumeric","key_value":")" +
                                key + R"("})");
    EXPECT_EQ(reply.status, 400) << reply.body;
    EXPECT_EQ(reply.error_code(), "key_not_found");
    EXPECT_EQ(reply.error_path(), "key_value");
  }
  Reply wrong_type = create_qr(server, tenant, id,
                               R"({"usage_mode":"multiple_use","key_type":"email","key_value":")" +
                                   key_of(collection) + R"("})");
  EXPECT_EQ(wrong_type.status, 400) << wrong_type.body;
  EXPECT_EQ(wrong_type.error_path(), "key_value");
  Reply bad_type = create_qr(server, tenant, id,
                             R"({"usage_mode":"multiple_use","key_type":"iban","key_value":"x"})");
  EXPECT_EQ(bad_type.status, 400);
  EXPECT_EQ(bad_type.error_path(), "key_type");
}

TEST(QrCodes, Rule5NoStaticCodeForAFixedValueSingleUseCollection) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  CollectionSpec fixed;
  fixed.usage_mode = "single_use";
  fixed.minimum_attempt = fixed.maximum_attempt = fixed.total_minimum = fixed.total_maximum =
      80'000;
  std::string id = text(create_collection(server, tenant, fixed), "id");
  Reply reply = create_qr(server, tenant, id, R"({"usage_mode":"multiple_use"})");
  EXPECT_EQ(reply.status, 400) << reply.body;
  EXPECT_EQ(reply.error_code(), "qr_type_not_allowed");
  EXPECT_EQ(reply.error_path(), "usage_mode");
  EXPECT_EQ(create_qr(server, tenant, id, dynamic_body(80'000)).status, 201);
  // Fixed value but multiple use, or single use with a range: static codes are fine.
  CollectionSpec fixed_multiple = fixed;
  fixed_multiple.usage_mode = "multiple_use";
  fixed_multiple.key = fresh_key();
  fixed_multiple.total_maximum = 160'000;
  std::string multiple = text(create_collection(server, tenant, fixed_multiple), "id");
  EXPECT_EQ(create_qr(server, tenant, multiple, R"({"usage_mode":"multiple_use"})").status, 201);
  CollectionSpec ranged = fixed;
  ranged.minimum_attempt = 1000;
  ranged.key = fresh_key();
  std::string single = text(create_collection(server, tenant, ranged), "id");
  EXPECT_EQ(create_qr(server, tenant, single, R"({"usage_mode":"multiple_use"})").status, 201);
}

TEST(QrCodes, Rule6AMissingCollectionIsNotFound) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  Reply unknown = create_qr(server, tenant, "bbcol_AAAAAAAAAAAAAAAAAAAAAA",
                            R"({"usage_mode":"multiple_use"})");
  EXPECT_EQ(unknown.status, 404) << unknown.body;
  EXPECT_EQ(unknown.error_code(), "collection_not_found");
  // Another tenant's collection answers the same.
  Tenant other = other_tenant(server, "qr-other");
  std::string theirs = text(create_collection(server, other), "id");
  Reply foreign = create_qr(server, tenant, theirs, R"({"usage_mode":"multiple_use"})");
  EXPECT_EQ(foreign.status, 404);
  EXPECT_EQ(foreign.error_code(), "collection_not_found");
  Reply malformed = create_qr(server, tenant, "col_1", R"({"usage_mode":"multiple_use"})");
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(malformed.error_path(), "collection_id");
}

TEST(QrCodes, OnlyAPayableCollectionGetsCodes) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  // Paid: a single-use collection after its one payment.
  CollectionSpec single;
  single.usage_mode = "single_use";
  single.maximum_attempt = single.total_minimum = single.total_maximum = 10'000;
  json::value paid = create_collection(server, tenant, single);
  ASSERT_EQ(text(attempt(server, tenant, attempt_body(10'000, key_of(paid))).json(),
                 "attempt_state"),
            "successful");
  ASSERT_EQ(text(get_collection(server, tenant, text(paid, "id")), "state"), "paid");
  Reply after_paid = create_qr(server, tenant, text(paid, "id"), R"({"usage_mode":"multiple_use"})");
  EXPECT_EQ(after_paid.status, 409) << after_paid.body;
  EXPECT_EQ(after_paid.error_code(), "collection_invalid_state");
  // Discarded.
  std::string discarded = text(create_collection(server, tenant), "id");
  ASSERT_EQ(server.send({"DELETE", "/api/v1/collections/" + discarded, "", {tenant.bearer}}).status,
            204);
  Reply after_delete = create_qr(server, tenant, discarded, R"({"usage_mode":"multiple_use"})");
  EXPECT_EQ(after_delete.status, 409);
  EXPECT_EQ(after_delete.error_code(), "collection_invalid_state");
  // minimum_paid still takes codes.
  CollectionSpec spec;
  spec.total_minimum = 1000;
  json::value partly = create_collection(server, tenant, spec);
  ASSERT_EQ(attempt(server, tenant, attempt_body(1000, key_of(partly))).status, 202);
  ASSERT_EQ(text(get_collection(server, tenant, text(partly, "id")), "state"), "minimum_paid");
  EXPECT_EQ(create_qr(server, tenant, text(partly, "id"), dynamic_body(5000)).status, 201);
}

TEST(QrCodes, FieldsOutsideTheirRangesAreValidationErrors) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  std::string id = text(create_collection(server, tenant), "id");
  struct Case {
    std::string extra;
    std::string path;
  };
  const std::vector<Case> cases = {
      {R"(,"image_width":399)", "image_width"},
      {R"(,"image_width":2049)", "image_width"},
      {R"(,"image_width":"400")", "image_width"},
      {R"(,"expiration_seconds":0)", "expiration_seconds"},
      {R"(,"expiration_seconds":6220801)", "expiration_seconds"},
      {R"(,"error_correction_level":"H")", "error_correction_level"},
      {R"(,"colour":"red")", "colour"},
      {R"(,"amount":{"amount":0,"currency":"COP"})", "amount.amount"},
      {R"(,"amount":{"amount":100,"currency":"XYZ"})", "amount.currency"},
  };
  for (const Case& c : cases) {
    const bool own_amount = c.extra.find("\"amount\"") != std::string::npos;
    Reply reply = create_qr(server, tenant, id,
                            R"({"usage_mode":"single_use","expiration_seconds":60)" +
                                (own_amount ? "" : R"(,"amount":)" + money(1000)) + c.extra + "}");
    EXPECT_EQ(reply.status, 400) << c.extra << " " << reply.body;
    EXPECT_EQ(reply.error_code(), "validation_error") << c.extra;
    bool named = reply.body.find("\"path\":\"" + c.path + "\"") != std::string::npos;
    EXPECT_TRUE(named) << c.extra << " " << reply.body;
  }
  // The bounds themselves are allowed.
  EXPECT_EQ(create_qr(server, tenant, id,
                      k_dynamic + money(1000) +
                          R"(,"expiration_seconds":6220800,"image_width":2048})")
                .status,
            201);
  EXPECT_EQ(create_qr(server, tenant, id,
                      k_dynamic + money(1000) + R"(,"expiration_seconds":1,"image_width":400})")
                .status,
            201);
  Reply no_mode = create_qr(server, tenant, id, "{}");
  EXPECT_EQ(no_mode.status, 422);
  EXPECT_EQ(no_mode.error_path(), "usage_mode");
  Reply bad_mode = create_qr(server, tenant, id, R"({"usage_mode":"twice"})");
  EXPECT_EQ(bad_mode.status, 400);
  EXPECT_EQ(bad_mode.error_path(), "usage_mode");
  EXPECT_EQ(create_qr(server, tenant, id, "not json").status, 400);
}

TEST(QrCodes, TheCollectionsScopeIsRequired) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  std::string id = text(create_collection(server, tenant), "id");
  Tenant reader = init_tenant(server, "collections:readonly");
  Reply reply = create_qr(server, reader, id, R"({"usage_mode":"multiple_use"})");
  EXPECT_EQ(reply.status, 403);
  EXPECT_EQ(reply.error_code(), "not_authorized");
  Reply none = server.post("/api/v1/collections/" + id + "/qr", R"({"usage_mode":"multiple_use"})");
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(none.error_code(), "missing_authorization_header");
}

TEST(QrCodes, ACollectionsCodesAreListedNewestFirstWithoutImages) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  std::string id = text(create_collection(server, tenant), "id");
  std::string other_id = text(create_collection(server, tenant), "id");
  ASSERT_EQ(create_qr(server, tenant, other_id, R"({"usage_mode":"multiple_use"})").status, 201);
  const std::string path = "/api/v1/collections/" + id + "/qr";
  Reply empty = server.get(path, {tenant.bearer});
  ASSERT_EQ(empty.status, 200) << empty.body;
  EXPECT_TRUE(empty.json().at("qr_codes").as_array().empty());
  EXPECT_EQ(empty.json().at("pagination").at("total_items").as_int64(), 0);

  std::vector<json::value> made;
  for (int i = 0; i < 12; ++i) {
    Reply reply = create_qr(server, tenant, id, i % 2 ? dynamic_body(1000 + i)
                                                      : std::string(R"({"usage_mode":"multiple_use"})"));
    ASSERT_EQ(reply.status, 201) << reply.body;
    made.push_back(reply.json());
  }
  Reply first = server.get(path + "?page_size=10", {tenant.bearer});
  ASSERT_EQ(first.status, 200) << first.body;
  const json::value page = first.json();
  const json::array& codes = page.at("qr_codes").as_array();
  ASSERT_EQ(codes.size(), 10u);
  EXPECT_EQ(page.at("pagination").at("total_items").as_int64(), 12);
  EXPECT_EQ(page.at("pagination").at("total_pages").as_int64(), 2);
  // Newest first: the last made leads. Each is the record made, less its image.
  for (std::size_t i = 0; i < codes.size(); ++i) {
    json::object expected = made[made.size() - 1 - i].as_object();
    expected.erase("image");
    EXPECT_EQ(codes[i].as_object(), expected) << i;
    EXPECT_FALSE(codes[i].as_object().contains("image"));
  }
  Reply second = server.get(path + "?page_size=10&page_number=2", {tenant.bearer});
  ASSERT_EQ(second.status, 200) << second.body;
  const json::value rest = second.json();
  ASSERT_EQ(rest.at("qr_codes").as_array().size(), 2u);
  EXPECT_EQ(text(rest.at("qr_codes").at(1), "id"), text(made.front(), "id"));

  // A read-only client may list; a bad page or an unknown parameter is a 400.
  EXPECT_EQ(server.get(path, {init_tenant(server, "collections:readonly").bearer}).status, 200);
  Reply bad_page = server.get(path + "?page_size=5000", {tenant.bearer});
  EXPECT_EQ(bad_page.status, 400);
  EXPECT_EQ(bad_page.error_code(), "validation_error");
  EXPECT_EQ(server.get(path + "?state=ready", {tenant.bearer}).status, 400);
  EXPECT_EQ(server.get(path, {init_tenant(server, "outgoing_transfers").bearer}).status, 403);
  EXPECT_EQ(server.get(path).status, 401);
}

TEST(QrCodes, AnotherTenantsOrAnUnknownCollectionsCodesAreNotFound) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  std::string id = text(create_collection(server, tenant), "id");
  ASSERT_EQ(create_qr(server, tenant, id, R"({"usage_mode":"multiple_use"})").status, 201);
  Tenant stranger = other_tenant(server, "QR list stranger");
  Reply theirs = server.get("/api/v1/collections/" + id + "/qr", {stranger.bearer});
  EXPECT_EQ(theirs.status, 404) << theirs.body;
  EXPECT_EQ(theirs.error_code(), "collection_not_found");
  Reply unknown = server.get("/api/v1/collections/bbcol_AAAAAAAAAAAAAAAAAAAAAA/qr", {tenant.bearer});
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.error_code(), "collection_not_found");
  Reply malformed = server.get("/api/v1/collections/nope/qr", {tenant.bearer});
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(malformed.error_code(), "validation_error");
}

TEST(QrCodes, AReplayWithTheSameIdempotencyKeyReturnsTheSameCode) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  std::string id = text(create_collection(server, tenant), "id");
  std::string key = "x-idempotency-key: " + harness::new_uuid();
  Reply first = server.post("/api/v1/collections/" + id + "/qr", dynamic_body(3000),
                            {tenant.bearer, key});
  ASSERT_EQ(first.status, 201) << first.body;
  Reply again = server.post("/api/v1/collections/" + id + "/qr", dynamic_body(3000),
                            {tenant.bearer, key});
  EXPECT_EQ(again.status, 201);
  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(again.header("idempotent-replayed"), "true");
  // With a key the image is drawn before the unit, from a plan made in a read: it is the code's.
  json::value qr = first.json();
  EXPECT_EQ(scan(text(qr, "image")).text, text(qr, "emvco"));
}

TEST(QrCodes, CodesAndPaymentsOfOneCollectionRunSideBySide) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  // Room for one more payment: every code fits whenever it runs.
  CollectionSpec spec = with_limits(1'000, 1'000, 1'000, 17'000);
  json::value collection = create_collection(server, tenant, spec);
  std::string id = text(collection, "id");
  std::vector<std::thread> threads;
  std::atomic<int> codes{0}, payments{0};
  std::mutex others_mutex;
  std::vector<std::string> others;  // every other reply, status and body, for the failure message
  for (int i = 0; i < 32; ++i) {
    threads.emplace_back([&, i] {
      Reply reply;
      bool expected = false;
      if (i % 2 == 0) {
        reply = create_qr(server, tenant, id, dynamic_body(1'000));
        expected = reply.status == 201;
        if (expected) codes++;
      } else {
        reply = attempt(server, tenant, attempt_body(1'000, key_of(collection)));
        expected = reply.status == 202 && text(reply.json(), "attempt_state") == "successful";
        if (expected) payments++;
      }
      if (!expected) {
        std::lock_guard lock(others_mutex);
        others.push_back(std::to_string(reply.status) + " " + reply.body.substr(0, 300));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(codes.load(), 16);
  EXPECT_EQ(payments.load(), 16);
  if (!others.empty()) {
    std::string log = server.log_text();  // what the server said of it (a retry, an error)
    ADD_FAILURE() << "replies other than 201 or a successful attempt: "
                  << testing::PrintToString(others) << "\nend of the server's log:\n"
                  << log.substr(log.size() > 6000 ? log.size() - 6000 : 0);
  }
  EXPECT_EQ(amount_of(get_collection(server, tenant, id), "paid_amount"), 16'000);
}

TEST(QrCodes, MutatedBodiesNeverEarnA5xx) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  std::string id = text(create_collection(server, tenant), "id");
  std::mt19937 random(20261123);
  const std::string valid = dynamic_body(1000, R"(,"key_type":"alphanumeric","key_value":"@X")");
  for (int i = 0; i < 120; ++i) {
    std::string body = harness::mutate_body(valid, random);
    Reply reply = create_qr(server, tenant, id, body);
    ASSERT_GT(reply.status, 0) << body;
    EXPECT_LT(reply.status, 500) << body << " -> " << reply.body;
  }
}
