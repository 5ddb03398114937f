// The foundation as a client sees it: envelope, routing, limits, auth, idempotency, operations.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <future>
#include <thread>

#include "core/limits.hpp"
#include "harness.hpp"

using harness::Reply;
using harness::Server;
namespace json = boost::json;

namespace {

void expect_envelope(const Reply& reply, long status, const std::string& code) {
  EXPECT_EQ(reply.status, status) << reply.body;
  json::value body = reply.json();
  ASSERT_TRUE(body.is_object()) << reply.body;
  const json::object& envelope = body.as_object();
  std::string expected_code = std::to_string(status) + " ";
  EXPECT_EQ(std::string(envelope.at("code").as_string()).substr(0, 4), expected_code);
  EXPECT_FALSE(envelope.at("message").as_string().empty());
  EXPECT_EQ(std::string(envelope.at("id").as_string()).substr(0, 4), "log_");
  const json::array& errors = envelope.at("errors").as_array();
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0].at("error_code").as_string(), code) << reply.body;
  EXPECT_TRUE(errors[0].as_object().contains("message"));
  EXPECT_TRUE(errors[0].as_object().contains("path"));
  EXPECT_TRUE(errors[0].as_object().contains("url"));
}

}  // namespace

TEST(Operations, HealthzAndReadyzAnswer) {
  Server& server = Server::shared();
  Reply health = server.get("/healthz");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.json().at("status").as_string(), "ok");
  EXPECT_FALSE(health.header("x-request-id").empty());
  Reply ready = server.get("/readyz");
  EXPECT_EQ(ready.status, 200);
}

