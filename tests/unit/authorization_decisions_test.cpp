// What an authorization endpoint's answer decides (domain/cards/authorization_decisions), the
// request it is sent, and the asynchronous client that sends it (core/http_client.hpp's
// AsyncClient) against a receiver in this process: many requests in flight on one thread, the
// timeout honoured, requests beyond the slots waiting their turn within their own timeout, and a
// stop that answers what is left.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "http/client.hpp"
#include "domain/cards/authorization_decisions.hpp"
#include "domain/webhooks/secrets.hpp"
#include "webhook_receiver.hpp"

using namespace tesoro;
namespace decisions = tesoro::cards::decisions;

namespace {

http_client::Response answered(int status, std::string body) {
  http_client::Response response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

webhooks::Endpoint endpoint_with(const std::string& fallback) {
  webhooks::Endpoint endpoint;
  endpoint.id = "whe_decisionsunittestAAAA";
  endpoint.url = "http://127.0.0.1:9/decide";
  endpoint.authorization_fallback = fallback;
  endpoint.authorization_timeout_ms = 500;
  return endpoint;
}

// Collects the answers of an AsyncClient, which come on its thread.
class Answers {
 public:
  std::function<void(http_client::Response)> slot(std::size_t index) {
    return [this, index](http_client::Response response) {
      std::lock_guard lock(mutex_);
      got_[index] = std::move(response);
      at_[index] = std::chrono::steady_clock::now();
      changed_.notify_all();
    };
  }
  bool wait_for(std::size_t count, int timeout_ms = 10000) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                             [&] { return got_.size() >= count; });
  }
  http_client::Response get(std::size_t index) {
    std::lock_guard lock(mutex_);
    return got_.at(index);
  }
  std::chrono::steady_clock::time_point at(std::size_t index) {
    std::lock_guard lock(mutex_);
    return at_.at(index);
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::size_t, http_client::Response> got_;
  std::map<std::size_t, std::chrono::steady_clock::time_point> at_;
};

http_client::Request post_to(const std::string& url, std::int64_t timeout_ms) {
  http_client::Request request;
  request.url = url;
  request.body = "{}";
  request.timeout_ms = timeout_ms;
  return request;
}

}  // namespace

TEST(AuthorizationDecisionAnswers, OnlyA2xxDecisionObjectDecides) {
  struct Case {
    http_client::Response response;
    std::string outcome;
  };
  http_client::Response timed_out;
  timed_out.timed_out = true;
  timed_out.error = "timed out";
  http_client::Response refused;
  refused.error = "Connection refused";
  const std::vector<Case> cases = {
      {answered(200, R"({"approved":true})"), "webhook_approved"},
      {answered(204, R"({"approved":false})"), "webhook_declined"},
      {answered(200, R"({"approved":true,"reason":null,"other":{}})"), "webhook_approved"},
      {answered(200, R"( {"approved" : false , "reason":"no"} )"), "webhook_declined"},
      {answered(200, R"({"approved":1})"), "webhook_error"},
      {answered(200, R"({"Approved":true})"), "webhook_error"},
      {answered(200, R"({"approved":true,"reason":["x"]})"), "webhook_error"},
      {answered(200, R"({"approved":true)"), "webhook_error"},
      {answered(200, R"(true)"), "webhook_error"},
      {answered(200, ""), "webhook_error"},
      {answered(404, R"({"approved":true})"), "webhook_error"},
      {answered(301, ""), "webhook_error"},
      {timed_out, "webhook_timeout"},
      {refused, "webhook_error"},
  };
  for (const Case& c : cases) {
    const decisions::Answer answer = decisions::answer_of(c.response, 500, 12);
    EXPECT_EQ(answer.outcome, c.outcome) << c.response.body;
    EXPECT_EQ(answer.duration_ms, 12);
    EXPECT_EQ(answer.status_code, c.response.status);
    const bool decided = c.outcome == "webhook_approved" || c.outcome == "webhook_declined";
    EXPECT_EQ(answer.error.has_value(), !decided) << c.response.body;
  }
  EXPECT_NE(decisions::answer_of(timed_out, 500, 500).error->find("500 ms"), std::string::npos);
  EXPECT_EQ(*decisions::answer_of(refused, 500, 3).error, "Connection refused");
  EXPECT_NE(decisions::answer_of(answered(404, "gone"), 500, 3).error->find("HTTP 404: gone"),
            std::string::npos);
}

