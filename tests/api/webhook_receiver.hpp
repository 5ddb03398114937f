#pragma once
// A webhook receiver inside the test process: a small blocking HTTP/1.1 server on 127.0.0.1 (a
// free port) that records every request (headers, body) and answers from a script: a status per
// request in order, an optional Retry-After, a delay, or a hang (the request is held unanswered
// until release_hung() or the receiver's end), then a default answer. Keep-alive connections are
// served, one thread per connection. Nothing here knows the server's internals.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace harness {

struct ReceivedRequest {
  std::string method;
  std::string target;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  std::chrono::steady_clock::time_point at;

  std::string header(const std::string& name) const;
};

struct Answer {
  int status = 200;
  std::optional<std::string> retry_after;
  std::string body;
  bool hang = false;  // hold the request open without answering
  int delay_ms = 0;   // answer this late
};

class WebhookReceiver {
 public:
  WebhookReceiver();
  ~WebhookReceiver();
  WebhookReceiver(const WebhookReceiver&) = delete;
  WebhookReceiver& operator=(const WebhookReceiver&) = delete;

  int port() const { return port_; }
  std::string url(const std::string& path = "/webhooks") const;

  // The answers of the next requests, in order (appended to what is left of the script).
  void script(const std::vector<Answer>& answers);
  // The answer once the script has run out (200 at first).
  void set_default(const Answer& answer);
  // Ends every held request (its connection is closed without an answer).
  void release_hung();

  std::vector<ReceivedRequest> requests() const;
  std::size_t count() const;
  // Waits until at least `n` requests have arrived; false after `timeout_ms`.
  bool wait_for(std::size_t n, int timeout_ms = 10000) const;
  // Waits `ms` and returns whether the count stayed at `n` (nothing more arrived).
  bool stays_at(std::size_t n, int ms = 1500) const;

 private:
  void accept_loop();
  void serve(int fd);
  Answer next_answer();

  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::vector<ReceivedRequest> requests_;
  std::deque<Answer> script_;
  Answer default_answer_;
  std::uint64_t release_generation_ = 0;
  std::thread acceptor_;
  std::vector<std::thread> connections_;
};

// Standard Webhooks (v1) with OpenSSL alone, nothing of the server's code: base64, and whether
// `request` carries a valid signature of `secret` (whsec_...) among its webhook-signature values.
std::string base64_encode(const std::string& bytes);
std::string base64_decode(const std::string& text);
bool signed_with(const std::string& secret, const ReceivedRequest& request);

}  // namespace harness