TEST(Operations, MetricsInPrometheusFormat) {
  Server& server = Server::shared();
  server.get("/healthz");
  server.post("/v1/ledger/account_holders", harness::account_holder_body(harness::new_uuid()), {server.bearer_core()});
  Reply metrics = server.get("/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.header("content-type").find("text/plain"), std::string::npos);
  EXPECT_NE(metrics.body.find("tesoro_http_requests_total{route=\"/healthz\",method=\"GET\",status=\"200\"}"),
            std::string::npos);
  EXPECT_NE(metrics.body.find("tesoro_http_request_duration_seconds_bucket"), std::string::npos);
  EXPECT_NE(metrics.body.find("tesoro_store_commit_batch_units_count"), std::string::npos);
  EXPECT_NE(metrics.body.find("tesoro_store_write_queue_depth"), std::string::npos);
}

namespace {

// The threads for batches a server on this machine runs: two per core on SQLite (at least one
// core counted, as the server does), none on PostgreSQL.
int expected_batch_threads() {
  if (harness::is_postgres()) return 0;
  return tesoro::limits::k_bulk_workers_per_core_sqlite *
         static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
}

}  // namespace

// Handler threads follow the engine unless --workers says otherwise: 64 on SQLite (waiting
// handlers make larger group commits), one per pooled connection (16) on PostgreSQL. On SQLite
// batches have two threads per core besides (limits::k_bulk_workers_per_core_sqlite), whatever
// --workers says; on PostgreSQL none (batches go to the handlers).
TEST(Operations, HandlerThreadsFollowTheEngineUnlessGiven) {
  auto gauge = [](const Reply& metrics, const std::string& metric) {
    const std::string name = "\n" + metric + " ";
    auto at = metrics.body.find(name);
    return at == std::string::npos ? -1 : std::stoi(metrics.body.substr(at + name.size()));
  };
  const int batch_threads = expected_batch_threads();
  harness::ServerOptions by_engine;
  by_engine.engine_default_workers = true;
  {
    Server server(by_engine);
    const Reply metrics = server.get("/metrics");
    EXPECT_EQ(gauge(metrics, "tesoro_http_handler_threads"), harness::is_postgres() ? 16 : 64);
    EXPECT_EQ(gauge(metrics, "tesoro_http_batch_threads"), batch_threads);
  }
  harness::ServerOptions given;
  given.extra_args = {"--workers", "7"};
  Server server(given);
  const Reply metrics = server.get("/metrics");
  EXPECT_EQ(gauge(metrics, "tesoro_http_handler_threads"), 7);
  EXPECT_EQ(gauge(metrics, "tesoro_http_batch_threads"), batch_threads);
}

namespace {

// Each thread of a process by name: its nice value (the 19th field of /proc/PID/task/TID/stat;
// the name, the second, is in parentheses and may hold spaces).
std::multimap<std::string, int> thread_nice_values(int pid) {
  std::multimap<std::string, int> found;
  for (const auto& task : std::filesystem::directory_iterator(
           "/proc/" + std::to_string(pid) + "/task")) {
    std::ifstream file(task.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    auto open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;  // the thread ended
    std::istringstream rest(stat.substr(close + 2));
    std::string field;
    for (int index = 3; index < 19 && rest >> field; ++index) {
    }
    int nice = 0;
    if (rest >> nice) found.emplace(stat.substr(open + 1, close - open - 1), nice);
  }
  return found;
}

}  // namespace

TEST(Operations, OnSqliteBatchesAndBackgroundWorkRunBehindTheWriter) {
  Server server;
  // A batch route and another write, each answered (401) by a handler thread of its kind.
  EXPECT_EQ(server.post("/api/v1/collections", "{}").status, 401);
  EXPECT_EQ(server.post("/api/v1/outgoing_transfers", "{}").status, 401);
  EXPECT_EQ(server.post("/v1/ledger/account_holders", "{}").status, 401);
  std::multimap<std::string, int> threads = thread_nice_values(server.pid());
  std::map<std::string, std::set<int>> nice_by_name;
  for (const auto& [name, nice] : threads) nice_by_name[name].insert(nice);
  const int started_nice = getpriority(PRIO_PROCESS, 0);  // the server inherits this test's
  const std::set<int> as_started{started_nice};
  const std::set<int> behind{
      std::min(started_nice + tesoro::limits::k_sqlite_behind_writer_nice, 19)};
  EXPECT_EQ(nice_by_name["http-io"], as_started);
  EXPECT_EQ(nice_by_name["http-worker"], as_started);
  if (harness::is_postgres()) {  // no writer of its own: every thread keeps its priority
    EXPECT_EQ(threads.count("sqlite-writer"), 0U);
    EXPECT_EQ(threads.count("http-bulk"), 0U) << "batches go to the other handlers";
    EXPECT_EQ(nice_by_name["worker"], as_started);
    return;
  }
  EXPECT_EQ(nice_by_name["sqlite-writer"], as_started);
  EXPECT_EQ(nice_by_name["sqlite-checkpt"], behind);
  EXPECT_EQ(nice_by_name["http-bulk"], behind);
  EXPECT_EQ(nice_by_name["worker"], behind);
  EXPECT_GE(threads.count("http-bulk"), 1U);
  EXPECT_LE(threads.count("http-bulk"), static_cast<std::size_t>(expected_batch_threads()));
  EXPECT_GE(threads.count("worker"), 5U);
}

TEST(Operations, ServesOpenApiDescription) {
  Reply reply = Server::shared().get("/openapi.yaml");
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body.rfind("openapi: 3.1", 0), 0u);
  EXPECT_NE(reply.body.find("/v1/ledger/account_holders"), std::string::npos);
  EXPECT_NE(reply.body.find("/api/v1/oauth/token"), std::string::npos);
}

TEST(Routing, UnknownRouteIs404Envelope) {
  Server& server = Server::shared();
  Reply reply = server.get("/v1/nothing/here");
  expect_envelope(reply, 404, "route_not_found");
  std::string log_id(reply.json().at("id").as_string());
  EXPECT_NE(server.log_text().find(log_id), std::string::npos) << "error id not in the log";
}

TEST(Routing, WrongMethodIs405WithAllow) {
  Reply reply = Server::shared().send({"DELETE", "/healthz", "", {}});
  expect_envelope(reply, 405, "method_not_allowed");
  EXPECT_EQ(reply.header("allow"), "GET");
}

TEST(Limits, BodyOverOneMebibyteIs413) {
  Server& server = Server::shared();
  std::string big(1024 * 1024 + 10, 'a');
  Reply reply = server.post("/v1/ledger/account_holders", big, {server.bearer_core()});
  expect_envelope(reply, 413, "payload_too_large");
  EXPECT_EQ(server.get("/healthz").status, 200);
}

// Bodies larger than the room the read buffer takes for one (limits::k_body_read_buffer_bytes),
// then a small request, all in one write on one connection: each is read whole and answered
// in order (the room is given back between requests and taken again).
TEST(Limits, LargeBodiesAndPipelinedRequestsAreReadWholeOnOneConnection) {
  Server& server = Server::shared();
  auto post = [&](const std::string& name) {
    const std::string body = R"({"name":")" + name +
                             R"(","type":"savings_account","currency":"COP")" +
                             std::string(150'000, ' ') + "}";
    return "POST /v1/ledger/accounts HTTP/1.1\r\nHost: x\r\n" + server.bearer_core() +
           "\r\nContent-Type: application/json\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body;
  };
  const std::string answer =
      server.raw(post("pipelined one") + post("pipelined two") +
                     "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                 10'000);
  const std::size_t first = answer.find("HTTP/1.1 201");
  ASSERT_EQ(first, 0u) << answer.substr(0, 400);
  const std::size_t second = answer.find("HTTP/1.1 201", first + 1);
  ASSERT_NE(second, std::string::npos) << answer;
  EXPECT_NE(answer.find("pipelined one"), std::string::npos) << answer;
  EXPECT_GT(answer.find("pipelined two"), second) << answer;
  EXPECT_NE(answer.find("HTTP/1.1 200", second), std::string::npos) << answer;
}

TEST(Limits, HeadAnswersWithoutBodyAndExpectContinueIsHonoured) {
  Server& server = Server::shared();
  std::string answer = server.raw("HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  // Two responses and exactly one body: the HEAD's bytes never leak into the next answer.
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
  EXPECT_NE(answer.find("HTTP/1.1 200", 5), std::string::npos) << answer;
  std::size_t bodies = 0;
  for (std::size_t at = answer.find("{\"status\""); at != std::string::npos; at = answer.find("{\"status\"", at + 1)) ++bodies;
  EXPECT_EQ(bodies, 1u) << answer;
  auto started = std::chrono::steady_clock::now();
  Reply created = server.post("/v1/ledger/accounts", R"({"name":"e","type":"savings_account","currency":"COP"})",
                              {server.bearer_core(), "Expect: 100-continue"});
  EXPECT_EQ(created.status, 201);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(900));
}

// The response head is written by hand (http/server.cpp): Content-Length on every answer (for
// HEAD, the length a GET would have), and Connection as each protocol version wants it.
TEST(Limits, ConnectionAndLengthFollowTheProtocolVersion) {
  Server& server = Server::shared();
  const std::string get10 = "GET /healthz HTTP/1.0\r\n";
  // HTTP/1.0 asking to stay open: told so, and the second request is answered on it.
  std::string kept = server.raw(get10 + "Connection: keep-alive\r\n\r\n" + get10 +
                                "Connection: keep-alive\r\n\r\n", 1000);
  EXPECT_EQ(kept.rfind("HTTP/1.0 200 OK\r\n", 0), 0u) << kept;
  EXPECT_NE(kept.find("Connection: keep-alive\r\n"), std::string::npos) << kept;
  EXPECT_NE(kept.find("HTTP/1.0 200", 10), std::string::npos) << kept;
  // HTTP/1.0 by default closes after one answer, without a Connection header.
  std::string closed = server.raw(get10 + "\r\n" + get10 + "\r\n");
  EXPECT_EQ(closed.rfind("HTTP/1.0 200 OK\r\n", 0), 0u) << closed;
  EXPECT_EQ(closed.find("HTTP/1.0 200", 10), std::string::npos) << closed;
  EXPECT_EQ(closed.find("Connection:"), std::string::npos) << closed;
  EXPECT_NE(closed.find("Content-Length: 15\r\n\r\n{\"status\":\"ok\"}"), std::string::npos) << closed;
  // HTTP/1.1 asking to close: told so, one answer only.
  std::string last = server.raw("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                                "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(last.find("Connection: close\r\n"), std::string::npos) << last;
  EXPECT_EQ(last.find("HTTP/1.1 200", 10), std::string::npos) << last;
  // HEAD: the GET's length, no body.
  std::string head = server.raw("HEAD /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_NE(head.find("Content-Length: 15\r\n"), std::string::npos) << head;
  EXPECT_EQ(head.find("{"), std::string::npos) << head;
}

TEST(Limits, EnormousHeadersAreRefusedWithEnvelope) {
  Server& server = Server::shared();
  Reply reply = server.get("/healthz", {"X-Big: " + std::string(64 * 1024, 'b')});
  expect_envelope(reply, 431, "headers_too_large");
  EXPECT_EQ(server.get("/healthz").status, 200);
}

TEST(Limits, MalformedHttpGetsEnvelopeNotCrash) {
  Server& server = Server::shared();
  std::string answer = server.raw("GARBAGE\r\n\r\n");
  EXPECT_NE(answer.find("400"), std::string::npos) << answer;
  EXPECT_NE(answer.find("validation_error"), std::string::npos) << answer;
  // The request's bytes with the NUL, its length from the array (found by ASan: a length
  // written by hand read one byte past the literal).
  static constexpr char k_nul_request[] = "GET /he\0althz HTTP/1.1\r\nHost: x\r\n\r\n";
  std::string nul = server.raw(std::string(k_nul_request, sizeof k_nul_request - 1));
  EXPECT_EQ(nul.find("500"), std::string::npos) << nul;
  EXPECT_EQ(server.get("/healthz").status, 200);
}

// Request smuggling (RFC 9112 section 6.3): a body whose length the server and a proxy could read
// differently is refused with 400 and the connection closed, so nothing after it is read as a
// request of its own.
TEST(Limits, TransferEncodingOtherThanChunkedIsRefusedAndClosesTheConnection) {
  Server& server = Server::shared();
  const std::string hidden = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  for (const std::string& coding : {std::string("xchunked"), std::string("chunked, identity"),
                                    std::string("identity"), std::string("gzip")}) {
    std::string answer = server.raw("POST /v1/ledger/account_holders HTTP/1.1\r\nHost: x\r\n"
                                    "Transfer-Encoding: " + coding + "\r\n\r\n" + hidden);
    EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << coding << ": " << answer;
    EXPECT_NE(answer.find("the only Transfer-Encoding accepted is chunked"), std::string::npos)
        << answer;
    EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer;
    EXPECT_EQ(answer.find("HTTP/1.1", 5), std::string::npos) << coding << ": a second answer";
  }
  // Two Transfer-Encoding fields, or one with a Content-Length, are refused too.
  std::string twice = server.raw("POST /v1/ledger/account_holders HTTP/1.1\r\nHost: x\r\n"
                                 "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"
                                 "0\r\n\r\n" + hidden);
  EXPECT_EQ(twice.rfind("HTTP/1.1 400", 0), 0u) << twice;
  EXPECT_EQ(twice.find("HTTP/1.1", 5), std::string::npos) << twice;
  std::string both = server.raw("POST /v1/ledger/account_holders HTTP/1.1\r\nHost: x\r\n"
                                "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"
                                "0\r\n\r\n" + hidden);
  EXPECT_EQ(both.rfind("HTTP/1.1 400", 0), 0u) << both;
  EXPECT_EQ(both.find("HTTP/1.1", 5), std::string::npos) << both;
  // chunked alone is read as chunks: both requests are answered.
  std::string chunked = server.raw("GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n"
                                   "\r\n0\r\n\r\n" + hidden, 1000);
  EXPECT_EQ(chunked.rfind("HTTP/1.1 200", 0), 0u) << chunked;
  EXPECT_NE(chunked.find("HTTP/1.1 200", 5), std::string::npos) << chunked;
}

// RFC 9112 section 3.2: an HTTP/1.1 request without exactly one Host is a 400.
TEST(Limits, AnHttp11RequestNeedsExactlyOneHost) {
  Server& server = Server::shared();
  std::string none = server.raw("GET /healthz HTTP/1.1\r\n\r\n");
  EXPECT_EQ(none.rfind("HTTP/1.1 400", 0), 0u) << none;
  EXPECT_NE(none.find("exactly one Host header"), std::string::npos) << none;
  std::string two = server.raw("GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n");
  EXPECT_EQ(two.rfind("HTTP/1.1 400", 0), 0u) << two;
  // HTTP/1.0 has no such rule.
  std::string old = server.raw("GET /healthz HTTP/1.0\r\n\r\n");
  EXPECT_EQ(old.rfind("HTTP/1.0 200", 0), 0u) << old;
}

TEST(Limits, SlowClientDoesNotBlockOthers) {
  Server& server = Server::shared();
  // A client that sends half a request and stalls; others are served meanwhile.
  auto stalled = std::async(std::launch::async, [&] {
    return server.raw("POST /v1/ledger/account_holders HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{", 1500);
  });
  for (int i = 0; i < 20; ++i) EXPECT_EQ(server.get("/healthz").status, 200);
  stalled.wait();
}

TEST(Json, BadBodiesAre400WithPath) {
  Server& server = Server::shared();
  auto key = server.bearer_core();
  std::vector<std::string> bodies = {
      "{", "[]", "nul", "{\"address\":", std::string(200, '[') + std::string(200, ']'),
      "{\"external_id\":\"\xff\xfe\"}", "{\"external_id\":99999999999999999999999999}",
      "\"string\"", "{\"a\":1}{", "{\"external_id\":\"a\",\"external_id\":\"b\"}",
      "{\"address\":{\"city\":\"a\",\"city\":\"b\"}}"};
  for (const std::string& body : bodies) {
    Reply reply = server.post("/v1/ledger/account_holders", body, {key});
    expect_envelope(reply, 400, "validation_error");
  }
}

TEST(Json, AllProblemsListedWithPaths) {
  Server& server = Server::shared();
  Reply reply = server.post(
      "/v1/ledger/account_holders",
      R"({"address":{"city":5,"country":"CO","line_1":"x","state":"DC","zip_code":"1"},"external_id":"x","surprise":1})",
      {server.bearer_core()});
  EXPECT_EQ(reply.status, 400);
  std::set<std::string> paths;
  json::value parsed = reply.json();
  for (const auto& item : parsed.at("errors").as_array()) {
    paths.insert(std::string(item.at("path").as_string()) + "=" +
                 std::string(item.at("error_code").as_string()));
  }
  EXPECT_TRUE(paths.count("address.city=validation_error"));
  EXPECT_TRUE(paths.count("surprise=validation_error"));
  EXPECT_TRUE(paths.count("person=missing_field")) << reply.body;
}

TEST(Json, LengthsCountCharactersNotBytes) {
  Server& server = Server::shared();
  std::string body = harness::account_holder_body("utf8-" + harness::new_uuid());
  std::string name;
  for (int i = 0; i < 100; ++i) name += "\xc3\xb1";  // 100 x ñ: 200 bytes, 100 characters
  body.replace(body.find("\"Ana\""), 5, "\"" + name + "\"");
  EXPECT_EQ(server.post("/v1/ledger/account_holders", body, {server.bearer_core()}).status, 201);
}

TEST(Json, ErrorListIsBounded) {
  Server& server = Server::shared();
  std::string body = "{";
  for (int i = 0; i < 5000; ++i) body += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":1";
  body += "}";
  Reply reply = server.post("/v1/ledger/accounts", body, {server.bearer_core()});
  EXPECT_EQ(reply.status, 400);
  json::value parsed = reply.json();
  const json::array& errors = parsed.at("errors").as_array();
  EXPECT_EQ(errors.size(), 101u);
  EXPECT_NE(std::string(errors.back().at("message").as_string()).find("more problems"), std::string::npos);
}

TEST(Json, OnlyMissingFieldsIs422) {
  Server& server = Server::shared();
  Reply reply = server.post("/v1/ledger/account_holders", "{}", {server.bearer_core()});
  expect_envelope(reply, 422, "missing_field");
  EXPECT_EQ(reply.json().at("errors").as_array().size(), 3u);
}

TEST(CoreAuth, MissingMalformedUnknownKeysAre401) {
  Server& server = Server::shared();
  expect_envelope(server.get("/v1/ledger/account_holders"), 401, "expired_token");
  expect_envelope(server.get("/v1/ledger/account_holders", {"Authorization: Basic abc"}), 401,
                  "expired_token");
  expect_envelope(server.get("/v1/ledger/account_holders", {"Authorization: Bearer sk_sandbox_nope"}),
                  401, "expired_token");
  expect_envelope(server.get("/v1/ledger/account_holders", {"Authorization: Bearer"}), 401,
                  "expired_token");
}

TEST(CoreAuth, UnauthorizedNamesTheBearerScheme) {
  Server& server = Server::shared();
  EXPECT_NE(server.get("/v1/accounts").header("www-authenticate").find("Bearer"), std::string::npos);
  EXPECT_NE(server.get("/api/v1/tenant/accounts").header("www-authenticate").find("Bearer"), std::string::npos);
}

TEST(CoreAuth, SecretsNeverLogged) {
  Server& server = Server::shared();
  server.get("/v1/ledger/account_holders", {server.bearer_core()});
  server.get("/v1/ledger/account_holders", {"Authorization: Bearer sk_sandbox_leakcheck123"});
  std::string log = server.log_text();
  EXPECT_EQ(log.find(server.api_key()), std::string::npos);
  EXPECT_EQ(log.find("leakcheck123"), std::string::npos);
  EXPECT_EQ(log.find(std::string(server.credentials().at("client_secret").as_string())),
            std::string::npos);
}

TEST(Logs, NumbersAreJsonNumbers) {
  Server& server = Server::shared();
  std::string request_id = "log-numbers-" + harness::new_uuid();
  ASSERT_EQ(server.get("/healthz", {"X-Request-Id: " + request_id}).status, 200);
  std::string error_request_id = "log-numbers-error-" + harness::new_uuid();
  ASSERT_EQ(server.get("/no/such/route", {"X-Request-Id: " + error_request_id}).status, 404);
  std::istringstream lines(server.log_text());
  std::string line;
  bool found = false;
  bool error_found = false;
  while (std::getline(lines, line)) {
    if (line.find(error_request_id) != std::string::npos) {
      json::object entry = json::parse(line).as_object();
      if (entry.at("event").as_string() != "request.error") continue;
      error_found = true;
      ASSERT_TRUE(entry.at("status").is_int64()) << line;
      EXPECT_EQ(entry.at("status").as_int64(), 404);
      continue;
    }
    if (line.find(request_id) == std::string::npos) continue;
    json::object entry = json::parse(line).as_object();
    if (entry.at("event").as_string() != "request") continue;
    found = true;
    ASSERT_TRUE(entry.at("status").is_int64()) << line;
    EXPECT_EQ(entry.at("status").as_int64(), 200);
    ASSERT_TRUE(entry.at("duration_ms").is_number()) << line;
    EXPECT_GE(entry.at("duration_ms").to_number<double>(), 0.0);
    EXPECT_TRUE(entry.at("method").is_string()) << line;
  }
  EXPECT_TRUE(found) << "no request line for " << request_id;
  EXPECT_TRUE(error_found) << "no request.error line for " << error_request_id;
}

TEST(CoreAuth, ScopesAndRevocation) {
  Server& server = Server::shared();
  std::string tenant(server.credentials().at("tenant_id").as_string());
  int code = 0;
  json::object read_key = json::parse(server.command({"keys", "create", "--tenant", tenant,
                                                      "--scopes", "ledger:read", "--json"}, &code))
                              .as_object();
  ASSERT_EQ(code, 0);
  std::string header = "Authorization: Bearer " + std::string(read_key.at("api_key").as_string());
  EXPECT_EQ(server.get("/v1/ledger/account_holders", {header}).status, 200);
  expect_envelope(server.post("/v1/ledger/account_holders", harness::account_holder_body("scoped"), {header}), 403,
                  "not_authorized");
  json::object cards_key = json::parse(server.command({"keys", "create", "--tenant", tenant,
                                                       "--scopes", "cards:admin", "--json"}))
                               .as_object();
  expect_envelope(server.get("/v1/ledger/account_holders",
                             {"Authorization: Bearer " + std::string(cards_key.at("api_key").as_string())}),
                  403, "not_authorized");

  std::string listed = server.command({"keys", "list", "--tenant", tenant, "--json"});
  EXPECT_NE(listed.find(std::string(read_key.at("id").as_string())), std::string::npos);
  EXPECT_EQ(listed.find(std::string(read_key.at("api_key").as_string())), std::string::npos);
  server.command({"keys", "revoke", "--id", std::string(read_key.at("id").as_string())}, &code);
  ASSERT_EQ(code, 0);
  expect_envelope(server.get("/v1/ledger/account_holders", {header}), 401, "expired_token");
}

TEST(CoreAuth, UnknownScopeRefusedByCli) {
  Server& server = Server::shared();
  int code = 0;
  server.command({"keys", "create", "--tenant", std::string(server.credentials().at("tenant_id").as_string()),
                  "--scopes", "ledger:super"}, &code);
  EXPECT_NE(code, 0);
}

TEST(OAuth, ClientCredentialsJsonAndForm) {
  Server& server = Server::shared();
  const auto& c = server.credentials();
  std::string id(c.at("client_id").as_string()), secret(c.at("client_secret").as_string());
  Reply json_reply = server.post("/api/v1/oauth/token",
                                 json::serialize(json::object{{"grant_type", "client_credentials"},
                                                              {"client_id", id},
                                                              {"client_secret", secret}}));
  ASSERT_EQ(json_reply.status, 200) << json_reply.body;
  json::object token = json_reply.json().as_object();
  EXPECT_EQ(token.at("token_type").as_string(), "Bearer");
  EXPECT_EQ(token.at("expires_in").as_int64(), 3600);
  EXPECT_NE(std::string(token.at("scope").as_string()).find("tenant_accounts:readonly"), std::string::npos);
  EXPECT_FALSE(token.at("refresh_token").as_string().empty());
  EXPECT_EQ(json_reply.header("cache-control"), "no-store");

  Reply form = server.post("/api/v1/oauth/token",
                           "grant_type=client_credentials&client_id=" + id + "&client_secret=" + secret +
                               "&scope=collections+webhooks",
                           {"Content-Type: application/x-www-form-urlencoded"});
  ASSERT_EQ(form.status, 200) << form.body;
  EXPECT_EQ(form.json().at("scope").as_string(), "collections webhooks");

  Reply refreshed = server.post("/api/v1/oauth/token",
                                json::serialize(json::object{{"grant_type", "refresh_token"},
                                                             {"refresh_token", token.at("refresh_token")}}));
  ASSERT_EQ(refreshed.status, 200) << refreshed.body;
  EXPECT_NE(refreshed.json().at("access_token"), token.at("access_token"));
  Reply reused = server.post("/api/v1/oauth/token",
                             json::serialize(json::object{{"grant_type", "refresh_token"},
                                                          {"refresh_token", token.at("refresh_token")}}));
  EXPECT_EQ(reused.status, 400);
  EXPECT_EQ(reused.json().at("error").as_string(), "invalid_grant");
}

TEST(OAuth, ClientsCreatedByOperatorsGetOnlyTheirScopes) {
  Server& server = Server::shared();
  int code = 0;
  json::object client = json::parse(server.command({"clients", "create", "--tenant",
                                                    std::string(server.credentials().at("tenant_id").as_string()),
                                                    "--scopes", "collections:readonly", "--json"}, &code)).as_object();
  ASSERT_EQ(code, 0);
  EXPECT_EQ(client.at("scopes").at(0).as_string(), "collections:readonly");
  std::string id(client.at("client_id").as_string()), secret(client.at("client_secret").as_string());
  // HTTP Basic client authentication, form body.
  std::string basic = "Authorization: Basic " + std::string([&] {
    static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string in = id + ":" + secret, out;
    unsigned value = 0;
    int bits = -6;
    for (unsigned char c : in) {
      value = (value << 8) + c;
      bits += 8;
      while (bits >= 0) { out += k[(value >> bits) & 0x3F]; bits -= 6; }
    }
    if (bits > -6) out += k[((value << 8) >> (bits + 8)) & 0x3F];
    while (out.size() % 4) out += '=';
    return out;
  }());
  Reply token = server.post("/api/v1/oauth/token", "grant_type=client_credentials",
                            {basic, "Content-Type: application/x-www-form-urlencoded"});
  ASSERT_EQ(token.status, 200) << token.body;
  EXPECT_EQ(token.json().at("scope").as_string(), "collections:readonly");
  Reply wider = server.post("/api/v1/oauth/token", "grant_type=client_credentials&scope=collections",
                            {basic, "Content-Type: application/x-www-form-urlencoded"});
  EXPECT_EQ(wider.status, 400);
  EXPECT_EQ(wider.json().at("error").as_string(), "invalid_scope");
  Reply listing = server.get("/api/v1/tenant/accounts",
                             {"Authorization: Bearer " + std::string(token.json().at("access_token").as_string())});
  EXPECT_EQ(listing.status, 403);
  EXPECT_EQ(listing.error_code(), "not_authorized");
}

TEST(OAuth, ErrorsCarryRfc6749Fields) {
  Server& server = Server::shared();
  std::string id(server.credentials().at("client_id").as_string());
  Reply bad_secret = server.post("/api/v1/oauth/token",
                                 R"({"grant_type":"client_credentials","client_id":")" + id +
                                     R"(","client_secret":"wrong"})");
  expect_envelope(bad_secret, 401, "invalid_client");
  EXPECT_EQ(bad_secret.json().at("error").as_string(), "invalid_client");
  EXPECT_FALSE(bad_secret.json().at("error_description").as_string().empty());

  Reply grant = server.post("/api/v1/oauth/token", R"({"grant_type":"password"})");
  expect_envelope(grant, 400, "unsupported_grant_type");
  EXPECT_EQ(grant.json().at("error").as_string(), "unsupported_grant_type");

  std::string secret(server.credentials().at("client_secret").as_string());
  Reply scope = server.post("/api/v1/oauth/token",
                            R"({"grant_type":"client_credentials","client_id":")" + id +
                                R"(","client_secret":")" + secret + R"(","scope":"root"})");
  expect_envelope(scope, 400, "invalid_scope");
  EXPECT_EQ(scope.json().at("error").as_string(), "invalid_scope");

  Reply missing = server.post("/api/v1/oauth/token", "{}");
  EXPECT_EQ(missing.status, 400);
  EXPECT_EQ(missing.json().at("error").as_string(), "invalid_request");
}

