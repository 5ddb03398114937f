// spending_controls: which rule refuses a purchase, the calendar windows of velocity limits,
// merchant_name patterns; and the default configuration group (configuration_groups).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "domain/cards/configuration_groups.hpp"
#include "domain/spending_controls/rules.hpp"
#include "domain/spending_controls/spending_controls.hpp"
#include "test_stores.hpp"

using namespace tesoro;
namespace sc = tesoro::spending_controls;

namespace {

sc::Purchase purchase(std::string channel, std::string name = "Exito Calle 80",
                      std::string mcc = "5411", std::string mid = "M123") {
  return {std::move(channel), {std::move(name), std::move(mcc), std::move(mid), "CO"}};
}

sc::SpendingControl control_with(sc::Rule rule) {
  sc::SpendingControl control;
  control.id = "spc_AAAAAAAAAAAAAAAAAAAAAA";
  control.currency_code = "COP";
  control.rules.push_back(std::move(rule));
  return control;
}

sc::Rule list_rule(std::string type, std::string operation, std::vector<std::string> values) {
  sc::Rule rule;
  rule.type = std::move(type);
  rule.operation = std::move(operation);
  rule.values = std::move(values);
  return rule;
}

sc::Rule pattern_rule(std::string pattern) {
  sc::Rule rule;
  rule.type = "merchant_name";
  rule.allow_pattern = std::move(pattern);
  return rule;
}

time::Micros at(const char* iso) { return time::parse_iso(iso).value(); }

}  // namespace

TEST(SpendingRules, NoRulesRefuseNothing) {
  sc::SpendingControl control;
  EXPECT_FALSE(sc::refusing_rule(control, purchase("atm_withdrawal")));
}

TEST(SpendingRules, CardUsageRefusesADisabledChannelOnly) {
  sc::Rule rule;
  rule.type = "card_usage";
  rule.disabled_card_usages = {"atm_withdrawal", "online_purchase"};
  auto control = control_with(rule);
  EXPECT_EQ(sc::refusing_rule(control, purchase("atm_withdrawal")), "card_usage");
  EXPECT_EQ(sc::refusing_rule(control, purchase("online_purchase")), "card_usage");
  EXPECT_FALSE(sc::refusing_rule(control, purchase("physical_purchase")));
}

TEST(SpendingRules, MccAllowListRefusesWhatIsNotListed) {
  auto control = control_with(list_rule("mcc", "allow_mccs", {"5411", "5812"}));
  EXPECT_FALSE(sc::refusing_rule(control, purchase("online_purchase", "x", "5812")));
  EXPECT_EQ(sc::refusing_rule(control, purchase("online_purchase", "x", "7995")), "mcc");
}

TEST(SpendingRules, MccBlockListRefusesWhatIsListed) {
  auto control = control_with(list_rule("mcc", "block_mccs", {"7995"}));
  EXPECT_EQ(sc::refusing_rule(control, purchase("online_purchase", "x", "7995")), "mcc");
  EXPECT_FALSE(sc::refusing_rule(control, purchase("online_purchase", "x", "5411")));
}

TEST(SpendingRules, MidAllowAndBlockLists) {
  auto allow = control_with(list_rule("mid", "allow_mids", {"M123"}));
  EXPECT_FALSE(sc::refusing_rule(allow, purchase("online_purchase", "x", "5411", "M123")));
  EXPECT_EQ(sc::refusing_rule(allow, purchase("online_purchase", "x", "5411", "M999")), "mid");
  auto block = control_with(list_rule("mid", "block_mids", {"M123"}));
  EXPECT_EQ(sc::refusing_rule(block, purchase("online_purchase", "x", "5411", "M123")), "mid");
  EXPECT_FALSE(sc::refusing_rule(block, purchase("online_purchase", "x", "5411", "m123")));
}

