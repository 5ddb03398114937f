// The journal on both engines: balanced entries, checked arithmetic, no overdraft under
// concurrency, and `verify` catching a broken invariant.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "domain/ledger/accounts.hpp"
#include "domain/ledger/journal.hpp"
#include "test_stores.hpp"

using namespace tesoro;
using test_stores::TempStore;

namespace {

class JournalTest : public ::testing::TestWithParam<store::Engine> {
 protected:
  void SetUp() override {
    if (GetParam() == store::Engine::postgres && !test_stores::postgres_available()) {
      GTEST_SKIP() << "TESORO_TEST_DATABASE_URL not set (make test sets it)";
    }
    temp = std::make_unique<TempStore>(GetParam());
    account = open("COP");
    funding = temp->store->write<std::string>([&](store::Tx& tx) -> Result<std::string> {
      return ledger::system_account(tx, "t", ledger::SystemRole::external_funding, "COP", time::now_micros());
    }).value();
  }

  std::string open(const std::string& currency) {
    return temp->store->write<ledger::Account>([&](store::Tx& tx) {
      return ledger::open_account(tx, "t", {"test", "savings_account", currency, {}}, time::now_micros());
    }).value().id;
  }

  Result<ledger::EntryResult> post(std::vector<ledger::Posting> postings) {
    return temp->store->write<ledger::EntryResult>([&](store::Tx& tx) {
      return ledger::post_entry(tx, "t", "test", "", postings, time::now_micros());
    });
  }

  std::int64_t balance(const std::string& id) {
    return temp->store->read<std::int64_t>([&](store::Tx& tx) -> Result<std::int64_t> {
      return tx.query_one("SELECT balance FROM ledger_accounts WHERE tenant_id = 't' AND id = ?", {id})->integer(0);
    }).value();
  }

  std::vector<std::string> verify() {
    return temp->store->read<std::vector<std::string>>(
        [](store::Tx& tx) -> Result<std::vector<std::string>> { return ledger::verify(tx); }).value();
  }

  std::int64_t count(const std::string& table) {
    return temp->store->read<std::int64_t>([&](store::Tx& tx) -> Result<std::int64_t> {
      return tx.query_one("SELECT COUNT(*) FROM " + table)->integer(0);
    }).value();
  }

  std::unique_ptr<TempStore> temp;
  std::string account;
  std::string funding;
};

}  // namespace

TEST_P(JournalTest, BalancedEntryMovesMoneyAndEmitsEvents) {
  auto entry = post({{funding, -1500, "COP"}, {account, 1500, "COP"}});
  ASSERT_TRUE(entry.ok());
  EXPECT_EQ(entry->balances_after[1], 1500);
  EXPECT_EQ(balance(account), 1500);
  EXPECT_EQ(balance(funding), -1500);  // system accounts may go negative
  EXPECT_EQ(count("postings"), 2);
  EXPECT_EQ(count("events"), 1);  // account.credited for the customer account
  EXPECT_TRUE(verify().empty());
}

TEST_P(JournalTest, UnbalancedEntryIsRefusedAndChangesNothing) {
  EXPECT_EQ(post({{funding, -1500, "COP"}, {account, 1400, "COP"}}).error().status, 500);
  EXPECT_EQ(post({{account, 10, "COP"}}).error().status, 500);
  EXPECT_EQ(count("postings"), 0);
  EXPECT_EQ(balance(account), 0);
}

TEST_P(JournalTest, InsufficientFundsRollsBackTheWholeEntry) {
  ASSERT_TRUE(post({{funding, -100, "COP"}, {account, 100, "COP"}}).ok());
  std::string other = open("COP");
  auto refused = post({{account, -101, "COP"}, {other, 101, "COP"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().status, 422);
  EXPECT_EQ(refused.error().first_code(), "insufficient_funds");
  EXPECT_EQ(balance(account), 100);
  EXPECT_EQ(balance(other), 0);
  EXPECT_TRUE(post({{account, -100, "COP"}, {other, 100, "COP"}}).ok());  // to exactly zero
  EXPECT_EQ(balance(account), 0);
  auto debited = temp->store->read<std::string>([&](store::Tx& tx) -> Result<std::string> {
    return tx.query_one("SELECT data FROM events WHERE type = 'account.debited'")->text(0);
  }).value();
  EXPECT_NE(debited.find("\"amount\":{\"amount\":100,"), std::string::npos) << debited;
}

TEST_P(JournalTest, OverflowIsAnErrorNeverAWrap) {
  const std::int64_t max = INT64_MAX;
  ASSERT_TRUE(post({{funding, -max, "COP"}, {account, max, "COP"}}).ok());
  auto overflow = post({{funding, -1, "COP"}, {account, 1, "COP"}});
  ASSERT_FALSE(overflow.ok());
  EXPECT_EQ(overflow.error().first_code(), "balance_overflow");
  EXPECT_EQ(balance(account), max);
  // The funding account sits at -max; one more would leave int64.
  std::string other = open("COP");
  auto under = temp->store->write<ledger::EntryResult>([&](store::Tx& tx) {
    return ledger::post_entry(tx, "t", "test", "", {{funding, -2, "COP"}, {other, 2, "COP"}}, time::now_micros());
  });
  ASSERT_FALSE(under.ok());
  EXPECT_EQ(under.error().first_code(), "balance_overflow");
  EXPECT_TRUE(verify().empty());
}

TEST_P(JournalTest, CurrencyMismatchAndUnknownAccount) {
  auto mismatch = post({{funding, -5, "USD"}, {account, 5, "USD"}});
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.error().first_code(), "currency_mismatch");
  auto unknown = post({{funding, -5, "COP"}, {"acc_AAAAAAAAAAAAAAAAAAAAAA", 5, "COP"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().status, 404);
}

TEST_P(JournalTest, ConcurrentDebitsNeverOverdraw) {
  constexpr std::int64_t k_initial = 1000;
  ASSERT_TRUE(post({{funding, -k_initial, "COP"}, {account, k_initial, "COP"}}).ok());
  std::string sink = open("COP");
  std::atomic<std::int64_t> acknowledged{0};
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 40; ++i) {
        std::int64_t amount = 1 + (t * 7 + i) % 13;
        auto result = post({{account, -amount, "COP"}, {sink, amount, "COP"}});
        if (result.ok()) acknowledged += amount;
        else if (result.error().first_code() == "insufficient_funds") ++refused;
        else ADD_FAILURE() << result.error().first_code();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_GT(refused.load(), 0) << "the test never ran the account dry";
  EXPECT_EQ(balance(account), k_initial - acknowledged.load());
  EXPECT_EQ(balance(sink), acknowledged.load());
  EXPECT_GE(balance(account), 0);
  EXPECT_TRUE(verify().empty());
}

TEST_P(JournalTest, VerifyNamesABrokenInvariant) {
  ASSERT_TRUE(post({{funding, -50, "COP"}, {account, 50, "COP"}}).ok());
  static_cast<void>(temp->store->write<int>([&](store::Tx& tx) -> Result<int> {
    tx.exec("UPDATE ledger_accounts SET balance = 70 WHERE id = ?", {account});
    return 0;
  }));
  auto violations = verify();
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_NE(violations[0].find(account), std::string::npos);
  EXPECT_NE(violations[0].find("70"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Engines, JournalTest,
                         ::testing::Values(store::Engine::sqlite, store::Engine::postgres),
                         [](const auto& info) {
                           return info.param == store::Engine::sqlite ? "sqlite" : "postgres";
                         });