TEST(OAuth, TokenEndpointIgnoresIdempotencyKeys) {
  Server& server = Server::shared();
  const auto& c = server.credentials();
  std::string body = json::serialize(json::object{{"grant_type", "client_credentials"},
                                                  {"client_id", c.at("client_id")},
                                                  {"client_secret", c.at("client_secret")}});
  Reply odd_key = server.post("/api/v1/oauth/token", body, {"x-idempotency-key: not-a-uuid"});
  EXPECT_EQ(odd_key.status, 200) << odd_key.body;
  std::string key = "x-idempotency-key: " + harness::new_uuid();
  Reply first = server.post("/api/v1/oauth/token", body, {key});
  Reply second = server.post("/api/v1/oauth/token", body, {key});
  EXPECT_EQ(second.status, 200);
  // Tokens are never stored as idempotency records: each call mints a new one.
  EXPECT_NE(first.json().at("access_token"), second.json().at("access_token"));
  EXPECT_TRUE(second.header("idempotent-replayed").empty());
}

TEST(OAuth, TokenRejectedOnCoreAndApiKeyRejectedOnParticipant) {
  Server& server = Server::shared();
  std::string token = server.access_token();
  expect_envelope(server.get("/v1/ledger/account_holders", {"Authorization: Bearer " + token}), 401,
                  "expired_token");
}

