// The bare references of bench/run: Beast servers that do only the named work, so that Tesoro's
// rows read as a fraction of what this machine can do with the same libraries.
//
//   bench_reference hello PORT [IO_THREADS]
//     answers every request `200 ok` (keep-alive), on IO_THREADS threads (default 2).
//   bench_reference approve PORT [IO_THREADS]
//     the same, answering `200 {"approved":true}` (application/json): a tenant's authorization
//     endpoint that approves at once (docs/webhooks.md, "Authorization decisioning").
//   bench_reference approve-after PORT MS [IO_THREADS]
//     the same decision MS milliseconds after each request (a timer per request, no thread
//     waits): a slow endpoint, which holds every authorization it is asked about that long.
//   bench_reference group-commit PORT DB_FILE [IO_THREADS]
//     answers every request after one small row (a 22-character random id and about 200 bytes
//     of JSON) is committed to DB_FILE (SQLite, WAL, synchronous=FULL) by one writer thread that
//     takes every queued request, inserts them in one transaction and commits once: Tesoro's
//     group commit without anything else (no routing, authentication, idempotency or events).
//   bench_reference transfer-rows DB_FILE BATCHES
//     the engine's own rate for the rows of outgoing transfers: BATCHES transactions of 1000
//     rows like those a batch of transfers writes (the table and indexes of migrations 14 and
//     18, the values of bench/run's Python reference but with ids that lead with the time as
//     Tesoro's do, and external ids in the order of bench/post_transfers.lua's), each row bound
//     to one prepared INSERT, WAL, synchronous=FULL; prints `transfers_native ROWS_PER_SECOND`.
//     Then, each in a fresh database next to DB_FILE, `transfers_with_events`: the same rows
//     and each one's `outgoing_transfer.created` event as SQLite keeps it since migration 24
//     (in the row: its position as the rowid, and a tenant's index of them; the id unique on
//     its own since migration 25), what a batch's
//     acceptance writes at the least; and `transfers_floor`: the least any model with a
//     row per transfer and a row per event can write (see `schema`), the engine's ceiling for
//     transfers on this machine. Rows are made before the clock starts: only BEGIN, the inserts
//     and COMMIT are timed. What Python's sqlite3 adds per row (binding 32 values from Python
//     objects) is not in it.
//
// Not part of Tesoro; built only by `make bench` (target bench_reference).
#include <sqlite3.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/limits.hpp"  // the server's SQLite page size, so the engine runs as it does there

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
    exec(("PRAGMA page_size=" + std::to_string(tesoro::limits::k_sqlite_page_size_bytes)).c_str());
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

// What every request is answered (hello: `ok`; approve: a decision).
std::string g_answer_type = "text/plain";
std::string g_answer_body = "ok";
std::chrono::milliseconds g_answer_delay{0};  // approve-after: how long each answer waits

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket&& socket, GroupCommitWriter* writer)
      : stream_(std::move(socket)), writer_(writer), timer_(stream_.get_executor()) {}

  void read() {
    request_ = {};
    http::async_read(stream_, buffer_, request_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (ec) return;
                       if (g_answer_delay.count() > 0) {
                         self->timer_.expires_after(g_answer_delay);
                         return self->timer_.async_wait(
                             [self](beast::error_code) { self->write(); });
                       }
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
    response_.set(http::field::content_type, g_answer_type);
    response_.body() = g_answer_body;
    response_.prepare_payload();
    http::async_write(stream_, response_,
                      [self = shared_from_this()](beast::error_code ec, std::size_t) {
                        if (ec || !self->response_.keep_alive()) return;
                        self->read();
                      });
  }

  beast::tcp_stream stream_;
  GroupCommitWriter* writer_;
  asio::steady_timer timer_;
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

// The transfer-rows mode (see the top of this file): three row sets, each in a fresh database.
enum class RowSet {
  transfers,             // the outgoing_transfers rows of migrations 14 and 18, with their indexes
  transfers_and_events,  // the same keeping each one's outgoing_transfer.created event
  floor,                 // the least a row per transfer and a row per event can be
};

void exec_sql(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    std::string what = error ? error : "?";
    sqlite3_free(error);
    throw std::runtime_error(what);
  }
}

