// Several nodes on one database, and the database going away under load.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <future>
#include <mutex>
#include <set>
#include <thread>

#include "harness.hpp"

using harness::Reply;
using harness::Request;
using harness::Server;
namespace json = boost::json;

namespace {

int count_external_id(const Server& server, const std::string& external_id) {
  int matches = 0;
  for (int page = 1;; ++page) {
    Reply reply = server.get("/v1/ledger/account_holders?page_size=500&page_number=" + std::to_string(page),
                             {server.bearer_core()});
    json::value body = reply.json();
    const json::array& items = body.at("account_holders").as_array();
    for (const auto& item : items) {
      if (item.at("external_id") == json::value(external_id)) ++matches;
    }
    if (items.size() < 500) return matches;
  }
}

void run_shell(const char* variable) {
  const char* command = std::getenv(variable);
  ASSERT_NE(command, nullptr) << variable << " not set (scripts/postgres-temp sets it)";
  std::string line = std::string(command) + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(line.c_str()), 0) << line;
}

}  // namespace

TEST(TwoNodes, IdempotentPostSentToBothAtOnceHasOneEffect) {
  Server server;
  int second = server.start_extra_node();
  for (int round = 0; round < 10; ++round) {
    std::string key = harness::new_uuid();
    std::string external_id = "fleet-" + key;
    Request request{"POST", "/v1/ledger/account_holders", harness::account_holder_body(external_id),
                    {server.bearer_core(), "x-idempotency-key: " + key}};
    auto on_first = std::async(std::launch::async, [&] { return server.send(request); });
    auto on_second = std::async(std::launch::async, [&] { return server.send_to(second, request); });
    Reply a = on_first.get();
    Reply b = on_second.get();
    for (const Reply* reply : {&a, &b}) {
      EXPECT_TRUE(reply->status == 201 || reply->error_code() == "idempotency_key_in_use")
          << reply->status << " " << reply->body;
    }
    EXPECT_TRUE(a.status == 201 || b.status == 201);
    if (a.status == 201 && b.status == 201) {
      EXPECT_EQ(a.body, b.body);  // the later one is a replay of the first, byte for byte
    }
    EXPECT_EQ(count_external_id(server, external_id), 1) << "round " << round;
  }
}

TEST(TwoNodes, RevocationAndTokensAreSharedThroughTheDatabase) {
  Server server;
  int second = server.start_extra_node();
  std::string tenant(server.credentials().at("tenant_id").as_string());
  json::object key = json::parse(server.command({"keys", "create", "--tenant", tenant, "--scopes",
                                                 "ledger:read", "--json"})).as_object();
  std::string header = "Authorization: Bearer " + std::string(key.at("api_key").as_string());
  Request list{"GET", "/v1/ledger/account_holders", "", {header}};
  EXPECT_EQ(server.send(list).status, 200);
  EXPECT_EQ(server.send_to(second, list).status, 200);
  server.command({"keys", "revoke", "--id", std::string(key.at("id").as_string())});
  EXPECT_EQ(server.send(list).status, 401);
  EXPECT_EQ(server.send_to(second, list).status, 401);

  // A refresh token issued by one node is redeemed on the other, once.
  const auto& c = server.credentials();
  Reply token = server.post("/api/v1/oauth/token",
                            json::serialize(json::object{{"grant_type", "client_credentials"},
                                                         {"client_id", c.at("client_id")},
                                                         {"client_secret", c.at("client_secret")}}));
  ASSERT_EQ(token.status, 200);
  std::string refresh = json::serialize(json::object{{"grant_type", "refresh_token"},
                                                     {"refresh_token", token.json().at("refresh_token")}});
  EXPECT_EQ(server.send_to(second, {"POST", "/api/v1/oauth/token", refresh, {}}).status, 200);
  EXPECT_EQ(server.send({"POST", "/api/v1/oauth/token", refresh, {}}).status, 400);
}

