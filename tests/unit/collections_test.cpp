// The collections domain on both engines: key formats, creation and its events, payments
// moving the state (what the API cannot reach without attempts), PATCH against paid_amount,
// expiry on the tenant clock, find_successful_by of a paid collection, and `verify`.
#include <gtest/gtest.h>

#include "domain/collections/collections.hpp"
#include "domain/ledger/accounts.hpp"
#include "emitted_events.hpp"
#include "test_stores.hpp"

using namespace tesoro;

namespace {

constexpr time::Micros k_hour = 3600 * time::k_micros_per_second;
const std::string k_tenant = "ten_collectionstestAAAAAAA";

class CollectionsDomain : public test_stores::EngineStoreTest {
 protected:
  void SetUp() override {
    EngineStoreTest::SetUp();
    if (IsSkipped()) return;
    now = *time::parse_iso("2026-03-10T12:00:00Z");
    write<int>([&](store::Tx& tx) -> Result<int> {
      tx.exec("INSERT INTO tenants (id, name, environment, inserted_at) VALUES (?, 't', "
              "'sandbox', ?)",
              {k_tenant, time::iso(now)});
      return 0;
    });
    receptor = open_account("receptor");
  }

  std::string open_account(const std::string& role) {
    return write<ledger::Account>([&](store::Tx& tx) {
             ledger::NewTenantAccount input{"savings_account", role, "COP",
                                            {"900123456", "NIT", "t", "legal"}};
             return ledger::open_tenant_account(tx, k_tenant, input, now);
           })
        .id;
  }

  template <class T, class F>
  T write(F&& fn) {
    auto result = temp->store->write<T>(std::forward<F>(fn));
    if (!result) {
      ADD_FAILURE() << result.error().first_code() << ": " << result.error().errors.front().message;
      return T{};
    }
    return std::move(result).value();
  }

  template <class T, class F>
  Result<T> attempt(F&& fn) {
    return temp->store->write<T>(std::forward<F>(fn));
  }

  collections::NewCollection input(const std::string& external_id) {
    collections::NewCollection in;
    in.external_id = external_id;
    in.tenant_account_id = receptor;
    in.usage_mode = "multiple_use";
    in.currency = "COP";
    in.minimum_attempt_amount = 100;
    in.maximum_attempt_amount = 5000;
    in.total_minimum_amount = 1000;
    in.total_maximum_amount = 10000;
    return in;
  }

  collections::Collection create(const collections::NewCollection& in) {
    return write<collections::CreateOutcome>([&](store::Tx& tx) {
             return collections::create_collection(tx, k_tenant, in, now);
           })
        .collection;
  }

  // A payment as the attempts module makes it: lock, record, and the incoming transfer that
  // `verify` compares paid_amount with.
  collections::Collection pay(const std::string& id, std::int64_t amount) {
    return write<collections::Collection>([&](store::Tx& tx) -> Result<collections::Collection> {
      auto c = collections::lock_collection(tx, k_tenant, id);
      if (!c) return c;
      if (Status paid = collections::record_payment(tx, k_tenant, *c, amount, now); !paid) {
        return paid.error();
      }
      tx.exec("INSERT INTO incoming_transfers (tenant_id, id, collection_id, attempt_id, "
              "tenant_account_id, amount, currency, end_to_end_id, payer, entry_id, "
              "inserted_at) VALUES (?, ?, ?, ?, ?, ?, 'COP', 'e2e', '{}', 'jen_x', ?)",
              {k_tenant, "bbit_" + std::to_string(++transfers), id,
               "bbcolat_" + std::to_string(transfers), receptor, amount, time::iso(now)});
      return c;
    });
  }

  std::vector<std::string> event_types() {
    return write<std::vector<std::string>>([&](store::Tx& tx) -> Result<std::vector<std::string>> {
      std::vector<std::string> types;
      for (const store::Row& row :
           tx.query("SELECT type FROM " +
                        emitted_events::table(tx.engine() == store::Engine::postgres) +
                        " WHERE tenant_id = ? AND type LIKE 'collection.%' ORDER BY emitted_seq",
                    {k_tenant})) {
        types.push_back(row.text(0));
      }
      return types;
    });
  }

  std::vector<std::string> verify() {
    return write<std::vector<std::string>>(
        [](store::Tx& tx) -> Result<std::vector<std::string>> { return collections::verify(tx); });
  }