sqlite3_stmt* prepare(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
    throw std::runtime_error(sqlite3_errmsg(db));
  }
  return statement;
}

// The tables of each row set. A batch's created events are kept in its transfers' rows on SQLite
// (migration 23): the row's created_position, its rowid since migration 24, and the index of a
// tenant's, read through the view all_events with the events' own rows.
// The floor keeps of a transfer what its API must find it by and show (id, batch, external id,
// amount, key, state), in a WITHOUT ROWID table whose only other index is the external id's
// uniqueness, and of its event only the rowid: no list order, no state or batch filter, no
// processor index, no event positions.
std::vector<std::string> schema(RowSet set) {
  if (set == RowSet::floor) {
    return {"CREATE TABLE outgoing_transfers (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
            "batch_id TEXT NOT NULL, external_id TEXT NOT NULL, amount BIGINT NOT NULL, "
            "key_value TEXT NOT NULL, state TEXT NOT NULL, PRIMARY KEY (tenant_id, id), "
            "UNIQUE (tenant_id, external_id)) WITHOUT ROWID",
            "CREATE TABLE events (tenant_id TEXT NOT NULL, id TEXT NOT NULL, type TEXT NOT NULL, "
            "data TEXT NOT NULL, inserted_at TEXT NOT NULL, emitted_seq INTEGER PRIMARY KEY)"};
  }
  std::vector<std::string> sql = {
      "CREATE TABLE outgoing_transfers (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
      "batch_id TEXT, payout_id TEXT, external_id TEXT, tenant_account_id TEXT NOT NULL, "
      "amount BIGINT NOT NULL, currency TEXT NOT NULL, description TEXT, "
      "end_to_end_id TEXT NOT NULL, payment_id TEXT NOT NULL, payer_name TEXT NOT NULL, "
      "resolution_request_id TEXT NOT NULL, target_id TEXT NOT NULL, key_type TEXT NOT NULL, "
      "key_value TEXT NOT NULL, target TEXT NOT NULL, query TEXT, expected_creditor TEXT, "
      "metadata TEXT NOT NULL, state TEXT NOT NULL, state_reason TEXT, sandbox_failure TEXT, "
      "timemarks TEXT NOT NULL, held BIGINT NOT NULL, next_step_at_micros BIGINT, "
      "creditor_tenant_id TEXT, creditor_collection_id TEXT, attempt_id TEXT, entry_id TEXT, "
      "inserted_at TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (tenant_id, id), "
      "UNIQUE (tenant_id, external_id))",
      "CREATE INDEX outgoing_transfers_by_time ON outgoing_transfers "
      "(tenant_id, inserted_at, id)",
      "CREATE INDEX outgoing_transfers_moving ON outgoing_transfers (next_step_at_micros) "
      "WHERE next_step_at_micros IS NOT NULL"};
  if (set == RowSet::transfers_and_events) {
    // Migration 24: created_position is the rowid; migration 25: the id unique on its own.
    std::string& table = sql.front();
    const std::string key = "PRIMARY KEY (tenant_id, id)";
    table.replace(table.find(key), key.size(), "created_position INTEGER PRIMARY KEY, UNIQUE (id)");
    sql.push_back("CREATE INDEX outgoing_transfers_created_by_tenant ON outgoing_transfers "
                  "(tenant_id, created_position) WHERE created_position > 0");
  }
  return sql;
}

