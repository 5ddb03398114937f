#include "store/postgres/postgres_store.hpp"

#include <libpq-fe.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstring>
#include <functional>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <poll.h>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/limits.hpp"
#include "store/bulk.hpp"
#include "store/connection_tx.hpp"
#include "core/log.hpp"
#include "core/metrics.hpp"

namespace tesoro::store {
namespace {


// SQLSTATE classes that mean "try again later" rather than "our SQL is wrong".
bool is_unavailable_state(const std::string& state) {
  return state.rfind("08", 0) == 0 ||   // connection exception
         state.rfind("53", 0) == 0 ||   // insufficient resources
         state.rfind("57P", 0) == 0 ||  // operator intervention (shutdown, crash)
         state == "57014" ||            // statement_timeout: the database is overloaded
         state == "55P03";              // lock not available
}

bool is_retryable_state(const std::string& state) {
  return state == "40001" || state == "40P01";  // serialization failure, deadlock
}

class PgError : public StoreError {
 public:
  PgError(const std::string& what, std::string state, bool unavailable)
      : StoreError(what, unavailable, state == "23505"), state_(std::move(state)) {}
  const std::string& state() const { return state_; }

 private:
  std::string state_;
};

// Not PostgreSQL's: a commit the synchronous standbys did not acknowledge in time, or a write
// refused because they are not connected (503, retryable by the client).
constexpr const char* k_standbys_missing_state = "TS001";


// The bytes COPY's text format escapes in a text: backslash, tab, line feed, carriage return.
constexpr std::array<unsigned char, 4> k_copy_escapes = {'\\', '\t', '\n', '\r'};
constexpr std::array<bool, 256> k_copy_escaped = [] {
  std::array<bool, 256> escaped{};
  for (unsigned char c : k_copy_escapes) escaped[c] = true;
  return escaped;
}();

std::string_view text_of(const Value& value) {
  if (auto* owned = std::get_if<std::string>(&value)) return *owned;
  return std::get<TextRef>(value).text();
}

// True when one of the 8 bytes of `block` is one COPY escapes: a test of 8 bytes at once that
// leaves the byte-by-byte look to the few blocks that have one (a batch's rows are most of a
// megabyte of text, nearly none of it escaped).
bool block_has_escaped(std::uint64_t block) {
  constexpr std::uint64_t k_ones = 0x0101010101010101ULL;
  return std::any_of(k_copy_escapes.begin(), k_copy_escapes.end(), [&](unsigned char byte) {
    const std::uint64_t x = block ^ (k_ones * byte);
    return ((x - k_ones) & ~x & (k_ones << 7)) != 0;  // some byte of x is 0
  });
}

// One value of a COPY row in text format.
void append_copy_value(std::string& out, const Value& value) {
  if (std::holds_alternative<std::nullptr_t>(value)) {
    out += "\\N";
    return;
  }
  if (auto* number = std::get_if<std::int64_t>(&value)) {
    char digits[24];
    auto end = std::to_chars(digits, digits + sizeof digits, *number).ptr;
    out.append(digits, end);
    return;
  }
  const std::string_view text = text_of(value);
  std::size_t start = 0;  // text[start, i) is still to be appended
  std::size_t i = 0;
  auto look_at = [&](std::size_t end) {
    for (; i < end; ++i) {
      const char c = text[i];
      if (!k_copy_escaped[static_cast<unsigned char>(c)]) continue;
      out.append(text, start, i - start);
      out += '\\';
      out += c == '\\' ? '\\' : c == '\t' ? 't' : c == '\n' ? 'n' : 'r';
      start = i + 1;
    }
  };
  while (i + 8 <= text.size()) {
    std::uint64_t block;
    std::memcpy(&block, text.data() + i, sizeof block);
    if (block_has_escaped(block)) look_at(i + 8);
    else i += 8;
  }
  look_at(text.size());
  out.append(text, start, text.size() - start);
}

// `values` as COPY's text rows, `width` a row. Its size is reckoned first (escapes aside): a
// batch's rows are most of a megabyte, which a growing string would copy over and over.
std::string copy_text(std::size_t width, std::span<const Value> values) {
  std::size_t size = 0;
  for (const Value& value : values) {
    size += 1 + (std::holds_alternative<std::int64_t>(value)    ? 20
                 : std::holds_alternative<std::nullptr_t>(value) ? 2
                                                                 : text_of(value).size());
  }
  std::string data;
  data.reserve(size);
  std::size_t column = 0;
  for (const Value& value : values) {
    append_copy_value(data, value);
    if (++column == width) {
      data += '\n';
      column = 0;
    } else {
      data += '\t';
    }
  }
  return data;
}

class Connection {
 public:
  explicit Connection(const std::string& url) : url_(url) {}
  ~Connection() {
    if (conn_) PQfinish(conn_);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Opens or re-opens the connection when it is not usable.
  void ensure_open() {
    if (conn_ && PQstatus(conn_) == CONNECTION_OK) return;
    if (conn_) PQfinish(conn_);
    conn_ = nullptr;
    statements_.clear();
    pending_begin_ = nullptr;
    commit_in_flight_ = false;
    // Defaults first, the operator's URL after them: the URL wins where it says otherwise.
    // Timeouts make a vanished server an error within seconds instead of a hang; the session
    // settings are what durability and the locking design assume.
    static const char* const k_keywords[] = {"connect_timeout", "keepalives", "keepalives_idle",
                                             "keepalives_interval", "keepalives_count",
                                             "tcp_user_timeout", "options", "dbname", nullptr};
    static const std::string k_connect_timeout =
        std::to_string(limits::k_pg_connect_timeout_seconds);
    static const std::string k_keepalives_idle =
        std::to_string(limits::k_pg_keepalives_idle_seconds);
    static const std::string k_keepalives_interval =
        std::to_string(limits::k_pg_keepalives_interval_seconds);
    static const std::string k_keepalives_count = std::to_string(limits::k_pg_keepalives_count);
    static const std::string k_tcp_user_timeout = std::to_string(limits::k_pg_tcp_user_timeout_ms);
    static const std::string k_options = "-c synchronous_commit=on -c statement_timeout=" +
                                         std::to_string(limits::k_pg_statement_timeout_ms) +
                                         " -c default_transaction_isolation=read\\ committed";
    const char* values[] = {k_connect_timeout.c_str(),     "1",
                            k_keepalives_idle.c_str(),     k_keepalives_interval.c_str(),
                            k_keepalives_count.c_str(),    k_tcp_user_timeout.c_str(),
                            k_options.c_str(),             url_.c_str(),
                            nullptr};
    conn_ = PQconnectdbParams(k_keywords, values, /*expand_dbname=*/1);
    if (PQstatus(conn_) != CONNECTION_OK) {
      std::string message = PQerrorMessage(conn_);
      PQfinish(conn_);
      conn_ = nullptr;
      throw PgError("cannot connect to PostgreSQL: " + message, "08006", true);
    }
    PQsetNoticeProcessor(conn_, [](void*, const char*) {}, nullptr);
  }

  void exec_plain(const char* sql) {
    settle();
    PGresult* result = PQexec(conn_, sql);
    check(result, sql);
    PQclear(result);
  }

  std::int64_t run(std::string_view sql, std::span<const Value> params, Rows* rows) {
    settle();
    if (!pending_begin_) return execute(sql, params, rows, nullptr);
    const char* begin_sql = std::exchange(pending_begin_, nullptr);
    try {
      return execute(sql, params, rows, begin_sql);
    } catch (const PgError& failure) {
      // The unit's first statement: nothing of its transaction ran before, so on a pooled
      // connection that died while idle (the server restarted) it is safe to reconnect once and
      // send it all again (BEGIN, the check, the deferred writes, the statement). A statement's
      // own error (a constraint, a deadlock) is the unit's.
      if (!broken() && !failure.unavailable()) throw;
      PQfinish(conn_);
      conn_ = nullptr;
      ensure_open();
      return execute(sql, params, rows, begin_sql);
    }
  }

  // COPY table_columns FROM STDIN with `values` as its rows (Tx::append_rows), in text format:
  // a tab between values, \N for NULL, and a text's backslashes, tabs and line ends escaped.
  // The rows are written out before the COPY starts: the statement then lasts as long as the
  // server takes to read them, not as long as this thread takes to write them.
  std::int64_t copy_in(std::string_view table_columns, std::size_t width,
                       std::span<const Value> values) {
    if (width == 0 || values.empty()) return 0;
    if (const std::size_t count = values.size() / width;
        count <= limits::k_pg_deferred_insert_rows) {
      defer(bulk_statement("INSERT INTO " + std::string(table_columns), width, count, ""), values);
      return static_cast<std::int64_t>(count);
    }
    const std::string data = copy_text(width, values);
    settle();
    // The unit's BEGIN and its deferred writes go first, where a dead pooled connection is
    // reopened.
    if (pending_begin_ || !deferred_.empty()) run({}, {}, nullptr);
    const std::string sql = "COPY " + std::string(table_columns) + " FROM STDIN";
    PGresult* started = PQexec(conn_, sql.c_str());
    if (PQresultStatus(started) != PGRES_COPY_IN) {
      check(started, sql);  // throws on an error
      PQclear(started);
      throw PgError("COPY did not start: " + sql, "XX000", false);
    }
    PQclear(started);
    bool sent = true;
    for (std::size_t at = 0; at < data.size() && sent; at += limits::k_postgres_copy_chunk_bytes) {
      const std::size_t size = std::min(limits::k_postgres_copy_chunk_bytes, data.size() - at);
      sent = PQputCopyData(conn_, data.data() + at, static_cast<int>(size)) == 1;
    }
    if (!sent || PQputCopyEnd(conn_, nullptr) != 1) {
      std::string message = PQerrorMessage(conn_);
      PQfinish(conn_);  // out of step with the server: the next use reconnects
      conn_ = nullptr;
      throw PgError("COPY failed: " + message, "08006", true);
    }
    PGresult* result = PQgetResult(conn_);
    while (PGresult* extra = PQgetResult(conn_)) PQclear(extra);
    check(result, sql);
    const char* copied = PQcmdTuples(result);
    std::int64_t rows = (copied && *copied) ? std::stoll(copied) : 0;
    PQclear(result);
    return rows;
  }

  // Tx::exec_later: the write waits, its parameters copied, for the unit's next statement or its
  // COMMIT, and goes in the same pipeline, ahead of it.
  void defer(std::string_view sql, std::span<const Value> params) {
    Deferred write{std::string(sql), {}};
    write.params.reserve(params.size());
    for (const Value& value : params) {
      if (std::holds_alternative<std::nullptr_t>(value)) {
        write.params.emplace_back(std::nullopt);
      } else if (auto* number = std::get_if<std::int64_t>(&value)) {
        write.params.emplace_back(std::to_string(*number));
      } else {
        write.params.emplace_back(std::string(text_of(value)));
      }
    }
    deferred_.push_back(std::move(write));
  }

  // Starts a transaction lazily: its BEGIN travels with the unit's first statement, in one round
  // trip (libpq pipeline mode), and a unit that runs no statement sends neither BEGIN nor COMMIT.
  void begin(const char* sql) {
    settle();
    deferred_.clear();
    pending_begin_ = sql;
  }

  // Ends a read-only transaction without waiting for the answer: COMMIT is sent, and its answer
  // read by the connection's next user (settle()), by when it has arrived. The server ends the
  // transaction, and drops its snapshot, as soon as it reads the COMMIT; a read-only one has
  // nothing to make durable, so nobody needs to wait for it.
  void end_read() {
    if (std::exchange(pending_begin_, nullptr)) return;  // no statement ran: no transaction
    if (PQsendQuery(conn_, "COMMIT") == 1) {
      commit_in_flight_ = true;
    } else {
      PQfinish(conn_);  // the next use reconnects
      conn_ = nullptr;
    }
  }

  void rollback() {
    const bool began = !pending_begin_;  // a statement of the unit ran: BEGIN was sent
    forget_unit();
    if (!began || broken()) return;  // no transaction, or the server ended it with the connection
    exec_plain("ROLLBACK");
  }

  // The unit's writes still waiting to be sent belong to it alone: a unit that failed (on a
  // connection that broke too, where rollback() sends nothing) must not leave them to the
  // connection's next user, whose single-statement read would send them in autocommit.
  void forget_unit() {
    deferred_.clear();  // never sent, or sent and undone with the transaction
    pending_begin_ = nullptr;
  }

 private:
  // Reads the answer of the COMMIT that end_read() sent. A failure there changes nothing (the
  // transaction only read); a connection it broke is reopened by ensure_open().
  void settle() {
    if (!std::exchange(commit_in_flight_, false)) return;
    while (PGresult* result = PQgetResult(conn_)) PQclear(result);
  }

  // Runs `sql` (none when empty: only what waits before it), after the unit's BEGIN when
  // begin_sql is given and after the deferred writes, all in one round trip.
  std::int64_t execute(std::string_view sql, std::span<const Value> params, Rows* rows,
                       const char* begin_sql) {
    if (sql.empty()) {
      if (begin_sql || !deferred_.empty()) PQclear(exec_pipelined(begin_sql, nullptr));
      return 0;
    }
    const std::string& name = prepare(sql);
    const Bound bound(params);
    int count = static_cast<int>(params.size());
    const Last last{sql, &name, count, bound.values.data()};
    PGresult* result = begin_sql || !deferred_.empty() || ArmedCheck::pending()
                           ? exec_pipelined(begin_sql, &last)
                           : PQexecPrepared(conn_, name.c_str(), count, bound.values.data(),
                                            nullptr, nullptr, 0);
    check(result, sql);
    if (rows) read_rows(result, *rows);
    const char* affected = PQcmdTuples(result);
    std::int64_t changed = (affected && *affected) ? std::stoll(affected) : 0;
    PQclear(result);
    return changed;
  }

  // Parameters as libpq takes them: texts, NULL for a null.
  struct Bound {
    explicit Bound(std::span<const Value> params)
        : texts(params.size()), values(params.size(), nullptr) {
      for (std::size_t i = 0; i < params.size(); ++i) {
        if (auto* number = std::get_if<std::int64_t>(&params[i])) {
          texts[i] = std::to_string(*number);
          values[i] = texts[i].c_str();
        } else if (auto* text = std::get_if<std::string>(&params[i])) {
          values[i] = text->c_str();
        } else if (auto* ref = std::get_if<TextRef>(&params[i])) {
          values[i] = ref->c_str();
        }
      }
    }
    Bound(const Bound&) = delete;  // values point into texts
    Bound& operator=(const Bound&) = delete;
    std::vector<std::string> texts;
    std::vector<const char*> values;
  };

  static void read_rows(PGresult* result, Rows& rows) {
    int row_count = PQntuples(result);
    int columns = PQnfields(result);
    rows.reserve(static_cast<std::size_t>(row_count));
    for (int r = 0; r < row_count; ++r) {
      std::vector<Value> row;
      row.reserve(static_cast<std::size_t>(columns));
      for (int c = 0; c < columns; ++c) {
        if (PQgetisnull(result, r, c)) row.emplace_back(nullptr);
        else row.emplace_back(std::string(PQgetvalue(result, r, c),
                                          static_cast<std::size_t>(PQgetlength(result, r, c))));
      }
      rows.emplace_back(std::move(row));
    }
  }

  // What goes last in a pipeline, whose result the caller reads: a prepared statement with its
  // parameters, or a statement without any (COMMIT).
  struct Last {
    std::string_view sql;
    const std::string* prepared = nullptr;
    int count = 0;
    const char* const* values = nullptr;
    const char* plain = nullptr;
  };

  bool send(const Last& last) {
    if (last.plain) {
      return PQsendQueryParams(conn_, last.plain, 0, nullptr, nullptr, nullptr, nullptr, 0) == 1;
    }
    return PQsendQueryPrepared(conn_, last.prepared->c_str(), last.count, last.values, nullptr,
                               nullptr, 0) == 1;
  }

  // In one round trip (libpq's pipeline mode): the unit's BEGIN when begin_sql is given, the
  // calling thread's ArmedCheck when one is pending (judged once the round trip is read: one
  // that does not hold throws CheckFailed), the deferred writes in their order, and `last` when
  // given (before_last runs before its result is read, once the others' are). Returns last's
  // result (nullptr without one); throws the first failure among them, as each would alone
  // (PostgreSQL skips what follows a failure up to the sync). The deferred writes are forgotten
  // once they ran, kept when the connection failed first or the unit's BEGIN was among them
  // (run() may then send them again on a new connection).
  PGresult* exec_pipelined(const char* begin_sql, const Last* last,
                           const std::function<void()>& before_last = {}) {
    // Statements are prepared before the pipeline (PQprepare waits for its answer).
    std::vector<const std::string*> names;
    names.reserve(deferred_.size());
    for (const Deferred& write : deferred_) names.push_back(&prepare(write.sql));
    // Never with a COMMIT: a unit's first statement sends it, before anything can commit.
    ArmedCheck* const armed = last && last->plain ? nullptr : ArmedCheck::pending();
    const std::string* check_name = armed ? &prepare(armed->check().sql) : nullptr;
    const std::optional<Bound> check_params =
        armed ? std::optional<Bound>(armed->check().params) : std::nullopt;
    // Pipeline mode is refused only on a connection that is not idle: out of step.
    bool sent = PQenterPipelineMode(conn_) == 1 &&
                (!begin_sql || PQsendQueryParams(conn_, begin_sql, 0, nullptr, nullptr, nullptr,
                                                 nullptr, 0) == 1);
    if (sent && armed) {
      sent = PQsendQueryPrepared(conn_, check_name->c_str(),
                                 static_cast<int>(check_params->values.size()),
                                 check_params->values.data(), nullptr, nullptr, 0) == 1;
    }
    std::vector<const char*> texts;
    for (std::size_t i = 0; i < deferred_.size() && sent; ++i) {
      texts.clear();
      for (const auto& param : deferred_[i].params) {
        texts.push_back(param ? param->c_str() : nullptr);
      }
      sent = PQsendQueryPrepared(conn_, names[i]->c_str(), static_cast<int>(texts.size()),
                                 texts.data(), nullptr, nullptr, 0) == 1;
    }
    if (sent && last) sent = send(*last);
    sent = sent && PQpipelineSync(conn_) == 1;
    PGresult* failed = nullptr;  // the first failure, and its statement
    std::string_view failed_sql;
    // Reads the next statement's result: kept (returned) for the last one unless one before it
    // failed, the first failure kept in `failed`, every other result freed.
    auto take = [&](std::string_view sql, bool keep) {
      PGresult* result = next_query_result();
      const ExecStatusType status = PQresultStatus(result);
      if (!failed && status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
        failed = result;
        failed_sql = sql;
        return static_cast<PGresult*>(nullptr);
      }
      if (failed || !keep) {
        PQclear(result);
        return static_cast<PGresult*>(nullptr);
      }
      return result;
    };
    PGresult* result = nullptr;
    Rows checked;
    if (sent) {
      if (begin_sql) take(begin_sql, false);
      if (armed) {
        if (PGresult* check_result = take(armed->check().sql, true)) {
          read_rows(check_result, checked);
          PQclear(check_result);
        }
      }
      for (const Deferred& write : deferred_) take(write.sql, false);
      if (last) {
        if (before_last && !failed) before_last();
        result = take(last->sql, true);
      }
    }
    bool synced = sent && await_sync();
    if (!synced || PQexitPipelineMode(conn_) != 1) {
      PQclear(failed);
      PQclear(result);
      std::string message = conn_ ? PQerrorMessage(conn_) : "";
      PQfinish(conn_);  // out of step with the server: the next use reconnects
      conn_ = nullptr;
      throw PgError("pipeline failed: " + message, "08006", true);
    }
    if (failed) {
      PQclear(result);
      const std::string statement(failed_sql);  // the deferred writes' texts may go next
      // With the unit's BEGIN among them nothing of the unit ran: run() may send it all again on
      // a new connection, and otherwise the unit fails (rollback() forgets them). Later in a
      // unit they ran and failed: what follows (a savepoint's rollback) must not send them again.
      if (!begin_sql) deferred_.clear();
      check(failed, statement);  // throws
    }
    deferred_.clear();
    if (armed) {
      if (!armed->check().holds(checked.empty() ? std::nullopt
                                                : std::optional<Row>(std::move(checked.front())))) {
        PQclear(result);
        throw CheckFailed();  // the caller rolls the unit back
      }
      armed->held();
    }
    return result;
  }

  // In pipeline mode: the next query's result, and the NULL that ends it.
  PGresult* next_query_result() {
    PGresult* result = PQgetResult(conn_);
    if (result && PQresultStatus(result) != PGRES_PIPELINE_SYNC) {
      while (PGresult* extra = PQgetResult(conn_)) PQclear(extra);
    }
    return result;
  }

  // Reads up to the pipeline's sync point; false when the connection fails first.
  bool await_sync() {
    for (int reads = 0; reads < 8; ++reads) {
      PGresult* result = PQgetResult(conn_);
      if (!result) {
        if (broken()) return false;
        continue;
      }
      bool sync = PQresultStatus(result) == PGRES_PIPELINE_SYNC;
      PQclear(result);
      if (sync) return true;
    }
    return false;
  }

 public:
  bool broken() const { return !conn_ || PQstatus(conn_) != CONNECTION_OK; }

  // After a failure: true when the connection was dead (the server restarted) and has been
  // opened again; false when it is alive, so the failure was the statement's own.
  bool reopen_if_dead() {
    if (!broken()) {
      PGresult* probe = PQexec(conn_, "SELECT 1");
      bool alive = PQresultStatus(probe) == PGRES_TUPLES_OK;
      PQclear(probe);
      if (alive) return false;
    }
    PQfinish(conn_);
    conn_ = nullptr;
    ensure_open();
    return true;
  }

  // COMMIT of a transaction that failed earlier answers "ROLLBACK": that is not a commit.
  // A primary whose synchronous standbys do not acknowledge the commit within
  // k_pg_commit_ack_wait_ms (cut off from them, or about to be demoted) has the wait cancelled:
  // the transaction then stands on this server alone (PostgreSQL cannot take a commit back), and
  // the unit fails as unavailable (503 with Retry-After), which a retry with the same
  // idempotency key resolves: it is replayed only once the standbys hold the record
  // (idempotency::find_for_replay), and made again on a new primary that never had it.
  void commit() {
    // No statement ran: nothing to commit.
    if (deferred_.empty() && std::exchange(pending_begin_, nullptr)) return;
    settle();
    // A unit whose every statement was deferred: they go first with its BEGIN, where a dead
    // pooled connection is reopened (run()). Otherwise COMMIT goes with the deferred writes.
    if (pending_begin_) run({}, {}, nullptr);
    bool cancelled = false;
    const auto await_answer = [&] {
      await_commit(std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(limits::k_pg_commit_ack_wait_ms),
                   cancelled);
    };
    PGresult* result = nullptr;
    if (!deferred_.empty()) {
      const Last last{"COMMIT", nullptr, 0, nullptr, "COMMIT"};
      result = exec_pipelined(nullptr, &last, await_answer);
    } else {
      if (PQsendQuery(conn_, "COMMIT") != 1) check(nullptr, "COMMIT");  // throws
      await_answer();
      result = PQgetResult(conn_);
      while (PGresult* extra = PQgetResult(conn_)) PQclear(extra);
    }
    check(result, "COMMIT");
    std::string tag = PQcmdStatus(result);
    PQclear(result);
    if (tag != "COMMIT") throw PgError("COMMIT answered " + tag, "40000", false);
    if (cancelled) {
      metrics::count_store_commit_unacknowledged();
      throw PgError("the synchronous standbys did not acknowledge the commit within " +
                        std::to_string(limits::k_pg_commit_ack_wait_ms) +
                        " ms: it stands on this server alone",
                    k_standbys_missing_state, true);
    }
  }

 private:
  // Waits for COMMIT's answer; past `deadline` asks the server to cancel the wait for the
  // standbys (`cancelled`), then waits on.
  void await_commit(std::chrono::steady_clock::time_point deadline, bool& cancelled) {
    while (PQconsumeInput(conn_) == 1 && PQisBusy(conn_) == 1) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 && !cancelled) {
        cancelled = true;
        if (PGcancel* cancel = PQgetCancel(conn_)) {
          char error[256];
          PQcancel(cancel, error, sizeof error);
          PQfreeCancel(cancel);
        }
        continue;
      }
      pollfd socket{PQsocket(conn_), POLLIN, 0};
      ::poll(&socket, 1,
             cancelled ? limits::k_pg_commit_cancelled_poll_ms : static_cast<int>(left.count()));
    }
  }

