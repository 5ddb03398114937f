// The webhook dispatcher's parts: the retry schedule and Retry-After (parsing, the floor it sets,
// its cap), the body, log text, URLs; fan-out on both engines (subscriptions, start positions,
// disabled endpoints, the cursor); leases (a live one is respected, an expired one taken over,
// and a node that lost its lease mid-attempt writes nothing), against a receiver in this process;
// and the transport seam: hosts resolved and requests sent through the one a pass is given.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "core/ids.hpp"
#include "core/outbound_http.hpp"
#include "domain/events/events.hpp"
#include "domain/webhooks/dispatcher.hpp"
#include "domain/webhooks/secrets.hpp"
#include "http/client.hpp"
#include "manual_clock.hpp"
#include "test_stores.hpp"
#include "webhook_receiver.hpp"

using namespace tesoro;

namespace {

constexpr time::Micros k_second = time::k_micros_per_second;

TEST(WebhookRetrySchedule, FollowsTheDecisionsScheduleAndEndsAfterEightAttempts) {
  EXPECT_FALSE(webhooks::retry_delay_micros(1)) << "attempt 1 is not a retry";
  const time::Micros expected[] = {5, 300, 1800, 7200, 18000, 36000, 36000};
  for (int attempt = 2; attempt <= 8; ++attempt) {
    ASSERT_TRUE(webhooks::retry_delay_micros(attempt)) << attempt;
    EXPECT_EQ(*webhooks::retry_delay_micros(attempt), expected[attempt - 2] * k_second)
        << "attempt " << attempt;
  }
  EXPECT_FALSE(webhooks::retry_delay_micros(9));
  EXPECT_FALSE(webhooks::retry_delay_micros(0));
}

TEST(WebhookRetrySchedule, RetryAfterIsAFloorCappedAtTheLongestStep) {
  using webhooks::next_retry_delay_micros;
  EXPECT_EQ(*next_retry_delay_micros(2, std::nullopt), 5 * k_second);
  EXPECT_EQ(*next_retry_delay_micros(2, 60 * k_second), 60 * k_second) << "later than the schedule";
  EXPECT_EQ(*next_retry_delay_micros(3, 60 * k_second), 300 * k_second) << "earlier: the schedule";
  EXPECT_EQ(*next_retry_delay_micros(2, 0), 5 * k_second);
  EXPECT_EQ(*next_retry_delay_micros(2, 30 * 86400 * k_second), 36000 * k_second)
      << "capped at the longest step (10 h)";
  EXPECT_FALSE(next_retry_delay_micros(9, 60 * k_second)) << "no retry after the last attempt";
}

TEST(WebhookRetryAfter, ParsesSecondsAndHttpDatesAndRefusesTheRest) {
  using outbound_http::parse_retry_after;
  const time::Micros now = *time::parse_iso("2026-10-21T07:28:00Z");
  EXPECT_EQ(*parse_retry_after("120", now), 120 * k_second);
  EXPECT_EQ(*parse_retry_after("  7 ", now), 7 * k_second);
  EXPECT_EQ(*parse_retry_after("0", now), 0);
  EXPECT_EQ(*parse_retry_after("Wed, 21 Oct 2026 07:30:00 GMT", now), 120 * k_second);
  EXPECT_EQ(*parse_retry_after("Wednesday, 21-Oct-26 08:28:00 GMT", now), 3600 * k_second)
      << "RFC 850";
  EXPECT_EQ(*parse_retry_after("Wed Oct 21 07:28:30 2026", now), 30 * k_second) << "asctime";
  EXPECT_EQ(*parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now), 0) << "a past date";
  EXPECT_GE(*parse_retry_after("99999999999999999999", now), 36000 * k_second);
  for (const char* bad : {"", "   ", "soon", "-5", "1.5", "12abc"}) {
    EXPECT_FALSE(parse_retry_after(bad, now)) << bad;
  }
}

