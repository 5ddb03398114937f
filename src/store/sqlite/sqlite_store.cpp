#include "store/sqlite/sqlite_store.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "core/limits.hpp"
#include "store/connection_tx.hpp"
#include "store/sqlite/wal_vfs.hpp"
#include "core/log.hpp"
#include "core/metrics.hpp"
#include "core/thread_priority.hpp"

namespace tesoro::store {
namespace {

bool is_unavailable_code(int code) {
  int primary = code & 0xFF;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED || primary == SQLITE_FULL ||
         primary == SQLITE_IOERR || primary == SQLITE_CANTOPEN;
}

// One SQLite connection with a cache of prepared statements. Used by one thread at a time.
class Connection {
 public:
  Connection(const std::string& path, bool read_only) {
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    // Through wal_vfs: a commit's WAL frames reach the kernel in one write, not two a page.
    if (sqlite3_open_v2(path.c_str(), &db_, flags, wal_vfs::name()) != SQLITE_OK) {
      std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      throw StoreError("cannot open " + path + ": " + message, true);
    }
    try {
      configure(read_only);
    } catch (...) {
      sqlite3_close(db_);  // the destructor does not run for a half-built connection
      throw;
    }
  }

  // Whether a transaction is open on it (BEGIN ran, its COMMIT or ROLLBACK not yet).
  bool in_transaction() const { return sqlite3_get_autocommit(db_) == 0; }

  void configure(bool read_only) {
    sqlite3_busy_timeout(db_, limits::k_busy_timeout_ms);
    // Only a database without pages yet takes it (before WAL mode writes the first one); any
    // other keeps the page size it was made with.
    if (!read_only) {
      exec_plain(("PRAGMA page_size=" + std::to_string(limits::k_sqlite_page_size_bytes)).c_str());
    }
    exec_plain("PRAGMA journal_mode=WAL");
    exec_plain("PRAGMA synchronous=FULL");
    exec_plain("PRAGMA foreign_keys=ON");
    if (read_only) {
      // No mmap: after any commit, SQLite drops a reader's whole mapping at its next read (a
      // munmap, then a page fault per page touched), which cost more than reading the few pages
      // a request needs from the OS page cache.
      exec_plain("PRAGMA mmap_size=0");
    } else {
      // Random identifiers spread inserts over many index pages: the writer keeps them in memory
      // rather than re-reading them from the OS cache on every commit.
      exec_plain(("PRAGMA cache_size=-" + std::to_string(limits::k_sqlite_writer_cache_kib))
                     .c_str());
    }
    // Savepoint journals (two per write unit) stay in memory instead of a temporary file.
    exec_plain("PRAGMA temp_store=MEMORY");
    // Checkpoints run on their own thread (SqliteStore::checkpoint_loop), off the commit path.
    exec_plain("PRAGMA wal_autocheckpoint=0");
    if (read_only) exec_plain("PRAGMA query_only=1");
  }
  ~Connection() {
    for (auto& [sql, statement] : statements_) sqlite3_finalize(statement);
    sqlite3_close(db_);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void set_busy_timeout(int milliseconds) { sqlite3_busy_timeout(db_, milliseconds); }

  // PRAGMA wal_checkpoint(RESTART), waiting at most wait_ms for readers and the write lock, then
  // back to a busy timeout of after_ms. True when the WAL will start over at the next commit.
  bool restart_wal(int wait_ms, int after_ms) {
    set_busy_timeout(wait_ms);
    Rows result;  // busy, frames in the WAL, frames copied
    try {
      run("PRAGMA wal_checkpoint(RESTART)", {}, &result);
    } catch (...) {
      set_busy_timeout(after_ms);
      throw;
    }
    set_busy_timeout(after_ms);
    return !result.empty() && result.front().integer(0) == 0;
  }

  // After each commit, `*frames` is the number of frames in the WAL (sqlite3_wal_hook).
  void count_wal_frames(std::int64_t* frames) {
    sqlite3_wal_hook(
        db_,
        [](void* out, sqlite3*, const char*, int count) {
          *static_cast<std::int64_t*>(out) = count;
          return SQLITE_OK;
        },
        frames);
  }

  void exec_plain(const char* sql) {
    char* message = nullptr;
    int code = sqlite3_exec(db_, sql, nullptr, nullptr, &message);
    if (code != SQLITE_OK) {
      std::string text = message ? message : sqlite3_errstr(code);
      sqlite3_free(message);
      throw StoreError(std::string(sql) + ": " + text, is_unavailable_code(code));
    }
  }

  // Runs one statement to completion; collects rows when `rows` is given.
  std::int64_t run(std::string_view sql, std::span<const Value> params, Rows* rows) {
    sqlite3_stmt* statement = prepare(sql);
    bind(statement, params, sql);
    while (true) {
      int code = sqlite3_step(statement);
      if (code == SQLITE_ROW) {
        if (rows) rows->push_back(read_row(statement));
        continue;
      }
      sqlite3_reset(statement);
      sqlite3_clear_bindings(statement);
      if (code != SQLITE_DONE) {
        const int extended = sqlite3_extended_errcode(db_);
        throw StoreError(std::string(sqlite3_errmsg(db_)) + " in: " + std::string(sql),
                         is_unavailable_code(code),
                         extended == SQLITE_CONSTRAINT_UNIQUE ||
                             extended == SQLITE_CONSTRAINT_PRIMARYKEY);
      }
      return sqlite3_changes64(db_);
    }
  }

 private:
  sqlite3_stmt* prepare(std::string_view sql) {
    auto found = statements_.find(sql);  // without a copy of the text: a batch's are 25 KB
    if (found != statements_.end()) return found->second;
    sqlite3_stmt* statement = nullptr;
    int code = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                  SQLITE_PREPARE_PERSISTENT, &statement, nullptr);
    if (code != SQLITE_OK) {
      throw StoreError(std::string(sqlite3_errmsg(db_)) + " in: " + std::string(sql),
                       is_unavailable_code(code));
    }
    statements_.emplace(std::string(sql), statement);
    return statement;
  }

