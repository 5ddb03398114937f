// The sandbox network's directory and targets: plain key inference, masking, NIT check digits,
// the deterministic synthetic directory and its documented keys, collection keys resolving to
// their collection (and not once inactive), and targets recorded, read back and expiring on the
// tenant clock. Pure functions as plain tests; what reads the store on both engines.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>

#include <boost/json.hpp>

#include "api/error_status.hpp"
#include "core/ids.hpp"
#include "core/limits.hpp"
#include "domain/collections/collections.hpp"
#include "domain/ledger/accounts.hpp"
#include "domain/network/directory.hpp"
#include "domain/network/targets.hpp"
#include "test_stores.hpp"

using namespace tesoro;

namespace {

TEST(NetworkDirectory, NitCheckDigitsMatchTheReferenceVectors) {
  EXPECT_EQ(network::nit_check_digit("800191045"), 1);
  EXPECT_EQ(network::nit_check_digit("890903938"), 8);
  EXPECT_EQ(network::nit_check_digit("860034313"), 7);
  EXPECT_EQ(network::nit_check_digit("900123456"), 8);
  // Remainders 0 and 1 are the digit itself: 1 * 3 = 3 -> 11 - 3 = 8; 4 * 3 = 12 -> r 1 -> 1.
  EXPECT_EQ(network::nit_check_digit("1"), 8);
  EXPECT_EQ(network::nit_check_digit("4"), 1);
  EXPECT_EQ(network::nit_check_digit("0"), 0);
  EXPECT_EQ(network::nit_check_digit(""), -1);
  EXPECT_EQ(network::nit_check_digit("90012345a"), -1);
  EXPECT_EQ(network::nit_check_digit(std::string(16, '1')), -1);
}

TEST(NetworkDirectory, PlainKeyTypesAreInferredMostSpecificFirst) {
  auto type = [](std::string_view value) { return network::plain_key_type(value).value_or("-"); };
  EXPECT_EQ(type("@tienda7"), "alphanumeric");
  EXPECT_EQ(type("Ana.Perez@Example.com"), "email");
  EXPECT_EQ(type("3001234567"), "cellphone");
  EXPECT_EQ(type("+573001234567"), "cellphone");
  EXPECT_EQ(type("12345"), "identification");
  EXPECT_EQ(type("1020304050"), "identification");
  EXPECT_EQ(type("123456789012345"), "identification");
  EXPECT_EQ(type("1234"), "merchant_code");
  EXPECT_EQ(type("1234567890123456"), "merchant_code");
  EXPECT_EQ(type("12345678901234567890"), "merchant_code");
  // Not a key of any type.
  EXPECT_EQ(type(""), "-");
  EXPECT_EQ(type("123"), "-");
  EXPECT_EQ(type("123456789012345678901"), "-");
  EXPECT_EQ(type("@ab"), "-");
  EXPECT_EQ(type("ana@example"), "-");
  EXPECT_EQ(type("+574001234567"), "-");
  EXPECT_EQ(type("+57300123456"), "-");
  EXPECT_EQ(type("30 01234567"), "-");
  EXPECT_EQ(type("tienda"), "-");
}

TEST(NetworkDirectory, NamesKeepTheFirstLetterOfEachWordCountingCharacters) {
  EXPECT_EQ(network::mask_name("Ana María Gómez"), "A** M**** G****");
  EXPECT_EQ(network::mask_name("María"), "M****");
  EXPECT_EQ(network::mask_name("Ñandú"), "Ñ****");
  EXPECT_EQ(network::mask_name("Óscar Ñ"), "Ó**** Ñ");
  EXPECT_EQ(network::mask_name("Café del Quindío S.A.S."), "C*** d** Q****** S*****");
  EXPECT_EQ(network::mask_name(""), "");
}

TEST(NetworkDirectory, NumbersKeepTheirLastFourCharacters) {
  EXPECT_EQ(network::mask_number("1020304050"), "******4050");
  EXPECT_EQ(network::mask_number("900500101-6"), "*******01-6");
  EXPECT_EQ(network::mask_number("12345"), "*2345");
  EXPECT_EQ(network::mask_number("1234"), "****");
  EXPECT_EQ(network::mask_number(""), "");
}

// A transfer's row keeps its Target without the fields it has in columns (stored_target); what
// it shows is the Target as target_json writes it, byte for byte, and a row written before the
// stored form (the whole Target) shows the same.
TEST(NetworkTargets, TheStoredFormShowsTheWholeTargetByteForByte) {
  network::Resolution resolution;
  resolution.key_type = "alphanumeric";
  resolution.key_value = "@TIENDAANA";
  resolution.participant_nit = "900500202-1";
  resolution.spbvi = "1002";
  resolution.creditor = {"Ana María Gómez", "CC", "1020304050", "natural"};
  resolution.account = {"4455661894", "savings_account", "COP"};
  const time::Micros now = *time::parse_iso("2026-05-04T09:00:00Z");
  const time::Micros expires = now + 900 * time::k_micros_per_second;
  const std::string id = "bbtgt_5UZnDiX44QsTdxQ5Igc-yT";
  const std::string request_id = "bbtgr_5UZnDiL8ZIBM_Lcik47A8d";
  const std::string payment_id = "CO.COM.CRB.TRXID37B29IM35QS32YWP9VD";
  const network::TargetIds ids{id, request_id, "alphanumeric", "@TIENDAANA", payment_id};
  network::ShownTargets shown;
  const std::string creditor_part =
      R"("creditor":{"document_number":"******4050","document_type":"CC",)"
      R"("full_name":"A** M**** G****","type":"natural"},"creditor_account":{)"
      R"("currency_code":"COP","number":"******1894","type":"savings_account"},)"
      R"("expires_at":"2026-05-04T09:15:00.000000Z","inserted_at":"2026-05-04T09:00:00.000000Z"})";
  const std::string head =
      R"({"id":"bbtgt_5UZnDiX44QsTdxQ5Igc-yT","resolution_request_id":)"
      R"("bbtgr_5UZnDiL8ZIBM_Lcik47A8d","resolution_type":"plain_key","key_type":"alphanumeric",)"
      R"("key_value":"@TIENDAANA","participant_nit":"900500202-1","spbvi":"1002",)"
      R"("payment_id":"CO.COM.CRB.TRXID37B29IM35QS32YWP9VD","transaction_amount":)";
  for (const std::optional<std::int64_t> amount : {std::optional<std::int64_t>(),
                                                   std::optional<std::int64_t>(150'000)}) {
    const std::string whole =
        head + (amount ? R"({"amount":150000,"currency":"COP"},)" : "null,") + creditor_part;
    EXPECT_EQ(network::target_json(resolution, id, request_id, "plain_key", payment_id, amount,
                                   "COP", expires, now),
              whole);
    const std::string stored =
        network::stored_target(resolution, "plain_key", amount, "COP", expires, now);
    EXPECT_EQ(network::shown_target(stored, ids), whole);
    EXPECT_EQ(network::stored_target(whole), stored);  // a target named by id
    EXPECT_EQ(network::shown_target(whole, ids), whole);  // a row of the whole Target
    // None of the row's own fields, and about a third of the Target's size.
    for (const std::string& column : {id, request_id, payment_id, std::string("@TIENDAANA")}) {
      EXPECT_EQ(stored.find(column), std::string::npos) << column;
    }
    EXPECT_LT(stored.size() * 2, whole.size()) << stored;
    // Shown through the runs kept for the stored forms already shown (a batch's transfers to
    // one key), each with its own ids: as shown alone, and the whole Target as is.
    const network::TargetIds other_ids{"bbtgt_5UZnDiX44QsTdxQ5Igc-zz", "bbtgr_5UZnDiL8ZIBM_Lc\"zz",
                                       "alphanumeric", "@TIENDA\"ANA", payment_id};
    for (int round = 0; round < 2; ++round) {
      for (const network::TargetIds& each : {ids, other_ids}) {
        for (const std::string& form : {stored, whole}) {
          json_text::Writer out;
          network::write_target(out, form, each, &shown);
          EXPECT_EQ(out.text(), network::shown_target(form, each));
        }
      }
    }
  }
  // A Target of another layout is kept whole, and shown as it was.
  for (const std::string& other :
       {head + R"(null,"extra":1,)" + creditor_part, head + R"("150000",)" + creditor_part,
        std::string(R"({"id":"bbtgt_5UZnDiX44QsTdxQ5Igc-yT"})")}) {
    EXPECT_EQ(network::stored_target(other), other);
    EXPECT_EQ(network::shown_target(network::stored_target(other), ids), other);
  }
}

// The directory and targets against a real store of each engine.
const std::string k_tenant = "ten_networktestAAAAAAAAAA";
const std::string k_other_tenant = "ten_networktestBBBBBBBBBB";

class NetworkStore : public test_stores::EngineStoreTest {
 protected:
  void SetUp() override {
    EngineStoreTest::SetUp();
    if (IsSkipped()) return;
    now = *time::parse_iso("2026-05-04T09:00:00Z");
    auto seeded = run<int>([&](store::Tx& tx) -> Result<int> {
      for (const std::string& tenant : {k_tenant, k_other_tenant}) {
        tx.exec("INSERT INTO tenants (id, name, environment, inserted_at) VALUES (?, 'n', "
                "'sandbox', ?)",
                {tenant, time::iso(now)});
      }
      return 0;
    });
    ASSERT_TRUE(seeded.ok());
  }

  template <class T, class F>
  Result<T> run(F&& fn) {
    return temp->store->write<T>(std::forward<F>(fn));
  }

  Result<network::Resolution> plain(const std::string& value) {
    return run<network::Resolution>(
        [&](store::Tx& tx) { return network::resolve_plain_key(tx, value, "value"); });
  }

  Result<network::Resolution> typed(const std::string& type, const std::string& value) {
    return run<network::Resolution>(
        [&](store::Tx& tx) { return network::resolve_key(tx, type, value, "target.key_value"); });
  }

  // A collection (of the other tenant unless told) with this key, paying into a receptor
  // account of its own whose beneficiary is `Ana María Gómez` unless told.
  collections::Collection collection_with_key(const std::string& type, const std::string& value,
                                              const std::string& tenant = k_other_tenant,
                                              const std::string& name = "Ana María Gómez") {
    auto made = run<collections::CreateOutcome>(
        [&](store::Tx& tx) -> Result<collections::CreateOutcome> {
          ledger::NewTenantAccount account{"savings_account", "receptor", "COP",
                                           {"1020304050", "CC", name, "natural"}};
          auto opened = ledger::open_tenant_account(tx, tenant, account, now);
          if (!opened) return std::move(opened).error();
          collections::NewCollection in;
          in.external_id = "c-" + value;
          in.tenant_account_id = opened->id;
          in.usage_mode = "multiple_use";
          in.currency = "COP";
          in.minimum_attempt_amount = in.total_minimum_amount = 100;
          in.maximum_attempt_amount = in.total_maximum_amount = 100'000;
          in.key = collections::KeyRequest{type, value};
          return collections::create_collection(tx, tenant, in, now);
        });
    EXPECT_TRUE(made.ok()) << (made ? "" : made.error().errors.front().message);
    return made ? made->collection : collections::Collection{};
  }

  time::Micros now = 0;
};

void expect_not_found(const Result<network::Resolution>& resolution, const std::string& path) {
  ASSERT_FALSE(resolution.ok());
  EXPECT_EQ(tesoro::api::http_status(resolution.error()), 404);
  EXPECT_EQ(resolution.error().first_code(), "target_not_found");
  EXPECT_EQ(resolution.error().errors.front().path, path);
}

// "900500101-6": nine digits, a dash and the digit nit_check_digit gives them.
void expect_valid_nit(const std::string& nit) {
  ASSERT_TRUE(std::regex_match(nit, std::regex("[0-9]{9}-[0-9]"))) << nit;
  EXPECT_EQ(nit.back() - '0', network::nit_check_digit(nit.substr(0, 9))) << nit;
}

TEST_P(NetworkStore, TheSyntheticDirectoryIsAFunctionOfTheKeyAlone) {
  auto first = plain("3105550123");
  ASSERT_TRUE(first.ok());
  // Pinned: the same on every node, after every restart and in every later version.
  EXPECT_EQ(first->key_type, "cellphone");
  EXPECT_EQ(first->key_value, "3105550123");
  const std::string pinned = first->participant_nit + " " + first->spbvi + " " +
                             first->creditor.full_name + " " + first->creditor.document_type +
                             " " + first->creditor.document_number + " " +
                             first->creditor.type + " " + first->account.number + " " +
                             first->account.type + " " + first->account.currency_code;
  EXPECT_EQ(pinned,
            "900500606-3 1006 Jorge Jiménez López CC 1015416716 natural 31316319152 "
            "savings_account COP");
  EXPECT_FALSE(first->sandbox_failure);
  EXPECT_FALSE(first->collection_id);
  EXPECT_FALSE(first->collection_tenant_id);
  // Another store (another node) says the same; written +57 it is the same key.
  test_stores::TempStore other(GetParam());
  auto again = other.store->write<network::Resolution>(
      [&](store::Tx& tx) { return network::resolve_plain_key(tx, "+573105550123", "value"); });
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->participant_nit, first->participant_nit);
  EXPECT_EQ(again->creditor.full_name, first->creditor.full_name);
  EXPECT_EQ(again->creditor.document_number, first->creditor.document_number);
  EXPECT_EQ(again->account.number, first->account.number);
}

TEST_P(NetworkStore, EverySyntheticCreditorIsPlausible) {
  int legal = 0;
  int natural = 0;
  for (int i = 0; i < 60; ++i) {
    auto resolution = plain("@CLIENTE" + std::to_string(i));
    ASSERT_TRUE(resolution.ok());
    expect_valid_nit(resolution->participant_nit);
    EXPECT_EQ(resolution->spbvi.size(), 4u);
    EXPECT_EQ(resolution->account.number.size(), 11u);
    EXPECT_EQ(resolution->account.currency_code, "COP");
    EXPECT_FALSE(resolution->creditor.full_name.empty());
    if (resolution->creditor.type == "legal") {
      ++legal;
      EXPECT_EQ(resolution->creditor.document_type, "NIT");
      expect_valid_nit(resolution->creditor.document_number);
    } else {
      ++natural;
      EXPECT_EQ(resolution->creditor.type, "natural");
      EXPECT_EQ(resolution->creditor.document_type, "CC");
      EXPECT_TRUE(std::regex_match(resolution->creditor.document_number, std::regex("10[0-9]{8}")));
    }
  }
  // People mostly, businesses sometimes.
  EXPECT_GT(natural, legal);
  EXPECT_GT(legal, 0);
  // A merchant code belongs to a business; an identification is its owner's own document.
  auto merchant = plain("1234567890123456");
  ASSERT_TRUE(merchant.ok());
  EXPECT_EQ(merchant->creditor.type, "legal");
  auto citizen = plain("1020304050");
  ASSERT_TRUE(citizen.ok());
  EXPECT_EQ(citizen->creditor.document_type, "CC");
  EXPECT_EQ(citizen->creditor.document_number, "1020304050");
  auto foreigner = typed("identification", "12345678901");
  ASSERT_TRUE(foreigner.ok());
  EXPECT_EQ(foreigner->creditor.document_type, "CE");
  EXPECT_EQ(foreigner->creditor.document_number, "12345678901");
}

TEST_P(NetworkStore, DocumentedKeysNeverResolveOrFailEachWay) {
  expect_not_found(plain("3001234404"), "value");
  expect_not_found(plain("@NUNCA404"), "value");
  expect_not_found(plain("pago404@example.com"), "value");
  expect_not_found(typed("identification", "10404"), "target.key_value");
  // 404 elsewhere in an email does not count: only the part before @.
  EXPECT_TRUE(plain("pago@404.example.com").ok());
  const std::vector<std::pair<std::string, std::string>> failing = {
      {"3001234991", "unknown"},
      {"@RIESGO992", "risk_control"},
      {"lento993@example.com", "breb_timeout"},
      {"1020304994", "provider_unavailable"}};
  for (const auto& [value, failure] : failing) {
    auto resolution = plain(value);
    ASSERT_TRUE(resolution.ok()) << value;
    EXPECT_EQ(resolution->sandbox_failure, failure) << value;
  }
  // Not a key at all, or not one of the type asked for.
  expect_not_found(plain("tienda"), "value");
  expect_not_found(typed("cellphone", "12345"), "target.key_value");
  expect_not_found(typed("iban", "12345"), "target.key_value");
  auto phone = typed("cellphone", "+573001234567");
  ASSERT_TRUE(phone.ok());
  EXPECT_EQ(phone->key_value, "3001234567");
  auto email = typed("email", "Ana@Example.COM");
  ASSERT_TRUE(email.ok());
  EXPECT_EQ(email->key_value, "ana@example.com");
}

TEST_P(NetworkStore, ACollectionKeyResolvesToItsCollectionUntilItIsInactive) {
  // It ends in 404 and 991: a collection's key is not one of the documented sandbox keys.
  collections::Collection collection = collection_with_key("merchant_code", "55501404991");
  auto resolution = plain("55501404991");
  ASSERT_TRUE(resolution.ok());
  // Asked as a plain key, its most likely type is identification; the registered type wins.
  EXPECT_EQ(resolution->key_type, "merchant_code");
  EXPECT_EQ(resolution->collection_id, collection.id);
  EXPECT_EQ(resolution->collection_tenant_id, k_other_tenant);
  EXPECT_FALSE(resolution->sandbox_failure);
  EXPECT_EQ(resolution->participant_nit,
            "900500000-" + std::to_string(network::nit_check_digit("900500000")));
  EXPECT_EQ(resolution->spbvi, "1000");
  EXPECT_EQ(resolution->creditor.full_name, "Ana María Gómez");
  EXPECT_EQ(resolution->creditor.document_type, "CC");
  EXPECT_EQ(resolution->creditor.document_number, "1020304050");
  EXPECT_EQ(resolution->creditor.type, "natural");
  EXPECT_EQ(resolution->account.type, "savings_account");
  EXPECT_EQ(resolution->account.currency_code, "COP");
  EXPECT_FALSE(resolution->account.number.empty());
  // Asked with its type it is the same; asked as another type it is a synthetic key.
  auto typed_resolution = typed("merchant_code", "55501404991");
  ASSERT_TRUE(typed_resolution.ok());
  EXPECT_EQ(typed_resolution->collection_id, collection.id);
  auto as_identification = typed("identification", "55501404991");
  ASSERT_TRUE(as_identification.ok());
  EXPECT_FALSE(as_identification->collection_id);

  auto discarded = run<collections::Collection>([&](store::Tx& tx) {
    return collections::discard_collection(tx, k_other_tenant, collection.id, now);
  });
  ASSERT_TRUE(discarded.ok());
  // Inactive: not found, neither as a plain key nor with its type.
  expect_not_found(plain("55501404991"), "value");
  expect_not_found(typed("merchant_code", "55501404991"), "target.key_value");
}

// What two resolutions of one key must share.
void expect_same(const Result<network::Resolution>& got, const Result<network::Resolution>& alone,
                 const std::string& key) {
  ASSERT_EQ(got.ok(), alone.ok()) << key;
  if (!got) {
    EXPECT_EQ(tesoro::api::http_status(got.error()), tesoro::api::http_status(alone.error())) << key;
    EXPECT_EQ(got.error().first_code(), alone.error().first_code()) << key;
    EXPECT_EQ(got.error().errors.front().path, alone.error().errors.front().path) << key;
    EXPECT_EQ(got.error().errors.front().message, alone.error().errors.front().message) << key;
    return;
  }
  EXPECT_EQ(got->key_type, alone->key_type) << key;
  EXPECT_EQ(got->key_value, alone->key_value) << key;
  EXPECT_EQ(got->collection_id, alone->collection_id) << key;
  EXPECT_EQ(got->collection_tenant_id, alone->collection_tenant_id) << key;
  EXPECT_EQ(got->creditor.full_name, alone->creditor.full_name) << key;
  EXPECT_EQ(got->creditor.document_number, alone->creditor.document_number) << key;
  EXPECT_EQ(got->account.number, alone->account.number) << key;
  EXPECT_EQ(got->participant_nit, alone->participant_nit) << key;
  EXPECT_EQ(got->sandbox_failure, alone->sandbox_failure) << key;
}

// A batch resolves its keys together (network::KeySet: the directory read in one statement per
// key type and chunk of 250 values): every plain and typed key answers as it would alone, past
// the chunk boundaries, with registered keys active and inactive among synthetic, failing and
// invalid ones, repeated keys, and keys not given up front.
TEST_P(NetworkStore, ManyKeysResolveAsEachAloneWould) {
  const collections::Collection merchant = collection_with_key("merchant_code", "55501404991");
  const collections::Collection phone = collection_with_key("cellphone", "3999990000");
  const collections::Collection closed = collection_with_key("email", "tienda@example.com");
  ASSERT_TRUE(run<collections::Collection>([&](store::Tx& tx) {
                return collections::discard_collection(tx, k_other_tenant, closed.id, now);
              }).ok());
  const collections::Collection late_plain = collection_with_key("alphanumeric", "@TARDE");
  const collections::Collection late_typed = collection_with_key("identification", "87654321");
  std::vector<std::string> values;
  for (int i = 0; i < 600; ++i) {
    values.push_back("3" + std::to_string(100'000'000 + i * 7));  // synthetic cellphones
    if (i == 0) values.push_back("55501404991");
    if (i == 260) values.push_back("tienda@example.com");
    if (i == 300) values.insert(values.end(), {"3001234404", "tienda", "", "3001234991"});
    if (i == 520) values.push_back("+573999990000");
  }
  values.push_back(values[5]);  // asked twice
  const std::vector<collections::KeyName> typed_keys = {
      {"merchant_code", "55501404991"},  {"identification", "55501404991"},
      {"cellphone", "+573999990000"},    {"email", "Tienda@Example.com"},
      {"cellphone", "12345"},            {"iban", "12345"},
      {"identification", "10404"},       {"merchant_code", "55501404991"}};
  using Outcomes = std::vector<Result<network::Resolution>>;
  auto together = run<Outcomes>([&](store::Tx& tx) -> Result<Outcomes> {
    network::KeySet keys(tx, values, typed_keys);
    Outcomes out;
    for (const std::string& value : values) out.push_back(keys.plain(value, "value"));
    for (const auto& [type, value] : typed_keys) {
      out.push_back(keys.typed(type, value, "target.key_value"));
    }
    out.push_back(keys.plain("@TARDE", "value"));  // registered, not given up front
    out.push_back(keys.typed("identification", "87654321", "target.key_value"));  // the same
    return out;
  });
  ASSERT_TRUE(together.ok()) << together.error().errors.front().message;
  ASSERT_EQ(together->size(), values.size() + typed_keys.size() + 2);
  int registered = 0;
  int not_found = 0;
  std::size_t i = 0;
  auto count = [&](const Result<network::Resolution>& got) {
    if (!got) ++not_found;
    if (got && got->collection_id) ++registered;
  };
  for (const std::string& value : values) {
    const Result<network::Resolution>& got = (*together)[i++];
    expect_same(got, plain(value), value);
    count(got);
  }
  for (const auto& [type, value] : typed_keys) {
    const Result<network::Resolution>& got = (*together)[i++];
    expect_same(got, typed(type, value), type + ":" + value);
    count(got);
  }
  // The active collections' keys and nothing else are registered: the merchant code as a plain
  // key and twice by type, the cellphone (written +57...) as a plain key and by type; the
  // inactive email (either way), the 404 keys and the invalid values are not found.
  EXPECT_EQ(registered, 5);
  EXPECT_EQ(not_found, 8);
  EXPECT_EQ((*together)[0 + 1]->collection_id, merchant.id);
  EXPECT_EQ((*together)[values.size() + 2]->collection_id, phone.id);
  ASSERT_TRUE((*together)[i].ok());
  EXPECT_EQ((*together)[i]->collection_id, late_plain.id);
  ASSERT_TRUE((*together)[i + 1].ok());
  EXPECT_EQ((*together)[i + 1]->collection_id, late_typed.id);
}

// A batch paying many collections of this Tesoro reads their creditors together (their
// accounts by tenant, a statement per 250): each key resolves to its own collection and its own
// account's beneficiary and number, as alone, across tenants and past the chunk boundary.
TEST_P(NetworkStore, ManyCollectionKeysResolveToTheirOwnCreditorsTogether) {
  std::vector<std::string> values;
  std::map<std::string, collections::Collection> made;  // by key value
  for (int i = 0; i < 263; ++i) {
    const std::string value = "@PAGO" + std::to_string(1000 + i);
    const std::string& tenant = i % 88 == 0 ? k_tenant : k_other_tenant;  // 3 of the first
    made.emplace(value, collection_with_key("alphanumeric", value, tenant,
                                            "Vendedor " + std::to_string(i) + " Pérez"));
    values.push_back(value);
  }
  using Outcomes = std::vector<Result<network::Resolution>>;
  auto together = run<Outcomes>([&](store::Tx& tx) -> Result<Outcomes> {
    network::KeySet keys(tx, values, {});
    Outcomes out;
    for (const std::string& value : values) out.push_back(keys.plain(value, "value"));
    return out;
  });
  ASSERT_TRUE(together.ok());
  ASSERT_EQ(together->size(), values.size());
  std::set<std::string> numbers;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const Result<network::Resolution>& got = (*together)[i];
    ASSERT_TRUE(got.ok()) << values[i];
    const collections::Collection& collection = made.at(values[i]);
    EXPECT_EQ(got->collection_id, collection.id) << values[i];
    EXPECT_EQ(got->collection_tenant_id, i % 88 == 0 ? k_tenant : k_other_tenant) << values[i];
    EXPECT_EQ(got->creditor.full_name, "Vendedor " + std::to_string(i) + " Pérez");
    auto account = run<ledger::Account>([&](store::Tx& tx) {
      return ledger::get_account(tx, *got->collection_tenant_id, collection.tenant_account_id,
                                 ledger::Surface::participant);
    });
    ASSERT_TRUE(account.ok());
    EXPECT_EQ(got->account.number, account->number) << values[i];
    numbers.insert(got->account.number);
    expect_same(got, plain(values[i]), values[i]);
  }
  EXPECT_EQ(numbers.size(), values.size());  // each its own account
}

TEST_P(NetworkStore, ATargetIsRecordedMaskedAndExpiresOnTheTenantClock) {
  collection_with_key("alphanumeric", "@TIENDAANA");
  network::TargetRequest request{"plain_key", "@tiendaana", 150'000, "COP"};
  auto target = run<network::Target>(
      [&](store::Tx& tx) { return network::resolve_target(tx, k_tenant, request, now); });
  ASSERT_TRUE(target.ok());
  EXPECT_TRUE(ids::has_prefix(target->id, "bbtgt"));
  EXPECT_TRUE(ids::has_prefix(target->resolution_request_id, "bbtgr"));
  EXPECT_TRUE(std::regex_match(target->payment_id, std::regex("CO\\.COM\\.CRB\\.TRXID[0-9A-Z]{19}")))
      << target->payment_id;
  EXPECT_EQ(target->key_type, "alphanumeric");
  EXPECT_EQ(target->key_value, "@TIENDAANA");
  EXPECT_EQ(target->expires_at_micros,
            now + limits::k_target_ttl_seconds * time::k_micros_per_second);
  EXPECT_EQ(target->resolution.creditor.full_name, "Ana María Gómez");  // unmasked for callers
  const boost::json::value shown = boost::json::parse(target->json);
  EXPECT_EQ(shown.at("id").as_string(), target->id);
  EXPECT_EQ(shown.at("resolution_type").as_string(), "plain_key");
  EXPECT_EQ(shown.at("transaction_amount").at("amount").as_int64(), 150'000);
  EXPECT_EQ(shown.at("transaction_amount").at("currency").as_string(), "COP");
  EXPECT_EQ(shown.at("creditor").at("full_name").as_string(), "A** M**** G****");
  EXPECT_EQ(shown.at("creditor").at("document_number").as_string(), "******4050");
  EXPECT_EQ(shown.at("expires_at").as_string(), time::iso(target->expires_at_micros));
  EXPECT_EQ(shown.at("inserted_at").as_string(), time::iso(now));
  // Nothing unmasked is stored.
  auto stored = run<std::string>([&](store::Tx& tx) -> Result<std::string> {
    auto row = tx.query_one("SELECT target FROM targets WHERE tenant_id = ? AND id = ?",
                            {k_tenant, target->id});
    return row ? row->text(0) : std::string();
  });
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(*stored, target->json);
  EXPECT_EQ(stored->find("María"), std::string::npos);

  // As a batch names a target: read (404 when not the tenant's), then unexpired (422).
  auto get = [&](const std::string& tenant, const std::string& id,
                 time::Micros at) -> Result<network::Target> {
    const std::string path = "transfers.0.target_id";
    auto found = run<network::Target>(
        [&](store::Tx& tx) { return network::read_target(tx, tenant, id, path); });
    if (!found) return found;
    if (Status fresh = network::unexpired(*found, at, path); !fresh) {
      return std::move(fresh).error();
    }
    return found;
  };
  const time::Micros last_moment = target->expires_at_micros - 1;
  auto valid = get(k_tenant, target->id, last_moment);
  ASSERT_TRUE(valid.ok());
  EXPECT_EQ(valid->json, target->json);
  EXPECT_EQ(valid->amount_minor, 150'000);
  EXPECT_EQ(valid->currency, "COP");
  EXPECT_EQ(valid->payment_id, target->payment_id);
  EXPECT_EQ(valid->key_value, "@TIENDAANA");
  auto expired = get(k_tenant, target->id, target->expires_at_micros);
  ASSERT_FALSE(expired.ok());
  EXPECT_EQ(tesoro::api::http_status(expired.error()), 422);
  EXPECT_EQ(expired.error().first_code(), "target_expired");
  EXPECT_EQ(expired.error().errors.front().path, "transfers.0.target_id");
  // Expired, it is still there to read.
  auto read = run<network::Target>(
      [&](store::Tx& tx) { return network::read_target(tx, k_tenant, target->id, "id"); });
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->json, target->json);
  // Another tenant's target and an unknown one are not found.
  for (const auto& [tenant, id] : {std::pair{k_other_tenant, target->id},
                                   std::pair{k_tenant, ids::generate("bbtgt")}}) {
    auto missing = get(tenant, id, now);
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(tesoro::api::http_status(missing.error()), 404);
    EXPECT_EQ(missing.error().first_code(), "target_not_found");
    EXPECT_EQ(missing.error().errors.front().path, "transfers.0.target_id");
  }
}

// A batch reads the targets its items name together (network::read_targets: one statement
// per 250 ids): each as read alone, past the chunk boundary, and only the tenant's own;
// expiry is then each one's (network::unexpired).
TEST_P(NetworkStore, ManyTargetsAreReadTogetherAsEachAlone) {
  std::vector<std::string> ids;
  auto made = run<int>([&](store::Tx& tx) -> Result<int> {
    for (int i = 0; i < 260; ++i) {
      network::TargetRequest request{"plain_key", "3" + std::to_string(200'000'000 + i), {}, ""};
      auto target = network::resolve_target(tx, k_tenant, request, now + i);
      if (!target) return std::move(target).error();
      ids.push_back(target->id);
    }
    return 0;
  });
  ASSERT_TRUE(made.ok());
  network::TargetRequest theirs_request{"plain_key", "3209999999", {}, ""};
  auto theirs = run<network::Target>([&](store::Tx& tx) {
    return network::resolve_target(tx, k_other_tenant, theirs_request, now);
  });
  ASSERT_TRUE(theirs.ok());
  std::vector<std::string> asked = ids;
  asked.insert(asked.end(), {ids[3], theirs->id, "bbtgt_unknown"});
  using Read = std::map<std::string, network::Target>;
  auto read = run<Read>(
      [&](store::Tx& tx) -> Result<Read> { return network::read_targets(tx, k_tenant, asked); });
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->size(), ids.size());  // not the other tenant's, not the unknown one
  for (const std::string& id : ids) {
    auto alone = run<network::Target>(
        [&](store::Tx& tx) { return network::read_target(tx, k_tenant, id, "target_id"); });
    ASSERT_TRUE(alone.ok());
    auto found = read->find(id);
    ASSERT_NE(found, read->end()) << id;
    EXPECT_EQ(found->second.json, alone->json);
    EXPECT_EQ(found->second.key_value, alone->key_value);
    EXPECT_EQ(found->second.expires_at_micros, alone->expires_at_micros);
  }
  // The first one made expires first: at its last moment both are valid, one micro later only
  // the second is.
  const network::Target& first = read->at(ids[0]);
  const network::Target& second = read->at(ids[1]);
  EXPECT_TRUE(network::unexpired(first, first.expires_at_micros - 1, "target_id").ok());
  Status expired = network::unexpired(first, first.expires_at_micros, "target_id");
  ASSERT_FALSE(expired.ok());
  EXPECT_EQ(expired.error().first_code(), "target_expired");
  EXPECT_EQ(expired.error().errors.front().path, "target_id");
  EXPECT_TRUE(network::unexpired(second, first.expires_at_micros, "target_id").ok());
}

TEST_P(NetworkStore, AResolutionThatFailsRecordsNothing) {
  auto unknown_format = run<network::Target>([&](store::Tx& tx) {
    return network::resolve_target(tx, k_tenant, {"qr_code", "@TIENDA", std::nullopt, ""}, now);
  });
  ASSERT_FALSE(unknown_format.ok());
  EXPECT_EQ(tesoro::api::http_status(unknown_format.error()), 400);
  EXPECT_EQ(unknown_format.error().errors.front().path, "format");
  auto never = run<network::Target>([&](store::Tx& tx) {
    return network::resolve_target(tx, k_tenant, {"plain_key", "@NUNCA404", std::nullopt, ""}, now);
  });
  ASSERT_FALSE(never.ok());
  EXPECT_EQ(never.error().first_code(), "target_not_found");
  EXPECT_EQ(never.error().errors.front().path, "value");
  auto without_amount = run<network::Target>([&](store::Tx& tx) {
    return network::resolve_target(tx, k_tenant, {"plain_key", "@TIENDA", std::nullopt, ""}, now);
  });
  ASSERT_TRUE(without_amount.ok());
  EXPECT_TRUE(boost::json::parse(without_amount->json).at("transaction_amount").is_null());
  auto count = run<std::int64_t>([&](store::Tx& tx) -> Result<std::int64_t> {
    return tx.query_one("SELECT COUNT(*) FROM targets")->integer(0);
  });
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, 1);
}

TESORO_ON_BOTH_ENGINES(NetworkStore);

}  // namespace