TEST(WebhookLogText, KeepsUtf8ReplacesControlsAndCutsOnACharacterBoundary) {
  using outbound_http::printable_text;
  EXPECT_EQ(printable_text("caf\xC3\xA9 ok\n", 100), "caf\xC3\xA9 ok\n");
  EXPECT_EQ(printable_text(std::string("a\0b\x1B", 4), 100), "a\xEF\xBF\xBD" "b\xEF\xBF\xBD");
  EXPECT_EQ(printable_text("\xFF\xC3", 100), "\xEF\xBF\xBD\xEF\xBF\xBD") << "not UTF-8";
  EXPECT_EQ(printable_text("ab\xC3\xA9", 3), "ab") << "never half a character";
  EXPECT_EQ(printable_text(std::string(5000, 'x'), 1024).size(), 1024u);
}

TEST(WebhookPayload, IsTheFourFieldsWithDataAsStored) {
  EXPECT_EQ(webhooks::payload("evt_1", "collection.paid", "2026-01-02T03:04:05.000006Z",
                              "{\"amount\":{\"amount\":100,\"currency\":\"COP\"}}"),
            "{\"id\":\"evt_1\",\"type\":\"collection.paid\",\"timestamp\":"
            "\"2026-01-02T03:04:05.000006Z\",\"data\":{\"amount\":{\"amount\":100,"
            "\"currency\":\"COP\"}}}");
}

TEST(WebhookDeliveryUrls, AreParsedByTheConnectingLibrary) {
  auto parts = outbound_http::parse_url("http://127.0.0.1:8080/hooks?x=1");
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->host, "127.0.0.1");
  EXPECT_EQ(parts->port, 8080);
  EXPECT_TRUE(parts->ip_literal);
  parts = outbound_http::parse_url("https://Hooks.Example.com/x");
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->port, 443);
  EXPECT_FALSE(parts->ip_literal);
  parts = outbound_http::parse_url("http://[::1]:9000/");
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->host, "::1");
  EXPECT_TRUE(parts->ip_literal);
  EXPECT_FALSE(outbound_http::parse_url("ftp://example.com/"));
  EXPECT_FALSE(outbound_http::parse_url("not a url"));
}

// A transport that resolves names from its table and answers every request at once with
// `status`, keeping what it was asked: the dispatcher's rules seen without a network.
class ScriptedTransport final : public outbound_http::Transport {
 public:
  std::map<std::string, std::vector<std::string>> names;
  int status = 200;
  mutable std::mutex mutex;
  mutable std::vector<outbound_http::Request> sent;   // guarded by mutex
  mutable std::vector<std::string> resolved;          // hosts asked, guarded by mutex

  outbound_http::Resolved resolve(const std::string& host, int) const override {
    std::lock_guard lock(mutex);
    resolved.push_back(host);
    auto found = names.find(host);
    if (found == names.end()) return {{}, "could not resolve host: unknown"};
    return {found->second, ""};
  }
  std::unique_ptr<outbound_http::Requests> open(std::size_t) const override {
    return std::make_unique<Answering>(*this);
  }

 private:
  class Answering final : public outbound_http::Requests {
   public:
    explicit Answering(const ScriptedTransport& owner) : owner_(owner) {}
    void start(std::size_t slot, const outbound_http::Request& request) override {
      std::lock_guard lock(owner_.mutex);
      owner_.sent.push_back(request);
      started_.push_back(slot);
    }
    std::vector<std::pair<std::size_t, outbound_http::Response>> poll(int) override {
      std::vector<std::pair<std::size_t, outbound_http::Response>> done;
      for (std::size_t slot : std::exchange(started_, {})) {
        outbound_http::Response response;
        response.status = owner_.status;
        done.emplace_back(slot, std::move(response));
      }
      return done;
    }
    std::size_t running() const override { return started_.size(); }
    void abandon_all() override { started_.clear(); }

   private:
    const ScriptedTransport& owner_;
    std::vector<std::size_t> started_;
  };
};

const std::string k_tenant = "ten_webhooksdispatchAAAAA";
const std::string k_other_tenant = "ten_webhooksdispatchBBBBB";

class WebhookDispatcher : public test_stores::EngineStoreTest {
 protected:
  void SetUp() override {
    EngineStoreTest::SetUp();
    if (IsSkipped()) return;
    write([&](store::Tx& tx) {
      for (const std::string& tenant : {k_tenant, k_other_tenant}) {
        tx.exec("INSERT INTO tenants (id, name, environment, inserted_at) VALUES (?, 't', "
                "'sandbox', ?)",
                {tenant, time::iso_now()});
      }
    });
  }

