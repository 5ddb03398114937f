// PostgreSQL failover under load (docs/operations.md "High availability on PostgreSQL"). Run by
// .ci/run under scripts/postgres-ha, which starts a pg_auto_failover formation on this machine (a
// monitor, a primary and a synchronous secondary); two Tesoro nodes are given its multi-host URL.
// Writers create account holders and card authorizations, each with its idempotency key, retried
// on 503 (on the other node each time) until acknowledged; a probe on each node alternates a
// write and /readyz. Meanwhile the primary loses its postmaster to SIGKILL, or the formation
// switches over as planned. Then:
//  - every answer was a success, a 503 with Retry-After, or 409 idempotency_key_in_use (a retry
//    meeting its own earlier attempt, still running on the other node): no other error, no 5xx,
//    no refused connection;
//  - every acknowledged write is present exactly once, with the id it was acknowledged with, and
//    a replay of its request on the other node returns the same answer byte for byte;
//  - each card's available balance is its funding less its acknowledged authorizations;
//  - /readyz never answered 200 between two failing writes of the same node;
//  - `tesoro verify` is clean (the harness runs it when the server stops).
// Each test prints how long writes failed: the figures docs/operations.md quotes.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "harness.hpp"

using harness::Reply;
using harness::Request;
using harness::Server;
namespace json = boost::json;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int k_writers_per_node = 4;
constexpr auto k_writer_pause = std::chrono::milliseconds(40);  // between a writer's writes
// Sooner than Retry-After's 1 s, so that the measured gap is the formation's, not the client's.
constexpr auto k_retry_pause = std::chrono::milliseconds(50);
constexpr auto k_probe_pause = std::chrono::milliseconds(20);
constexpr auto k_write_deadline = std::chrono::seconds(120);  // one write's retries, at most
constexpr auto k_recovery_limit = std::chrono::seconds(150);
constexpr long long k_card_funding = 1'000'000'000;

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') {
    throw std::runtime_error(std::string(name) + " is not set: run under scripts/postgres-ha");
  }
  return value;
}

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

std::string money(long long amount) {
  return R"({"amount":)" + std::to_string(amount) + R"(,"currency":"COP"})";
}

// The formation scripts/postgres-ha started: its nodes' folders and URLs, and its monitor.
struct Formation {
  std::string folder = environment("TESORO_HA_FOLDER");
  std::string autoctl = environment("TESORO_HA_AUTOCTL");
  std::string monitor_url = environment("TESORO_HA_MONITOR_URL");
  std::vector<std::string> node_urls = [] {
    std::istringstream words(environment("TESORO_HA_NODE_URLS"));
    std::vector<std::string> out;
    for (std::string url; words >> url;) out.push_back(url);
    return out;
  }();

  std::string psql(const std::string& url, const std::string& statement) const {
    int code = 0;
    std::string out = harness::run_capture("PGCONNECT_TIMEOUT=2 psql -XqAt " + harness::shell_quote(url) +
                                               " -c " + harness::shell_quote(statement) + " 2>/dev/null",
                                           &code);
    return code == 0 ? out : "";
  }

  // The index of the primary when the monitor sees the formation settled (every node in the
  // state it was assigned, one primary and one secondary) and the primary's synchronous standby
  // is streaming; -1 otherwise.
  int settled_primary() const {
    std::string states = psql(monitor_url,
                              "SELECT string_agg(reportedstate::text || '/' || goalstate::text, ' ' "
                              "ORDER BY reportedstate::text) FROM pgautofailover.node");
    if (states != "primary/primary secondary/secondary\n") return -1;
    for (std::size_t i = 0; i < node_urls.size(); ++i) {
      std::string row = psql(node_urls[i],
                             "SELECT pg_is_in_recovery(), (SELECT count(*) FROM pg_stat_replication "
                             "WHERE sync_state IN ('sync', 'quorum'))");
      if (row == "f|1\n") return static_cast<int>(i);
    }
    return -1;
  }