TEST(Idempotency, ReplayIsByteIdenticalAndHasNoNewEffect) {
  Server& server = Server::shared();
  std::string key = harness::new_uuid();
  std::string external_id = "idem-" + harness::new_uuid();
  std::vector<std::string> headers = {server.bearer_core(), "x-idempotency-key: " + key};
  Reply first = server.post("/v1/ledger/account_holders", harness::account_holder_body(external_id), headers);
  ASSERT_EQ(first.status, 201) << first.body;
  EXPECT_TRUE(first.header("idempotent-replayed").empty());
  Reply second = server.post("/v1/ledger/account_holders", harness::account_holder_body(external_id), headers);
  EXPECT_EQ(second.status, 201);
  EXPECT_EQ(second.body, first.body);
  EXPECT_EQ(second.header("idempotent-replayed"), "true");

  Reply different = server.post("/v1/ledger/account_holders", harness::account_holder_body("other-" + key), headers);
  expect_envelope(different, 409, "idempotency_key_reused");
}

TEST(Idempotency, BusinessErrorsAreStoredValidationErrorsAreNot) {
  Server& server = Server::shared();
  std::string external_id = "dup-" + harness::new_uuid();
  ASSERT_EQ(server.post("/v1/ledger/account_holders", harness::account_holder_body(external_id), {server.bearer_core()}).status, 201);
  std::vector<std::string> headers = {server.bearer_core(), "x-idempotency-key: " + harness::new_uuid()};
  Reply conflict = server.post("/v1/ledger/account_holders", harness::account_holder_body(external_id), headers);
  expect_envelope(conflict, 409, "external_id_already_exists");
  Reply replay = server.post("/v1/ledger/account_holders", harness::account_holder_body(external_id), headers);
  EXPECT_EQ(replay.body, conflict.body);
  EXPECT_EQ(replay.header("idempotent-replayed"), "true");

  std::string key = harness::new_uuid();
  std::vector<std::string> h2 = {server.bearer_core(), "x-idempotency-key: " + key};
  Reply invalid = server.post("/v1/ledger/account_holders", "{}", h2);
  EXPECT_EQ(invalid.status, 422);
  Reply retried = server.post("/v1/ledger/account_holders", "{}", h2);
  EXPECT_EQ(retried.status, 422);
  EXPECT_TRUE(retried.header("idempotent-replayed").empty());
}