  void write(const std::function<void(store::Tx&)>& fn) {
    auto result = temp->store->write<Unit>([&](store::Tx& tx) -> Result<Unit> {
      fn(tx);
      return Unit{};
    });
    ASSERT_TRUE(result.ok());
  }

  std::string add_endpoint(const std::string& tenant, const std::string& url,
                           const std::string& event_types = "[]", bool enabled = true,
                           std::int64_t start_position = 0) {
    std::string id = ids::generate("whe");
    write([&](store::Tx& tx) {
      tx.exec("INSERT INTO webhook_endpoints (tenant_id, id, url, event_types, enabled, "
              "secret_sealed, start_position, inserted_at, updated_at) "
              "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
              {tenant, id, url, event_types, std::int64_t{enabled ? 1 : 0},
               webhooks::seal_secret(sealer, tenant, id, secret), start_position,
               time::iso_now(), time::iso_now()});
    });
    return id;
  }

  std::string emit(const std::string& tenant, const std::string& type) {
    std::string id;
    write([&](store::Tx& tx) { id = events::emit(tx, tenant, type, "{}", time::now_micros()); });
    write([&](store::Tx& tx) { events::assign_positions(tx, 100); });
    return id;
  }

  std::int64_t fan_out() {
    return temp->store
        ->write<std::int64_t>([this](store::Tx& tx) -> Result<std::int64_t> {
          return webhooks::fan_out(tx, clock, 100);
        })
        .value();
  }

  std::int64_t count(const std::string& sql, const store::Params& params = {}) {
    return test_stores::read_integer(*temp->store, sql, params);
  }

  // One delivery pass, by default through the server's transport (libcurl, the system resolver).
  bool deliver(const webhooks::DispatcherOptions& options,
               const outbound_http::Transport& transport = http_client::transport()) {
    return webhooks::deliver_pass(*temp->store, sealer, options, clock, transport);
  }

  // A delivery pass on its own thread, once the receiver holds its one request unanswered.
  std::thread pass_held_by(harness::WebhookReceiver& receiver,
                           const webhooks::DispatcherOptions& options) {
    receiver.script({harness::Answer{.hang = true}});
    add_endpoint(k_tenant, receiver.url());
    emit(k_tenant, "collection.paid");
    fan_out();
    std::thread pass([this, &options] { deliver(options); });
    EXPECT_TRUE(receiver.wait_for(1));
    return pass;
  }

  crypto::Sealer sealer{crypto::random_bytes(32)};
  std::string secret = webhooks::new_secret();
  time::SystemClock clock;
};

TEST_P(WebhookDispatcher, FanOutFollowsSubscriptionsStartPositionsAndTheCursor) {
  const std::string all = add_endpoint(k_tenant, "http://127.0.0.1:1/a");
  const std::string cards = add_endpoint(k_tenant, "http://127.0.0.1:1/b", "[\"card_transaction.*\"]");
  const std::string disabled = add_endpoint(k_tenant, "http://127.0.0.1:1/c", "[]", false);
  const std::string other = add_endpoint(k_other_tenant, "http://127.0.0.1:1/d");
  const std::string paid = emit(k_tenant, "collection.paid");
  const std::string authorized = emit(k_tenant, "card_transaction.authorization_approved");
  const std::string late = add_endpoint(k_tenant, "http://127.0.0.1:1/e", "[]", true,
                                        count("SELECT MAX(position) FROM events"));
  const std::string credited = emit(k_tenant, "account.credited");

  EXPECT_EQ(fan_out(), 3);
  EXPECT_EQ(fan_out(), 0) << "the cursor moved past them";
  auto deliveries_of = [&](const std::string& endpoint) {
    return count("SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = ? "
                 "AND state = 'pending' AND attempts = 0 AND replay = 0",
                 {endpoint});
  };
  EXPECT_EQ(deliveries_of(all), 3);
  EXPECT_EQ(deliveries_of(cards), 1) << "event_types filter";
  EXPECT_EQ(count("SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = ? AND event_id = ?",
                  {cards, authorized}),
            1);
  EXPECT_EQ(deliveries_of(disabled), 0) << "a disabled endpoint gets nothing";
  EXPECT_EQ(deliveries_of(other), 0) << "another tenant's events are not its";
  EXPECT_EQ(deliveries_of(late), 1) << "only events positioned after it was created";
  EXPECT_EQ(count("SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = ? AND event_id = ?",
                  {late, credited}),
            1);
  EXPECT_EQ(count("SELECT position FROM webhook_fanout WHERE id = 1"),
            count("SELECT MAX(position) FROM events"));
  static_cast<void>(paid);
}

