#include "http/server.hpp"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <array>
#include <atomic>
#include <cctype>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/limits.hpp"
#include "core/log.hpp"
#include "core/metrics.hpp"
#include "core/thread_priority.hpp"
#include "http/later.hpp"
#include "http/request_head.hpp"
#include "http/status.hpp"
#include "http/worker_pool.hpp"

namespace tesoro::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

struct Server::Impl {
  // Counters first: pending handlers destroyed with `io` still touch them.
  ServerOptions options;
  Handlers handlers;
  std::atomic<int> connections{0};
  std::atomic<int> in_flight{0};
  std::atomic<bool> stopping{false};
  asio::io_context io{options.io_threads};
  WorkerPool workers{options.workers, idle_after(), handlers.worker_idle};
  std::optional<WorkerPool> bulk_workers;  // when options.bulk_workers > 0
  // The acceptor, its signals and the shutdown run on one strand: closing the acceptor never
  // races an accept completing on another I/O thread.
  asio::strand<asio::io_context::executor_type> control{asio::make_strand(io)};
  tcp::acceptor acceptor{control};
  asio::signal_set signals{control, SIGINT, SIGTERM};
  asio::steady_timer drain_timer{control};
  asio::steady_timer accept_pause{control};
  std::chrono::steady_clock::time_point drain_deadline;

  Impl(ServerOptions o, Handlers h) : options(std::move(o)), handlers(std::move(h)) {
    if (options.bulk_workers > 0) {
      bulk_workers.emplace(options.bulk_workers, idle_after(), handlers.worker_idle);
    }
  }
  static std::chrono::milliseconds idle_after() {
    return std::chrono::milliseconds(limits::k_worker_idle_ms);
  }
  // The pools make their threads themselves: each thread is named, and set up by `started`,
  // when it takes its first request.
  static void thread_starting(const char* name, const std::function<void()>& started) {
    thread_local bool done = false;
    if (done) return;
    done = true;
    thread_priority::name_this_thread(name);
    if (started) started();
  }
  void accept();
  void begin_shutdown();
  void wait_for_drain();
};

namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket&& socket, Server::Impl& server)
      : stream_(std::move(socket)), server_(server) {
    beast::error_code ignored;
    auto endpoint = stream_.socket().remote_endpoint(ignored);
    if (!ignored) remote_ = endpoint.address().to_string();
    server_.connections.fetch_add(1);
  }
  ~Session() { server_.connections.fetch_sub(1); }

  void start() {
    asio::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read(); });
  }

 private:
  void read() {
    if (server_.stopping.load()) return close();
    // The room a large body had is given back: an idle keep-alive connection keeps none of it.
    if (buffer_.size() == 0 && buffer_.capacity() > limits::k_header_max_bytes) {
      buffer_.shrink_to_fit();
    }
    parser_.emplace();
    parser_->body_limit(limits::k_body_max_bytes);
    parser_->header_limit(static_cast<std::uint32_t>(limits::k_header_max_bytes));
    // One deadline for the whole request: a slow client can hold a socket, never a worker.
    stream_.expires_after(std::chrono::milliseconds(limits::k_read_timeout_ms));
    bhttp::async_read_header(stream_, buffer_, *parser_,
                             [self = shared_from_this()](beast::error_code ec, std::size_t) {
                               self->on_header(ec);
                             });
  }

  // A client that sent `Expect: 100-continue` waits for a go-ahead before sending its body.
  void on_header(beast::error_code ec) {
    if (ec) return on_read(ec);
    const auto& header = parser_->get();
    RequestHead head{header.version(), static_cast<int>(header.count(bhttp::field::host)),
                     static_cast<int>(header.count(bhttp::field::transfer_encoding)),
                     header[bhttp::field::transfer_encoding],
                     static_cast<int>(header.count(bhttp::field::content_length))};
    if (auto problem = head_problem(head)) {
      return reject(errors::validation(std::string(*problem), std::nullopt));
    }
    auto expect = parser_->get()[bhttp::field::expect];
    if (beast::iequals(expect, "100-continue") && !parser_->is_done()) {
      auto go_ahead = std::make_shared<bhttp::response<bhttp::empty_body>>(
          bhttp::status::continue_, parser_->get().version());
      bhttp::async_write(stream_, *go_ahead,
                         [self = shared_from_this(), go_ahead](beast::error_code write_ec,
                                                               std::size_t) {
                           if (write_ec) return self->close();
                           self->read_body();
                         });
      return;
    }
    read_body();
  }

  void read_body() {
    // Room for the body, or a large piece of it, so that it comes in few socket reads.
    if (const auto length = parser_->content_length(); length && *length > buffer_.capacity()) {
      buffer_.reserve(static_cast<std::size_t>(
          std::min<std::uint64_t>(*length, limits::k_body_read_buffer_bytes)));
    }
    bhttp::async_read(stream_, buffer_, *parser_,
                      [self = shared_from_this()](beast::error_code ec, std::size_t) {
                        self->on_read(ec);
                      });
  }

  void on_read(beast::error_code ec) {
    if (ec == bhttp::error::end_of_stream || ec == beast::error::timeout ||
        ec == asio::error::operation_aborted || ec == asio::error::connection_reset ||
        ec == asio::error::eof) {
      return close();
    }
    if (ec == bhttp::error::body_limit) return reject(errors::payload_too_large());
    if (ec == bhttp::error::header_limit) return reject(errors::headers_too_large());
    if (ec) return reject(errors::validation("malformed HTTP request: " + ec.message(), std::nullopt));

    Request request = to_request(parser_->release());
    keep_alive_ = request_keep_alive_;
    server_.in_flight.fetch_add(1);
    metrics::add_in_flight(1);
    if (server_.handlers.handle_inline) {
      if (auto answered = server_.handlers.handle_inline(request)) {
        return answer(std::move(*answered), true);
      }
    }
    const bool bulk = server_.bulk_workers && server_.handlers.is_bulk &&
                      server_.handlers.is_bulk(request);
    auto work = [self = shared_from_this(), request = std::move(request), bulk]() mutable {
      if (bulk) {
        Server::Impl::thread_starting("http-bulk", self->server_.handlers.bulk_worker_started);
      } else {
        Server::Impl::thread_starting("http-worker", {});
      }
      self->answer(self->server_.handlers.handle(request), false);
    };
    if (bulk) {
      server_.bulk_workers->post(std::move(work));
    } else {
      server_.workers.post(std::move(work));
    }
  }

  // A handler's answer, from the thread it ran on: written on the connection's strand, or, for
  // an answer that comes later (http/later.hpp), when it comes. Meanwhile the request counts as
  // in flight, so a shutdown waits for it within its grace.
  void answer(Response&& response, bool on_strand) {
    if (std::shared_ptr<Later> later = std::move(response.later)) {
      later->begin(
          [pool = &server_.workers](std::function<void()> work) { pool->post(std::move(work)); },
          [self = shared_from_this()](Response done) {
            asio::post(self->stream_.get_executor(), [self, done = std::move(done)]() mutable {
              self->write(std::move(done), true);
            });
          });
      return;
    }
    if (on_strand) return write(std::move(response), true);
    asio::post(stream_.get_executor(), [self = shared_from_this(),
                                         response = std::move(response)]() mutable {
      self->write(std::move(response), true);
    });
  }

  Request to_request(bhttp::request<bhttp::string_body>&& message) {
    Request request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    request.remote_address = remote_;
    request.body = std::move(message.body());
    request.headers.reserve(16);
    for (const auto& field : message) {
      request.headers.emplace_back(lower(field.name_string()), std::string(field.value()));
    }
    version_ = message.version();
    request_keep_alive_ = message.keep_alive();
    head_ = message.method() == bhttp::verb::head;
    return request;
  }

  // An error found while reading: answer it, then close (the stream may be out of sync).
  void reject(const Error& error) {
    Request partial;
    partial.remote_address = remote_;
    if (parser_ && parser_->is_header_done()) {
      partial.method = std::string(parser_->get().method_string());
      partial.target = std::string(parser_->get().target());
    }
    keep_alive_ = false;
    head_ = false;
    server_.in_flight.fetch_add(1);
    metrics::add_in_flight(1);
    write(server_.handlers.render_error(error, partial), true);
  }

  // The response head is written by hand into one buffer with the body: Beast's serializer
  // walks a chain of buffer views per field and cost about 15k instructions per response
  // (callgrind), more than the rest of a small request together. The rules kept: Content-Length
  // on every answer but 204 and 304 (for HEAD, the length a GET would have, without the body),
  // `Connection: close` when an HTTP/1.1 connection ends, `keep-alive` when an HTTP/1.0 one stays.
  void write(Response&& response, bool counted) {
    bool keep = keep_alive_ && !server_.stopping.load();
    bool no_body = response.status == 204 || response.status == 304;
    // The head is written here and the body sent as it is, after it (one writev): a batch's
    // answer of about a megabyte is not copied behind its head.
    struct Outgoing {
      std::string head;
      std::string body;
    };
    auto out = std::make_shared<Outgoing>();
    std::string& text = out->head;
    text.reserve(256);
    text += version_ == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
    text += std::to_string(response.status);
    text += ' ';
    text += reason_phrase(response.status);  // as the envelope's `code` says it
    text += "\r\n";
    append_field(text, "Server", "tesoro");
    for (const auto& [name, value] : response.headers) append_field(text, name, value);
    if (!no_body) {
      append_field(text, "Content-Type", response.content_type);
      append_field(text, "Content-Length", std::to_string(response.body.size()));
    }
    if (version_ >= 11 && !keep) append_field(text, "Connection", "close");
    if (version_ < 11 && keep) append_field(text, "Connection", "keep-alive");
    text += "\r\n";
    if (!no_body && !head_) out->body = std::move(response.body);
    stream_.expires_after(std::chrono::milliseconds(limits::k_write_timeout_ms));
    const std::array<asio::const_buffer, 2> buffers{asio::buffer(out->head),
                                                    asio::buffer(out->body)};
    asio::async_write(stream_, buffers,
                      [self = shared_from_this(), out, keep, counted](beast::error_code ec,
                                                                     std::size_t) {
                        if (counted) {
                          self->server_.in_flight.fetch_sub(1);
                          metrics::add_in_flight(-1);
                        }
                        if (ec) return self->close();
                        if (!keep) return self->linger_then_close();
                        self->read();
                      });
  }

  // One header line. Our values never hold CR or LF (a client's request id is checked before it
  // is echoed); a stray one becomes a space rather than a second header.
  static void append_field(std::string& text, std::string_view name, std::string_view value) {
    for (char c : name) text += (c == '\r' || c == '\n') ? ' ' : c;
    text += ": ";
    for (char c : value) text += (c == '\r' || c == '\n') ? ' ' : c;
    text += "\r\n";
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.socket().close(ignored);
  }

  // After an answer that ends the connection. The client may still be sending what was refused
  // unread (a body over the limit): a socket closed with unread data resets the connection, and
  // the client could lose the answer before reading it. So the sending side is shut first, and
  // what still arrives is read and dropped until the client closes its side, for at most
  // limits::k_linger_ms.
  void linger_then_close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(std::chrono::milliseconds(limits::k_linger_ms));
    drain();
  }
  void drain() {
    buffer_.clear();
    stream_.async_read_some(buffer_.prepare(limits::k_body_read_buffer_bytes),
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              if (ec) return self->close();  // the client's end, or the time
                              self->drain();
                            });
  }

  beast::tcp_stream stream_;
  Server::Impl& server_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  std::string remote_;
  unsigned version_ = 11;
  bool request_keep_alive_ = true;
  bool keep_alive_ = true;
  bool head_ = false;
};

}  // namespace

