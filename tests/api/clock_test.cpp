// The sandbox clock over HTTP on both surfaces: read, advance (idempotent, validated), record
// timestamps that follow it, tenants isolated, absent in production.
#include <gtest/gtest.h>

#include <ctime>

#include "harness.hpp"

using harness::Reply;
using harness::Server;
namespace json = boost::json;

namespace {

// Seconds since the epoch of an ISO timestamp "YYYY-MM-DDTHH:MM:SS...Z" (UTC).
std::int64_t epoch_seconds(const json::value& iso) {
  std::string text(iso.as_string());
  std::tm parts{};
  EXPECT_NE(strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &parts), nullptr) << text;
  return static_cast<std::int64_t>(timegm(&parts));
}

std::int64_t real_now() { return static_cast<std::int64_t>(std::time(nullptr)); }

std::string advance_body(std::int64_t seconds) {
  return "{\"seconds\":" + std::to_string(seconds) + "}";
}

}  // namespace

TEST(SandboxClock, StartsAtRealTimeAndAdvancesOncePerIdempotencyKey) {
  Server server;
  Reply start = server.get("/v1/sandbox/clock", {server.bearer_core()});
  ASSERT_EQ(start.status, 200) << start.body;
  EXPECT_NEAR(epoch_seconds(start.json().at("now")), real_now(), 5);
  EXPECT_EQ(start.json().at("offset_seconds").as_int64(), 0);

  std::string key = "x-idempotency-key: " + harness::new_uuid();
  Reply moved = server.post("/v1/sandbox/clock/advance", advance_body(86400), {server.bearer_core(), key});
  ASSERT_EQ(moved.status, 200) << moved.body;
  EXPECT_NEAR(epoch_seconds(moved.json().at("now")), real_now() + 86400, 5);
  EXPECT_EQ(moved.json().at("offset_seconds").as_int64(), 86400);
  Reply replayed = server.post("/v1/sandbox/clock/advance", advance_body(86400), {server.bearer_core(), key});
  EXPECT_EQ(replayed.body, moved.body);
  EXPECT_EQ(replayed.header("idempotent-replayed"), "true");
  Reply after = server.get("/v1/sandbox/clock", {server.bearer_core()});
  EXPECT_EQ(after.json().at("offset_seconds").as_int64(), 86400) << "a replay must not advance again";

  // A token of any scope reads and advances the same clock on the participant surface.
  std::string token = "Authorization: Bearer " + server.access_token("tenant_accounts:readonly");
  Reply participant = server.get("/api/v1/sandbox/clock", {token});
  ASSERT_EQ(participant.status, 200) << participant.body;
  EXPECT_EQ(participant.json().at("offset_seconds").as_int64(), 86400);
  Reply moved_again = server.post("/api/v1/sandbox/clock/advance", advance_body(3600), {token});
  ASSERT_EQ(moved_again.status, 200) << moved_again.body;
  EXPECT_EQ(server.get("/v1/sandbox/clock", {server.bearer_core()}).json().at("offset_seconds").as_int64(),
            86400 + 3600);
}

TEST(SandboxClock, RecordsTakeTheTenantsTimeAndOtherTenantsKeepTheirs) {
  Server server;
  ASSERT_EQ(server.post("/v1/sandbox/clock/advance", advance_body(30 * 86400), {server.bearer_core()}).status, 200);
  Reply holder = server.post("/v1/ledger/account_holders", harness::account_holder_body("clock-1"),
                             {server.bearer_core()});
  ASSERT_EQ(holder.status, 201) << holder.body;
  EXPECT_NEAR(epoch_seconds(holder.json().at("inserted_at")), real_now() + 30 * 86400, 5);

  int code = 0;
  json::object other = json::parse(server.command({"tenant", "create", "--name", "other", "--json"}, &code)).as_object();
  ASSERT_EQ(code, 0);
  std::string other_key = "Authorization: Bearer " + std::string(other.at("api_key").as_string());
  EXPECT_EQ(server.get("/v1/sandbox/clock", {other_key}).json().at("offset_seconds").as_int64(), 0);
}

TEST(SandboxClock, BadAdvancesAreRefusedWithAPath) {
  Server& server = Server::shared();
  struct Case {
    std::string body;
    long status;
    std::string code;
  };
  for (const Case& bad : std::vector<Case>{{advance_body(0), 400, "validation_error"},
                                           {advance_body(-1), 400, "validation_error"},
                                           {advance_body(31536001), 400, "validation_error"},
                                           {R"({"seconds":"60"})", 400, "validation_error"},
                                           {R"({"seconds":1.5})", 400, "validation_error"},
                                           {R"({"seconds":60,"minutes":1})", 400, "validation_error"},
                                           {"{}", 422, "missing_field"}}) {
    Reply reply = server.post("/v1/sandbox/clock/advance", bad.body, {server.bearer_core()});
    EXPECT_EQ(reply.status, bad.status) << bad.body;
    EXPECT_EQ(reply.error_code(), bad.code) << bad.body;
  }
  EXPECT_EQ(server.get("/v1/sandbox/clock", {server.bearer_core()}).json().at("offset_seconds").as_int64(), 0);
  EXPECT_EQ(server.get("/v1/sandbox/clock").status, 401);
  EXPECT_EQ(server.get("/api/v1/sandbox/clock").error_code(), "missing_authorization_header");
}

TEST(SandboxClock, AbsentInProduction) {
  Server server({{"--environment", "production"}});
  for (const char* path : {"/v1/sandbox/clock", "/api/v1/sandbox/clock"}) {
    Reply read = server.get(path, {server.bearer_core()});
    EXPECT_EQ(read.status, 404) << path;
    EXPECT_EQ(read.error_code(), "route_not_found");
    Reply advance = server.post(std::string(path) + "/advance", advance_body(60), {server.bearer_core()});
    EXPECT_EQ(advance.status, 404) << path;
  }
}

// A node that keeps a credential's principal (app/credential_cache.hpp) keeps the tenant's clock
// offset with it: an advance made on another node must still be the clock of its next request,
// a read answered from the principal alone and a write alike.
TEST(SandboxClock, AnAdvanceOnOneNodeIsTheOtherNodesClockFromItsNextRequest) {
  if (!harness::is_postgres()) GTEST_SKIP() << "several nodes need PostgreSQL";
  Server server;
  int second = server.start_extra_node();
  harness::Request read{"GET", "/v1/sandbox/clock", "", {server.bearer_core()}};
  ASSERT_EQ(server.send_to(second, read).json().at("offset_seconds").as_int64(), 0);
  ASSERT_EQ(server.post("/v1/sandbox/clock/advance", advance_body(86400), {server.bearer_core()})
                .status,
            200);
  EXPECT_EQ(server.send_to(second, read).json().at("offset_seconds").as_int64(), 86400);

  ASSERT_EQ(server.post("/v1/sandbox/clock/advance", advance_body(86400), {server.bearer_core()})
                .status,
            200);
  Reply holder = server.send_to(second, {"POST", "/v1/ledger/account_holders",
                                         harness::account_holder_body("two-days"),
                                         {server.bearer_core()}});
  ASSERT_EQ(holder.status, 201) << holder.body;
  EXPECT_NEAR(epoch_seconds(holder.json().at("inserted_at")), real_now() + 2 * 86400, 5);
}