TEST(SpendingRules, MerchantNameMustMatchWhole) {
  auto control = control_with(pattern_rule("Exito.*"));
  EXPECT_FALSE(sc::refusing_rule(control, purchase("online_purchase", "Exito Calle 80")));
  // Anchored at both ends: a match inside the name is not enough.
  EXPECT_EQ(sc::refusing_rule(control, purchase("online_purchase", "Almacenes Exito")),
            "merchant_name");
  auto exact = control_with(pattern_rule("Exito"));
  EXPECT_EQ(sc::refusing_rule(exact, purchase("online_purchase", "Exito Calle 80")),
            "merchant_name");
  EXPECT_FALSE(sc::refusing_rule(exact, purchase("online_purchase", "Exito")));
  auto alternatives = control_with(pattern_rule("Exito|Carulla"));
  EXPECT_FALSE(sc::refusing_rule(alternatives, purchase("online_purchase", "Carulla")));
  EXPECT_EQ(sc::refusing_rule(alternatives, purchase("online_purchase", "ExitoCarulla")),
            "merchant_name");
  auto unicode = control_with(pattern_rule("Panader\\w+ Ñ\\w+"));
  EXPECT_FALSE(sc::refusing_rule(unicode, purchase("online_purchase", "Panadería Ñoño")));
}

TEST(SpendingRules, APatternThatBacktracksForeverRefusesQuickly) {
  auto control = control_with(pattern_rule("(a+)+b"));
  std::string name(40, 'a');
  auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(sc::refusing_rule(control, purchase("online_purchase", name)), "merchant_name");
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));
  EXPECT_FALSE(sc::refusing_rule(control, purchase("online_purchase", "aaab")));
}

TEST(SpendingRules, RulesAreCheckedInTypeOrder) {
  sc::SpendingControl control;
  control.rules.push_back(pattern_rule("Nobody"));
  control.rules.push_back(list_rule("mcc", "block_mccs", {"5411"}));
  sc::Rule usage;
  usage.type = "card_usage";
  usage.disabled_card_usages = {"online_purchase"};
  control.rules.push_back(usage);
  EXPECT_EQ(sc::refusing_rule(control, purchase("online_purchase")), "card_usage");
  EXPECT_EQ(sc::refusing_rule(control, purchase("physical_purchase")), "mcc");
  EXPECT_EQ(sc::refusing_rule(control, purchase("physical_purchase", "x", "1111")),
            "merchant_name");
}

TEST(SpendingRules, VelocityRulesAreNotJudgedHere) {
  sc::Rule velocity;
  velocity.type = "velocity";
  velocity.daily_minor = 1;
  EXPECT_FALSE(sc::refusing_rule(control_with(velocity), purchase("online_purchase")));
}

TEST(SpendingRules, PatternErrorsCarryTheCompilersMessage) {
  EXPECT_FALSE(sc::pattern_error("Exito.*"));
  auto error = sc::pattern_error("Exito(");
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("missing closing parenthesis"), std::string::npos) << *error;
  EXPECT_NE(error->find("offset 6"), std::string::npos) << *error;
  EXPECT_TRUE(sc::pattern_error("a\\C"));  // \C could split a UTF-8 character
}

TEST(SpendingWindows, DailyRunsFromMidnightToMidnightUtc) {
  auto window = sc::window_of(sc::Period::daily, at("2026-03-10T23:59:59.999999Z"));
  EXPECT_EQ(window.start, at("2026-03-10T00:00:00Z"));
  EXPECT_EQ(window.end, at("2026-03-11T00:00:00Z"));
  auto midnight = sc::window_of(sc::Period::daily, at("2026-03-11T00:00:00Z"));
  EXPECT_EQ(midnight.start, at("2026-03-11T00:00:00Z"));
  // Local offsets do not matter: 20:00 in Bogota on the 10th is the 11th in UTC.
  EXPECT_EQ(sc::window_of(sc::Period::daily, at("2026-03-10T20:00:00-05:00")).start,
            at("2026-03-11T00:00:00Z"));
}