  const std::string& prepare(std::string_view sql) {
    auto found = statements_.find(std::string(sql));
    if (found != statements_.end()) return found->second;
    std::string name = "s" + std::to_string(statements_.size());
    std::string translated = translate_placeholders(sql);
    PGresult* result = PQprepare(conn_, name.c_str(), translated.c_str(), 0, nullptr);
    check(result, sql);
    PQclear(result);
    return statements_.emplace(std::string(sql), name).first->second;
  }

  // Every error the server sends has a SQLSTATE; one without is libpq's own, about the
  // connection ("server closed the connection unexpectedly" once a write to a socket whose
  // server is gone failed, with the status still OK): the connection is dropped, reopened on
  // next use, and the failure is unavailable (503; a unit's first statement is sent again).
  void check(PGresult* result, std::string_view sql) {
    ExecStatusType status = PQresultStatus(result);
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return;
    const char* state_field = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
    std::string state = state_field ? state_field : "08006";
    std::string message = PQerrorMessage(conn_);
    PQclear(result);
    if (!state_field) {
      PQfinish(conn_);
      conn_ = nullptr;
    }
    throw PgError(message + " in: " + std::string(sql), state,
                  is_unavailable_state(state) || broken());
  }

  std::string url_;
  PGconn* conn_ = nullptr;
  std::unordered_map<std::string, std::string> statements_;
  // A write Tx::exec_later deferred: its statement and its parameters as texts (NULL: none).
  struct Deferred {
    std::string sql;
    std::vector<std::optional<std::string>> params;
  };
  std::vector<Deferred> deferred_;       // in order, sent ahead of the unit's next statement
  const char* pending_begin_ = nullptr;  // begin() before the unit's first statement
  bool commit_in_flight_ = false;        // end_read() sent COMMIT; settle() reads its answer
};

using PgTx = ConnectionTx<Connection, Engine::postgres>;

class PostgresStore final : public Store {
 public:
  explicit PostgresStore(const Options& options)
      : url_(options.database_url), pool_size_(std::max(1, options.pool_size)) {
    // Fail at start-up when the database cannot be reached at all.
    auto connection = acquire();
    release(std::move(connection));
  }