void Server::Impl::accept() {
  acceptor.async_accept(asio::make_strand(io), [this](beast::error_code ec, tcp::socket socket) {
    if (stopping.load()) return;  // the socket, if any, closes with this handler
    if (ec) {
      // Out of file descriptors or similar: accepting again at once would spin; pause a little.
      log::write(log::Level::warn, "server.accept_failed", {{"what", ec.message()}});
      accept_pause.expires_after(std::chrono::milliseconds(limits::k_accept_retry_pause_ms));
      accept_pause.async_wait([this](beast::error_code) { accept(); });
      return;
    } else if (connections.load() >= limits::k_connections_max) {
      beast::error_code ignored;
      socket.close(ignored);  // over the bound: refuse rather than starve the others
    } else {
      std::make_shared<Session>(std::move(socket), *this)->start();
    }
    accept();
  });
}

void Server::Impl::begin_shutdown() {
  if (stopping.exchange(true)) return;
  log::write(log::Level::info, "server.stopping", {{"in_flight", in_flight.load()}});
  beast::error_code ignored;
  acceptor.close(ignored);
  drain_deadline = std::chrono::steady_clock::now() +
                   std::chrono::milliseconds(limits::k_shutdown_grace_ms);
  wait_for_drain();
}

void Server::Impl::wait_for_drain() {
  if (in_flight.load() == 0 || std::chrono::steady_clock::now() >= drain_deadline) {
    io.stop();  // idle keep-alive connections are simply dropped
    return;
  }
  drain_timer.expires_after(std::chrono::milliseconds(limits::k_shutdown_drain_poll_ms));
  drain_timer.async_wait([this](beast::error_code) { wait_for_drain(); });
}

Server::Server(ServerOptions options, Handlers handlers)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(handlers))) {}

Server::~Server() = default;

void Server::run() {
  Impl& s = *impl_;
  // An operator reads these failures: a sentence naming the address, not Boost's source location.
  const std::string where = s.options.host + ":" + std::to_string(s.options.port);
  beast::error_code ec;
  auto address = asio::ip::make_address(s.options.host, ec);
  if (ec) throw std::runtime_error("cannot listen on " + where + ": not an IP address");
  tcp::endpoint endpoint(address, s.options.port);
  s.acceptor.open(endpoint.protocol(), ec);
  if (!ec) s.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) s.acceptor.bind(endpoint, ec);
  if (!ec) s.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error("cannot listen on " + where + ": " + ec.message());
  if (s.handlers.on_listening) s.handlers.on_listening(s.acceptor.local_endpoint().port());
  s.signals.async_wait([&s](beast::error_code ec, int) {
    if (!ec) s.begin_shutdown();
  });
  s.accept();
  std::vector<std::thread> threads;
  for (int i = 1; i < s.options.io_threads; ++i) {
    threads.emplace_back([&s] {
      thread_priority::name_this_thread("http-io");
      s.io.run();
    });
  }
  s.io.run();
  for (auto& thread : threads) thread.join();
  s.workers.join();
  if (s.bulk_workers) s.bulk_workers->join();
  log::write(log::Level::info, "server.stopped", {});
}

}  // namespace tesoro::http