  void bind(sqlite3_stmt* statement, std::span<const Value> params, std::string_view sql) {
    if (static_cast<int>(params.size()) != sqlite3_bind_parameter_count(statement)) {
      sqlite3_reset(statement);
      throw StoreError("wrong parameter count for: " + std::string(sql), false);
    }
    for (std::size_t i = 0; i < params.size(); ++i) {
      int index = static_cast<int>(i + 1);
      const Value& value = params[i];
      if (auto* number = std::get_if<std::int64_t>(&value)) {
        sqlite3_bind_int64(statement, index, *number);
      } else if (auto* text = std::get_if<std::string>(&value)) {
        sqlite3_bind_text64(statement, index, text->data(), text->size(), SQLITE_STATIC,
                            SQLITE_UTF8);
      } else if (auto* ref = std::get_if<TextRef>(&value)) {
        sqlite3_bind_text64(statement, index, ref->text().data(), ref->text().size(),
                            SQLITE_STATIC, SQLITE_UTF8);
      } else {
        sqlite3_bind_null(statement, index);
      }
    }
  }

  static Row read_row(sqlite3_stmt* statement) {
    int columns = sqlite3_column_count(statement);
    std::vector<Value> values;
    values.reserve(static_cast<std::size_t>(columns));
    for (int c = 0; c < columns; ++c) {
      switch (sqlite3_column_type(statement, c)) {
        case SQLITE_NULL: values.emplace_back(nullptr); break;
        case SQLITE_INTEGER: values.emplace_back(std::int64_t{sqlite3_column_int64(statement, c)}); break;
        default: {
          auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement, c));
          values.emplace_back(std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(statement, c))));
        }
      }
    }
    return Row(std::move(values));
  }

  sqlite3* db_ = nullptr;
  // Prepared statements by their text, looked up by a string_view (a transparent hash).
  struct TextHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const {
      return std::hash<std::string_view>{}(text);
    }
  };
  std::unordered_map<std::string, sqlite3_stmt*, TextHash, std::equal_to<>> statements_;
};

