#pragma once
// Outgoing HTTP requests (libcurl), for webhook deliveries: many requests in flight at once on
// one thread (curl multi), each slot's requests one at a time on a connection it keeps.
//
// Safety of destinations is the caller's rule, this client's means: the caller resolves the
// host (resolve()), keeps the addresses it allows, and hands them in as `pinned_addresses`;
// the request then connects to those addresses only (CURLOPT_RESOLVE), so DNS cannot answer
// differently between the check and the connection. Redirects are never followed, proxies from
// the environment are never used, and only http and https are spoken.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/time.hpp"

namespace tesoro::http_client {

struct UrlParts {
  std::string scheme;  // http | https
  std::string host;    // without the brackets of an IPv6 literal
  int port = 0;        // the scheme's default when the URL has none
  bool ip_literal = false;
};
// nullopt when `url` is not an absolute http(s) URL with a host.
std::optional<UrlParts> parse_url(std::string_view url);

// Every address `host` resolves to (numeric IPv4 or IPv6 text, without brackets), or why none.
// Blocks for as long as the system resolver takes.
struct Resolved {
  std::vector<std::string> addresses;
  std::string error;  // when `addresses` is empty
};
Resolved resolve(const std::string& host, int port);

struct Request {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;                  // POSTed
  // Where the URL's host may connect (from resolve(), filtered by the caller); empty for an
  // IP-literal host, which is connected to as is.
  std::vector<std::string> pinned_addresses;
  std::int64_t timeout_ms = 15000;  // the whole exchange
  std::size_t body_max_bytes = 1024;  // of the response body kept; the rest is read and dropped
};

struct Response {
  std::optional<int> status;         // nullopt: no response (error says why)
  std::optional<std::string> error;  // transport failure: timeout, refused, reset ...
  bool timed_out = false;
  std::string body;                  // at most body_max_bytes, as received
  std::optional<std::string> retry_after;  // the Retry-After header, when given
  std::int64_t latency_ms = 0;             // request sent to response read
};

// Requests in flight on one thread. Slots are the caller's numbers (0..slots-1): each slot runs
// one request at a time and keeps its connection for the next one. Driven by curl's socket
// interface on an epoll set: a socket that becomes ready costs the work of that one transfer,
// not a look at every transfer in flight (with hundreds of requests waiting on a slow endpoint,
// curl_multi_poll over every socket cost more than the requests themselves).
class Multi {
 public:
  explicit Multi(std::size_t slots);
  ~Multi();
  Multi(const Multi&) = delete;
  Multi& operator=(const Multi&) = delete;

  // Starts `request` on `slot`, which must be idle.
  void start(std::size_t slot, const Request& request);
  // Drives the transfers for at most `wait_ms` and returns those that finished, by slot.
  std::vector<std::pair<std::size_t, Response>> poll(int wait_ms);
  // How many requests are in flight.
  std::size_t running() const { return running_; }
  // Drops every request in flight (their slots become idle, nothing is reported).
  void abandon_all();
  // Makes a poll() under way (or the next one) return at once. Any thread may call it.
  void wakeup();

  struct Slot;  // one easy handle and its request's state (http_client.cpp)
  struct Events;  // the sockets and timer curl asks to watch (http_client.cpp)

 private:
  void* multi_ = nullptr;
  std::unique_ptr<Events> events_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::size_t running_ = 0;
};

// Requests on a thread of their own: submit() returns at once, and `done` is called on that
// thread with the response, so that any number of requests waiting on slow servers hold one
// thread and nothing else. The slots of one Multi share curl's connection cache, so requests
// to one server reuse its connections. At most `slots` requests are in flight; more wait their
// turn, their timeout counting from submit() (one whose time ran out while it waited is answered
// timed out without being sent). `done` must not block: it hands the response on.
class AsyncClient {
 public:
  explicit AsyncClient(std::size_t slots);
  ~AsyncClient();  // stop()
  AsyncClient(const AsyncClient&) = delete;
  AsyncClient& operator=(const AsyncClient&) = delete;

  void submit(Request request, std::function<void(Response)> done);
  // Ends the thread. What is in flight or waiting is answered with the error "stopped".
  void stop();

 private:
  struct Waiting {
    Request request;
    std::function<void(Response)> done;
    std::chrono::steady_clock::time_point submitted;
  };
  void run();

  Multi multi_;
  std::vector<std::function<void(Response)>> in_flight_;  // by slot; empty: the slot is free
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Waiting> waiting_;  // guarded by mutex_
  bool stopping_ = false;        // guarded by mutex_
  std::thread thread_;
};

// The delay a Retry-After value asks for, from `real_now`: delta seconds ("120") or an HTTP
// date ("Wed, 21 Oct 2026 07:28:00 GMT", and the obsolete RFC 850 and asctime forms). A date in
// the past is 0. nullopt when the value is neither.
std::optional<time::Micros> parse_retry_after(std::string_view value, time::Micros real_now);

// Response text fit for a log: at most `max_bytes`, cut on a character boundary, with control
// characters and bytes that are not UTF-8 replaced by U+FFFD (tabs and line breaks kept).
std::string printable_text(std::string_view bytes, std::size_t max_bytes);

}  // namespace tesoro::http_client
