// Which requests the app runs on the I/O thread (App::runs_inline): only those that never wait
// long. A write or a PostgreSQL read on an I/O thread would stall every connection it serves.
#include <gtest/gtest.h>

#include <string>

#include "app/app.hpp"
#include "test_stores.hpp"

using namespace tesoro;

namespace {

class InlineRequests : public test_stores::EngineStoreTest {
 protected:
  void SetUp() override {
    EngineStoreTest::SetUp();
    if (IsSkipped()) return;
    app::Config config;
    config.data_dir = temp->dir;
    app = std::make_unique<app::App>(config, std::move(temp->store),
                                     crypto::Sealer(std::string(32, 'k')));
  }
  bool runs_inline(const std::string& method, const std::string& target) const {
    http::Request request;
    request.method = method;
    request.target = target;
    return app->runs_inline(request);
  }
  std::unique_ptr<app::App> app;  // owns the fixture's store
};

}  // namespace

TEST_P(InlineRequests, OnlyRequestsThatNeverWaitRunOnTheIoThread) {
  bool sqlite = GetParam() == store::Engine::sqlite;
  EXPECT_TRUE(runs_inline("GET", "/healthz"));
  EXPECT_TRUE(runs_inline("GET", "/metrics"));
  EXPECT_TRUE(runs_inline("GET", "/no/such/route?x=1"));
  EXPECT_TRUE(runs_inline("HEAD", "/healthz"));
  // readyz asks the database; reads are WAL snapshots on SQLite, round trips on PostgreSQL.
  EXPECT_EQ(runs_inline("GET", "/readyz"), sqlite);
  EXPECT_EQ(runs_inline("GET", "/v1/accounts?page_size=10"), sqlite);
  EXPECT_EQ(runs_inline("HEAD", "/v1/accounts"), sqlite);
  // The console's pages come from memory; its API reads the session (and proxies reads).
  EXPECT_TRUE(runs_inline("GET", "/console/"));
  EXPECT_TRUE(runs_inline("GET", "/console/js/app.js"));
  EXPECT_EQ(runs_inline("GET", "/console/api/session"), sqlite);
  EXPECT_EQ(runs_inline("GET", "/console/api/v1/accounts"), sqlite);
  EXPECT_FALSE(runs_inline("POST", "/console/api/session"));
  // Writes wait for their commit: never on the I/O thread.
  EXPECT_FALSE(runs_inline("POST", "/v1/ledger/account_holders"));
  EXPECT_FALSE(runs_inline("PATCH", "/api/v1/collections/bbcol_0123456789012345678901"));
  EXPECT_FALSE(runs_inline("DELETE", "/v1/webhook_endpoints/whe_0123456789012345678901"));
  EXPECT_FALSE(runs_inline("POST", "/healthz"));  // a 405, but handled like any write
}

TESORO_ON_BOTH_ENGINES(InlineRequests);