using SqliteTx = ConnectionTx<Connection, Engine::sqlite>;

// A unit in the writer's queue: write()'s, whose caller waits on `done`, or a queued one
// (write_queued), which owns its function and is told its outcome by `queued_done`.
struct WriteUnit {
  const std::function<bool(Tx&)>* fn = nullptr;
  std::promise<void> done;
  std::function<bool(Tx&)> owned_fn;
  std::function<void(std::exception_ptr)> queued_done;
};

class SqliteStore;

// The reader a thread holds (Store::hold_reader): of one store at a time.
struct HeldConnection {
  const SqliteStore* store = nullptr;
  std::unique_ptr<Connection> connection;
  bool in_use = false;  // a read through it is under way (a read within it runs on it too)
};
thread_local HeldConnection held_;

class SqliteStore final : public Store {
 public:
  explicit SqliteStore(const Options& options)
      : path_(options.data_dir + "/tesoro.db"),
        read_connections_max_(std::max(1, std::min(options.read_connections,
                                                   limits::k_read_connections_max))),
        commit_batch_max_(std::clamp<std::size_t>(options.commit_batch_max, 1,
                                                  limits::k_commit_batch_max)),
        wal_restart_frames_(std::max<std::int64_t>(options.wal_restart_frames, 1)),
        next_writer_restart_frames_(limits::k_wal_writer_restart_factor * wal_restart_frames_) {
    std::error_code ignored;
    std::filesystem::create_directories(options.data_dir, ignored);
    writer_connection_ = std::make_unique<Connection>(path_, false);
    // The writer is the connection that starts the WAL over (at its first commit after a
    // checkpoint copied it all): past this size, it cuts the file back, so that a WAL that grew
    // under a long reader or a burst of writes does not keep its disk space for ever.
    writer_connection_->exec_plain(
        ("PRAGMA journal_size_limit=" +
         std::to_string(std::max<std::int64_t>(options.wal_size_limit_bytes, 0)))
            .c_str());
    writer_connection_->count_wal_frames(&wal_frames_);
    // Named for operators (top -H, perf): the group-commit writer is the thread to watch.
    writer_ = std::thread([this] {
      thread_priority::name_this_thread("sqlite-writer");
      writer_loop();
    });
    checkpointer_ = std::thread([this] {
      thread_priority::name_this_thread("sqlite-checkpt");
      // Behind the writer too: copying the WAL into the database can wait for a core, while
      // every write waits for the writer (limits::k_sqlite_behind_writer_nice). Starved, it
      // leaves the WAL to grow until the writer restarts it itself (restart_outgrown_wal).
      thread_priority::lower_this_thread(limits::k_sqlite_behind_writer_nice);
      checkpoint_loop();
    });
  }

  ~SqliteStore() override {
    stop();
    writer_.join();
    checkpointer_.join();
  }

  Engine engine() const override { return Engine::sqlite; }

  std::uint64_t writer_units() const override { return units_queued_.load(); }

  void stop() override {
    {
      std::lock_guard lock(queue_mutex_);
      stopping_ = true;
    }
    queue_ready_.notify_all();
    checkpoint_wake_.notify_all();
  }

