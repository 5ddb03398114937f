// Accepted currencies come from `serve --currencies` / `--card-currencies`, checked at start.
#include <gtest/gtest.h>

#include "harness.hpp"

using harness::Reply;
using harness::Server;

TEST(Currencies, DefaultLedgerCurrencyIsCopOnly) {
  Reply refused = Server::shared().post(
      "/v1/ledger/accounts", R"({"name":"u","type":"savings_account","currency":"USD"})",
      {Server::shared().bearer_core()});
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(refused.error_code(), "validation_error");
  EXPECT_EQ(refused.json().at("errors").at(0).at("path").as_string(), "currency");
}

TEST(Currencies, ConfiguredCurrenciesAreAccepted) {
  Server server({{"--currencies", "COP,USD"}});
  Reply opened = server.post("/v1/ledger/accounts",
                             R"({"name":"u","type":"savings_account","currency":"USD"})",
                             {server.bearer_core()});
  ASSERT_EQ(opened.status, 201) << opened.body;
  EXPECT_EQ(opened.json().at("currency").as_string(), "USD");
  std::string id(opened.json().at("id").as_string());
  Reply funded = server.post("/v1/sandbox/accounts/" + id + "/fund",
                             R"({"amount":{"amount":700,"currency":"USD"}})",
                             {server.bearer_core()});
  EXPECT_EQ(funded.status, 201) << funded.body;
  Reply euro = server.post("/v1/ledger/accounts",
                           R"({"name":"e","type":"savings_account","currency":"EUR"})",
                           {server.bearer_core()});
  EXPECT_EQ(euro.status, 400);
}

TEST(Currencies, AnUnknownCurrencyStopsTheServerAtStart) {
  Server& server = Server::shared();
  // `--listen nowhere` makes a serve that got past its flags exit 1 instead of serving; a
  // refused flag exits with CLI11's validation code, 105.
  int code = 0;
  server.command({"serve", "--listen", "nowhere", "--currencies", "COP,XYZ"}, &code);
  EXPECT_EQ(code, 105);
  server.command({"serve", "--listen", "nowhere", "--card-currencies", "usd"}, &code);
  EXPECT_EQ(code, 105);
  server.command({"serve", "--listen", "nowhere", "--currencies", "COP,CLP"}, &code);
  EXPECT_EQ(code, 1);
}