// Rows per second of one row set: BATCHES transactions of 1000 transfers (and their events).
double insert_row_set(const std::string& path, int batches, RowSet set) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) throw std::runtime_error("open failed");
  exec_sql(db, "PRAGMA page_size=" + std::to_string(tesoro::limits::k_sqlite_page_size_bytes));
  for (const char* pragma :
       {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL", "PRAGMA cache_size=-65536"}) {
    exec_sql(db, pragma);
  }
  for (const std::string& sql : schema(set)) exec_sql(db, sql);
  const int columns = set == RowSet::floor ? 7 : set == RowSet::transfers_and_events ? 33 : 32;
  std::string insert_sql = "INSERT INTO outgoing_transfers VALUES (?";
  for (int i = 1; i < columns; ++i) insert_sql += ", ?";
  insert_sql += ")";
  sqlite3_stmt* insert = prepare(db, insert_sql);
  // The floor's events are rows of their own (the rowid alone); the created events kept in the
  // rows have their positions (the position of the last event before: 0 here).
  sqlite3_stmt* insert_event =
      set == RowSet::floor ? prepare(db, "INSERT INTO events (tenant_id, id, type, data, "
                                         "inserted_at) VALUES (?, ?, ?, ?, ?)")
                           : nullptr;
  std::int64_t position = 0;
  std::mt19937_64 random{std::random_device{}()};
  // Ids as Tesoro makes them (core/ids): six characters of the time in 1/32 s, which sort, then
  // sixteen random ones; `tick` moves on with each batch.
  std::uint64_t tick = 1'000'000'000;
  auto id = [&random, &tick](const std::string& prefix) {
    static const char k_sorted[] =
        "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz";
    static const char k_alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
    std::string out = prefix + "_";
    for (int shift = 30; shift >= 0; shift -= 6) out += k_sorted[(tick >> shift) & 63];
    for (int i = 0; i < 16; ++i) out += k_alphabet[random() % 64];
    return out;
  };
  // A Target as the server stores it in a transfer's row (network::stored_target: the values
  // the row has no column for, about 190 characters).
  auto target = [] {
    return std::string(
        R"(["plain_key","900500101-6","1001",null,"******7114","CC","C***** M***** L****",)"
        R"("natural","COP","*******7231","savings_account","2026-11-25T13:26:06.825865Z",)"
        R"("2026-11-25T13:11:06.825865Z"])");
  };
  // b-<run>-<connection>-<request>-<item>, as bench/post_transfers.lua makes them.
  auto external_id = [](int batch, int item) {
    return "b-1a2b3c4d-1-" + std::to_string(batch + 1) + "-" + std::to_string(item + 1);
  };
  auto bind = [](sqlite3_stmt* statement, int index, const std::string& text) {
    sqlite3_bind_text(statement, index, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
  };
  auto step = [db](sqlite3_stmt* statement) {
    if (sqlite3_step(statement) != SQLITE_DONE) throw std::runtime_error(sqlite3_errmsg(db));
    sqlite3_reset(statement);
  };
  using Column = std::optional<std::string>;  // nullopt: NULL; integers are bound as text
  const std::string tenant = id("ten"), account = id("bbtacc");
  const std::string event_type = "outgoing_transfer.created";
  double spent = 0;
  long long rows_written = 0;
  for (int b = 0; b < batches; ++b) {
    char at_text[40];
    std::snprintf(at_text, sizeof at_text, "2026-11-25T13:11:%02d.%06dZ", b % 60, b);
    const std::string at = at_text;
    tick += 4;  // a batch every eighth of a second
    const std::string batch = id("bbotb");
    std::vector<std::vector<Column>> rows;
    std::vector<std::pair<std::string, std::string>> events;  // id, data
    rows.reserve(1000);
    events.reserve(1000);
    for (int i = 0; i < 1000; ++i) {
      const std::string transfer_id = id("bbot");
      if (set == RowSet::floor) {
        rows.push_back({tenant, transfer_id, batch, external_id(b, i), "100", "3100000025",
                        "created"});
      } else {
        rows.push_back({tenant, transfer_id, batch, std::nullopt, external_id(b, i), account,
                        "100", "COP", "bench", "E202611251311" + id("x").substr(2, 19),
                        "CO.COM.CRB.TRXID" + id("x").substr(2, 19), "sandbox", id("bbtgr"),
                        id("bbtgt"), "cellphone", "3100000025", target(),
                        R"({"format":"plain_key","value":"3100000025"})", std::nullopt, "{}",
                        "created", std::nullopt, std::nullopt,
                        R"({"T110":"2026-11-25T13:11:06.825865"})", "100",
                        std::to_string(1764076267000000LL + b), std::nullopt, std::nullopt,
                        std::nullopt, std::nullopt, at, at});
      }
      // An event's data is a reference to its row (domain/events: "@kind:id").
      events.emplace_back(id("evt"), "@outgoing_transfer:" + transfer_id);
    }
    const auto started = std::chrono::steady_clock::now();
    exec_sql(db, "BEGIN");
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const std::vector<Column>& row = rows[r];
      for (std::size_t c = 0; c < row.size(); ++c) {
        const int index = static_cast<int>(c) + 1;
        const bool integer = set == RowSet::floor ? c == 4 : (c == 6 || c == 24 || c == 25);
        if (!row[c]) {
          sqlite3_bind_null(insert, index);
        } else if (integer) {  // amount (and held, next_step_at_micros)
          sqlite3_bind_int64(insert, index, std::stoll(*row[c]));
        } else {
          bind(insert, index, *row[c]);
        }
      }
      if (set == RowSet::transfers_and_events) sqlite3_bind_int64(insert, 33, ++position);
      step(insert);
      if (!insert_event) continue;
      bind(insert_event, 1, tenant);
      bind(insert_event, 2, events[r].first);
      bind(insert_event, 3, event_type);
      bind(insert_event, 4, events[r].second);
      bind(insert_event, 5, at);
      step(insert_event);
    }
    exec_sql(db, "COMMIT");
    spent += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    rows_written += static_cast<long long>(rows.size());
  }
  sqlite3_finalize(insert);
  if (insert_event) sqlite3_finalize(insert_event);
  sqlite3_close(db);
  return static_cast<double>(rows_written) / spent;
}