 protected:
  void run_read(const std::function<void(Tx&)>& fn) override {
    with_reader([&](Connection& connection) {
      // A read inside a read on the held reader: the outer read's snapshot serves it.
      if (connection.in_transaction()) {
        SqliteTx tx(connection);
        fn(tx);
        return;
      }
      connection.run("BEGIN", {}, nullptr);
      try {
        SqliteTx tx(connection);
        fn(tx);
      } catch (...) {
        try {
          connection.exec_plain("ROLLBACK");
        } catch (const StoreError&) {  // already rolled back; nothing else to undo
        }
        throw;
      }
      connection.run("COMMIT", {}, nullptr);
    });
  }

  void run_read_single(const std::function<void(Tx&)>& fn) override {
    with_reader([&](Connection& connection) {
      SqliteTx tx(connection);
      fn(tx);  // autocommit: the statement reads one snapshot
    });
  }

  void run_write(const std::function<bool(Tx&)>& fn) override {
    WriteUnit unit;
    unit.fn = &fn;
    std::future<void> done = unit.done.get_future();
    enqueue(&unit);
    done.get();  // rethrows the unit's exception, or the commit's
  }

  bool run_write_queued(std::function<bool(Tx&)> fn,
                        std::function<void(std::exception_ptr)> done) override {
    auto unit = std::make_unique<WriteUnit>();
    unit->owned_fn = std::move(fn);
    unit->fn = &unit->owned_fn;
    unit->queued_done = std::move(done);
    try {
      enqueue(unit.get());
    } catch (const StoreError&) {
      unit->queued_done(std::current_exception());
      return true;
    }
    unit.release();  // the writer's now: commit_batch deletes it once it has told its outcome
    return true;
  }

 public:
  bool hold_reader() override {
    if (held_.connection) return false;  // one held reader per thread
    std::unique_ptr<Connection> connection;
    {
      std::lock_guard lock(readers_mutex_);
      // Only an idle one: opening a connection reads the database file.
      if (readers_.empty()) return false;
      connection = std::move(readers_.back());
      readers_.pop_back();
    }
    held_.store = this;
    held_.connection = std::move(connection);
    held_.in_use = false;
    return true;
  }

  void release_held_reader() override {
    if (held_.store != this || !held_.connection) return;
    release_reader(std::move(held_.connection));
    held_.store = nullptr;
  }

 private:
  // Hands a unit to the writer; throws StoreError{unavailable}, queueing nothing, when the store
  // is stopped (the writer drains what is queued and exits: a unit queued now would wait for
  // ever) or its queue is full.
  void enqueue(WriteUnit* unit) {
    {
      std::lock_guard lock(queue_mutex_);
      if (stopping_) throw StoreError("the store is stopped", true);
      if (queue_.size() >= limits::k_write_queue_max) {
        throw StoreError("write queue is full", true);
      }
      queue_.push_back(unit);
      units_queued_.fetch_add(1);
      metrics::set_write_queue_depth(queue_.size());
    }
    queue_ready_.notify_one();
  }

  // Lends a reader connection to body and takes it back, however body leaves: the one the
  // calling thread holds (hold_reader) when it has one, else one from the pool. A read inside a
  // read of the held reader runs on it too (in the outer read's transaction, when it has one):
  // the holder is an I/O thread, which never waits for the pool.
  template <class F>
  void with_reader(F&& body) {
    if (held_.store == this && held_.connection) {
      const bool outer = !held_.in_use;
      held_.in_use = true;
      try {
        body(*held_.connection);
      } catch (...) {
        if (outer) held_.in_use = false;
        throw;
      }
      if (outer) held_.in_use = false;
      return;
    }
    std::unique_ptr<Connection> connection = acquire_reader();
    try {
      body(*connection);
    } catch (...) {
      release_reader(std::move(connection));
      throw;
    }
    release_reader(std::move(connection));
  }