TEST(Idempotency, KeysAreCaseInsensitive) {
  Server& server = Server::shared();
  std::string key = harness::new_uuid();
  std::string upper = key;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string body = harness::account_holder_body("case-" + key);
  Reply first = server.post("/v1/ledger/account_holders", body, {server.bearer_core(), "x-idempotency-key: " + key});
  ASSERT_EQ(first.status, 201);
  Reply again = server.post("/v1/ledger/account_holders", body, {server.bearer_core(), "x-idempotency-key: " + upper});
  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(again.header("idempotent-replayed"), "true");
}

TEST(Idempotency, MalformedKeyIs400) {
  Server& server = Server::shared();
  Reply reply = server.post("/v1/ledger/account_holders", harness::account_holder_body("k"),
                            {server.bearer_core(), "x-idempotency-key: not-a-uuid"});
  expect_envelope(reply, 400, "validation_error");
  EXPECT_EQ(reply.json().at("errors").at(0).at("path").as_string(), "x-idempotency-key");
  Reply long_key = server.post("/v1/ledger/account_holders", harness::account_holder_body("k"),
                               {server.bearer_core(), "x-idempotency-key: " + std::string(300, 'a')});
  EXPECT_EQ(long_key.status, 400);
}

TEST(Idempotency, ConcurrentSameKeyHasOneEffect) {
  Server& server = Server::shared();
  std::string key = harness::new_uuid();
  std::string external_id = "race-" + key;
  std::vector<std::future<Reply>> replies;
  for (int i = 0; i < 8; ++i) {
    replies.push_back(std::async(std::launch::async, [&] {
      return server.post("/v1/ledger/account_holders", harness::account_holder_body(external_id),
                         {server.bearer_core(), "x-idempotency-key: " + key});
    }));
  }
  int created = 0, in_use = 0;
  std::string body;
  for (auto& future : replies) {
    Reply reply = future.get();
    if (reply.status == 201) {
      if (!body.empty()) {
        EXPECT_EQ(reply.body, body);
      }
      body = reply.body;
      ++created;
    } else {
      EXPECT_EQ(reply.error_code(), "idempotency_key_in_use") << reply.body;
      ++in_use;
    }
  }
  EXPECT_GE(created, 1);
  EXPECT_EQ(created + in_use, 8);
  // One effect: exactly one holder has that external id.
  Reply list = server.get("/v1/ledger/account_holders?page_size=500", {server.bearer_core()});
  int matches = 0;
  json::value listed = list.json();
  for (const auto& holder : listed.at("account_holders").as_array()) {
    if (holder.at("external_id") == json::value(external_id)) ++matches;
  }
  EXPECT_EQ(matches, 1);
}

