// Accounts are answered as JSON text written directly (api/ledger_json): the bytes must be what
// the contract's object serialises to, key order included, for every shape an account takes.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "api/ledger_json.hpp"

using namespace tesoro;
namespace json = boost::json;

namespace {

ledger::Account sample() {
  ledger::Account account;
  account.id = "acc_0123456789abcdefghijkl";
  account.name = "Caja \"menor\" \\ 2";  // characters that must be escaped
  account.number = "1234567890";
  account.type = "savings_account";
  account.currency = "COP";
  account.state = "active";
  account.balance_minor = 1'500'000;
  account.held_minor = 250'000;
  account.balance_updated_at = "2026-11-25T10:00:00.000000Z";
  account.inserted_at = "2026-11-01T09:00:00.000000Z";
  account.updated_at = "2026-11-02T09:00:00.000000Z";
  return account;
}

json::object balance(const ledger::Account& a) {
  auto money = [&](std::int64_t amount) { return json::object{{"amount", amount}, {"currency", a.currency}}; };
  return {{"available", money(a.balance_minor - a.held_minor)},
          {"held", money(a.held_minor)},
          {"current", money(a.balance_minor)},
          {"updated_at", a.balance_updated_at}};
}

}  // namespace

TEST(LedgerJson, AnAccountIsTheContractsObjectByteForByte) {
  ledger::Account account = sample();
  for (const std::optional<std::string>& holder :
       {std::optional<std::string>{}, std::optional<std::string>{"acch_0123456789abcdefghijkl"}}) {
    account.account_holder_id = holder;
    json::object expected{{"id", account.id},
                          {"name", account.name},
                          {"number", account.number},
                          {"provider", "tesoro"},
                          {"state", account.state},
                          {"type", account.type},
                          {"currency", account.currency},
                          {"account_holder_id", holder ? json::value(*holder) : json::value(nullptr)},
                          {"balance", balance(account)},
                          {"inserted_at", account.inserted_at},
                          {"updated_at", account.updated_at}};
    EXPECT_EQ(api::account_text(account), json::serialize(expected));
  }
}

TEST(LedgerJson, ATenantAccountIsTheContractsObjectWithAndWithoutBeneficiary) {
  ledger::Account account = sample();
  account.type = "receptor";
  json::object without{{"id", account.id},
                       {"number", account.number},
                       {"currency_code", account.currency},
                       {"type", account.type},
                       {"role", nullptr},
                       {"state", account.state},
                       {"beneficiary", json::object{}},
                       {"balance", balance(account)},
                       {"inserted_at", account.inserted_at},
                       {"updated_at", account.updated_at}};
  EXPECT_EQ(api::tenant_account_text(account), json::serialize(without));

  account.role = "receptor";
  account.beneficiary = ledger::Beneficiary{};
  account.beneficiary->document_number = "900123456";
  account.beneficiary->document_type = "NIT";
  account.beneficiary->full_name = "Comercio Ñandú S.A.S.";
  account.beneficiary->type = "legal";
  json::object with = without;
  with["role"] = "receptor";
  with["beneficiary"] = json::object{{"document_number", "900123456"},
                                     {"document_type", "NIT"},
                                     {"full_name", "Comercio Ñandú S.A.S."},
                                     {"type", "legal"}};
  EXPECT_EQ(api::tenant_account_text(account), json::serialize(with));
}