TEST(AuthorizationDecisionAnswers, AReasonIsCutTo200CharactersWithoutControlCharacters) {
  const std::string long_reason(150, 'a');
  const std::string accented = "\xC3\xB1";  // one character, two bytes
  std::string many;
  for (int i = 0; i < 250; ++i) many += accented;
  auto reason = [](const std::string& text) {
    boost::json::object body{{"approved", false}, {"reason", text}};
    return decisions::answer_of(answered(200, boost::json::serialize(body)), 500, 1).detail;
  };
  EXPECT_EQ(reason(long_reason), long_reason);
  std::string expected;
  for (int i = 0; i < 200; ++i) expected += accented;
  EXPECT_EQ(reason(many), expected);  // 200 characters, 400 bytes: no character cut in two
  EXPECT_EQ(reason("a\x01z"), "a\xEF\xBF\xBDz");
}

TEST(AuthorizationDecisionAnswers, TheFallbackDecidesTimeoutsAndErrorsOnly) {
  const decisions::Answer approved = decisions::answer_of(answered(200, R"({"approved":true})"), 1, 5);
  const decisions::Answer declined =
      decisions::answer_of(answered(200, R"({"approved":false,"reason":"r"})"), 1, 5);
  const decisions::Answer error = decisions::answer_of(answered(500, ""), 1, 5);
  for (const std::string fallback : {"decline", "approve"}) {
    const webhooks::Endpoint endpoint = endpoint_with(fallback);
    const cards::TenantDecision yes = decisions::decide(approved, endpoint);
    EXPECT_TRUE(yes.approved);
    EXPECT_EQ(yes.by, "endpoint");
    EXPECT_EQ(yes.webhook_endpoint_id, endpoint.id);
    const cards::TenantDecision no = decisions::decide(declined, endpoint);
    EXPECT_FALSE(no.approved);
    EXPECT_EQ(no.detail, "r");
    const cards::TenantDecision fell = decisions::decide(error, endpoint);
    EXPECT_EQ(fell.approved, fallback == "approve");
    EXPECT_EQ(fell.by, "fallback");
    EXPECT_EQ(fell.reason, "webhook_error");
    EXPECT_EQ(fell.duration_ms, 5);
  }
  const cards::TenantDecision unsent =
      decisions::decide(decisions::refused_answer("address not allowed"), endpoint_with("decline"));
  EXPECT_FALSE(unsent.approved);
  EXPECT_EQ(unsent.reason, "webhook_error");
}