  Engine engine() const override { return Engine::postgres; }
  bool carries_checks() const override { return true; }
  void stop() override { stopped_ = true; }

  bool ready() override {
    try {
      bool ready = false;
      with_connection([&](Connection& connection) {
        run_again_if_dead(connection, [&] { ready = synchronous_primary(connection); });
      });
      return ready;
    } catch (const StoreError&) {
      return false;
    }
  }

 protected:
  void run_read(const std::function<void(Tx&)>& fn) override {
    with_connection([&](Connection& connection) {
      connection.begin("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      PgTx tx(connection);
      fn(tx);
      connection.end_read();
    });
  }

  void run_read_single(const std::function<void(Tx&)>& fn) override {
    with_connection([&](Connection& connection) {
      PgTx tx(connection);
      // Autocommit: the statement is its own transaction.
      run_again_if_dead(connection, [&] { fn(tx); });
    });
  }

  void run_write(const std::function<bool(Tx&)>& fn) override {
    if (stopped_) throw StoreError("the store is stopped", true);
    for (int attempt = 1;; ++attempt) {
      try {
        with_connection([&](Connection& connection) {
          // Soon after a commit the standbys did not acknowledge, a write first asks whether
          // they are back: a primary cut off from them refuses at once rather than make every
          // write wait out the bounded commit (and leave one more commit on it alone).
          if (std::chrono::steady_clock::now() < standbys_suspect_until_.load() &&
              !synchronous_primary(connection)) {
            throw PgError("the synchronous standbys are not connected", k_standbys_missing_state,
                          true);
          }
          connection.begin("BEGIN");
          PgTx tx(connection);
          bool keep = fn(tx);
          if (keep) connection.commit();
          else connection.rollback();
        });
        return;
      } catch (const PgError& failure) {
        if (failure.state() == k_standbys_missing_state) {
          standbys_suspect_until_ =
              std::chrono::steady_clock::now() +
              std::chrono::milliseconds(limits::k_pg_standbys_suspect_ms);
        }
        if (!is_retryable_state(failure.state()) || attempt >= limits::k_pg_unit_retries_max) throw;
        metrics::count_store_retry();
        log::write(log::Level::info, "store.retry",
                   {{"state", failure.state()}, {"attempt", attempt}});
        std::this_thread::sleep_for(
            std::chrono::milliseconds(limits::k_pg_unit_retry_backoff_ms * attempt));
      }
    }
  }

 private:
  // Whether a write on this connection would commit durably: the server is a primary (not in
  // recovery) whose synchronous standbys, when synchronous_standby_names names any, are
  // connected in the number it asks for.
  static bool synchronous_primary(Connection& connection) {
    PgTx tx(connection);
    // sync_state is shown to superusers and members of pg_read_all_stats (pg_monitor):
    // docs/operations.md says to grant it to Tesoro's role when standbys are synchronous.
    auto row = tx.query_one(
        "SELECT CASE WHEN pg_is_in_recovery() THEN 1 ELSE 0 END, "
        "current_setting('synchronous_standby_names'), "
        "(SELECT COUNT(*) FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum'))",
        {});
    return row && row->integer(0) == 0 &&
           row->integer(2) >= synchronous_standbys_required(row->text(1));
  }

  // Runs a statement outside a transaction (a read, the readiness query). A pooled connection may
  // have died while idle (the server restarted, its backend was ended): such a statement is safe
  // to run again once on a new connection.
  template <class F>
  static void run_again_if_dead(Connection& connection, F&& statement) {
    try {
      statement();
    } catch (const PgError&) {
      if (!connection.reopen_if_dead()) throw;
      statement();
    }
  }

  template <class F>
  void with_connection(F&& body) {
    auto connection = acquire();
    try {
      connection->ensure_open();
      body(*connection);
    } catch (...) {
      try {
        connection->rollback();
      } catch (const StoreError&) {  // nothing more to undo
      }
      release(std::move(connection));
      throw;
    }
    release(std::move(connection));
  }

  std::unique_ptr<Connection> acquire() {
    std::unique_lock lock(mutex_);
    bool ready = available_.wait_for(lock, std::chrono::milliseconds(limits::k_pg_pool_wait_ms), [&] {
      return !idle_.empty() || opened_ < pool_size_;
    });
    if (!ready) throw PgError("connection pool exhausted", "53300", true);
    if (!idle_.empty()) {
      auto connection = std::move(idle_.back());
      idle_.pop_back();
      return connection;
    }
    ++opened_;
    lock.unlock();
    auto connection = std::make_unique<Connection>(url_);
    try {
      connection->ensure_open();
    } catch (...) {
      release(std::move(connection));  // keep the slot: it reconnects on next use
      throw;
    }
    return connection;
  }

  void release(std::unique_ptr<Connection> connection) {
    {
      std::lock_guard lock(mutex_);
      idle_.push_back(std::move(connection));
    }
    available_.notify_one();
  }

  std::string url_;
  int pool_size_;
  std::mutex mutex_;
  std::condition_variable available_;
  std::vector<std::unique_ptr<Connection>> idle_;
  int opened_ = 0;
  std::atomic<bool> stopped_{false};
  // Until when writes check the standbys first (after one they did not acknowledge).
  std::atomic<std::chrono::steady_clock::time_point> standbys_suspect_until_{};
};

}  // namespace

int synchronous_standbys_required(std::string_view names) {
  auto trim = [](std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
      text.remove_prefix(1);
    }
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
      text.remove_suffix(1);
    }
    return text;
  };
  names = trim(names);
  if (names.empty()) return 0;
  for (std::string_view method : {"ANY", "FIRST"}) {
    if (names.size() > method.size() &&
        std::equal(method.begin(), method.end(), names.begin(), [](char a, char b) {
          return a == std::toupper(static_cast<unsigned char>(b));
        }) &&
        std::isspace(static_cast<unsigned char>(names[method.size()]))) {
      names = trim(names.substr(method.size()));
      break;
    }
  }
  int required = 0;
  auto [end, error] = std::from_chars(names.data(), names.data() + names.size(), required);
  if (error == std::errc() && trim(std::string_view(end, names.data() + names.size() - end))
                                      .starts_with("(")) {
    return required;
  }
  return 1;  // a list of names: the first of them, one standby
}

std::string translate_placeholders(std::string_view sql) {
  std::string out;
  out.reserve(sql.size() + 16);
  int index = 0;
  char quote = 0;
  for (char c : sql) {
    if (quote) {
      if (c == quote) quote = 0;
      out += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      out += c;
    } else if (c == '?') {
      out += '$' + std::to_string(++index);
    } else {
      out += c;
    }
  }
  return out;
}

std::unique_ptr<Store> open_postgres(const Options& options) {
  return std::make_unique<PostgresStore>(options);
}

}  // namespace tesoro::store