  // At most read_connections_max_ readers exist; a caller past that waits for one to come back.
  std::unique_ptr<Connection> acquire_reader() {
    {
      std::unique_lock lock(readers_mutex_);
      reader_returned_.wait(lock, [&] {
        return !readers_.empty() || readers_open_ < read_connections_max_;
      });
      if (!readers_.empty()) {
        auto connection = std::move(readers_.back());
        readers_.pop_back();
        return connection;
      }
      ++readers_open_;
    }
    try {
      return std::make_unique<Connection>(path_, true);
    } catch (...) {
      std::lock_guard lock(readers_mutex_);
      --readers_open_;
      reader_returned_.notify_one();
      throw;
    }
  }

  void release_reader(std::unique_ptr<Connection> connection) {
    {
      std::lock_guard lock(readers_mutex_);
      readers_.push_back(std::move(connection));
    }
    reader_returned_.notify_one();
  }

  // Copies committed WAL frames into the database file from a connection of its own, so the
  // writer thread only appends. PASSIVE never blocks the writer or the readers; when the WAL has
  // been fully copied and no reader needs it, the next commit starts it over from the beginning.
  void checkpoint_loop() {
    std::unique_ptr<Connection> connection;
    std::unique_lock lock(queue_mutex_);
    while (!stopping_) {
      checkpoint_wake_.wait_for(lock, std::chrono::milliseconds(limits::k_checkpoint_interval_ms),
                                [&] { return stopping_; });
      lock.unlock();
      try {
        if (!connection) {
          connection = std::make_unique<Connection>(path_, false);
          // PASSIVE never waits. RESTART holds the write lock while it waits for readers, so it
          // waits only k_wal_restart_wait_ms: a long reader (verify) costs writes at most that
          // per round, and the WAL grows until it is done.
          connection->set_busy_timeout(0);
        }
        Rows result;
        connection->run("PRAGMA wal_checkpoint(PASSIVE)", {}, &result);
        // Under steady traffic some reader always holds an old snapshot, so the WAL would never
        // start over and would grow without bound: past a size, wait briefly for the readers
        // (requests' reads take a few milliseconds) and restart it: under load there is almost
        // never a moment without readers to find by giving up at once.
        if (!result.empty() && result.front().integer(1) > wal_restart_frames_) {
          connection->restart_wal(limits::k_wal_restart_wait_ms, 0);
        }
      } catch (const StoreError& failure) {
        log::write(log::Level::warn, "store.checkpoint_failed", {{"what", failure.what()}});
        connection.reset();
      }
      lock.lock();
    }
    lock.unlock();
    try {
      if (connection) connection->exec_plain("PRAGMA wal_checkpoint(TRUNCATE)");
    } catch (const StoreError&) {  // a later start checkpoints what is left
    }
  }

  void writer_loop() {
    std::vector<WriteUnit*> batch;
    while (true) {
      {
        std::unique_lock lock(queue_mutex_);
        queue_ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping with nothing left to do
        while (!queue_.empty() && batch.size() < commit_batch_max_) {
          batch.push_back(queue_.front());
          queue_.pop_front();
        }
        metrics::set_write_queue_depth(queue_.size());
      }
      commit_batch(batch);
      batch.clear();
      restart_outgrown_wal();
    }
  }

  // The checkpointer's RESTART must take the write lock, which a writer running long units back
  // to back (the network processor's chunks of transfers) almost never leaves free for its short
  // wait: the WAL then grows as long as the load lasts, and every commit extends the file. So
  // the writer restarts it itself, between two commits, once it holds twice the restart size
  // (limits::k_wal_writer_restart_factor; the checkpointer has already copied most of it). It
  // waits for readers as briefly; while a long reader keeps it from restarting, it tries again
  // each time the WAL has grown by the restart size.
  void restart_outgrown_wal() {
    if (wal_frames_ < next_writer_restart_frames_) return;
    bool restarted = false;
    try {
      restarted =
          writer_connection_->restart_wal(limits::k_wal_restart_wait_ms, limits::k_busy_timeout_ms);
    } catch (const StoreError& failure) {
      log::write(log::Level::warn, "store.checkpoint_failed", {{"what", failure.what()}});
    }
    next_writer_restart_frames_ =
        restarted ? limits::k_wal_writer_restart_factor * wal_restart_frames_
                  : wal_frames_ + wal_restart_frames_;
  }