  int wait_until_settled() const {
    auto limit = Clock::now() + k_recovery_limit;
    while (Clock::now() < limit) {
      if (int primary = settled_primary(); primary >= 0) return primary;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return -1;
  }

  // SIGKILL to the node's postmaster, as a crash would: its keeper stays.
  void kill_postmaster(int node) const {
    std::ifstream pid_file(data(node) + "/postmaster.pid");
    long pid = 0;
    pid_file >> pid;
    ASSERT_GT(pid, 0) << "no postmaster.pid for node" << node + 1;
    ASSERT_EQ(::kill(static_cast<pid_t>(pid), SIGKILL), 0);
  }

  // The whole node lost, as with its machine: its keeper, its PostgreSQL and every process under
  // them frozen, then killed. The keeper is looked for a few seconds (once a run did not find
  // it); the postmaster's own tree is taken too, so a node whose keeper is missing is lost all
  // the same.
  void kill_node(int node) const {
    int code = 0;
    std::string out = harness::run_capture(
        "tree() { echo $1; for child in $(pgrep -P $1); do tree $child; done; }; "
        "for _ in $(seq 1 50); do "
        "keeper=$(pgrep -xf " + harness::shell_quote("pg_autoctl run --pgdata " + data(node)) +
            ") && break; sleep 0.1; done; "
        "[ -n \"$keeper\" ] || echo 'no keeper process; its PostgreSQL alone is killed'; "
        "postmaster=$(head -n 1 " + harness::shell_quote(data(node) + "/postmaster.pid") + ") && "
        "pids=$(for root in $keeper $postmaster; do tree $root; done | sort -u) && "
        "kill -STOP $pids && kill -KILL $pids 2>&1",
        &code);
    ASSERT_EQ(code, 0) << "could not kill node" << node + 1 << ": " << out;
    if (!out.empty()) std::cerr << "node" << node + 1 << ": " << out << "\n";
  }

  // The node's keeper started again (after kill_node): it rejoins the formation as a standby.
  void restart_node(int node) const {
    int code = 0;
    std::string out = harness::run_capture(
        "nohup " + harness::shell_quote(autoctl) + " run --pgdata " + harness::shell_quote(data(node)) +
            " >> " + harness::shell_quote(folder + "/node" + std::to_string(node + 1) + ".log") +
            " 2>&1 < /dev/null &",
        &code);
    ASSERT_EQ(code, 0) << out;
  }

  std::string data(int node) const { return folder + "/node" + std::to_string(node + 1); }

  // pg_autoctl's planned switchover: returns when the old secondary is the primary.
  void switchover() const {
    int code = 0;
    std::string out = harness::run_capture(
        harness::shell_quote(autoctl) + " perform switchover --pgdata " +
            harness::shell_quote(folder + "/monitor") + " 2>&1",
        &code);
    ASSERT_EQ(code, 0) << out;
  }
};

struct Attempt {
  Clock::time_point start, end;
  int port = 0;
  long status = 0;
  std::string error_code;
  bool retry_after = false;
};

// One write, sent with its key until acknowledged.
struct Write {
  std::string kind;  // "holder" or "authorization"
  Request request;
  std::string external_id;  // a holder's
  std::string card_id;      // an authorization's
  long long amount = 0;
  bool acknowledged = false;
  int acknowledged_port = 0;
  Reply answer;
};

// What one probe saw, in order: "W" writes and "R" /readyz answers.
struct ProbeStep {
  char what = 'W';
  bool ok = false;
  Clock::time_point start;
  long status = 0;
};

class Load {
 public:
  Load(const Server& server, std::vector<int> ports, std::vector<std::string> cards)
      : server_(server), ports_(std::move(ports)), cards_(std::move(cards)) {}

  void start() {
    for (int t = 0; t < k_writers_per_node * static_cast<int>(ports_.size()); ++t) {
      threads_.emplace_back([this, t] { write_until_stopped(t); });
    }
    for (std::size_t node = 0; node < ports_.size(); ++node) {
      threads_.emplace_back([this, node] { probe_until_stopped(node); });
    }
  }

  void stop() {
    stopping_ = true;
    for (auto& thread : threads_) thread.join();
    threads_.clear();
  }

  // True once every node acknowledged a write that started after `moment`.
  bool every_node_wrote_since(Clock::time_point moment) {
    std::lock_guard lock(mutex_);
    for (int port : ports_) {
      auto found = std::find_if(attempts_.rbegin(), attempts_.rend(), [&](const Attempt& a) {
        return a.port == port && a.start > moment && (a.status == 200 || a.status == 201);
      });
      if (found == attempts_.rend()) return false;
    }
    return true;
  }

  std::size_t acknowledged_count() {
    std::lock_guard lock(mutex_);
    return std::count_if(attempts_.begin(), attempts_.end(),
                         [](const Attempt& a) { return a.status == 200 || a.status == 201; });
  }

