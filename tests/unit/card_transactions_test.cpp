// Card transactions on both engines: holds, declines with their codes, every rule type, velocity
// windows, each step's exact movement on the ledger, expiry on the tenant clock, `verify`, and
// concurrent authorizations of one card.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "api/error_status.hpp"
#include "core/crypto.hpp"
#include "core/limits.hpp"
#include "domain/cards/card_transactions.hpp"
#include "domain/cards/cards.hpp"
#include "domain/cards/configuration_groups.hpp"
#include "domain/ledger/accounts.hpp"
#include "domain/ledger/journal.hpp"
#include "domain/spending_controls/rules.hpp"
#include "domain/spending_controls/spending_controls.hpp"
#include "emitted_events.hpp"
#include "test_stores.hpp"

using namespace tesoro;

namespace {

constexpr time::Micros k_second = time::k_micros_per_second;
constexpr time::Micros k_day = 86'400 * k_second;
const std::string k_tenant = "ten_cardtransactionstestAA";

class CardTransactionsTest : public test_stores::EngineStoreTest {
 protected:
  void SetUp() override {
    EngineStoreTest::SetUp();
    if (IsSkipped()) return;
    now = *time::parse_iso("2026-03-10T12:00:00Z");  // a Tuesday
    write<int>([&](store::Tx& tx) -> Result<int> {
      tx.exec("INSERT INTO tenants (id, name, environment, inserted_at) VALUES (?, 't', "
              "'sandbox', ?)",
              {k_tenant, time::iso(now)});
      cards::default_configuration_group(tx, k_tenant, now);
      return 0;
    });
    account = write<ledger::Account>([&](store::Tx& tx) {
      return ledger::open_account(tx, k_tenant, {"main", "savings_account", "COP", {}}, now);
    }).id;
    write<ledger::Account>([&](store::Tx& tx) {
      return ledger::fund_account(tx, k_tenant, account, ledger::Surface::core, 1'000'000, "COP",
                                  "test", now);
    });
    card = make_card("virtual", 10'000);
  }

  template <class T, class F>
  T write(F&& fn) {
    auto result = temp->store->write<T>(std::forward<F>(fn));
    if (!result) {
      ADD_FAILURE() << result.error().first_code() << ": " << result.error().message;
      return T{};
    }
    return std::move(result).value();
  }

  cards::Card make_card(const std::string& type, std::int64_t balance,
                        std::optional<std::string> group = std::nullopt) {
    cards::NewCard input;
    input.account_id = account;
    input.type = type;
    input.configuration_group_id = group;
    input.initial_balance_minor = balance;
    input.initial_balance_currency = "COP";
    static const crypto::Sealer sealer(std::string(crypto::Sealer::k_key_size, 'k'));
    cards::Card made = write<cards::Card>([&](store::Tx& tx) {
      return cards::create_card(tx, k_tenant, input, sealer, now);
    });
    if (made.state == "pending_activation") {
      made = write<cards::Card>([&](store::Tx& tx) {
        return cards::activate_card(tx, k_tenant, made.id, now);
      });
    }
    return made;
  }

  Result<cards::CardTransaction> authorize(std::int64_t amount, const std::string& channel =
                                                                    "online_purchase",
                                           spending_controls::Merchant merchant = {},
                                           const std::string& currency = "COP",
                                           const cards::Card* on = nullptr) {
    if (merchant.name.empty()) merchant = {"Acme Store", "5812", "MID001", "CO"};
    cards::AuthorizationRequest request{amount, currency, {channel, merchant}};
    return temp->store->write<cards::CardTransaction>([&](store::Tx& tx) {
      return cards::authorize(tx, k_tenant, (on ? *on : card).id, request, now);
    });
  }

  // Every step goes through apply_step as the API does.
  Result<cards::CardTransaction> step(cards::Step which, const std::string& id,
                                      std::optional<std::int64_t> amount = std::nullopt) {
    return temp->store->write<cards::CardTransaction>([&](store::Tx& tx) {
      return cards::apply_step(tx, k_tenant, id, which, amount, std::nullopt, now);
    });
  }

  struct Balance {
    std::int64_t balance;
    std::int64_t held;
  };
  Balance prepaid(const cards::Card* of = nullptr) {
    return temp->store->read<Balance>([&](store::Tx& tx) -> Result<Balance> {
      auto row = tx.query_one("SELECT balance, held FROM ledger_accounts WHERE tenant_id = ? "
                              "AND id = ?",
                              {k_tenant, (of ? *of : card).prepaid_account_id});
      return Balance{row->integer(0), row->integer(1)};
    }).value();
  }

  // The card network's balance: the sum of its postings (a system account stores none).
  std::int64_t network() {
    return temp->store->read<std::int64_t>([&](store::Tx& tx) -> Result<std::int64_t> {
      return tx.query_one("SELECT COALESCE(SUM(p.amount), 0) FROM postings p JOIN ledger_accounts "
                          "a ON a.tenant_id = p.tenant_id AND a.id = p.account_id "
                          "WHERE a.name = 'system:card_network:COP'")
          ->integer(0);
    }).value();
  }

  std::vector<std::string> verify() {
    return temp->store->read<std::vector<std::string>>(
        [](store::Tx& tx) -> Result<std::vector<std::string>> {
          auto violations = ledger::verify(tx);
          for (auto& violation : cards::verify(tx)) violations.push_back(violation);
          return violations;
        }).value();
  }

  std::int64_t count_events(const std::string& type) {
    return temp->store->read<std::int64_t>([&](store::Tx& tx) -> Result<std::int64_t> {
      const std::string events = emitted_events::table(tx.engine() == store::Engine::postgres);
      return tx.query_one("SELECT COUNT(*) FROM " + events + " WHERE type = ?", {type})
          ->integer(0);
    }).value();
  }

  // A control in COP with one rule, made the card's own (or returned unassigned).
  std::string control(spending_controls::Rule rule, bool assign = true) {
    spending_controls::NewSpendingControl input{"limits", "COP", {{rule, {}}}};
    auto made = write<spending_controls::SpendingControl>([&](store::Tx& tx) {
      return spending_controls::create_spending_control(tx, k_tenant, input, now);
    });
    if (assign) {
      cards::CardChanges changes;
      changes.spending_control_id = made.id;
      card = write<cards::Card>([&](store::Tx& tx) {
        return cards::update_card(tx, k_tenant, card.id, changes, now);
      });
    }
    return made.id;
  }

  void set_state(const std::string& state) {
    cards::CardChanges changes;
    changes.state = state;
    card = write<cards::Card>([&](store::Tx& tx) {
      return cards::update_card(tx, k_tenant, card.id, changes, now);
    });
  }

  time::Micros now = 0;
  std::string account;
  cards::Card card;
};

void expect_declined(const Result<cards::CardTransaction>& made, const std::string& reason,
                     const std::string& code) {
  ASSERT_TRUE(made.ok()) << made.error().first_code();
  EXPECT_EQ(made->type, "authorization_declined");
  EXPECT_EQ(made->state, "declined");
  EXPECT_EQ(made->decline_reason, reason);
  EXPECT_EQ(made->iso8583_code, code);
  EXPECT_EQ(made->held_minor, 0);
  EXPECT_FALSE(made->expires_at);
}

void expect_approved(const Result<cards::CardTransaction>& made) {
  ASSERT_TRUE(made.ok()) << made.error().first_code();
  EXPECT_EQ(made->type, "authorization_approved") << made->decline_reason.value_or("");
  EXPECT_EQ(made->state, "pending");
  EXPECT_EQ(made->iso8583_code, "00");
  EXPECT_FALSE(made->decline_reason);
  EXPECT_FALSE(made->declined_by);
}

void expect_declined_by(const Result<cards::CardTransaction>& made, const std::string& control_id,
                        const std::string& rule_type, const std::string& code) {
  expect_declined(made, "spending_controls", code);
  ASSERT_TRUE(made.ok() && made->declined_by);
  EXPECT_EQ(made->declined_by->spending_control_id, control_id);
  EXPECT_EQ(made->declined_by->rule_type, rule_type);
}

}  // namespace

TEST_P(CardTransactionsTest, ApprovalHoldsTheAmountWithoutPostingIt) {
  auto made = authorize(3000);
  expect_approved(made);
  EXPECT_EQ(made->held_minor, 3000);
  EXPECT_EQ(made->amount_minor, 3000);
  EXPECT_EQ(made->expires_at, time::iso(now + limits::k_authorization_hold_seconds * k_second));
  ASSERT_EQ(made->history.size(), 1u);
  EXPECT_EQ(made->history[0].type, "authorization_approved");
  EXPECT_EQ(prepaid().balance, 10'000);  // posted does not drop
  EXPECT_EQ(prepaid().held, 3000);       // available does
  EXPECT_EQ(count_events("card_transaction.authorization_approved"), 1);
  auto read = temp->store->read<cards::CardTransaction>([&](store::Tx& tx) {
    return cards::get_card_transaction(tx, k_tenant, made->id);
  });
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->purchase.merchant.mid, "MID001");
  EXPECT_EQ(read->expires_at, made->expires_at);
  EXPECT_TRUE(verify().empty());
}

TEST_P(CardTransactionsTest, EachDeclineReasonHasItsCode) {
  expect_declined(authorize(10'001), "insufficient_funds", "51");
  expect_declined(authorize(100, "online_purchase", {}, "USD"), "currency_mismatch", "05");
  expect_declined(authorize(100, "physical_purchase"), "not_allowed", "57");  // virtual card
  expect_declined(authorize(100, "atm_withdrawal"), "not_allowed", "57");
  set_state("blocked");
  expect_declined(authorize(100), "card_inactive", "62");
  set_state("canceled");
  now += k_second;  // the newest, listed first
  // Canceled comes before every other reason.
  expect_declined(authorize(20'000, "atm_withdrawal", {}, "USD"), "card_canceled", "05");
  EXPECT_EQ(count_events("card_transaction.authorization_declined"), 6);
  EXPECT_EQ(prepaid().held, 0);
  auto listed = temp->store->read<PageOf<cards::CardTransaction>>([&](store::Tx& tx) {
    return cards::list_card_transactions(tx, k_tenant, card.id, 0, 100);
  });
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->total_items, 6);  // declined ones are kept
  EXPECT_EQ(listed->items.front().decline_reason, "card_canceled");  // newest first
  EXPECT_TRUE(verify().empty());
}

TEST_P(CardTransactionsTest, APhysicalCardUsesEveryChannel) {
  card = make_card("physical", 10'000);
  expect_approved(authorize(100, "physical_purchase"));
  expect_approved(authorize(100, "atm_withdrawal"));
  expect_approved(authorize(100, "online_purchase"));
}

TEST_P(CardTransactionsTest, CardUsageRuleBlocksItsChannelsOnly) {
  card = make_card("physical", 10'000);
  spending_controls::Rule rule;
  rule.type = "card_usage";
  rule.disabled_card_usages = {"atm_withdrawal"};
  std::string id = control(rule);
  expect_declined_by(authorize(100, "atm_withdrawal"), id, "card_usage", "57");
  expect_approved(authorize(100, "physical_purchase"));
}

// A channel the card's type cannot use is not_allowed, unless the tenant disabled it with a
// card_usage rule too: then the decline names that control (decisions: Cards).
TEST_P(CardTransactionsTest, CardUsageRuleNamesItsControlOnAVirtualCard) {
  expect_declined(authorize(100, "atm_withdrawal"), "not_allowed", "57");
  spending_controls::Rule rule;
  rule.type = "card_usage";
  rule.disabled_card_usages = {"atm_withdrawal"};
  std::string id = control(rule);
  expect_declined_by(authorize(100, "atm_withdrawal"), id, "card_usage", "57");
  expect_declined(authorize(100, "physical_purchase"), "not_allowed", "57");
  expect_approved(authorize(100, "online_purchase"));
}

TEST_P(CardTransactionsTest, MccRuleBlocksAndAllows) {
  spending_controls::Rule rule;
  rule.type = "mcc";
  rule.operation = "block_mccs";
  rule.values = {"5411"};
  std::string id = control(rule);
  expect_declined_by(authorize(100, "online_purchase", {"Grocer", "5411", "M1", "CO"}), id, "mcc",
                     "57");
  expect_approved(authorize(100, "online_purchase", {"Diner", "5812", "M1", "CO"}));
  rule.operation = "allow_mccs";
  rule.values = {"5812"};
  std::string allow = control(rule);
  expect_declined_by(authorize(100, "online_purchase", {"Grocer", "5300", "M1", "CO"}), allow,
                     "mcc", "57");
  expect_approved(authorize(100, "online_purchase", {"Diner", "5812", "M1", "CO"}));
}

TEST_P(CardTransactionsTest, MidRuleBlocksAndAllows) {
  spending_controls::Rule rule;
  rule.type = "mid";
  rule.operation = "block_mids";
  rule.values = {"BAD1"};
  std::string id = control(rule);
  expect_declined_by(authorize(100, "online_purchase", {"Shop", "5812", "BAD1", "CO"}), id, "mid",
                     "57");
  expect_approved(authorize(100, "online_purchase", {"Shop", "5812", "GOOD1", "CO"}));
}

TEST_P(CardTransactionsTest, MerchantNameRuleMatchesTheWholeName) {
  spending_controls::Rule rule;
  rule.type = "merchant_name";
  rule.allow_pattern = "Acme.*";
  std::string id = control(rule);
  expect_declined_by(authorize(100, "online_purchase", {"Other", "5812", "M1", "CO"}), id,
                     "merchant_name", "57");
  expect_approved(authorize(100, "online_purchase", {"Acme Store", "5812", "M1", "CO"}));
}

TEST_P(CardTransactionsTest, VelocityRuleCountsHeldAndCapturedInTheWindow) {
  spending_controls::Rule rule;
  rule.type = "velocity";
  rule.daily_minor = 5000;
  std::string id = control(rule);
  auto first = authorize(3000);
  expect_approved(first);
  expect_declined_by(authorize(2001), id, "velocity", "65");
  expect_approved(authorize(2000));  // exactly at the limit
  // A reversal gives capacity back; a capture keeps it used, and a refund does not restore it.
  auto second = authorize(1);
  expect_declined_by(second, id, "velocity", "65");
  ASSERT_TRUE(step(cards::Step::reverse, first->id, 1000).ok());
  expect_approved(authorize(1000));
  ASSERT_TRUE(step(cards::Step::capture, first->id).ok());  // the remaining 2000
  auto captured = step(cards::Step::refund, first->id);
  ASSERT_TRUE(captured.ok());
  EXPECT_EQ(captured->state, "refunded");
  expect_declined_by(authorize(1), id, "velocity", "65");
  auto usages = temp->store->read<std::vector<cards::LimitUsage>>(
      [&](store::Tx& tx) -> Result<std::vector<cards::LimitUsage>> {
        return cards::limit_usages(tx, k_tenant, card, now);
      }).value();
  ASSERT_EQ(usages.size(), 1u);
  EXPECT_EQ(usages[0].used_minor, 5000);
  EXPECT_EQ(usages[0].remaining_minor, 0);
  EXPECT_EQ(usages[0].window_start, "2026-03-10T00:00:00.000000Z");
}

TEST_P(CardTransactionsTest, VelocityWindowStartsAgainAtMidnight) {
  spending_controls::Rule rule;
  rule.type = "velocity";
  rule.daily_minor = 5000;
  rule.weekly_minor = 7000;
  std::string id = control(rule);
  now = *time::parse_iso("2026-03-10T23:59:00Z");
  expect_approved(authorize(4000));
  expect_declined_by(authorize(2000), id, "velocity", "65");
  now += 2 * 60 * k_second;  // 00:01 on Wednesday: a new day, the same week
  expect_approved(authorize(2000));
  expect_declined_by(authorize(1001), id, "velocity", "65");  // the weekly cap
  now = *time::parse_iso("2026-03-16T00:00:00Z");  // Monday: a new week
  expect_approved(authorize(3000));
}

TEST_P(CardTransactionsTest, WithdrawalVelocityLimitsOnlyAtmWithdrawals) {
  card = make_card("physical", 10'000);
  spending_controls::Rule rule;
  rule.type = "withdrawal_velocity";
  rule.daily_minor = 1000;
  std::string id = control(rule);
  expect_approved(authorize(800, "atm_withdrawal"));
  expect_declined_by(authorize(300, "atm_withdrawal"), id, "withdrawal_velocity", "61");
  expect_approved(authorize(3000, "physical_purchase"));  // neither counted nor limited
  expect_approved(authorize(200, "atm_withdrawal"));
}

TEST_P(CardTransactionsTest, AControlOfAnotherCurrencyLimitsNothing) {
  spending_controls::Rule rule;
  rule.type = "velocity";
  rule.daily_minor = 10;
  spending_controls::NewSpendingControl input{"usd", "USD", {{rule, {}}}};
  auto made = write<spending_controls::SpendingControl>([&](store::Tx& tx) {
    return spending_controls::create_spending_control(tx, k_tenant, input, now);
  });
  cards::CardChanges changes;
  changes.spending_control_id = made.id;
  card = write<cards::Card>([&](store::Tx& tx) {
    return cards::update_card(tx, k_tenant, card.id, changes, now);
  });
  expect_approved(authorize(1000));
}

TEST_P(CardTransactionsTest, TheGroupsControlAppliesAfterTheCardsOwn) {
  spending_controls::Rule velocity;
  velocity.type = "velocity";
  velocity.daily_minor = 1000;
  std::string group_control = control(velocity, /*assign=*/false);
  auto group = write<cards::ConfigurationGroup>([&](store::Tx& tx) {
    return cards::create_configuration_group(tx, k_tenant, "limited", group_control, now);
  });
  card = make_card("virtual", 10'000, group.id);
  expect_declined_by(authorize(1001), group_control, "velocity", "65");
  spending_controls::Rule mcc;
  mcc.type = "mcc";
  mcc.operation = "block_mccs";
  mcc.values = {"5812"};
  std::string own = control(mcc);
  // Both refuse it: the card's own control is looked at first.
  expect_declined_by(authorize(1001), own, "mcc", "57");
  expect_approved(authorize(1000, "online_purchase", {"Shop", "5999", "M1", "CO"}));
}

TEST_P(CardTransactionsTest, PartialCaptureMovesExactlyTheCapturedAmount) {
  auto made = authorize(5000);
  ASSERT_TRUE(made.ok());
  auto captured = step(cards::Step::capture, made->id, 3000);
  ASSERT_TRUE(captured.ok()) << captured.error().first_code();
  EXPECT_EQ(captured->state, "captured");
  EXPECT_EQ(captured->captured_minor, 3000);
  EXPECT_EQ(captured->released_minor, 2000);
  EXPECT_EQ(captured->held_minor, 0);
  EXPECT_FALSE(captured->expires_at);
  EXPECT_EQ(prepaid().balance, 7000);
  EXPECT_EQ(prepaid().held, 0);
  EXPECT_EQ(network(), 3000);
  EXPECT_EQ(count_events("card_transaction.capture"), 1);
  ASSERT_EQ(captured->history.size(), 2u);
  EXPECT_EQ(captured->history[1].type, "capture");
  EXPECT_EQ(captured->history[1].amount_minor, 3000);
  EXPECT_EQ(step(cards::Step::capture, made->id).error().first_code(),
            "card_transaction_invalid_state");
  EXPECT_EQ(step(cards::Step::reverse, made->id).error().first_code(),
            "card_transaction_invalid_state");
  EXPECT_TRUE(verify().empty());
}

TEST_P(CardTransactionsTest, CaptureMoreThanHeldIsRefused) {
  auto made = authorize(5000);
  auto refused = step(cards::Step::capture, made->id, 5001);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().first_code(), "amount_exceeds_authorization");
  EXPECT_EQ(prepaid().held, 5000);
  auto whole = step(cards::Step::capture, made->id);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->captured_minor, 5000);
  EXPECT_EQ(whole->released_minor, 0);
  EXPECT_EQ(network(), 5000);
  EXPECT_EQ(tesoro::api::http_status(step(cards::Step::capture, "ctx_AAAAAAAAAAAAAAAAAAAAAA").error()), 404);
}

TEST_P(CardTransactionsTest, PartialReverseKeepsTheRestHeld) {
  auto made = authorize(5000);
  auto reversed = step(cards::Step::reverse, made->id, 2000);
  ASSERT_TRUE(reversed.ok());
  EXPECT_EQ(reversed->state, "pending");
  EXPECT_EQ(reversed->held_minor, 3000);
  EXPECT_EQ(reversed->reversed_minor, 2000);
  EXPECT_EQ(prepaid().held, 3000);
  EXPECT_EQ(step(cards::Step::reverse, made->id, 3001).error().first_code(),
            "amount_exceeds_authorization");
  auto rest = step(cards::Step::reverse, made->id);
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(rest->state, "reversed");
  EXPECT_EQ(rest->reversed_minor, 5000);
  EXPECT_EQ(prepaid().held, 0);
  EXPECT_EQ(prepaid().balance, 10'000);  // nothing was ever posted
  EXPECT_EQ(network(), 0);
  EXPECT_EQ(count_events("card_transaction.authorization_reversal"), 2);
  EXPECT_EQ(step(cards::Step::refund, made->id).error().first_code(),
            "card_transaction_invalid_state");
  EXPECT_TRUE(verify().empty());
}

TEST_P(CardTransactionsTest, IncrementWithinAndBeyondTheBalance) {
  auto made = authorize(5000);
  auto grown = step(cards::Step::increment, made->id, 3000);
  ASSERT_TRUE(grown.ok());
  EXPECT_EQ(grown->amount_minor, 8000);
  EXPECT_EQ(grown->held_minor, 8000);
  EXPECT_EQ(prepaid().held, 8000);
  auto beyond = step(cards::Step::increment, made->id, 2001);
  ASSERT_FALSE(beyond.ok());
  EXPECT_EQ(beyond.error().first_code(), "insufficient_funds");
  EXPECT_EQ(prepaid().held, 8000);
  ASSERT_TRUE(step(cards::Step::increment, made->id, 2000).ok());  // to exactly the balance
  EXPECT_EQ(prepaid().held, 10'000);
  auto captured = step(cards::Step::capture, made->id);
  ASSERT_TRUE(captured.ok());
  EXPECT_EQ(captured->captured_minor, 10'000);
  EXPECT_EQ(prepaid().balance, 0);
  EXPECT_TRUE(verify().empty());
}

TEST_P(CardTransactionsTest, IncrementRespectsTheLimitsAndTheCardsState) {
  spending_controls::Rule rule;
  rule.type = "velocity";
  rule.daily_minor = 6000;
  control(rule);
  auto made = authorize(5000);
  expect_approved(made);
  auto over = step(cards::Step::increment, made->id, 1001);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().first_code(), "spending_limit_exceeded");
  ASSERT_TRUE(step(cards::Step::increment, made->id, 1000).ok());
  set_state("blocked");
  EXPECT_EQ(step(cards::Step::increment, made->id, 1).error().first_code(), "card_invalid_state");
  ASSERT_TRUE(step(cards::Step::capture, made->id).ok());  // a blocked card still settles
  EXPECT_TRUE(verify().empty());
}

TEST_P(CardTransactionsTest, RefundOfPartThenAll) {
  auto made = authorize(5000);
  ASSERT_TRUE(step(cards::Step::capture, made->id, 4000).ok());
  auto part = step(cards::Step::refund, made->id, 1000);
  ASSERT_TRUE(part.ok());
  EXPECT_EQ(part->state, "captured");
  EXPECT_EQ(part->refunded_minor, 1000);
  EXPECT_EQ(prepaid().balance, 7000);
  EXPECT_EQ(network(), 3000);
  EXPECT_EQ(step(cards::Step::refund, made->id, 3001).error().first_code(),
            "amount_exceeds_authorization");
  auto rest = step(cards::Step::refund, made->id);
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(rest->state, "refunded");
  EXPECT_EQ(rest->refunded_minor, 4000);
  EXPECT_EQ(prepaid().balance, 10'000);
  EXPECT_EQ(network(), 0);
  EXPECT_EQ(count_events("card_transaction.refund"), 2);
  EXPECT_EQ(step(cards::Step::refund, made->id).error().first_code(),
            "card_transaction_invalid_state");
  EXPECT_TRUE(verify().empty());
}

TEST_P(CardTransactionsTest, ExpiryReleasesTheHoldOnTheTenantClock) {
  auto made = authorize(5000);
  auto partly = authorize(1000);
  ASSERT_TRUE(step(cards::Step::reverse, partly->id, 400).ok());
  const time::Micros due = now + limits::k_authorization_hold_seconds * k_second;
  auto expire = [&](time::Micros real_now) {
    return write<std::int64_t>([&](store::Tx& tx) -> Result<std::int64_t> {
      return cards::expire_due(tx, real_now, 100);
    });
  };
  EXPECT_EQ(expire(due - k_second), 0);
  EXPECT_EQ(prepaid().held, 5600);
  // Real time is a day short, but the tenant's clock runs a day ahead.
  write<int>([&](store::Tx& tx) -> Result<int> {
    tx.exec("UPDATE tenants SET clock_offset_micros = ? WHERE id = ?", {k_day, k_tenant});
    return 0;
  });
  EXPECT_EQ(expire(due - k_day), 2);
  EXPECT_EQ(expire(due - k_day), 0);  // nothing twice
  auto expired = temp->store->read<cards::CardTransaction>([&](store::Tx& tx) {
    return cards::get_card_transaction(tx, k_tenant, made->id);
  });
  ASSERT_TRUE(expired.ok());
  EXPECT_EQ(expired->state, "expired");
  EXPECT_EQ(expired->expired_minor, 5000);
  EXPECT_EQ(expired->held_minor, 0);
  EXPECT_FALSE(expired->expires_at);
  EXPECT_EQ(expired->history.back().type, "authorization_expiry");
  EXPECT_EQ(expired->history.back().performed_at, time::iso(due));
  EXPECT_EQ(prepaid().held, 0);
  EXPECT_EQ(prepaid().balance, 10'000);
  EXPECT_EQ(count_events("card_transaction.authorization_expiry"), 2);
  EXPECT_EQ(step(cards::Step::capture, made->id).error().first_code(),
            "card_transaction_invalid_state");
  EXPECT_TRUE(verify().empty());
}

TEST_P(CardTransactionsTest, VerifyCatchesATamperedHold) {
  auto made = authorize(5000);
  ASSERT_TRUE(step(cards::Step::capture, made->id, 2000).ok());
  expect_approved(authorize(1000));
  ASSERT_TRUE(verify().empty());
  write<int>([&](store::Tx& tx) -> Result<int> {
    tx.exec("UPDATE card_transactions SET held = held + 1 WHERE state = 'pending'");
    return 0;
  });
  auto violations = verify();
  ASSERT_EQ(violations.size(), 2u);  // the card's hold and the transaction's own sum
  EXPECT_NE(violations[0].find(card.id), std::string::npos) << violations[0];
  write<int>([&](store::Tx& tx) -> Result<int> {
    tx.exec("UPDATE card_transactions SET held = held - 1 WHERE state = 'pending'");
    tx.exec("UPDATE card_transactions SET captured = 2500, released = 2500 WHERE id = ?",
            {made->id});
    return 0;
  });
  violations = verify();
  ASSERT_EQ(violations.size(), 1u);  // the network got 2000, not 2500
  EXPECT_NE(violations[0].find("card network"), std::string::npos) << violations[0];
}

TEST_P(CardTransactionsTest, ConcurrentAuthorizationsNeverHoldMoreThanTheBalance) {
  constexpr int k_threads = 32;
  constexpr std::int64_t k_amount = 700;  // 14 fit in 10,000
  std::atomic<std::int64_t> approved_sum{0};
  std::atomic<int> approved{0};
  std::atomic<int> insufficient{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < k_threads; ++i) {
    threads.emplace_back([&] {
      auto made = authorize(k_amount);
      if (!made.ok()) {
        ADD_FAILURE() << made.error().first_code();
      } else if (made->state == "pending") {
        ++approved;
        approved_sum += made->held_minor;
      } else if (made->decline_reason == "insufficient_funds") {
        ++insufficient;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(approved.load(), 14);
  EXPECT_EQ(insufficient.load(), k_threads - 14);
  EXPECT_LE(approved_sum.load(), 10'000);
  EXPECT_EQ(prepaid().held, approved_sum.load());
  EXPECT_EQ(prepaid().balance, 10'000);
  EXPECT_TRUE(verify().empty());
}

TESORO_ON_BOTH_ENGINES(CardTransactionsTest);

// ---- Decisions by the tenant's endpoint (domain/cards/authorization_decisions.hpp) ----------

namespace {

cards::TenantDecision tenant_decision(bool approved, const std::string& by,
                                      const std::string& reason,
                                      std::optional<std::string> detail = std::nullopt) {
  return {"whe_decisionsendpointAAAA", approved, by, reason, std::move(detail), 42};
}

}  // namespace

TEST_P(CardTransactionsTest, TheTenantsDecisionAppliesOnlyAfterTesorosOwnChecks) {
  cards::AuthorizationRequest request{1'000, "COP", {"online_purchase", {"Acme", "5812", "M1", "CO"}}};
  auto decide = [&](const cards::TenantDecision& decision, std::int64_t amount,
                    const std::string& id = "") {
    request.amount_minor = amount;
    return temp->store->write<cards::CardTransaction>([&](store::Tx& tx) {
      return cards::authorize(tx, k_tenant, card.id, request, now, &decision, id);
    });
  };
  // The endpoint approved: approved, the id it was told kept, the decision shown.
  auto approved = decide(tenant_decision(true, "endpoint", "webhook_approved"), 1'000,
                         "ctx_decisionstestidAAAAAA");
  expect_approved(approved);
  EXPECT_EQ(approved->id, "ctx_decisionstestidAAAAAA");
  EXPECT_EQ(approved->decision.by, "endpoint");
  EXPECT_EQ(approved->decision.reason, "webhook_approved");
  EXPECT_EQ(approved->decision.webhook_endpoint_id, "whe_decisionsendpointAAAA");
  EXPECT_EQ(approved->decision.duration_ms, 42);
  // Declined by it, with its reason; a timeout or an error falls back (decline: 91).
  auto declined = decide(tenant_decision(false, "endpoint", "webhook_declined", "no"), 1'000);
  expect_declined(declined, "webhook_declined", "05");
  EXPECT_EQ(declined->decline_reason_detail, "no");
  auto timed_out = decide(tenant_decision(false, "fallback", "webhook_timeout"), 1'000);
  expect_declined(timed_out, "webhook_timeout", "91");
  EXPECT_EQ(timed_out->decision.by, "fallback");
  auto fallback_approved = decide(tenant_decision(true, "fallback", "webhook_error"), 1'000);
  expect_approved(fallback_approved);
  EXPECT_EQ(fallback_approved->decision.reason, "webhook_error");
  // Approved by the endpoint, but the money went meanwhile: Tesoro's decline, the endpoint shown.
  auto poor = decide(tenant_decision(true, "endpoint", "webhook_approved"), 9'000);
  expect_declined(poor, "insufficient_funds", "51");
  EXPECT_EQ(poor->decision.by, "tesoro");
  EXPECT_EQ(poor->decision.webhook_endpoint_id, "whe_decisionsendpointAAAA");
  EXPECT_FALSE(poor->decline_reason_detail);
  EXPECT_EQ(prepaid().held, 2'000);  // the two approvals only
  // Read back, the decision is the one written; one without a decision is Tesoro's.
  auto read = temp->store->read<cards::CardTransaction>([&](store::Tx& tx) {
    return cards::get_card_transaction(tx, k_tenant, declined->id);
  });
  EXPECT_EQ(read->decision.reason, "webhook_declined");
  EXPECT_EQ(read->decline_reason_detail, "no");
  auto plain = authorize(500);
  expect_approved(plain);
  EXPECT_EQ(plain->decision.by, "tesoro");
  EXPECT_EQ(plain->decision.reason, "approved");
  EXPECT_FALSE(plain->decision.webhook_endpoint_id);
  EXPECT_FALSE(plain->decision.duration_ms);
}

TEST_P(CardTransactionsTest, WhatIsPutToTheEndpointIsWhatTesoroWouldApprove) {
  auto check = [&](std::int64_t amount, const std::string& channel) {
    cards::AuthorizationRequest request{amount, "COP", {channel, {"Acme", "5812", "M1", "CO"}}};
    return temp->store->read<bool>([&](store::Tx& tx) -> Result<bool> {
      return cards::approvable_authorization(tx, k_tenant, card.id, request, now).has_value();
    }).value();
  };
  EXPECT_TRUE(check(10'000, "online_purchase"));
  EXPECT_FALSE(check(10'001, "online_purchase"));  // more than the balance
  EXPECT_FALSE(check(100, "atm_withdrawal"));      // a virtual card's impossible channel
  auto held = authorize(4'000);
  expect_approved(held);
  EXPECT_FALSE(check(6'001, "online_purchase"));  // what is held is not available
  auto incrementable = [&](std::int64_t amount, std::optional<std::string> currency) {
    return temp->store->read<bool>([&](store::Tx& tx) -> Result<bool> {
      return cards::incrementable(tx, k_tenant, held->id, amount, currency, now).has_value();
    }).value();
  };
  EXPECT_TRUE(incrementable(6'000, "COP"));
  EXPECT_FALSE(incrementable(6'001, std::nullopt));
  EXPECT_FALSE(incrementable(0, std::nullopt));
  EXPECT_FALSE(incrementable(10, "USD"));
  // An increment the endpoint declines is a 422 and changes nothing.
  const cards::TenantDecision no = tenant_decision(false, "endpoint", "webhook_declined", "tip");
  auto refused = temp->store->write<cards::CardTransaction>([&](store::Tx& tx) {
    return cards::apply_step(tx, k_tenant, held->id, cards::Step::increment, 1'000, "COP", now,
                             &no);
  });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().first_code(), "authorization_declined");
  EXPECT_EQ(prepaid().held, 4'000);
}

TEST_P(CardTransactionsTest, WhatTheEndpointWasNotAskedAboutIsNeverApproved) {
  // The tenant has an authorization endpoint, and Tesoro's checks declined in the read before
  // asking; if they pass in the write (money came meanwhile), nothing is written: ask first.
  cards::AuthorizationRequest request{20'000, "COP", {"online_purchase", {"Acme", "5812", "M1", "CO"}}};
  auto write = [&](bool* unasked) {
    return temp->store->write<cards::CardTransaction>([&](store::Tx& tx) {
      return cards::authorize(tx, k_tenant, card.id, request, now, nullptr, "", unasked);
    });
  };
  bool unasked = false;
  auto declined = write(&unasked);  // 20,000 of a balance of 10,000: Tesoro declines it
  expect_declined(declined, "insufficient_funds", "51");
  EXPECT_FALSE(unasked);
  request.amount_minor = 5'000;  // now it would pass
  auto refused = write(&unasked);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().first_code(), "service_is_unavailable");
  EXPECT_TRUE(unasked);
  EXPECT_EQ(prepaid().held, 0);
  auto listed = temp->store->read<PageOf<cards::CardTransaction>>([&](store::Tx& tx) {
    return cards::list_card_transactions(tx, k_tenant, card.id, 0, 10);
  });
  EXPECT_EQ(listed->total_items, 1);  // the decline only
  // The same for an increment.
  auto held = authorize(1'000);
  expect_approved(held);
  unasked = false;
  auto grown = temp->store->write<cards::CardTransaction>([&](store::Tx& tx) {
    return cards::apply_step(tx, k_tenant, held->id, cards::Step::increment, 500, "COP", now,
                             nullptr, &unasked);
  });
  ASSERT_FALSE(grown.ok());
  EXPECT_TRUE(unasked);
  EXPECT_EQ(prepaid().held, 1'000);
}