TEST(RateLimit, HeadersAnd429WithRetryAfter) {
  Server server({{"--rate-limit", "2", "--rate-burst", "3"}, true});
  std::vector<std::string> headers = {server.bearer_core()};
  Reply first = server.get("/v1/ledger/account_holders", headers);
  EXPECT_EQ(first.status, 200);
  // A quota of 3 (the burst) per window of 2 s (an empty bucket refills at 2/s in 1.5 s).
  EXPECT_EQ(first.header("ratelimit-policy"), "3;w=2");
  EXPECT_EQ(first.header("ratelimit-limit"), "3");
  EXPECT_EQ(first.header("ratelimit-remaining"), "2");
  EXPECT_EQ(first.header("ratelimit-reset"), "1");  // one token back at 2/s: full again in 0.5 s
  Reply limited;
  for (int i = 0; i < 10 && limited.status != 429; ++i) {
    limited = server.get("/v1/ledger/account_holders", headers);
    // Every answer reads against the same window: remaining within the quota, reset within w.
    EXPECT_LE(std::stoi(limited.header("ratelimit-remaining")), 3);
    EXPECT_LE(std::stoi(limited.header("ratelimit-reset")), 2);
    EXPECT_EQ(limited.header("ratelimit-policy"), "3;w=2");
  }
  expect_envelope(limited, 429, "rate_limit_exceeded");
  EXPECT_GE(std::stoi(limited.header("retry-after")), 1);
  EXPECT_EQ(limited.header("ratelimit-remaining"), "0");
  // Retry-After and RateLimit-Reset name the same moment.
  EXPECT_EQ(limited.header("ratelimit-reset"), limited.header("retry-after"));
}