int insert_transfer_rows(const std::string& path, int batches) {
  std::printf("transfers_native %.0f\n", insert_row_set(path, batches, RowSet::transfers));
  std::printf("transfers_with_events %.0f\n",
              insert_row_set(path + ".events", batches, RowSet::transfers_and_events));
  std::printf("transfers_floor %.0f\n", insert_row_set(path + ".floor", batches, RowSet::floor));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 2 ? argv[1] : "";
  if (mode == "approve" || mode == "approve-after") {
    g_answer_type = "application/json";
    g_answer_body = R"({"approved":true})";
  }
  if (mode == "approve-after" && argc > 3) {
    g_answer_delay = std::chrono::milliseconds(std::stoi(argv[3]));
    return serve(static_cast<unsigned short>(std::stoi(argv[2])), argc > 4 ? std::stoi(argv[4]) : 2,
                 nullptr);
  }
  if (mode == "approve") mode = "hello";
  if (mode == "hello") {
    return serve(static_cast<unsigned short>(std::stoi(argv[2])), argc > 3 ? std::stoi(argv[3]) : 2,
                 nullptr);
  }
  if (mode == "group-commit" && argc > 3) {
    GroupCommitWriter writer(argv[3]);
    return serve(static_cast<unsigned short>(std::stoi(argv[2])), argc > 4 ? std::stoi(argv[4]) : 2,
                 &writer);
  }
  if (mode == "transfer-rows" && argc > 3) return insert_transfer_rows(argv[2], std::stoi(argv[3]));
  std::fprintf(stderr,
               "usage: bench_reference hello PORT [IO_THREADS]\n"
               "       bench_reference approve PORT [IO_THREADS]\n"
               "       bench_reference approve-after PORT MS [IO_THREADS]\n"
               "       bench_reference group-commit PORT DB_FILE [IO_THREADS]\n"
               "       bench_reference transfer-rows DB_FILE BATCHES\n");
  return 2;
}
