// The journal on both engines: balanced entries, checked arithmetic, no overdraft under
// concurrency, and `verify` catching a broken invariant.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

#include "api/error_status.hpp"
#include "core/limits.hpp"
#include "core/metrics.hpp"
#include "domain/ledger/accounts.hpp"
#include "domain/ledger/journal.hpp"
#include "emitted_events.hpp"
#include "test_stores.hpp"

using namespace tesoro;
using test_stores::TempStore;

namespace {

class JournalTest : public test_stores::EngineStoreTest {
 protected:
  void SetUp() override {
    EngineStoreTest::SetUp();
    if (IsSkipped()) return;
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
      return ledger::post_entry(tx, "t", "test", "", postings, {"test", ""}, time::now_micros());
    });
  }

  std::int64_t balance(const std::string& id) {
    return temp->store->read<std::int64_t>([&](store::Tx& tx) -> Result<std::int64_t> {
      return tx.query_one("SELECT balance FROM ledger_accounts WHERE tenant_id = 't' AND id = ?", {id})->integer(0);
    }).value();
  }

  // A system account's balance: the sum of its postings (it keeps none stored).
  std::int64_t derived_balance(const std::string& id) {
    return temp->store->read<std::int64_t>([&](store::Tx& tx) -> Result<std::int64_t> {
      return tx.query_one("SELECT COALESCE(SUM(amount), 0) FROM postings WHERE tenant_id = 't' "
                          "AND account_id = ?", {id})->integer(0);
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

  std::string account;
  std::string funding;
};

}  // namespace

TEST_P(JournalTest, BalancedEntryMovesMoneyAndEmitsEvents) {
  auto entry = post({{funding, -1500, "COP"}, {account, 1500, "COP"}});
  ASSERT_TRUE(entry.ok());
  EXPECT_EQ(entry->balances_after[1], 1500);
  EXPECT_EQ(balance(account), 1500);
  EXPECT_EQ(derived_balance(funding), -1500);  // system accounts may go negative
  EXPECT_EQ(balance(funding), 0);              // and keep no stored balance
  EXPECT_EQ(count("postings"), 2);
  // account.credited for the customer account
  EXPECT_EQ(count(emitted_events::table(GetParam() == store::Engine::postgres)), 1);
  EXPECT_TRUE(verify().empty());
}

TEST_P(JournalTest, UnbalancedEntryIsRefusedAndChangesNothing) {
  EXPECT_EQ(tesoro::api::http_status(post({{funding, -1500, "COP"}, {account, 1400, "COP"}}).error()), 500);
  EXPECT_EQ(tesoro::api::http_status(post({{account, 10, "COP"}}).error()), 500);
  EXPECT_EQ(count("postings"), 0);
  EXPECT_EQ(balance(account), 0);
}

TEST_P(JournalTest, InsufficientFundsRollsBackTheWholeEntry) {
  ASSERT_TRUE(post({{funding, -100, "COP"}, {account, 100, "COP"}}).ok());
  std::string other = open("COP");
  auto refused = post({{account, -101, "COP"}, {other, 101, "COP"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(tesoro::api::http_status(refused.error()), 422);
  EXPECT_EQ(refused.error().first_code(), "insufficient_funds");
  EXPECT_EQ(balance(account), 100);
  EXPECT_EQ(balance(other), 0);
  EXPECT_TRUE(post({{account, -100, "COP"}, {other, 100, "COP"}}).ok());  // to exactly zero
  EXPECT_EQ(balance(account), 0);
  auto debited = temp->store->read<std::string>([&](store::Tx& tx) -> Result<std::string> {
    const std::string events = emitted_events::table(tx.engine() == store::Engine::postgres);
    return tx.query_one("SELECT data FROM " + events + " WHERE type = 'account.debited'")
        ->text(0);
  }).value();
  EXPECT_NE(debited.find("\"amount\":{\"amount\":100,"), std::string::npos) << debited;
}

// No balance passes the largest amount the API answers (2^53 - 1), and none wraps.
TEST_P(JournalTest, OverflowIsAnErrorNeverAWrap) {
  const std::int64_t max = limits::k_amount_max_minor;
  ASSERT_TRUE(post({{funding, -max, "COP"}, {account, max, "COP"}}).ok());
  auto overflow = post({{funding, -1, "COP"}, {account, 1, "COP"}});
  ASSERT_FALSE(overflow.ok());
  EXPECT_EQ(overflow.error().first_code(), "balance_overflow");
  EXPECT_EQ(balance(account), max);
  auto wrap = post({{funding, -INT64_MAX, "COP"}, {open("COP"), INT64_MAX, "COP"}});
  ASSERT_FALSE(wrap.ok());
  EXPECT_EQ(wrap.error().first_code(), "balance_overflow");
  // The funding account sits at -max: system accounts have no bound of their own (no stored
  // balance to keep within int64), and the books still verify.
  std::string other = open("COP");
  auto beyond = temp->store->write<ledger::EntryResult>([&](store::Tx& tx) {
    return ledger::post_entry(tx, "t", "test", "", {{funding, -2, "COP"}, {other, 2, "COP"}}, {"test", ""}, time::now_micros());
  });
  ASSERT_TRUE(beyond.ok());
  EXPECT_EQ(balance(other), 2);
  EXPECT_TRUE(verify().empty());
}

TEST_P(JournalTest, CurrencyMismatchAndUnknownAccount) {
  auto mismatch = post({{funding, -5, "USD"}, {account, 5, "USD"}});
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.error().first_code(), "currency_mismatch");
  auto unknown = post({{funding, -5, "COP"}, {"acc_AAAAAAAAAAAAAAAAAAAAAA", 5, "COP"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(tesoro::api::http_status(unknown.error()), 404);
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


TEST_P(JournalTest, AUnitLocksOnceInOrderAndPostsManyEntries) {
  std::string a = open("COP");
  std::string b = open("COP");
  auto posted = temp->store->write<int>([&](store::Tx& tx) -> Result<int> {
    ledger::Journal journal(tx, time::now_micros());
    if (Status locked = journal.lock({{"t", b}, {"t", a}, {"t", funding}}); !locked) return locked.error();
    // A funding, a transfer and a fee in one unit, each checked against the balance so far.
    for (const auto& postings : std::vector<std::vector<ledger::Posting>>{
             {{funding, -1000, "COP"}, {a, 1000, "COP"}},
             {{a, -600, "COP"}, {b, 600, "COP"}},
             {{a, -5, "COP"}, {funding, 5, "COP"}}}) {
      auto entry = journal.post("t", "test", "", postings, {"test", ""});
      if (!entry) return std::move(entry).error();
    }
    auto overdraw = journal.post("t", "test", "", {{a, -396, "COP"}, {b, 396, "COP"}}, {"test", ""});
    EXPECT_EQ(overdraw.error().first_code(), "insufficient_funds");  // 395 left
    // An account that was not locked first may not be posted to: the order would break.
    std::string late = ledger::system_account(tx, "t", ledger::SystemRole::card_network, "COP", time::now_micros());
    EXPECT_EQ(tesoro::api::http_status(journal.post("t", "test", "", {{late, -1, "COP"}, {a, 1, "COP"}}, {"test", ""}).error()), 500);
    return 0;
  });
  ASSERT_TRUE(posted.ok());
  EXPECT_EQ(balance(a), 395);
  EXPECT_EQ(balance(b), 600);
  EXPECT_EQ(derived_balance(funding), -995);
  EXPECT_TRUE(verify().empty());
}

TEST_P(JournalTest, BlockedAndClosedAccountsRefuseDebitsUnderTheLock) {
  ASSERT_TRUE(post({{funding, -100, "COP"}, {account, 100, "COP"}}).ok());
  std::string other = open("COP");
  auto set_state = [&](const std::string& id, const std::string& state) {
    static_cast<void>(temp->store->write<int>([&](store::Tx& tx) -> Result<int> {
      tx.exec("UPDATE ledger_accounts SET state = ? WHERE id = ?", {state, id});
      return 0;
    }));
  };
  set_state(account, "blocked");
  auto blocked = post({{account, -10, "COP"}, {other, 10, "COP"}});
  ASSERT_FALSE(blocked.ok());
  EXPECT_EQ(tesoro::api::http_status(blocked.error()), 409);
  EXPECT_EQ(blocked.error().first_code(), "account_invalid_state");
  EXPECT_TRUE(post({{funding, -10, "COP"}, {account, 10, "COP"}}).ok()) << "a blocked account may still receive";
  set_state(other, "closed");
  EXPECT_EQ(post({{funding, -10, "COP"}, {other, 10, "COP"}}).error().first_code(), "account_invalid_state");
  EXPECT_EQ(balance(account), 110);
  EXPECT_EQ(balance(other), 0);
}

// Two accounts sending to each other from many threads at once, each unit posting a transfer and
// a fee: with one lock order there is no deadlock, so no unit is ever retried.
TEST_P(JournalTest, ConcurrentOppositeTransfersNeverDeadlock) {
  std::string a = open("COP");
  std::string b = open("COP");
  ASSERT_TRUE(post({{funding, -100000, "COP"}, {a, 100000, "COP"}}).ok());
  ASSERT_TRUE(post({{funding, -100000, "COP"}, {b, 100000, "COP"}}).ok());
  std::string fees = temp->store->write<std::string>([&](store::Tx& tx) -> Result<std::string> {
    return ledger::system_account(tx, "t", ledger::SystemRole::network_settlement, "COP", time::now_micros());
  }).value();
  const auto retries_before = metrics::store_retries();
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      const std::string& from = t % 2 == 0 ? a : b;
      const std::string& to = t % 2 == 0 ? b : a;
      for (int i = 0; i < 25; ++i) {
        auto done = temp->store->write<int>([&](store::Tx& tx) -> Result<int> {
          ledger::Journal journal(tx, time::now_micros());
          // Locked in the caller's order of mention; the journal sorts them.
          if (Status locked = journal.lock({{"t", from}, {"t", to}, {"t", fees}}); !locked) {
            return locked.error();
          }
          auto transfer = journal.post("t", "transfer", "", {{from, -7, "COP"}, {to, 7, "COP"}}, {"test", ""});
          if (!transfer) return std::move(transfer).error();
          auto fee = journal.post("t", "fee", "", {{from, -1, "COP"}, {fees, 1, "COP"}}, {"test", ""});
          if (!fee) return std::move(fee).error();
          return 0;
        });
        if (!done.ok()) ++failed;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(metrics::store_retries(), retries_before) << "a deadlock made PostgreSQL retry";
  EXPECT_EQ(balance(a) + balance(b), 200000 - 200);
  EXPECT_EQ(derived_balance(fees), 200);
  EXPECT_TRUE(verify().empty());
}

// The external funding account is shared by every funding of the tenant: a unit that funded one
// account and is still open must not hold up the funding of another.
TEST_P(JournalTest, FundingsOfOneTenantDoNotSerialiseOnTheSystemAccount) {
  if (GetParam() == store::Engine::sqlite) GTEST_SKIP() << "one SQLite writer serialises every unit";
  std::string a = open("COP");
  std::string b = open("COP");
  std::promise<void> first_posted;
  std::promise<void> second_done;
  auto second_done_future = second_done.get_future().share();
  auto first = std::async(std::launch::async, [&] {
    return temp->store->write<int>([&](store::Tx& tx) -> Result<int> {
      auto entry = ledger::post_entry(tx, "t", "funding", "", {{funding, -10, "COP"}, {a, 10, "COP"}}, {"test", ""}, time::now_micros());
      if (!entry) return std::move(entry).error();
      first_posted.set_value();
      // Held open until the second funding has committed (or 10 s, a failure).
      second_done_future.wait_for(std::chrono::seconds(10));
      return 0;
    });
  });
  first_posted.get_future().wait();
  auto started = std::chrono::steady_clock::now();
  auto second = post({{funding, -20, "COP"}, {b, 20, "COP"}});
  auto waited = std::chrono::steady_clock::now() - started;
  second_done.set_value();
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE(first.get().ok());
  EXPECT_LT(waited, std::chrono::seconds(5)) << "the second funding waited for the first's lock";
  EXPECT_EQ(derived_balance(funding), -30);
  EXPECT_TRUE(verify().empty());
}

TESORO_ON_BOTH_ENGINES(JournalTest);