TEST(RateLimit, GuessingKeysAndUnknownRoutesAreLimitedByAddress) {
  Server server({{"--rate-limit", "1", "--rate-burst", "3"}, true});
  Reply last;
  for (int i = 0; i < 6; ++i) last = server.get("/v1/accounts", {"Authorization: Bearer sk_sandbox_guess" + std::to_string(i)});
  expect_envelope(last, 429, "rate_limit_exceeded");
  EXPECT_FALSE(last.header("retry-after").empty());
  // A valid credential from the same address has its own bucket: others' failures never block it.
  EXPECT_EQ(server.get("/v1/accounts", {server.bearer_core()}).status, 200);
  Server other({{"--rate-limit", "1", "--rate-burst", "3"}, true});
  for (int i = 0; i < 6; ++i) last = other.get("/v1/nothing");
  expect_envelope(last, 429, "rate_limit_exceeded");
}

// Failed authentications are limited per address (app::AuthFailureGuard): after the burst the
// address is refused before any credential is looked up, so guessing stops; a credential that
// worked from that address keeps working, so clients behind the same NAT are not locked out.
TEST(RateLimit, FailedAuthenticationsAreLimitedPerAddressButWorkingKeysGoOn) {
  Server server({{"--rate-limit", "1000", "--auth-failure-limit", "0.01", "--auth-failure-burst",
                  "5"},
                 true});
  ASSERT_EQ(server.get("/v1/accounts", {server.bearer_core()}).status, 200);
  for (int i = 0; i < 5; ++i) {
    Reply guess = server.get("/v1/accounts", {"Authorization: Bearer sk_sandbox_guess" +
                                              std::to_string(i)});
    expect_envelope(guess, 401, "expired_token");
  }
  Reply refused = server.get("/v1/accounts", {"Authorization: Bearer sk_sandbox_guess5"});
  expect_envelope(refused, 429, "rate_limit_exceeded");
  EXPECT_GE(std::stoi(refused.header("retry-after")), 1);
  EXPECT_NE(refused.body.find("too many failed authentications from this address"),
            std::string::npos) << refused.body;
  // The key that worked from this address still does.
  EXPECT_EQ(server.get("/v1/accounts", {server.bearer_core()}).status, 200);
  // Another valid key, never used from here, is refused unread like a guess: otherwise a
  // guesser would learn which guess is right.
  std::string tenant(server.credentials().at("tenant_id").as_string());
  json::object other = json::parse(server.command({"keys", "create", "--tenant", tenant,
                                                   "--scopes", "ledger:read", "--json"}))
                           .as_object();
  Reply unread = server.get("/v1/accounts", {"Authorization: Bearer " +
                                             std::string(other.at("api_key").as_string())});
  EXPECT_EQ(unread.status, 429);
  // The token endpoint's client secrets are guarded the same way.
  Reply token = server.post("/api/v1/oauth/token",
                            R"({"grant_type":"client_credentials","client_id":"cli_x","client_secret":"y"})");
  EXPECT_EQ(token.status, 429);
}