  const std::vector<Attempt>& attempts() const { return attempts_; }
  const std::vector<Write>& writes() const { return writes_; }
  const std::vector<Write>& probe_writes() const { return probe_writes_; }
  const std::vector<std::vector<ProbeStep>>& probes() const { return probes_; }

 private:
  Write next_write(int thread, int index) {
    Write write;
    std::string key = harness::new_uuid();
    std::vector<std::string> headers = {server_.bearer_core(), "x-idempotency-key: " + key};
    if (index % 2 == 0) {
      write.kind = "holder";
      write.external_id = "failover-" + key;
      write.request = {"POST", "/v1/ledger/account_holders",
                       harness::account_holder_body(write.external_id), headers};
    } else {
      write.kind = "authorization";
      write.card_id = cards_[static_cast<std::size_t>(thread) % cards_.size()];
      write.amount = 100 + (thread * 7919 + index) % 900;
      write.request = {"POST", "/v1/sandbox/cards/" + write.card_id + "/authorizations",
                       R"({"amount":)" + money(write.amount) +
                           R"(,"merchant":{"name":"Failover Store","mcc":"5812","mid":"MID001",)"
                           R"("country":"CO"},"channel":"online_purchase"})",
                       headers};
    }
    return write;
  }

  Reply send(int port, const Request& request, Clock::time_point* start) {
    *start = Clock::now();
    Reply reply = server_.send_to(port, request);
    Attempt attempt{*start, Clock::now(), port, reply.status, "", !reply.header("retry-after").empty()};
    if (reply.status >= 400) attempt.error_code = reply.error_code();
    std::lock_guard lock(mutex_);
    attempts_.push_back(attempt);
    return reply;
  }

  void write_until_stopped(int thread) {
    for (int index = 0; !stopping_; ++index) {
      Write write = next_write(thread, index);
      auto deadline = Clock::now() + k_write_deadline;
      // Each retry goes to the other node, as a client behind a load balancer would see.
      for (int attempt = 0; Clock::now() < deadline; ++attempt) {
        int port = ports_[static_cast<std::size_t>(thread + attempt) % ports_.size()];
        Clock::time_point start;
        Reply reply = send(port, write.request, &start);
        if (reply.status == 200 || reply.status == 201) {
          write.acknowledged = true;
          write.acknowledged_port = port;
          write.answer = reply;
          break;
        }
        bool retryable = reply.status == 503 ||
                         (reply.status == 409 && reply.error_code() == "idempotency_key_in_use");
        if (!retryable) break;  // recorded among the attempts; the test fails on it
        std::this_thread::sleep_for(k_retry_pause);
      }
      {
        std::lock_guard lock(mutex_);
        writes_.push_back(write);
      }
      std::this_thread::sleep_for(k_writer_pause);
    }
  }

  void probe_until_stopped(std::size_t node) {
    std::vector<ProbeStep> steps;
    std::vector<Write> made;
    int port = ports_[node];
    while (!stopping_) {
      std::string key = harness::new_uuid();
      Write write;
      write.kind = "holder";
      write.external_id = "probe-" + key;
      write.request = {"POST", "/v1/ledger/account_holders", harness::account_holder_body(write.external_id),
                       {server_.bearer_core(), "x-idempotency-key: " + key}};
      Clock::time_point start;
      Reply reply = send(port, write.request, &start);
      write.acknowledged = reply.status == 201;
      write.acknowledged_port = port;
      write.answer = reply;
      made.push_back(write);
      steps.push_back({'W', write.acknowledged, start, reply.status});
      start = Clock::now();
      Reply ready = server_.send_to(port, {"GET", "/readyz", "", {}});
      steps.push_back({'R', ready.status == 200, start, ready.status});
      std::this_thread::sleep_for(k_probe_pause);
    }
    std::lock_guard lock(mutex_);
    if (probes_.size() <= node) probes_.resize(node + 1);
    probes_[node] = std::move(steps);
    probe_writes_.insert(probe_writes_.end(), made.begin(), made.end());
  }