// With no endpoint enabled the cursor moves past the events without a delivery; an endpoint
// enabled afterwards gets the events positioned after that, as it would have anyway.
TEST_P(WebhookDispatcher, WithNoEndpointEnabledTheCursorMovesPastTheEvents) {
  const std::string disabled = add_endpoint(k_tenant, "http://127.0.0.1:1/a", "[]", false);
  for (int i = 0; i < 150; ++i) emit(i % 2 ? k_tenant : k_other_tenant, "collection.paid");
  EXPECT_EQ(fan_out(), 0);
  EXPECT_EQ(count("SELECT position FROM webhook_fanout WHERE id = 1"),
            count("SELECT MAX(position) FROM events"));
  EXPECT_EQ(count("SELECT COUNT(*) FROM webhook_deliveries"), 0);
  EXPECT_EQ(fan_out(), 0) << "nothing new: nothing moves";
  write([&](store::Tx& tx) {
    tx.exec("UPDATE webhook_endpoints SET enabled = 1 WHERE id = ?", {disabled});
  });
  const std::string after = emit(k_tenant, "collection.paid");
  emit(k_other_tenant, "collection.paid");
  EXPECT_EQ(fan_out(), 2) << "with an endpoint enabled, events are read and fanned out";
  EXPECT_EQ(count("SELECT COUNT(*) FROM webhook_deliveries"), 1);
  EXPECT_EQ(count("SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = ? AND event_id = ?",
                  {disabled, after}),
            1);
  EXPECT_EQ(count("SELECT position FROM webhook_fanout WHERE id = 1"),
            count("SELECT MAX(position) FROM events"));
}

