#pragma once
// Outgoing HTTP requests on libcurl, and host names resolved by the system resolver: the
// server's outbound_http::Transport (core/outbound_http.hpp, where requests, responses and the
// rules of the seam are written), and the asynchronous client that asks the tenant's endpoint
// about card authorizations.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/outbound_http.hpp"

namespace tesoro::http_client {

using outbound_http::Request;
using outbound_http::Resolved;
using outbound_http::Response;

// Every address `host` resolves to, by the system resolver (getaddrinfo). Blocks for as long as
// it takes.
Resolved resolve(const std::string& host, int port);

// Requests in flight on one thread, with libcurl. Driven by curl's socket interface on an epoll
// set: a socket that becomes ready costs the work of that one transfer, not a look at every
// transfer in flight (with hundreds of requests waiting on a slow endpoint, curl_multi_poll over
// every socket cost more than the requests themselves).
class Multi final : public outbound_http::Requests {
 public:
  explicit Multi(std::size_t slots);
  ~Multi() override;
  Multi(const Multi&) = delete;
  Multi& operator=(const Multi&) = delete;

  void start(std::size_t slot, const Request& request) override;
  std::vector<std::pair<std::size_t, Response>> poll(int wait_ms) override;
  std::size_t running() const override { return running_; }
  void abandon_all() override;
  // Makes a poll() under way (or the next one) return at once. Any thread may call it.
  void wakeup();

  struct Slot;  // one easy handle and its request's state (client.cpp)
  struct Events;  // the sockets and timer curl asks to watch (client.cpp)

 private:
  void* multi_ = nullptr;
  std::unique_ptr<Events> events_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::size_t running_ = 0;
};

// The server's transport: resolve() and Multi.
const outbound_http::Transport& transport();

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

}  // namespace tesoro::http_client
