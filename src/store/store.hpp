#pragma once
// The storage seam. Domain code sees only Store and Tx; engines (SQLite, PostgreSQL) live behind it.
//
// Contract:
// - SQL uses `?` placeholders and the subset both engines share; an engine translates what it must.
// - store.read(fn): fn runs inside one read-only snapshot. fn's Result is returned as is.
// - store.write(fn): fn runs inside one write unit. When fn returns ok, its effects are durably
//   committed (on disk) before write() returns; when fn returns an Error, every effect of fn is
//   rolled back and the Error is returned. Units may be committed in groups with other units; one
//   unit failing never affects another.
// - A write function may run more than once (PostgreSQL retries a unit that hit a deadlock or a
//   serialization failure) and on another thread (the SQLite writer). So it must have no effect
//   outside its transaction: no I/O, no waking of workers, no metrics. Work that must follow the
//   commit goes through tx.after_commit(hook) or tx.notify(topic): the store runs them once, on
//   the thread that called write(), after the unit is durable, and never for a unit that was
//   rolled back or for an attempt that was retried.
// - store.write_queued(fn, then): where one writer takes every unit in turn (SQLite), queues fn
//   as write() would run it and returns at once; `then` gets the outcome after the commit (and
//   after the unit's after-commit work), on the writer's thread. Where writes block their caller
//   (PostgreSQL), queues nothing and returns false: write() then, on a thread that may block.
// - After stop(), write() throws StoreError{unavailable} at once (a 503), never waits; so does
//   the outcome write_queued() gives, on the calling thread.
// - A check armed on the calling thread (ArmedCheck, below) rides with its next unit's first
//   statement where carries_checks(); one that does not hold throws CheckFailed, the unit
//   rolled back.
// - A failure of the storage itself throws StoreError (caught once at the request boundary).
// - read() and write() block the calling thread; call them from worker threads, never from I/O
//   threads.
//   The one exception: an I/O thread that holds a reader (HeldReader, which never waits: it takes
//   an idle reader or none) may read through it; SQLite's snapshot reads then wait for nothing,
//   and a read inside such a read runs on the same reader, never waiting for the pool.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <span>
#include <string_view>
#include <variant>
#include <vector>

#include "core/limits.hpp"
#include "core/result.hpp"

namespace tesoro::store {

enum class Engine { sqlite, postgres };

// A text parameter bound without a copy: the caller keeps the text alive, unchanged, until
// the statement has run (a unit that writes a thousand rows binds their fields where they are).
// Its text is followed by a NUL (PostgreSQL's text parameters need one): a std::string's is, and
// terminated() is given only texts that are.
class TextRef {
 public:
  explicit TextRef(const std::string& text) : text_(text) {}
  explicit TextRef(std::string&&) = delete;  // a temporary would be gone before the statement
  // `text` where text.data()[text.size()] is a NUL the caller keeps with it.
  static TextRef terminated(std::string_view text) { return TextRef(text); }
  std::string_view text() const { return text_; }
  const char* c_str() const { return text_.data(); }

 private:
  explicit TextRef(std::string_view text) : text_(text) {}
  std::string_view text_;
};

// A parameter or a column's value. Rows read back hold no TextRef.
using Value = std::variant<std::nullptr_t, std::int64_t, std::string, TextRef>;
// An optional text column: NULL when absent.
inline Value optional_value(const std::optional<std::string>& text) {
  if (!text) return nullptr;
  return *text;
}
using Params = std::vector<Value>;

class Row {
 public:
  explicit Row(std::vector<Value> values) : values_(std::move(values)) {}
  std::size_t size() const { return values_.size(); }
  bool is_null(std::size_t column) const;
  std::string text(std::size_t column) const;  // "" when null
  std::optional<std::string> optional_text(std::size_t column) const;
  std::optional<std::int64_t> optional_integer(std::size_t column) const;
  std::int64_t integer(std::size_t column) const;  // 0 when null

 private:
  std::vector<Value> values_;
};
using Rows = std::vector<Row>;

class StoreError : public std::runtime_error {
 public:
  StoreError(const std::string& what, bool unavailable, bool duplicate_row = false)
      : std::runtime_error(what), unavailable_(unavailable), duplicate_row_(duplicate_row) {}
  // True when the database cannot be reached or is temporarily unable to serve (503, retryable).
  bool unavailable() const { return unavailable_; }
  // True when a row broke a uniqueness constraint (PostgreSQL's unique_violation, SQLite's
  // UNIQUE or PRIMARY KEY constraint).
  bool duplicate_row() const { return duplicate_row_; }