// Two nodes' fan-out passes, one waiting for the cursor's lock that the other holds: the waiting
// pass dates its deliveries once it holds the lock, after the other pass's, so an endpoint's
// first attempts fall due in the order of their events. (Dated when it started, before the wait,
// the later event's delivery fell due first, and a dispatcher pass between the two times sent
// the later event before the earlier one, to every endpoint.)
TEST_P(WebhookDispatcher, APassThatWaitedForAnotherNodesDatesItsDeliveriesAfterThatPasss) {
  if (GetParam() == store::Engine::sqlite) {
    GTEST_SKIP() << "one SQLite writer runs one pass at a time";
  }
  const std::string endpoint = add_endpoint(k_tenant, "http://127.0.0.1:1/a");
  const std::string first = emit(k_tenant, "collection.paid");
  test_clock::ManualClock waiting_clock(1000 * k_second);       // the waiting pass's node
  const test_clock::ManualClock holding_clock(2000 * k_second);  // the other node's, later
  std::promise<void> held;
  std::promise<void> go;
  std::shared_future<void> go_future = go.get_future().share();
  std::thread holding([&] {
    write([&](store::Tx& tx) {
      EXPECT_EQ(webhooks::fan_out(tx, holding_clock, 100), 1);
      held.set_value();
      go_future.wait();
    });
  });
  held.get_future().wait();
  std::thread waiting([&] {
    write([&](store::Tx& tx) { EXPECT_EQ(webhooks::fan_out(tx, waiting_clock, 100), 1); });
  });
  // Until the waiting pass waits for the lock (at most 10 s).
  for (int polls = 0; count("SELECT COUNT(*) FROM pg_locks WHERE NOT granted") == 0; ++polls) {
    if (polls == 2000) {
      ADD_FAILURE() << "the second pass never waited for the cursor's lock";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const std::string second = emit(k_tenant, "collection.paid");
  waiting_clock.advance(2000 * k_second);  // time passes while it waits: 3000 s
  go.set_value();
  holding.join();
  waiting.join();
  auto due = [&](const std::string& event) {
    return count("SELECT next_attempt_at_micros FROM webhook_deliveries WHERE endpoint_id = ? "
                 "AND event_id = ?",
                 {endpoint, event});
  };
  EXPECT_EQ(due(first), 2000 * k_second);
  EXPECT_EQ(due(second), 3000 * k_second)
      << "the later event's delivery is dated when its pass held the lock, after the first's";
}

TEST_P(WebhookDispatcher, ALiveLeaseIsRespectedAndAnExpiredOneTakenOver) {
  harness::WebhookReceiver receiver;
  const std::string endpoint = add_endpoint(k_tenant, receiver.url());
  emit(k_tenant, "collection.paid");
  fan_out();
  write([&](store::Tx& tx) {
    tx.exec("UPDATE webhook_endpoints SET lease_owner = 'another-node', lease_until_micros = ?",
            {time::now_micros() + 60 * k_second});
  });
  webhooks::DispatcherOptions options;
  options.node_id = "this-node";
  EXPECT_FALSE(deliver(options));
  EXPECT_EQ(receiver.count(), 0u) << "another node holds the endpoint";

  write([&](store::Tx& tx) {
    tx.exec("UPDATE webhook_endpoints SET lease_until_micros = ?", {time::now_micros() - 1});
  });
  EXPECT_TRUE(deliver(options));
  ASSERT_EQ(receiver.count(), 1u);
  EXPECT_EQ(count("SELECT COUNT(*) FROM webhook_deliveries WHERE state = 'delivered'"), 1);
  EXPECT_EQ(count("SELECT COUNT(*) FROM webhook_endpoints WHERE lease_owner IS NULL"), 1)
      << "released after the pass";
  static_cast<void>(endpoint);
}

TEST_P(WebhookDispatcher, ANodeThatLostItsLeaseMidAttemptWritesNothing) {
  harness::WebhookReceiver receiver;
  webhooks::DispatcherOptions options;
  options.node_id = "slow-node";
  std::thread pass = pass_held_by(receiver, options);
  // Another node took the endpoint over (the slow node's lease ran out).
  write([&](store::Tx& tx) {
    tx.exec("UPDATE webhook_endpoints SET lease_owner = 'fast-node', lease_until_micros = ?",
            {time::now_micros() + 60 * k_second});
  });
  receiver.release_hung();  // the slow node's attempt ends (connection closed, no answer)
  pass.join();
  EXPECT_EQ(count("SELECT COUNT(*) FROM webhook_attempts"), 0);
  EXPECT_EQ(count("SELECT attempts FROM webhook_deliveries"), 0);
  EXPECT_EQ(count("SELECT COUNT(*) FROM webhook_endpoints WHERE lease_owner = 'fast-node'"), 1)
      << "nor releases a lease that is not its own";
}

TEST_P(WebhookDispatcher, StoppingDropsTheAttemptInFlightUnrecorded) {
  harness::WebhookReceiver receiver;
  std::atomic<bool> stopping{false};
  webhooks::DispatcherOptions options;
  options.node_id = "stopping-node";
  options.stopping = &stopping;
  std::thread pass = pass_held_by(receiver, options);
  const auto asked = std::chrono::steady_clock::now();
  stopping = true;
  pass.join();
  EXPECT_LT(std::chrono::steady_clock::now() - asked, std::chrono::seconds(2))
      << "a stop does not wait for the 15 s timeout";
  EXPECT_EQ(count("SELECT COUNT(*) FROM webhook_attempts"), 0);
  EXPECT_EQ(count("SELECT COUNT(*) FROM webhook_deliveries WHERE state = 'pending' "
                  "AND attempts = 0"),
            1)
      << "still pending: sent again after the restart";
  EXPECT_EQ(count("SELECT COUNT(*) FROM webhook_endpoints WHERE lease_owner IS NULL"), 1);
  receiver.release_hung();
}

TEST_P(WebhookDispatcher, APassStartsNoRequestAfterOneTimeoutsLength) {
  harness::WebhookReceiver receiver;
  receiver.set_default({.delay_ms = 250});
  add_endpoint(k_tenant, receiver.url());
  for (int i = 0; i < 3; ++i) emit(k_tenant, "collection.paid");
  fan_out();
  webhooks::DispatcherOptions options;
  options.node_id = "this-node";
  options.timeout_ms = 400;
  EXPECT_TRUE(deliver(options));
  EXPECT_EQ(receiver.count(), 2u) << "the second answer came after 400 ms: no third request";
  EXPECT_EQ(count("SELECT COUNT(*) FROM webhook_deliveries WHERE state = 'delivered'"), 2);
  EXPECT_TRUE(deliver(options));
  EXPECT_EQ(receiver.count(), 3u) << "the next pass takes the rest";
}

TEST_P(WebhookDispatcher, WithoutASecretThatOpensNothingIsSentAndTheAttemptIsLogged) {
  harness::WebhookReceiver receiver;
  const std::string endpoint = add_endpoint(k_tenant, receiver.url());
  write([&](store::Tx& tx) {
    // Sealed for another endpoint: it does not open on this one (a key changed, a row copied).
    tx.exec("UPDATE webhook_endpoints SET secret_sealed = ?",
            {webhooks::seal_secret(sealer, k_tenant, "whe_another", secret)});
  });
  emit(k_tenant, "collection.paid");
  fan_out();
  webhooks::DispatcherOptions options;
  options.node_id = "this-node";
  EXPECT_TRUE(deliver(options));
  EXPECT_EQ(receiver.count(), 0u);
  EXPECT_EQ(count("SELECT COUNT(*) FROM webhook_attempts WHERE endpoint_id = ? "
                  "AND error = 'signing secret unavailable' AND status_code IS NULL",
                  {endpoint}),
            1);
  EXPECT_EQ(count("SELECT COUNT(*) FROM webhook_deliveries WHERE state = 'pending' "
                  "AND attempts = 1 AND next_attempt_at_micros IS NOT NULL"),
            1)
      << "retried on the schedule";
}

TEST_P(WebhookDispatcher, HostsAreResolvedAndRequestsSentThroughTheTransportGiven) {
  ScriptedTransport transport;
  // A public name that also resolves to a private address: only the public one is connected to.
  transport.names["hooks.example.com"] = {"93.184.216.34", "10.0.0.7"};
  transport.names["internal.example.com"] = {"10.0.0.8"};
  const std::string open = add_endpoint(k_tenant, "https://hooks.example.com/in");
  const std::string closed = add_endpoint(k_tenant, "https://internal.example.com/in");
  const std::string event = emit(k_tenant, "collection.paid");
  fan_out();
  webhooks::DispatcherOptions options;
  options.node_id = "this-node";
  EXPECT_TRUE(deliver(options, transport));

  std::sort(transport.resolved.begin(), transport.resolved.end());
  EXPECT_EQ(transport.resolved,
            (std::vector<std::string>{"hooks.example.com", "internal.example.com"}));
  ASSERT_EQ(transport.sent.size(), 1u) << "nothing is sent to a host with no allowed address";
  const outbound_http::Request& request = transport.sent[0];
  EXPECT_EQ(request.url, "https://hooks.example.com/in");
  EXPECT_EQ(request.pinned_addresses, std::vector<std::string>{"93.184.216.34"});
  EXPECT_NE(std::find(request.headers.begin(), request.headers.end(), "webhook-id: " + event),
            request.headers.end());
  EXPECT_EQ(count("SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = ? "
                  "AND state = 'delivered'",
                  {open}),
            1);
  EXPECT_EQ(count("SELECT COUNT(*) FROM webhook_attempts WHERE endpoint_id = ? "
                  "AND error = 'address not allowed' AND status_code IS NULL",
                  {closed}),
            1)
      << "an attempt without a request, retried on the schedule";
}

TEST_P(WebhookDispatcher, AStatusTheTransportAnswersDecidesTheDelivery) {
  ScriptedTransport transport;
  transport.names["hooks.example.com"] = {"93.184.216.34"};
  transport.status = 410;
  const std::string endpoint = add_endpoint(k_tenant, "https://hooks.example.com/in");
  emit(k_tenant, "collection.paid");
  fan_out();
  webhooks::DispatcherOptions options;
  options.node_id = "this-node";
  EXPECT_TRUE(deliver(options, transport));
  EXPECT_EQ(count("SELECT COUNT(*) FROM webhook_endpoints WHERE id = ? AND enabled = 0 "
                  "AND disabled_reason = 'gone'",
                  {endpoint}),
            1);
  EXPECT_EQ(count("SELECT COUNT(*) FROM webhook_attempts WHERE status_code = 410"), 1);
}

TESORO_ON_BOTH_ENGINES(WebhookDispatcher);

}  // namespace