  // Runs each unit in its own savepoint, then commits once: one fsync for the whole group.
  void commit_batch(const std::vector<WriteUnit*>& batch) {
    auto started = std::chrono::steady_clock::now();
    Connection& connection = *writer_connection_;
    std::vector<std::exception_ptr> failures(batch.size());
    std::exception_ptr batch_failure;  // BEGIN, a savepoint or COMMIT failed: the group is lost
    try {
      connection.run("BEGIN IMMEDIATE", {}, nullptr);
      for (std::size_t i = 0; i < batch.size(); ++i) {
        run_unit(connection, *batch[i], failures[i]);
      }
      connection.run("COMMIT", {}, nullptr);
    } catch (...) {
      batch_failure = std::current_exception();
      try {
        connection.exec_plain("ROLLBACK");
      } catch (const StoreError&) {  // the transaction is gone either way
      }
      log::write(log::Level::error, "store.commit_failed", {{"units", batch.size()}});
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    metrics::observe_commit_batch(batch.size(), seconds);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const std::exception_ptr failure = batch_failure ? batch_failure : failures[i];
      if (batch[i]->queued_done) {
        tell_queued(std::unique_ptr<WriteUnit>(batch[i]), failure);
      } else if (failure) {
        batch[i]->done.set_exception(failure);
      } else {
        batch[i]->done.set_value();
      }
    }
  }

  // A queued unit's outcome, told on the writer's thread: what its caller does with it must
  // not stop the writer.
  static void tell_queued(std::unique_ptr<WriteUnit> unit, std::exception_ptr failure) {
    try {
      unit->queued_done(failure);
    } catch (const std::exception& thrown) {
      log::write(log::Level::error, "store.queued_outcome_failed", {{"what", thrown.what()}});
    } catch (...) {
      log::write(log::Level::error, "store.queued_outcome_failed", {{"what", "unknown"}});
    }
  }

  static void run_unit(Connection& connection, WriteUnit& unit, std::exception_ptr& failure) {
    connection.run("SAVEPOINT unit", {}, nullptr);
    SqliteTx tx(connection);  // one per unit: its after-commit hooks are the unit's own
    bool keep = false;
    try {
      keep = (*unit.fn)(tx);
    } catch (...) {
      failure = std::current_exception();
    }
    if (!keep) connection.run("ROLLBACK TO SAVEPOINT unit", {}, nullptr);
    connection.run("RELEASE SAVEPOINT unit", {}, nullptr);
  }

  std::string path_;
  int read_connections_max_;
  std::size_t commit_batch_max_;
  std::int64_t wal_restart_frames_;
  std::int64_t wal_frames_ = 0;  // after the writer's last commit (writer thread only)
  std::int64_t next_writer_restart_frames_;
  std::unique_ptr<Connection> writer_connection_;
  std::mutex readers_mutex_;
  std::condition_variable reader_returned_;
  std::vector<std::unique_ptr<Connection>> readers_;
  int readers_open_ = 0;
  std::mutex queue_mutex_;
  std::condition_variable queue_ready_;      // the writer waits on it, alone
  std::condition_variable checkpoint_wake_;  // the checkpointer waits on it, alone
  std::deque<WriteUnit*> queue_;
  std::atomic<std::uint64_t> units_queued_{0};  // writer_units()
  bool stopping_ = false;
  std::thread writer_;
  std::thread checkpointer_;
};

}  // namespace

std::unique_ptr<Store> open_sqlite(const Options& options) {
  // Memory statistics take a global mutex on every allocation; nothing here reads them.
  static std::once_flag configured;
  std::call_once(configured, [] { sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
  return std::make_unique<SqliteStore>(options);
}

}  // namespace tesoro::store