TEST(Metrics, MethodLabelsComeFromAFixedSet) {
  Server& server = Server::shared();
  server.raw("FROBNICATE /nope HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string metrics = server.get("/metrics").body;
  EXPECT_EQ(metrics.find("FROBNICATE"), std::string::npos);
}

TEST(Environment, ProductionRefusesSandboxKeys) {
  Server server({{"--environment", "production"}});
  expect_envelope(server.get("/v1/ledger/account_holders", {server.bearer_core()}), 401, "expired_token");
}

TEST(Durability, AcknowledgedPostSurvivesKill9) {
  Server server;
  std::string external_id = "durable-" + harness::new_uuid();
  Reply created = server.post("/v1/ledger/account_holders", harness::account_holder_body(external_id), {server.bearer_core()});
  ASSERT_EQ(created.status, 201);
  std::string id(created.json().at("id").as_string());
  server.stop(/*kill_hard=*/true);
  server.start();
  Reply found = server.get("/v1/ledger/account_holders/" + id, {server.bearer_core()});
  EXPECT_EQ(found.status, 200);
  EXPECT_EQ(found.json().at("external_id").as_string(), external_id);
}

TEST(Shutdown, SigtermFinishesInFlightAndExitsZero) {
  Server server;
  std::vector<std::future<Reply>> replies;
  for (int i = 0; i < 16; ++i) {
    replies.push_back(std::async(std::launch::async, [&server, i] {
      return server.post("/v1/ledger/account_holders", harness::account_holder_body("shutdown-" + std::to_string(i)),
                         {server.bearer_core()});
    }));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  int code = server.stop();
  EXPECT_EQ(code, 0);
  for (auto& future : replies) {
    Reply reply = future.get();
    // Each request was either answered in full or never accepted; never cut halfway.
    EXPECT_TRUE(reply.status == 201 || reply.status < 0) << reply.status << " " << reply.body;
  }
}

TEST(Cli, InitTwiceChangesNothingAndExits1) {
  Server& server = Server::shared();
  int code = 0;
  std::string out = server.command({"init", "--json"}, &code);
  EXPECT_EQ(code, 1);
  EXPECT_TRUE(out.empty());
}

TEST(Cli, ServeOnATakenAddressSaysSoAndExits1) {
  Server& server = Server::shared();
  int code = 0;
  server.command({"serve", "--listen", "127.0.0.1:" + std::to_string(server.port())}, &code);
  EXPECT_EQ(code, 1);
  std::string log = server.commands_log();
  EXPECT_NE(log.find("cannot listen on 127.0.0.1:" + std::to_string(server.port())),
            std::string::npos);
}

TEST(Cli, TenantCreateIsIsolated) {
  Server& server = Server::shared();
  int code = 0;
  json::object other = json::parse(server.command({"tenant", "create", "--name", "other", "--json"}, &code)).as_object();
  ASSERT_EQ(code, 0);
  Reply created = server.post("/v1/ledger/account_holders", harness::account_holder_body("iso-" + harness::new_uuid()),
                              {server.bearer_core()});
  ASSERT_EQ(created.status, 201);
  std::string id(created.json().at("id").as_string());
  std::string other_key = "Authorization: Bearer " + std::string(other.at("api_key").as_string());
  expect_envelope(server.get("/v1/ledger/account_holders/" + id, {other_key}), 404, "item_not_found");
  EXPECT_EQ(server.get("/v1/ledger/account_holders", {other_key}).json().at("pagination").at("total_items").as_int64(), 0);
}