 private:
  bool unavailable_;
  bool duplicate_row_;
};

// A statement the calling thread's next unit runs first, in the round trip of the unit's own
// first statement, on an engine that pipelines (Store::carries_checks(): PostgreSQL). `holds`
// judges its row (nullopt: none): when it does not hold, the unit is rolled back and throws
// CheckFailed before anything of it commits. The API checks a credential it kept so
// (app/credential_cache.hpp): the lookup costs no round trip of its own, and a credential
// revoked on any node is still refused from the next request on.
struct Check {
  const char* sql;
  Params params;
  std::function<bool(const std::optional<Row>&)> holds;
};

class CheckFailed : public std::exception {
 public:
  const char* what() const noexcept override { return "a unit's check did not hold"; }
};

// Arms a check for the units the calling thread runs until a unit has sent it and it held
// (done()), or until this is destroyed. One at a time on a thread.
class ArmedCheck {
 public:
  explicit ArmedCheck(Check check);
  ~ArmedCheck();
  ArmedCheck(const ArmedCheck&) = delete;
  ArmedCheck& operator=(const ArmedCheck&) = delete;
  bool done() const { return done_; }

  // For engines: the check armed on the calling thread and not yet done, or nullptr. A unit
  // that sends it calls held() when it held; one that failed before reading it leaves it
  // armed, so that a retry sends it again.
  static ArmedCheck* pending();
  const Check& check() const { return check_; }
  void held() { done_ = true; }

 private:
  Check check_;
  bool done_ = false;
};

class Tx {
 public:
  using Hook = std::function<void()>;
  virtual ~Tx() = default;
  virtual Rows query(std::string_view sql, const Params& params = {}) = 0;
  // Returns the number of rows changed.
  std::int64_t exec(std::string_view sql, const Params& params = {}) {
    return exec_values(sql, params);
  }
  // The same with the parameters where they are: a part of a larger list (store::exec_many's
  // statements of a few hundred rows each) is bound without being copied out.
  virtual std::int64_t exec_values(std::string_view sql, std::span<const Value> params) = 0;
  // A write whose count of changed rows the caller does not need: the engine may send it with
  // the unit's next statement or its COMMIT, in one round trip (PostgreSQL's pipeline), instead
  // of waiting for its answer now. Its failure (a constraint, a deadlock) fails the unit where
  // it is sent: at the next query, exec, append_rows, nested() boundary or the commit, before
  // any of them runs. So a caller that must tell its failure apart (duplicate_row) uses exec,
  // or runs it in nested(), whose boundaries send what it deferred. The parameters are copied:
  // a TextRef's text may go once this returns. SQLite runs it at once (one writer, no round trip).
  void exec_later(std::string_view sql, const Params& params = {}) {
    exec_later_values(sql, params);
  }
  virtual void exec_later_values(std::string_view sql, std::span<const Value> params) {
    exec_values(sql, params);
  }
  virtual Engine engine() const = 0;
  // Appends rows to a table: `table_columns` is "table (column, ...)", `values` hold `width` a
  // row, row after row. SQLite runs INSERT statements of limits::k_bulk_rows rows; PostgreSQL
  // reads many rows in one COPY ... FROM STDIN, which costs its backend about a quarter less
  // CPU a row than those statements, and a few (at most limits::k_pg_deferred_insert_rows) in
  // one INSERT sent as exec_later sends it (a COPY is a round trip of its own, and for a row or
  // two costs the backend more than an INSERT). A row that breaks a uniqueness constraint fails
  // it as it would an INSERT (StoreError::duplicate_row()), at the latest at the next nested()
  // boundary; COPY has no ON CONFLICT, so a caller that may meet such rows runs it in a
  // savepoint (nested) and falls back to an INSERT that skips them. Returns the rows written
  // (all of them, or the unit fails).
  virtual std::int64_t append_rows(std::string_view table_columns, std::size_t width,
                                   std::span<const Value> values);

  std::optional<Row> query_one(std::string_view sql, const Params& params = {});
  // " FOR UPDATE" where the engine takes row locks, "" where the single writer makes it moot.
  std::string_view lock_rows() const { return engine() == Engine::postgres ? " FOR UPDATE" : ""; }
  // Runs fn inside a savepoint; rolls its effects back when it returns an Error.
  template <class T, class F>
  Result<T> nested(F&& fn);