  const Server& server_;
  std::vector<int> ports_;
  std::vector<std::string> cards_;
  std::atomic<bool> stopping_{false};
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::vector<Attempt> attempts_;
  std::vector<Write> writes_;
  std::vector<Write> probe_writes_;
  std::vector<std::vector<ProbeStep>> probes_;
};

// A virtual card funded from the tenant's account.
std::string make_card(const Server& server) {
  std::string account(server.credentials().at("account_id").as_string());
  Reply funded = server.post("/v1/sandbox/accounts/" + account + "/fund",
                             R"({"amount":)" + money(k_card_funding) + "}", {server.bearer_core()});
  EXPECT_EQ(funded.status, 201) << funded.body;
  Reply card = server.post("/v1/cards",
                           R"({"account_id":")" + account + R"(","type":"virtual","initial_balance":)" +
                               money(k_card_funding) + "}",
                           {server.bearer_core()});
  EXPECT_EQ(card.status, 201) << card.body;
  return harness::text(card.json(), "id");
}

// Every item of a paginated list, pages of 500.
std::vector<json::value> list_all(const Server& server, const std::string& path, const std::string& key) {
  std::vector<json::value> out;
  for (int page = 1;; ++page) {
    Reply reply = server.get(path + "?page_size=500&page_number=" + std::to_string(page),
                             {server.bearer_core()});
    EXPECT_EQ(reply.status, 200) << reply.body;
    if (reply.status != 200) return out;
    json::value body = reply.json();
    const json::array& items = body.at(key).as_array();
    out.insert(out.end(), items.begin(), items.end());
    if (items.size() < 500) return out;
  }
}

void check_answers(const Load& load) {
  int unavailable = 0;
  std::map<std::string, int> unexpected;
  for (const Attempt& attempt : load.attempts()) {
    if (attempt.status == 200 || attempt.status == 201) continue;
    if (attempt.status == 503) {
      ++unavailable;
      EXPECT_TRUE(attempt.retry_after) << "a 503 without Retry-After";
      continue;
    }
    if (attempt.status == 409 && attempt.error_code == "idempotency_key_in_use") continue;
    ++unexpected[std::to_string(attempt.status) + " " + attempt.error_code];
  }
  for (const auto& [answer, count] : unexpected) ADD_FAILURE() << count << " answers " << answer;
  EXPECT_GT(unavailable, 0) << "no write failed: the fault was not observed";
}

// Every write the load made: acknowledged, present once with its acknowledged id, and answered
// the same on a replay.
void check_writes(const Server& server, const Load& load, const std::vector<std::string>& cards,
                  const std::vector<int>& ports) {
  std::map<std::string, std::vector<std::string>> holders;  // external_id -> ids
  for (const json::value& item : list_all(server, "/v1/ledger/account_holders", "account_holders")) {
    holders[harness::text(item, "external_id")].push_back(harness::text(item, "id"));
  }
  std::map<std::string, std::set<std::string>> authorizations;  // card -> acknowledged ids
  std::map<std::string, long long> held;
  int replays = 0;
  for (const Write& write : load.writes()) {
    ASSERT_TRUE(write.acknowledged) << write.kind << " " << write.request.body
                                    << " never acknowledged within its deadline";
    std::string id = harness::text(write.answer.json(), "id");
    if (write.kind == "holder") {
      EXPECT_EQ(holders[write.external_id], std::vector<std::string>{id}) << write.external_id;
    } else {
      EXPECT_EQ(harness::text(write.answer.json(), "type"), "authorization_approved");
      authorizations[write.card_id].insert(id);
      held[write.card_id] += write.amount;
    }
    int other = write.acknowledged_port == ports[0] ? ports[1] : ports[0];
    Reply replay = server.send_to(other, write.request);
    EXPECT_EQ(replay.status, write.answer.status) << write.request.path;
    EXPECT_EQ(replay.body, write.answer.body) << write.request.path;
    EXPECT_EQ(replay.header("idempotent-replayed"), "true") << write.request.path;
    ++replays;
  }
  for (const Write& write : load.probe_writes()) {
    const std::vector<std::string>& found = holders[write.external_id];
    if (write.acknowledged) {
      EXPECT_EQ(found, std::vector<std::string>{harness::text(write.answer.json(), "id")});
    } else {
      EXPECT_LE(found.size(), 1u) << write.external_id;  // a write that failed: at most once
    }
  }
  for (const std::string& card : cards) {
    std::set<std::string> listed;
    for (const json::value& item : list_all(server, "/v1/cards/" + card + "/transactions", "transactions")) {
      listed.insert(harness::text(item, "id"));
    }
    EXPECT_EQ(listed, authorizations[card]) << "card " << card;
    Reply view = server.get("/v1/cards/" + card, {server.bearer_core()});
    ASSERT_EQ(view.status, 200) << view.body;
    EXPECT_EQ(view.json().at("balance").at("available").at("amount").as_int64(), k_card_funding - held[card])
        << "card " << card;
  }
  std::cout << "[failover] " << load.writes().size() << " writes acknowledged and replayed (" << replays
            << " replays), " << load.probe_writes().size() << " probe writes\n";
}

// /readyz never said ready between two failing writes of its node, and the figures.
void check_readiness(const Load& load, Clock::time_point fault) {
  for (std::size_t node = 0; node < load.probes().size(); ++node) {
    const std::vector<ProbeStep>& steps = load.probes()[node];
    for (std::size_t i = 1; i + 1 < steps.size(); ++i) {
      if (steps[i].what != 'R' || !steps[i].ok) continue;
      EXPECT_FALSE(!steps[i - 1].ok && !steps[i + 1].ok)
          << "node " << node << ": /readyz answered 200 at " << seconds_between(fault, steps[i].start)
          << " s after the fault, between writes that failed with " << steps[i - 1].status << " and "
          << steps[i + 1].status;
    }
  }
  // How long writes failed: from the fault to the first write acknowledged after the last
  // failure, on any node.
  Clock::time_point last_failure = fault;
  for (const Attempt& attempt : load.attempts()) {
    if (attempt.status != 200 && attempt.status != 201 && attempt.end > last_failure) last_failure = attempt.end;
  }
  std::optional<Clock::time_point> first_success;
  for (const Attempt& attempt : load.attempts()) {
    if ((attempt.status == 200 || attempt.status == 201) && attempt.start >= last_failure &&
        (!first_success || attempt.end < *first_success)) {
      first_success = attempt.end;
    }
  }
  std::optional<Clock::time_point> first_failure;
  for (const Attempt& attempt : load.attempts()) {
    if (attempt.status != 200 && attempt.status != 201 && (!first_failure || attempt.start < *first_failure)) {
      first_failure = attempt.start;
    }
  }
  std::cout << "[failover] writes failed from " << (first_failure ? seconds_between(fault, *first_failure) : 0)
            << " s to " << seconds_between(fault, last_failure) << " s after the fault; first write accepted after "
            << (first_success ? seconds_between(fault, *first_success) : -1) << " s\n";
  ::testing::Test::RecordProperty("seconds_until_writes_accepted",
                                  std::to_string(first_success ? seconds_between(fault, *first_success) : -1));
}

// The load on two nodes, `fault` in the middle, then every check.
void run_under_load(const std::function<void(const Formation&, int primary, Load&)>& fault) {
  Formation formation;
  int primary = formation.wait_until_settled();
  ASSERT_GE(primary, 0) << "the formation did not settle";
  Server server;
  std::vector<int> ports = {server.port(), server.start_extra_node()};
  std::vector<std::string> cards = {make_card(server), make_card(server)};
  Load load(server, ports, cards);
  load.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_GT(load.acknowledged_count(), 0u) << "no write before the fault";
  Clock::time_point fault_at = Clock::now();
  fault(formation, primary, load);
  // Settled and writing for a while, so that the last of the fault is behind the load.
  auto limit = Clock::now() + k_recovery_limit;
  EXPECT_GE(formation.wait_until_settled(), 0) << "the formation did not settle after the fault";
  Clock::time_point settled = Clock::now();
  while (!load.every_node_wrote_since(settled) && Clock::now() < limit) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));
  load.stop();
  check_answers(load);
  check_writes(server, load, cards, ports);
  check_readiness(load, fault_at);
}

}  // namespace

TEST(Failover, PrimaryPostmasterKilledUnderLoad) {
  run_under_load([](const Formation& formation, int primary, Load&) { formation.kill_postmaster(primary); });
}

TEST(Failover, PlannedSwitchoverUnderLoad) {
  run_under_load([](const Formation& formation, int, Load&) { formation.switchover(); });
}

// The primary's machine lost: pg_auto_failover promotes the standby once the monitor has given up
// on the primary (its health checks, then primary_demote_timeout: about 50 s with its defaults),
// and the lost node, started again, rejoins as the standby.
TEST(Failover, PrimaryNodeLostUnderLoad) {
  run_under_load([](const Formation& formation, int primary, Load& load) {
    formation.kill_node(primary);
    Clock::time_point lost = Clock::now();  // writes started before may have been committed
    auto limit = lost + k_recovery_limit;
    while (!load.every_node_wrote_since(lost) && Clock::now() < limit) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    formation.restart_node(primary);
  });
}