TEST(SpendingWindows, WeeklyStartsOnMonday) {
  // 2026-03-09 is a Monday.
  EXPECT_EQ(sc::window_of(sc::Period::weekly, at("2026-03-09T00:00:00Z")).start,
            at("2026-03-09T00:00:00Z"));
  auto sunday = sc::window_of(sc::Period::weekly, at("2026-03-15T23:59:59Z"));
  EXPECT_EQ(sunday.start, at("2026-03-09T00:00:00Z"));
  EXPECT_EQ(sunday.end, at("2026-03-16T00:00:00Z"));
  // A week across a month and a year: Thursday 2026-01-01 is in the week of Monday 2025-12-29.
  auto new_year = sc::window_of(sc::Period::weekly, at("2026-01-01T12:00:00Z"));
  EXPECT_EQ(new_year.start, at("2025-12-29T00:00:00Z"));
  EXPECT_EQ(new_year.end, at("2026-01-05T00:00:00Z"));
}

TEST(SpendingWindows, MonthlyStartsOnTheFirst) {
  auto march = sc::window_of(sc::Period::monthly, at("2026-03-31T23:59:59Z"));
  EXPECT_EQ(march.start, at("2026-03-01T00:00:00Z"));
  EXPECT_EQ(march.end, at("2026-04-01T00:00:00Z"));
  auto december = sc::window_of(sc::Period::monthly, at("2026-12-15T08:00:00Z"));
  EXPECT_EQ(december.start, at("2026-12-01T00:00:00Z"));
  EXPECT_EQ(december.end, at("2027-01-01T00:00:00Z"));
}

TEST(SpendingWindows, LeapDay) {
  auto day = sc::window_of(sc::Period::daily, at("2028-02-29T10:00:00Z"));
  EXPECT_EQ(day.start, at("2028-02-29T00:00:00Z"));
  EXPECT_EQ(day.end, at("2028-03-01T00:00:00Z"));
  auto month = sc::window_of(sc::Period::monthly, at("2028-02-29T10:00:00Z"));
  EXPECT_EQ(month.start, at("2028-02-01T00:00:00Z"));
  EXPECT_EQ(month.end, at("2028-03-01T00:00:00Z"));
  EXPECT_EQ(sc::window_of(sc::Period::monthly, at("2027-02-28T10:00:00Z")).end,
            at("2027-03-01T00:00:00Z"));
  // Tuesday 2028-02-29: its week runs Monday 28 to Monday 6 March.
  auto week = sc::window_of(sc::Period::weekly, at("2028-02-29T10:00:00Z"));
  EXPECT_EQ(week.start, at("2028-02-28T00:00:00Z"));
  EXPECT_EQ(week.end, at("2028-03-06T00:00:00Z"));
}

TEST(SpendingWindows, PeriodNames) {
  EXPECT_STREQ(sc::to_string(sc::Period::daily), "daily");
  EXPECT_STREQ(sc::to_string(sc::Period::weekly), "weekly");
  EXPECT_STREQ(sc::to_string(sc::Period::monthly), "monthly");
}

class DefaultConfigurationGroup : public test_stores::EngineStoreTest {};

TEST_P(DefaultConfigurationGroup, IsMadeOnceEvenWhenAskedForAtOnce) {
  const std::string tenant = "ten_default_group";
  std::vector<std::string> ids(4);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    threads.emplace_back([&, i] {
      auto group = temp->store->write<cards::ConfigurationGroup>([&](store::Tx& tx) {
        return cards::default_configuration_group(tx, tenant, time::Micros{1'000'000});
      });
      ids[i] = group->id;
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::string& id : ids) EXPECT_EQ(id, ids.front());
  auto listed = temp->store->read<PageOf<cards::ConfigurationGroup>>([&](store::Tx& tx) {
    return cards::list_configuration_groups(tx, tenant, 0, 10);
  });
  ASSERT_EQ(listed->total_items, 1);
  EXPECT_TRUE(listed->items.front().is_default);
  EXPECT_EQ(listed->items.front().name, "Default");
  EXPECT_FALSE(listed->items.front().spending_control_id);
}

TESORO_ON_BOTH_ENGINES(DefaultConfigurationGroup);
