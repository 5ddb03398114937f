// The bare references of bench/run: Beast servers that do only the named work, so that Tesoro's
// rows read as a fraction of what this machine can do with the same libraries.
//
//   bench_reference hello PORT [IO_THREADS]
//     answers every request `200 ok` (keep-alive), on IO_THREADS threads (default 2).
//   bench_reference group-commit PORT DB_FILE [IO_THREADS]
//     answers every request after one small row (a 22-character random id and about 200 bytes
//     of JSON) is committed to DB_FILE (SQLite, WAL, synchronous=FULL) by one writer thread that
//     takes every queued request, inserts them in one transaction and commits once: Tesoro's
//     group commit without anything else (no routing, authentication, idempotency or events).
//
// Not part of Tesoro; built only by `make bench` (target bench_reference).
#include <sqlite3.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <condition_variable>
#include <cstdio>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

// One writer thread committing every queued row in one transaction.
class GroupCommitWriter {
 public:
  explicit GroupCommitWriter(const std::string& path) {
    if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) throw std::runtime_error("open failed");
    exec("PRAGMA journal_mode=WAL");
    exec("PRAGMA synchronous=FULL");
    exec("CREATE TABLE IF NOT EXISTS rows (id TEXT PRIMARY KEY, body TEXT NOT NULL)");
    sqlite3_prepare_v2(db_, "INSERT INTO rows (id, body) VALUES (?, ?)", -1, &insert_, nullptr);
    thread_ = std::thread([this] { run(); });
  }

  // `done` runs on the writer thread after the commit.
  void submit(std::function<void()> done) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(done));
    }
    ready_.notify_one();
  }

 private:
  void exec(const char* sql) {
    char* error = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
      std::string what = error ? error : "?";
      sqlite3_free(error);
      throw std::runtime_error(what);
    }
  }

  std::string random_id() {
    static const char k_alphabet[] =
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    std::string id(22, '0');
    for (char& c : id) c = k_alphabet[random_() % 62];
    return id;
  }

  void run() {
    const std::string body =
        R"({"external_id":"bench","type":"individual","first_name":"Ana","last_name":"Rojas",)"
        R"("document_type":"CC","document_number":"1020304050","email":"ana@example.com",)"
        R"("metadata":{"source":"bench"},"state":"active"})";
    for (;;) {
      std::deque<std::function<void()>> batch;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [this] { return !queue_.empty(); });
        batch.swap(queue_);
      }
      exec("BEGIN");
      for (std::size_t i = 0; i < batch.size(); ++i) {
        std::string id = random_id();
        sqlite3_bind_text(insert_, 1, id.data(), static_cast<int>(id.size()), SQLITE_TRANSIENT);
        sqlite3_bind_text(insert_, 2, body.data(), static_cast<int>(body.size()), SQLITE_STATIC);
        if (sqlite3_step(insert_) != SQLITE_DONE) throw std::runtime_error("insert failed");
        sqlite3_reset(insert_);
      }
      exec("COMMIT");
      for (auto& done : batch) done();
    }
  }

  sqlite3* db_ = nullptr;
  sqlite3_stmt* insert_ = nullptr;
  std::mt19937_64 random_{std::random_device{}()};
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> queue_;
  std::thread thread_;
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket&& socket, GroupCommitWriter* writer)
      : stream_(std::move(socket)), writer_(writer) {}

  void read() {
    request_ = {};
    http::async_read(stream_, buffer_, request_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (ec) return;
                       if (!self->writer_) return self->write();
                       // Back to the connection's strand once the row is on disk.
                       self->writer_->submit([self] {
                         asio::post(self->stream_.get_executor(), [self] { self->write(); });
                       });
                     });
  }

 private:
  void write() {
    response_ = {};
    response_.result(http::status::ok);
    response_.version(request_.version());
    response_.keep_alive(request_.keep_alive());
    response_.set(http::field::content_type, "text/plain");
    response_.body() = "ok";
    response_.prepare_payload();
    http::async_write(stream_, response_,
                      [self = shared_from_this()](beast::error_code ec, std::size_t) {
                        if (ec || !self->response_.keep_alive()) return;
                        self->read();
                      });
  }

  beast::tcp_stream stream_;
  GroupCommitWriter* writer_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response<http::string_body> response_;
};

void accept(tcp::acceptor& acceptor, asio::io_context& io, GroupCommitWriter* writer) {
  acceptor.async_accept(asio::make_strand(io), [&acceptor, &io, writer](beast::error_code ec,
                                                                         tcp::socket socket) {
    if (!ec) std::make_shared<Session>(std::move(socket), writer)->read();
    accept(acceptor, io, writer);
  });
}

int serve(unsigned short port, int io_threads, GroupCommitWriter* writer) {
  asio::io_context io{io_threads};
  tcp::acceptor acceptor{io, {asio::ip::make_address("127.0.0.1"), port}};
  accept(acceptor, io, writer);
  std::vector<std::thread> threads;
  for (int i = 1; i < io_threads; ++i) threads.emplace_back([&io] { io.run(); });
  io.run();
  for (auto& thread : threads) thread.join();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 2 ? argv[1] : "";
  if (mode == "hello") {
    return serve(static_cast<unsigned short>(std::stoi(argv[2])), argc > 3 ? std::stoi(argv[3]) : 2,
                 nullptr);
  }
  if (mode == "group-commit" && argc > 3) {
    GroupCommitWriter writer(argv[3]);
    return serve(static_cast<unsigned short>(std::stoi(argv[2])), argc > 4 ? std::stoi(argv[4]) : 2,
                 &writer);
  }
  std::fprintf(stderr,
               "usage: bench_reference hello PORT [IO_THREADS]\n"
               "       bench_reference group-commit PORT DB_FILE [IO_THREADS]\n");
  return 2;
}
