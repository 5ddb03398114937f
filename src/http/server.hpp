#pragma once
// The HTTP/1.1 server (Boost.Beast). The only translation unit that includes Beast: it owns
// sockets, limits, timeouts and keep-alive, and hands complete requests to a worker pool.
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "http/message.hpp"

namespace tesoro::http {

struct ServerOptions {
  std::string host = "127.0.0.1";
  unsigned short port = 8080;
  int io_threads = limits::k_io_threads_default;
  int workers = limits::k_workers_default_sqlite;
  // Threads of their own for the requests Handlers::is_bulk names; 0: they go to the workers.
  int bulk_workers = 0;
};

struct Handlers {
  // Runs on a worker thread; may block on the database. Must not throw.
  std::function<Response(Request&)> handle;
  // Handles the request on the I/O thread that read it, when its handling never waits (no
  // commit to wait for, no lock, no network, no reader to wait for), without the two thread hops
  // to a worker and back; nullopt: it goes to a worker. Empty: every request goes to a worker.
  std::function<std::optional<Response>(Request&)> handle_inline;
  // Renders an error found before a request could be handed over (too large, malformed).
  std::function<Response(const Error&, const Request&)> render_error;
  // Called once the listener is bound, with the actual port.
  std::function<void(unsigned short)> on_listening;
  // Whether a request may carry many items (a batch): with ServerOptions::bulk_workers, such
  // requests are handled on threads of their own. Empty: none is.
  std::function<bool(const Request&)> is_bulk;
  // Called on each bulk worker thread before its first request (its priority, say).
  std::function<void()> bulk_worker_started;
  // Called on a worker thread (bulk or not) that has waited limits::k_worker_idle_ms for a
  // request, once until it handles one again (WorkerPool).
  std::function<void()> worker_idle;
};

class Server {
 public:
  Server(ServerOptions options, Handlers handlers);
  ~Server();
  // Serves until SIGINT or SIGTERM, then stops accepting, finishes in-flight requests and
  // returns. Throws at start-up when the address cannot be bound.
  void run();

  struct Impl;  // public so the session class of server.cpp can name it

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tesoro::http
