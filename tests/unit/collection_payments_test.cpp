// Collection payments below the API: network transaction ids, the QR payload's merchant name,
// random payers, and the attempt rules and invariants the API cannot reach (a canceled code, an
// inactive tenant account, a broken ledger for `tesoro verify`), on both engines.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "api/error_status.hpp"
#include "core/emvco.hpp"
#include "core/ids.hpp"
#include "core/time.hpp"
#include "domain/collections/attempts.hpp"
#include "domain/collections/collections.hpp"
#include "domain/collections/qr_codes.hpp"
#include "domain/ledger/accounts.hpp"
#include "emitted_events.hpp"
#include "test_stores.hpp"

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

TEST(EndToEndIds, AreETheTenantMinuteAndANetworkTransactionId) {
  const time::Micros at = *time::parse_iso("2025-01-31T12:34:56.789012Z");
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    const std::string id = ids::end_to_end_id(at);
    ASSERT_EQ(id.size(), 13 + ids::k_network_transaction_id_chars) << id;
    EXPECT_EQ(id.substr(0, 13), "E202501311234");
    EXPECT_EQ(id.find_first_not_of("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", 13),
              std::string::npos)
        << id;
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_EQ(ids::end_to_end_id(*time::parse_iso("1999-12-31T23:59:00Z")).substr(0, 13),
            "E199912312359");
  // Each call has its own minute, whichever minute the call before had (the thread keeps the
  // last minute's characters): either side of a minute's edge, back again, before 1970.
  for (auto [at, minute] : {std::pair{"2025-01-31T12:34:59.999999Z", "E202501311234"},
                            {"2025-01-31T12:35:00.000000Z", "E202501311235"},
                            {"2025-01-31T12:34:00.000000Z", "E202501311234"},
                            {"1969-12-31T23:59:30.000000Z", "E196912312359"},
                            {"1970-01-01T00:00:00.000000Z", "E197001010000"},
                            {"1969-12-31T23:58:59.999999Z", "E196912312358"}}) {
    EXPECT_EQ(ids::end_to_end_id(*time::parse_iso(at)).substr(0, 13), minute) << at;
  }
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

// ---- Attempts on a real store ---------------------------------------------------------------

namespace {

const std::string k_tenant = "ten_collectionpaymentsAAA";
const std::string k_collection = "bbcol_unitcollectionAAAAAA";

class CollectionPaymentsTest : public test_stores::EngineStoreTest {
 protected:
  void SetUp() override {
    EngineStoreTest::SetUp();
    if (IsSkipped()) return;
    now = *time::parse_iso("2026-11-23T12:00:00Z");
    key = collections::normalize_key("alphanumeric", "@UNITKEY1").value();
    tenant_account = write<ledger::Account>([&](store::Tx& tx) {
      tx.exec("INSERT INTO tenants (id, name, environment, inserted_at) VALUES (?, 't', "
              "'sandbox', ?)",
              {k_tenant, time::iso(now)});
      return ledger::open_tenant_account(
          tx, k_tenant, {"savings_account", "receptor", "COP", {"900123456", "NIT", "Tienda Ñandú", "legal"}},
          now);
    }).id;
    // The collection and its key as the collections module stores them (schema v13).
    write<int>([&](store::Tx& tx) -> Result<int> {
      const std::string at = time::iso(now);
      tx.exec("INSERT INTO collections (tenant_id, id, external_id, tenant_account_id, usage_mode, "
              "currency, minimum_attempt_amount, maximum_attempt_amount, total_minimum_amount, "
              "total_maximum_amount, paid_amount, successful_attempts, state, state_reason, "
              "enabled, expires_at, expires_at_micros, nickname, reference, metadata, "
              "inserted_at, updated_at) VALUES (?, ?, 'unit', ?, 'multiple_use', 'COP', 100, "
              "100000, 1000, 500000, 0, 0, 'ready', NULL, 1, NULL, NULL, NULL, NULL, '{}', ?, ?)",
              {k_tenant, k_collection, tenant_account, at, at});
      tx.exec("INSERT INTO network_keys (key_type, key_value, tenant_id, owner_id, state, "
              "inserted_at, updated_at) VALUES ('alphanumeric', ?, ?, ?, 'active', ?, ?)",
              {key, k_tenant, k_collection, at, at});
      return 0;
    });
  }

  template <class T, class F>
  Result<T> try_write(F&& fn) {
    return temp->store->write<T>(std::forward<F>(fn));
  }
  template <class T, class F>
  T write(F&& fn) {
    auto result = try_write<T>(std::forward<F>(fn));
    if (!result) {
      ADD_FAILURE() << result.error().first_code() << ": " << result.error().message;
      return T{};
    }
    return std::move(result).value();
  }

  Result<collections::Attempt> simulate(std::int64_t amount,
                                        std::optional<std::string> payment_id = std::nullopt,
                                        std::optional<std::string> error = std::nullopt) {
    collections::AttemptRequest request;
    request.amount_minor = amount;
    request.currency = "COP";
    request.key_value = "@UNITKEY1";
    request.payment_id = std::move(payment_id);
    request.error = std::move(error);
    request.payer = collections::random_payer();
    return try_write<collections::Attempt>(
        [&](store::Tx& tx) { return collections::simulate_attempt(tx, k_tenant, request, now); });
  }

  collections::QrCode make_qr(const std::string& usage_mode, std::optional<std::int64_t> amount) {
    collections::QrRequest request;
    request.usage_mode = usage_mode;
    request.amount_minor = amount;
    request.currency = "COP";
    if (usage_mode == "single_use") request.expiration_seconds = 600;
    return write<collections::QrCode>([&](store::Tx& tx) {
      return collections::create_qr(tx, k_tenant, k_collection, request,
                                    ids::network_transaction_id(), now);
    });
  }

  // Every event written so far (emitted_events.hpp).
  std::string events() const {
    return emitted_events::table(GetParam() == store::Engine::postgres);
  }
  std::int64_t integer(const std::string& sql, const store::Params& params = {}) {
    return temp->store
        ->read<std::int64_t>([&](store::Tx& tx) -> Result<std::int64_t> {
          return tx.query_one(sql, params)->integer(0);
        })
        .value();
  }

  std::vector<std::string> violations() {
    return temp->store
        ->read<std::vector<std::string>>([](store::Tx& tx) -> Result<std::vector<std::string>> {
          return collections::verify_attempts(tx);
        })
        .value();
  }

  time::Micros now = 0;
  std::string key;
  std::string tenant_account;
};

}  // namespace

TEST_P(CollectionPaymentsTest, ASuccessMovesMoneyAndVerifyFindsTamperedRecords) {
  auto paid = simulate(12'345);
  ASSERT_TRUE(paid.ok()) << paid.error().message;
  EXPECT_EQ(paid->state, "successful");
  EXPECT_EQ(integer("SELECT balance FROM ledger_accounts WHERE id = ?", {tenant_account}), 12'345);
  EXPECT_EQ(integer("SELECT paid_amount FROM collections WHERE id = ?", {k_collection}), 12'345);
  EXPECT_TRUE(violations().empty());

  write<int>([&](store::Tx& tx) -> Result<int> {
    tx.exec("UPDATE collections SET successful_attempts = successful_attempts + 1");
    return 0;
  });
  ASSERT_EQ(violations().size(), 1u);
  EXPECT_NE(violations()[0].find("collection " + k_collection), std::string::npos)
      << violations()[0];
  write<int>([&](store::Tx& tx) -> Result<int> {
    tx.exec("UPDATE collections SET successful_attempts = successful_attempts - 1");
    tx.exec("DELETE FROM incoming_transfers");
    return 0;
  });
  // The attempt lost its transfer and the entry its owner.
  EXPECT_EQ(violations().size(), 2u);
}

TEST_P(CollectionPaymentsTest, ACanceledCodeCannotBePaidAndCountsTheFailure) {
  collections::QrCode qr = make_qr("multiple_use", std::nullopt);
  EXPECT_EQ(qr.emvco.substr(0, 12), "000201010211");  // a static code
  write<int>([&](store::Tx& tx) -> Result<int> {
    tx.exec("UPDATE qr_codes SET canceled = 1 WHERE id = ?", {qr.id});
    return 0;
  });
  auto rejected = simulate(5'000, qr.payment_id);
  ASSERT_TRUE(rejected.ok());
  EXPECT_EQ(rejected->state, "rejected");
  EXPECT_EQ(rejected->state_reason, "qr_canceled");
  EXPECT_EQ(rejected->qr_code_id, qr.id);
  EXPECT_EQ(integer("SELECT failed_attempts FROM qr_codes WHERE id = ?", {qr.id}), 1);
  EXPECT_EQ(integer("SELECT COUNT(*) FROM " + events() +
                    " WHERE type = 'collection.attempt_unsuccessful'"),
            1);
  EXPECT_TRUE(violations().empty());
}

TEST_P(CollectionPaymentsTest, AnInactiveTenantAccountRefusesTheAttempt) {
  write<int>([&](store::Tx& tx) -> Result<int> {
    tx.exec("UPDATE ledger_accounts SET state = 'blocked' WHERE id = ?", {tenant_account});
    return 0;
  });
  auto refused = simulate(5'000);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(tesoro::api::http_status(refused.error()), 400);
  EXPECT_EQ(refused.error().first_code(), "tenant_account_inactive");
  EXPECT_EQ(integer("SELECT COUNT(*) FROM collection_attempts"), 0);
}

TEST_P(CollectionPaymentsTest, ARequestedErrorIsAJobThatFailsTheAttemptOnce) {
  collections::QrCode qr = make_qr("single_use", 7'000);
  auto pending = simulate(7'000, qr.payment_id, "tx_breb_timeout");
  ASSERT_TRUE(pending.ok());
  EXPECT_EQ(pending->state, "pending");
  EXPECT_EQ(integer("SELECT COUNT(*) FROM jobs WHERE kind = ? AND payload = ?",
                    {std::string(collections::k_attempt_failure_job), pending->id}),
            1);
  for (int run = 0; run < 2; ++run) {  // a job may run twice: the second changes nothing
    write<Unit>([&](store::Tx& tx) {
      return collections::fail_requested_attempt(tx, k_tenant, pending->id, now + 1);
    });
  }
  auto failed = temp->store->read<collections::Attempt>(
      [&](store::Tx& tx) { return collections::get_attempt(tx, k_tenant, pending->id); });
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->state, "failed");
  EXPECT_EQ(failed->state_reason, "tx_breb_timeout");
  EXPECT_EQ(failed->qr_code_id, qr.id);
  EXPECT_EQ(integer("SELECT failed_attempts FROM qr_codes WHERE id = ?", {qr.id}), 1);
  EXPECT_EQ(integer("SELECT COUNT(*) FROM " + events() +
                    " WHERE type = 'collection.attempt_unsuccessful'"),
            1);
  EXPECT_EQ(integer("SELECT balance FROM ledger_accounts WHERE id = ?", {tenant_account}), 0);
  // The code was never paid: a success still spends it.
  auto paid = simulate(7'000, qr.payment_id);
  ASSERT_TRUE(paid.ok());
  EXPECT_EQ(paid->state, "successful");
  EXPECT_TRUE(violations().empty());
}

TEST_P(CollectionPaymentsTest, TheQrPayloadNamesTheBeneficiaryAndTheKey) {
  collections::QrCode qr = make_qr("single_use", 50'000);
  auto read = emvco::read(qr.emvco);
  ASSERT_TRUE(read.ok()) << qr.emvco;
  EXPECT_EQ(read->merchant_name, "TIENDA NANDU");
  EXPECT_EQ(read->merchant_city, "BOGOTA");
  EXPECT_EQ(read->merchant_category_code, "0000");
  EXPECT_EQ(read->terminal_label, "TESORO01");
  EXPECT_EQ(read->key_value, key);
  EXPECT_EQ(read->amount_minor, 50'000);
  EXPECT_EQ(qr.payment_id, emvco::payment_id(*read));
  EXPECT_EQ(qr.expires_at_micros, now + 600 * time::k_micros_per_second);
}

TEST_P(CollectionPaymentsTest, PastItsExpiryACollectionTakesNeitherPaymentsNorCodes) {
  // Before the expiry worker has moved it to failed (its keys are still active).
  write<int>([&](store::Tx& tx) -> Result<int> {
    tx.exec("UPDATE collections SET expires_at = ?, expires_at_micros = ?",
            {time::iso(now), now});
    return 0;
  });
  auto attempt = simulate(5'000);
  ASSERT_TRUE(attempt.ok());
  EXPECT_EQ(attempt->state, "rejected");
  EXPECT_EQ(attempt->state_reason, "collection_not_payable");
  collections::QrRequest request;
  request.usage_mode = "multiple_use";
  auto qr = try_write<collections::QrCode>([&](store::Tx& tx) {
    return collections::create_qr(tx, k_tenant, k_collection, request,
                                  ids::network_transaction_id(), now);
  });
  ASSERT_FALSE(qr.ok());
  EXPECT_EQ(qr.error().first_code(), "collection_invalid_state");
  EXPECT_EQ(tesoro::api::http_status(qr.error()), 409);
}

TEST_P(CollectionPaymentsTest, TheImageMadeBeforeTheUnitIsUsedOnlyForTheSamePayload) {
  collections::QrRequest request;
  request.usage_mode = "multiple_use";
  const std::string transaction_id = ids::network_transaction_id();
  auto plan = temp->store->read<collections::QrPlan>([&](store::Tx& tx) {
    return collections::plan_qr(tx, k_tenant, k_collection, request, transaction_id, false,
                                now);
  });
  ASSERT_TRUE(plan.ok());
  collections::QrCode qr = write<collections::QrCode>([&](store::Tx& tx) {
    return collections::create_qr(tx, k_tenant, k_collection, request, transaction_id, now);
  });
  EXPECT_EQ(qr.emvco, plan->emvco);
  EXPECT_TRUE(qr.image.empty());  // made outside the unit
  // The same payload: the image made before the unit is the one answered.
  collections::PrebuiltImage same{plan->emvco, "data:image/png;base64,PREBUILT"};
  EXPECT_EQ(collections::image_of(qr, &same).value(), "data:image/png;base64,PREBUILT");
  // The payload changed in between (here: what the plan saw was another text): drawn anew, as
  // without a prebuilt image.
  collections::PrebuiltImage stale{plan->emvco + "X", "data:image/png;base64,STALE"};
  std::string drawn = collections::image_of(qr, &stale).value();
  EXPECT_TRUE(drawn.starts_with("data:image/png;base64,iVBOR")) << drawn.substr(0, 40);
  EXPECT_EQ(drawn, collections::image_of(qr, nullptr).value());
  EXPECT_EQ(drawn, collections::render_image(qr.emvco, "medium", 400).value());
}

TESORO_ON_BOTH_ENGINES(CollectionPaymentsTest);