  // Runs hook once this unit is durably committed (see the contract above).
  void after_commit(Hook hook) { hooks_.push_back(std::move(hook)); }
  // Tells the store's listener (the worker runner) that `topic` has new work, once committed.
  // A unit that emits a thousand events notifies their topic once.
  void notify(std::string topic) {
    if (std::find(topics_.begin(), topics_.end(), topic) == topics_.end()) {
      topics_.push_back(std::move(topic));
    }
  }

 private:
  friend class Store;
  std::vector<Hook> hooks_;
  std::vector<std::string> topics_;
};

class Store {
 public:
  virtual ~Store() = default;
  virtual Engine engine() const = 0;
  // Whether units run an ArmedCheck in the round trip of their first statement. Where not
  // (SQLite: no round trip to save), nothing sends a check.
  virtual bool carries_checks() const { return false; }
  // True when the database answers a trivial query.
  bool ping();
  // Sends the check armed on the calling thread now, when one is pending (a request answered
  // before any unit ran): one statement carries it. Throws CheckFailed when it does not hold,
  // StoreError when the database cannot be asked.
  void send_pending_check();
  // Readiness (GET /readyz): whether a write unit could commit now. SQLite: ping(). PostgreSQL:
  // checked on a pooled connection, the kind a write uses: the server is a primary (not in
  // recovery) whose synchronous standbys, when synchronous_standby_names names any, are
  // connected in the number it asks for (a primary cut off from them would hold every commit).
  virtual bool ready() { return ping(); }

  template <class T, class F>
  Result<T> read(F&& fn) {
    std::optional<Result<T>> result;
    run_read([&](Tx& tx) { result.emplace(fn(tx)); });
    return std::move(*result);
  }

  // A read of one statement: no transaction around it, since one statement is its own
  // snapshot. On PostgreSQL that saves the BEGIN and COMMIT of every request's credential
  // lookup and of the lists that are one query_page. A further statement of fn runs in a
  // snapshot of its own (on PostgreSQL), so fn must not need two statements to agree.
  template <class T, class F>
  Result<T> read_single(F&& fn) {
    std::optional<Result<T>> result;
    run_read_single([&](Tx& tx) { result.emplace(fn(tx)); });
    return std::move(*result);
  }

  template <class T, class F>
  Result<T> write(F&& fn) {
    std::optional<Result<T>> result;
    std::vector<Tx::Hook> hooks;
    std::vector<std::string> topics;
    run_write([&](Tx& tx) {
      result.emplace(fn(tx));
      // Each attempt has a Tx of its own: a retried attempt's hooks are dropped with it.
      hooks = std::move(tx.hooks_);
      topics = std::move(tx.topics_);
      return result->ok();
    });
    if (result->ok()) run_after_commit(hooks, topics);
    return std::move(*result);
  }

  // What a queued unit came to: its Result, or, when called, a throw of what write() would have
  // thrown (the storage failed, the store is stopped or its queue full).
  template <class T>
  using Outcome = std::function<Result<T>()>;

  // write(), queued (the contract above): true when fn is queued, false when the engine's writes
  // block their caller (nothing is queued). `then` runs once, on the writer's thread (or on the
  // calling thread when the unit could not be queued): it must be short, must not block and
  // must not write (the writer would wait for itself); it hands anything more to a worker.
  template <class T, class F>
  bool write_queued(F fn, std::function<void(Outcome<T>)> then);

  // Takes an idle reader for the calling thread's reads until release_held_reader(), without
  // waiting: false, holding nothing, when none is idle now (the caller hands its work to a
  // thread that may wait). Engines whose reads are network round trips hold none (false): their
  // reads never run on an I/O thread. Use it through HeldReader.
  virtual bool hold_reader() { return false; }
  virtual void release_held_reader() {}

  // Who hears tx.notify(topic) after commit. Set once, before the first write.
  void set_listener(std::function<void(const std::string& topic)> listener) {
    listener_ = std::move(listener);
  }
  // From now on every write throws StoreError{unavailable} at once. Units already queued finish.
  virtual void stop() = 0;
  // How many write units this process has queued so far where all of them queue for one writer
  // (SQLite); 0 where writes do not queue (PostgreSQL). A background worker reads it around its
  // own unit to learn whether requests were writing meanwhile.
  virtual std::uint64_t writer_units() const { return 0; }