TEST(AuthorizationDecisionRequests, TheRequestIsSignedAndCarriesTheQuestion) {
  const std::string secret = webhooks::new_secret();
  const decisions::Asked asked{endpoint_with("decline"), {secret}};
  const decisions::Question question{"increment", "ctx_decisionsunittestAAAA", "car_X",
                                     "acc_Y",     250,
                                     "COP",       {"physical_purchase", {"Shop", "5411", "M9", "CO"}}};
  const decisions::Sent sent = decisions::request_for(asked, question, 1'000'000, 1'795'000'000'000'000,
                                                      {"127.0.0.1"});
  EXPECT_EQ(sent.request_id.rfind("adr_", 0), 0u);
  EXPECT_EQ(sent.webhook_timestamp, 1'795'000'000);
  EXPECT_EQ(sent.request.timeout_ms, 500);
  EXPECT_EQ(sent.request.pinned_addresses, std::vector<std::string>{"127.0.0.1"});
  const boost::json::value body = boost::json::parse(sent.request.body);
  EXPECT_EQ(body.at("id").as_string(), sent.request_id);
  EXPECT_EQ(body.at("type").as_string(), "card_authorization.request");
  EXPECT_EQ(body.at("timestamp").as_string(), "1970-01-01T00:00:01.000000Z");
  const boost::json::value& data = body.at("data");
  EXPECT_EQ(data.at("kind").as_string(), "increment");
  EXPECT_EQ(data.at("amount").at("amount").as_int64(), 250);
  EXPECT_EQ(data.at("merchant").at("mid").as_string(), "M9");
  EXPECT_EQ(data.at("channel").as_string(), "physical_purchase");
  harness::ReceivedRequest as_received;
  for (const std::string& header : sent.request.headers) {
    const std::size_t colon = header.find(':');
    as_received.headers[header.substr(0, colon)] = header.substr(colon + 2);
  }
  as_received.body = sent.request.body;
  EXPECT_EQ(as_received.header("webhook-id"), sent.request_id);
  EXPECT_TRUE(harness::signed_with(secret, as_received));
  // Without a secret that opens, the request goes unsigned (its receiver refuses it).
  const decisions::Sent unsigned_request =
      decisions::request_for({endpoint_with("decline"), {}}, question, 0, 0, {});
  for (const std::string& header : unsigned_request.request.headers) {
    EXPECT_NE(header.rfind("webhook-signature", 0), 0u);
  }
}

TEST(AsyncClient, ManyRequestsWaitOnOneThreadAndEachKeepsItsTimeout) {
  harness::WebhookReceiver receiver;
  harness::Answer slow;
  slow.delay_ms = 600;
  slow.body = "late";
  receiver.set_default(slow);
  http_client::AsyncClient client(64);
  Answers answers;
  const auto started = std::chrono::steady_clock::now();
  constexpr std::size_t k_requests = 40;
  for (std::size_t i = 0; i < k_requests; ++i) {
    // Every other one gives up before the answer comes.
    client.submit(post_to(receiver.url(), i % 2 == 0 ? 2000 : 200), answers.slot(i));
  }
  ASSERT_TRUE(answers.wait_for(k_requests));
  for (std::size_t i = 0; i < k_requests; ++i) {
    const http_client::Response response = answers.get(i);
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(answers.at(i) - started);
    if (i % 2 == 0) {
      EXPECT_EQ(response.status, 200) << i << " " << response.error.value_or("");
      EXPECT_EQ(response.body, "late");
      EXPECT_LT(took.count(), 1500) << "answered together, not one after another";
    } else {
      EXPECT_TRUE(response.timed_out) << i;
      EXPECT_GE(took.count(), 200);
      // Given up at its timeout, not when the answer came (600 ms). (A tighter bound failed
      // once under the sanitizers beside a build: 261 ms on a busy machine is still on time.)
      EXPECT_LT(took.count(), 500) << "the timeout is honoured before the answer comes";
    }
  }
}

TEST(AsyncClient, RequestsBeyondTheSlotsWaitTheirTurnWithinTheirTimeout) {
  harness::WebhookReceiver receiver;
  harness::Answer slow;
  slow.delay_ms = 300;
  receiver.set_default(slow);
  http_client::AsyncClient client(2);
  Answers answers;
  client.submit(post_to(receiver.url(), 5000), answers.slot(0));
  client.submit(post_to(receiver.url(), 5000), answers.slot(1));
  client.submit(post_to(receiver.url(), 5000), answers.slot(2));  // waits for a slot
  client.submit(post_to(receiver.url(), 100), answers.slot(3));   // its time runs out waiting
  ASSERT_TRUE(answers.wait_for(4));
  for (std::size_t i : {0u, 1u, 2u}) EXPECT_EQ(answers.get(i).status, 200) << i;
  EXPECT_TRUE(answers.get(3).timed_out);
  EXPECT_LT(answers.at(3), answers.at(0));  // answered while the first two still ran
  EXPECT_GT(answers.at(2), answers.at(0));
}

TEST(AsyncClient, StoppingAnswersWhatIsLeft) {
  harness::WebhookReceiver receiver;
  harness::Answer hang;
  hang.hang = true;
  receiver.set_default(hang);
  Answers answers;
  {
    http_client::AsyncClient client(4);
    client.submit(post_to(receiver.url(), 10000), answers.slot(0));
    ASSERT_TRUE(receiver.wait_for(1));
    client.stop();
    EXPECT_TRUE(answers.wait_for(1, 1000));
    client.submit(post_to(receiver.url(), 10000), answers.slot(1));  // after the stop: at once
    EXPECT_TRUE(answers.wait_for(2, 1000));
  }
  EXPECT_EQ(answers.get(0).error, "stopped");
  EXPECT_EQ(answers.get(1).error, "stopped");
  receiver.release_hung();
}