TEST(PostgresOutage, Answers503WhileDownAndRecoversByItself) {
  if (!harness::is_postgres()) GTEST_SKIP() << "PostgreSQL only";
  Server server;
  std::vector<std::string> auth = {server.bearer_core()};
  ASSERT_EQ(server.get("/v1/ledger/account_holders", auth).status, 200);
  run_shell("TESORO_TEST_PG_STOP");
  Reply down = server.get("/v1/ledger/account_holders", auth);
  EXPECT_EQ(down.status, 503);
  EXPECT_EQ(down.error_code(), "service_is_unavailable");
  EXPECT_EQ(down.header("retry-after"), "1");
  Reply post = server.post("/v1/ledger/account_holders", harness::account_holder_body("while-down"), auth);
  EXPECT_EQ(post.status, 503);
  Reply not_ready = server.get("/readyz");
  EXPECT_EQ(not_ready.status, 503);
  EXPECT_EQ(not_ready.header("retry-after"), "1");
  EXPECT_EQ(server.get("/healthz").status, 200);  // alive, not ready
  run_shell("TESORO_TEST_PG_START");
  // No restart of the node: the pool reconnects on next use.
  EXPECT_EQ(server.get("/readyz").status, 200);
  EXPECT_EQ(server.get("/v1/ledger/account_holders", auth).status, 200);
  EXPECT_EQ(server.post("/v1/ledger/account_holders", harness::account_holder_body("after-" + harness::new_uuid()), auth).status, 201);
}

// Every pooled connection cut while idle (its backend ended by the server, as a restart does):
// the next readiness check, read and write each reopen the one they take and are answered as if
// nothing happened. The pool hands out the connection released last, so the first /readyz takes
// a cut one.
TEST(PostgresOutage, PooledConnectionsCutWhileIdleAreReopenedOnNextUse) {
  if (!harness::is_postgres()) GTEST_SKIP() << "PostgreSQL only";
  Server server;
  std::vector<std::string> auth = {server.bearer_core()};
  ASSERT_EQ(server.get("/readyz").status, 200);
  ASSERT_EQ(server.get("/v1/ledger/account_holders", auth).status, 200);
  std::string ended = server.sql(
      "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity "
      "WHERE datname = current_database() AND pid <> pg_backend_pid()");
  ASSERT_NE(ended, "0\n") << "no connection of the node was found to cut";
  for (int i = 0; i < 3; ++i) EXPECT_EQ(server.get("/readyz").status, 200) << "check " << i;
  EXPECT_EQ(server.get("/v1/ledger/account_holders", auth).status, 200);
  EXPECT_EQ(server.post("/v1/ledger/account_holders",
                        harness::account_holder_body("after-cut-" + harness::new_uuid()), auth)
                .status,
            201);
}

// The same with many pooled connections in use at once, before and after the cut, each time by
// the server's restart (immediate: its backends go without a word, as in a crash): each request
// that takes a cut connection (its unit's first statement, a read's or a write's) reopens it.
TEST(PostgresOutage, ConcurrentRequestsOnPooledConnectionsCutWhileIdleAreAnswered) {
  if (!harness::is_postgres()) GTEST_SKIP() << "PostgreSQL only";
  Server server;
  std::vector<std::string> auth = {server.bearer_core()};
  // Account holders first; after the restart, accounts, written first: the write unit's first
  // statement is one that connection has not run yet, which it prepares (a round trip of its own,
  // the first thing sent on the cut socket).
  auto concurrently = [&](const std::string& round, bool accounts = false) {
    std::vector<std::future<std::pair<int, int>>> replies;
    for (int i = 0; i < 12; ++i) {
      replies.push_back(std::async(std::launch::async, [&, i] {
        const std::string name = round + "-" + std::to_string(i);
        int read = accounts ? 200 : server.get("/v1/ledger/account_holders", auth).status;
        int write = server.post(accounts ? "/v1/ledger/accounts" : "/v1/ledger/account_holders",
                                accounts ? R"({"name":")" + name +
                                               R"(","type":"savings_account","currency":"COP"})"
                                         : harness::account_holder_body(name),
                                auth)
                        .status;
        if (accounts) read = server.get("/v1/accounts", auth).status;
        return std::pair{read, write};
      }));
    }
    for (auto& reply : replies) {
      auto [read, write] = reply.get();
      EXPECT_EQ(read, 200) << round;
      EXPECT_EQ(write, 201) << round;
    }
  };
  concurrently("before-" + harness::new_uuid());
  std::string ended = server.sql(
      "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity "
      "WHERE datname = current_database() AND pid <> pg_backend_pid()");
  ASSERT_NE(ended, "0\n");
  concurrently("after-cut-" + harness::new_uuid());
  run_shell("TESORO_TEST_PG_STOP");
  run_shell("TESORO_TEST_PG_START");
  concurrently("after-restart-" + harness::new_uuid(), /*accounts=*/true);
}