 protected:
  virtual void run_read(const std::function<void(Tx&)>& fn) = 0;
  virtual void run_read_single(const std::function<void(Tx&)>& fn) { run_read(fn); }
  // fn returns true to keep its effects, false to roll them back.
  virtual void run_write(const std::function<bool(Tx&)>& fn) = 0;
  // run_write, queued: done(nullptr) after the commit, done(the failure) when fn threw or the
  // unit was not committed. False, doing nothing, where writes are not queued.
  virtual bool run_write_queued(std::function<bool(Tx&)> /*fn*/,
                                std::function<void(std::exception_ptr)> /*done*/) {
    return false;
  }

 private:
  void run_after_commit(std::vector<Tx::Hook>& hooks, const std::vector<std::string>& topics);
  std::function<void(const std::string&)> listener_;
};

template <class T, class F>
bool Store::write_queued(F fn, std::function<void(Outcome<T>)> then) {
  // What the unit leaves for after its commit, kept until the writer says it is durable.
  struct Queued {
    F fn;
    std::optional<Result<T>> result;
    std::vector<Tx::Hook> hooks;
    std::vector<std::string> topics;
  };
  auto unit = std::make_shared<Queued>(Queued{std::move(fn), std::nullopt, {}, {}});
  return run_write_queued(
      [unit](Tx& tx) {
        unit->result.emplace(unit->fn(tx));
        unit->hooks = std::move(tx.hooks_);
        unit->topics = std::move(tx.topics_);
        return unit->result->ok();
      },
      [this, unit, then = std::move(then)](std::exception_ptr failure) {
        if (failure) {
          then([failure]() -> Result<T> { std::rethrow_exception(failure); });
          return;
        }
        if (unit->result->ok()) run_after_commit(unit->hooks, unit->topics);
        then([unit]() -> Result<T> { return std::move(*unit->result); });
      });
}

template <class T, class F>
Result<T> Tx::nested(F&& fn) {
  exec("SAVEPOINT nested_unit");
  // What the nested part asks to run after commit is undone with it.
  const std::size_t hooks_before = hooks_.size();
  const std::size_t topics_before = topics_.size();
  auto undo = [&] {
    exec("ROLLBACK TO SAVEPOINT nested_unit");
    hooks_.resize(hooks_before);
    topics_.resize(topics_before);
  };
  std::optional<Result<T>> result;
  try {
    result.emplace(fn(*this));
    // Inside the try: RELEASE sends what the nested part deferred (exec_later), whose failure
    // is the nested part's.
    if (!result->ok()) undo();
    exec("RELEASE SAVEPOINT nested_unit");
  } catch (...) {
    undo();
    exec("RELEASE SAVEPOINT nested_unit");
    throw;
  }
  return std::move(*result);
}

// A reader held by the calling thread for its scope (Store::hold_reader); test it before use.
class HeldReader {
 public:
  explicit HeldReader(Store& store) : store_(store), held_(store.hold_reader()) {}
  ~HeldReader() {
    if (held_) store_.release_held_reader();
  }
  HeldReader(const HeldReader&) = delete;
  HeldReader& operator=(const HeldReader&) = delete;
  explicit operator bool() const { return held_; }

 private:
  Store& store_;
  bool held_;
};

struct Options {
  std::string data_dir;      // SQLite: the folder holding tesoro.db
  std::string database_url;  // PostgreSQL: postgres://... (takes precedence when set)
  // At most; one per concurrent reader, kept open with its statements.
  int read_connections = limits::k_read_connections_max;
  int pool_size = limits::k_postgres_pool_size;  // PostgreSQL connections per node
  // SQLite: most write units per group commit. 1 turns group commit off (one fsync per unit),
  // which only the benchmark wants, to show what group commit buys.
  std::size_t commit_batch_max = limits::k_commit_batch_max;
  // SQLite: past this many WAL frames the checkpointer restarts the WAL, and a WAL file that grew
  // past wal_size_limit_bytes is cut back to that size when it starts over. Tests lower them.
  std::int64_t wal_restart_frames = limits::k_wal_restart_frames;
  std::int64_t wal_size_limit_bytes = limits::k_wal_size_limit_bytes;
};

// Opens the engine named by options. Throws StoreError when it cannot.
std::unique_ptr<Store> open(const Options& options);
// Applies every migration not yet applied. Returns the schema version reached.
int migrate(Store& store);
// Up to `target_version` only: what a database written by an older binary looks like (tests of
// the migrations of existing data).
int migrate(Store& store, int target_version);
// True when the database has Tesoro's tables (a migration ran), without creating anything.
bool has_schema(Store& store);
// True when the database has been initialised (has its tables and a tenant).
bool is_initialised(Store& store);

}  // namespace tesoro::store