  time::Micros now = 0;
  std::string receptor;
  int transfers = 0;
};

TEST_P(CollectionsDomain, KeysAreNormalisedPerType) {
  EXPECT_EQ(collections::normalize_key("cellphone", "3001234567").value(), "3001234567");
  EXPECT_FALSE(collections::normalize_key("cellphone", "+573001234567"));
  EXPECT_FALSE(collections::normalize_key("cellphone", "4001234567"));
  EXPECT_EQ(collections::normalize_key("email", "Ana@Example.COM").value(), "ana@example.com");
  EXPECT_FALSE(collections::normalize_key("email", "ana.example.com"));
  EXPECT_FALSE(collections::normalize_key("email", std::string(96, 'a') + "@b.co"));
  EXPECT_EQ(collections::normalize_key("alphanumeric", "@tienda7").value(), "@TIENDA7");
  EXPECT_FALSE(collections::normalize_key("alphanumeric", "@ab"));
  EXPECT_FALSE(collections::normalize_key("alphanumeric", "@" + std::string(21, 'A')));
  EXPECT_FALSE(collections::normalize_key("alphanumeric", "@ñandú"));
  EXPECT_EQ(collections::normalize_key("identification", "1020304050").value(), "1020304050");
  EXPECT_FALSE(collections::normalize_key("identification", "1234"));
  EXPECT_EQ(collections::normalize_key("merchant_code", "0012").value(), "0012");
  EXPECT_FALSE(collections::normalize_key("merchant_code", "12-34"));
  EXPECT_FALSE(collections::normalize_key("iban", "1"));
}

TEST_P(CollectionsDomain, CreationRegistersTheKeyAndAnnouncesCreatedThenReady) {
  collections::Collection c = create(input("one"));
  EXPECT_EQ(c.state, "ready");
  ASSERT_EQ(c.keys.size(), 1u);
  auto key = collections::default_key(c);
  ASSERT_TRUE(key);
  EXPECT_EQ(key->type, "alphanumeric");
  auto entry = write<std::optional<collections::DirectoryEntry>>(
      [&](store::Tx& tx) -> Result<std::optional<collections::DirectoryEntry>> {
        return collections::find_key(tx, key->type, key->value);
      });
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->tenant_id, k_tenant);
  EXPECT_EQ(entry->collection_id, c.id);
  EXPECT_EQ(entry->state, "active");
  EXPECT_EQ(event_types(), (std::vector<std::string>{"collection.created", "collection.ready"}));
  EXPECT_TRUE(c.payable());
  EXPECT_TRUE(verify().empty());
}

TEST_P(CollectionsDomain, OnlyAnActiveReceptorAccountReceives) {
  auto refused = [&](const std::string& account) {
    collections::NewCollection in = input("acc-" + account);
    in.tenant_account_id = account;
    auto made = attempt<collections::CreateOutcome>(
        [&](store::Tx& tx) { return collections::create_collection(tx, k_tenant, in, now); });
    EXPECT_FALSE(made.ok());
    if (!made.ok()) {
      EXPECT_EQ(made.error().first_code(), "tenant_account_not_found");
      EXPECT_EQ(made.error().errors.front().path, "tenant_account_id");
    }
  };
  refused(open_account("originator"));
  const std::string inactive = open_account("receptor");
  write<int>([&](store::Tx& tx) -> Result<int> {
    tx.exec("UPDATE ledger_accounts SET state = 'inactive' WHERE tenant_id = ? AND id = ?",
            {k_tenant, inactive});
    return 0;
  });
  refused(inactive);
  refused("bbtacc_AAAAAAAAAAAAAAAAAAAAAA");
}

TEST_P(CollectionsDomain, PaymentsMoveTheStateWithOneEventEach) {
  collections::Collection c = create(input("pay"));
  c = pay(c.id, 500);
  EXPECT_EQ(c.state, "ready");
  EXPECT_EQ(c.paid_amount, 500);
  c = pay(c.id, 600);
  EXPECT_EQ(c.state, "minimum_paid");
  EXPECT_TRUE(c.payable());
  EXPECT_EQ(c.successful_attempts, 2);
  EXPECT_TRUE(verify().empty());
  // Past the rest is refused (the caller's bug): nothing changes.
  auto over = attempt<collections::Collection>([&](store::Tx& tx) -> Result<collections::Collection> {
    auto locked = collections::lock_collection(tx, k_tenant, c.id);
    if (Status paid = collections::record_payment(tx, k_tenant, *locked, 9000, now); !paid) {
      return paid.error();
    }
    return locked;
  });
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().first_code(), "balance_overflow");
  c = pay(c.id, 8900);
  EXPECT_EQ(c.state, "paid");
  EXPECT_EQ(c.remaining(), 0);
  EXPECT_FALSE(c.payable());
  EXPECT_FALSE(collections::default_key(c));
  EXPECT_EQ(event_types(), (std::vector<std::string>{"collection.created", "collection.ready",
                                                     "collection.minimum_paid",
                                                     "collection.paid"}));
  auto found = write<collections::Collection>([&](store::Tx& tx) {
    return collections::find_successful_by(tx, k_tenant, "pay");
  });
  EXPECT_EQ(found.id, c.id);
  EXPECT_TRUE(verify().empty());
  // A paid collection is terminal.
  auto discarded = attempt<collections::Collection>([&](store::Tx& tx) {
    return collections::discard_collection(tx, k_tenant, c.id, now);
  });
  ASSERT_FALSE(discarded.ok());
  EXPECT_EQ(discarded.error().first_code(), "collection_invalid_state");
}