// A primary cut off from its synchronous standby (synchronous_standby_names naming one that never
// connects, on the whole test server, put back at the end): a write is answered 503 after the
// bounded wait, though its commit stands on this server and shows in reads; a retry with its key
// is not answered from that commit (a failover could take it back) until the standby has it.
TEST(PostgresOutage, ARetryIsNotAcknowledgedFromACommitTheStandbyLacks) {
  if (!harness::is_postgres()) GTEST_SKIP() << "PostgreSQL only";
  Server server;
  auto set_standbys = [&](const std::string& value) {
    server.sql(value.empty() ? "ALTER SYSTEM RESET synchronous_standby_names"
                             : "ALTER SYSTEM SET synchronous_standby_names = '" + value + "'");
    server.sql("SELECT pg_reload_conf()");
    for (int i = 0; i < 100 && server.sql("SHOW synchronous_standby_names") != value + "\n"; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  };
  struct PutBack {
    std::function<void()> undo;
    ~PutBack() { undo(); }
  } put_back{[&] { set_standbys(""); }};
  set_standbys("nobody");
  std::string key = harness::new_uuid();
  std::string external_id = "cut-off-" + key;
  Request create{"POST", "/v1/ledger/account_holders", harness::account_holder_body(external_id),
                 {server.bearer_core(), "x-idempotency-key: " + key}};
  Reply first = server.send(create);
  ASSERT_EQ(first.status, 503) << first.body;
  EXPECT_EQ(first.header("retry-after"), "1");
  EXPECT_EQ(server.get("/readyz").status, 503);
  EXPECT_EQ(count_external_id(server, external_id), 1) << "the commit stands on this server";
  Reply retry = server.send(create);
  EXPECT_EQ(retry.status, 503) << "answered from a commit the standby lacks: " << retry.body;
  EXPECT_EQ(retry.header("idempotent-replayed"), "");

  set_standbys("");
  Reply replay = server.send(create);
  ASSERT_EQ(replay.status, 201) << replay.body;
  EXPECT_EQ(replay.header("idempotent-replayed"), "true");
  EXPECT_EQ(count_external_id(server, external_id), 1);
}

TEST(PostgresOutage, KillDuringLoadLosesNoAcknowledgedWrite) {
  if (!harness::is_postgres()) GTEST_SKIP() << "PostgreSQL only";
  Server server;
  std::mutex mutex;
  std::set<std::string> acknowledged;
  std::atomic<bool> stop{false};
  std::atomic<int> unavailable{0}, other{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 6; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; !stop.load() && i < 5000; ++i) {
        std::string external_id = "load-" + std::to_string(t) + "-" + std::to_string(i);
        Reply reply = server.post("/v1/ledger/account_holders", harness::account_holder_body(external_id), {server.bearer_core()});
        if (reply.status == 201) {
          std::lock_guard lock(mutex);
          acknowledged.insert(std::string(reply.json().at("id").as_string()));
        } else if (reply.status == 503) {
          ++unavailable;
        } else {
          ++other;
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  run_shell("TESORO_TEST_PG_STOP");  // immediate: like a crash
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  run_shell("TESORO_TEST_PG_START");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  stop = true;
  for (auto& writer : writers) writer.join();
  EXPECT_GT(unavailable.load(), 0) << "the outage was not observed";
  EXPECT_EQ(other.load(), 0);
  ASSERT_FALSE(acknowledged.empty());
  for (const std::string& id : acknowledged) {
    Reply found = server.get("/v1/ledger/account_holders/" + id, {server.bearer_core()});
    ASSERT_EQ(found.status, 200) << "acknowledged write lost: " << id;
  }
  EXPECT_EQ(server.post("/v1/ledger/account_holders", harness::account_holder_body("after-load"), {server.bearer_core()}).status, 201);
}