TEST_P(CollectionsDomain, ASingleUseCollectionIsPaidByOneSuccess) {
  collections::NewCollection in = input("single");
  in.usage_mode = "single_use";
  collections::Collection c = pay(create(in).id, 200);
  EXPECT_EQ(c.state, "paid");
  EXPECT_EQ(c.paid_amount, 200);
  EXPECT_TRUE(verify().empty());
}

TEST_P(CollectionsDomain, APatchKeepsTotalMaximumAtOrAbovePaidAndMovesTheState) {
  collections::Collection c = pay(create(input("patch")).id, 1500);
  ASSERT_EQ(c.state, "minimum_paid");
  auto update = [&](collections::CollectionChanges changes) {
    return attempt<collections::Collection>([&](store::Tx& tx) {
      return collections::update_collection(tx, k_tenant, c.id, changes, now);
    });
  };
  // maximum_attempt_amount, total_minimum_amount and total_maximum_amount at once.
  auto upper_limits = [](std::int64_t maximum_attempt, std::int64_t total_minimum,
                         std::int64_t total_maximum) {
    collections::CollectionChanges changes;
    changes.maximum_attempt_amount = collections::LimitChange{maximum_attempt, "COP"};
    changes.total_minimum_amount = collections::LimitChange{total_minimum, "COP"};
    changes.total_maximum_amount = collections::LimitChange{total_maximum, "COP"};
    return changes;
  };
  auto refused = update(upper_limits(1000, 1000, 1400));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().first_code(), "amount_out_of_range");
  EXPECT_EQ(refused.error().errors.front().path, "total_maximum_amount.amount");

  collections::CollectionChanges higher_minimum;
  higher_minimum.total_minimum_amount = collections::LimitChange{2000, "COP"};
  auto back = update(higher_minimum);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->state, "ready");

  auto paid = update(upper_limits(1500, 1500, 1500));
  ASSERT_TRUE(paid.ok());
  EXPECT_EQ(paid->state, "paid");
  EXPECT_FALSE(collections::default_key(*paid));
  EXPECT_EQ(event_types(), (std::vector<std::string>{"collection.created", "collection.ready",
                                                     "collection.minimum_paid",
                                                     "collection.ready", "collection.paid"}));
  EXPECT_TRUE(verify().empty());
}

TEST_P(CollectionsDomain, ExpiryFollowsEachTenantsClock) {
  collections::NewCollection in = input("expiring");
  in.expires_at_micros = now + k_hour;
  collections::Collection c = create(in);
  // Until the worker runs, payable_at already refuses an expired collection.
  EXPECT_TRUE(collections::payable_at(c, now + k_hour - 1));
  EXPECT_FALSE(collections::payable_at(c, now + k_hour));
  auto expire = [&](time::Micros real_now) {
    return write<std::int64_t>(
        [&](store::Tx& tx) -> Result<std::int64_t> { return collections::expire_due(tx, real_now, 100); });
  };
  EXPECT_EQ(expire(now + k_hour - 1), 0);
  // The tenant's clock runs two hours ahead: at real `now` it is already past the expiry.
  write<int>([&](store::Tx& tx) -> Result<int> {
    tx.exec("UPDATE tenants SET clock_offset_micros = ? WHERE id = ?", {2 * k_hour, k_tenant});
    return 0;
  });
  EXPECT_EQ(expire(now), 1);
  EXPECT_EQ(expire(now), 0);
  auto failed = write<collections::Collection>(
      [&](store::Tx& tx) { return collections::get_collection(tx, k_tenant, c.id); });
  EXPECT_EQ(failed.state, "failed");
  EXPECT_EQ(failed.state_reason, "expired");
  EXPECT_FALSE(collections::default_key(failed));
  EXPECT_EQ(event_types().back(), "collection.failed");
  EXPECT_TRUE(verify().empty());
}

TEST_P(CollectionsDomain, VerifyNamesBrokenCollections) {
  collections::Collection c = pay(create(input("broken")).id, 500);
  write<int>([&](store::Tx& tx) -> Result<int> {
    tx.exec("UPDATE collections SET paid_amount = 20000, state = 'minimum_paid' "
            "WHERE tenant_id = ? AND id = ?",
            {k_tenant, c.id});
    return 0;
  });
  std::vector<std::string> violations = verify();
  ASSERT_EQ(violations.size(), 3u);
  EXPECT_NE(violations[0].find("not between 0 and total_maximum_amount"), std::string::npos);
  EXPECT_NE(violations[1].find("incoming transfers sum to 500"), std::string::npos);
  EXPECT_NE(violations[2].find("does not agree"), std::string::npos);
}

TESORO_ON_BOTH_ENGINES(CollectionsDomain);

}  // namespace
