#include "store/store.hpp"

#include "core/log.hpp"

#include "store/bulk.hpp"
#include "store/sqlite/sqlite_store.hpp"
#ifdef TESORO_WITH_POSTGRES
#include "store/postgres/postgres_store.hpp"
#endif

namespace tesoro::store {

bool Row::is_null(std::size_t column) const {
  return std::holds_alternative<std::nullptr_t>(values_.at(column));
}

std::string Row::text(std::size_t column) const {
  const Value& value = values_.at(column);
  if (auto* text = std::get_if<std::string>(&value)) return *text;
  if (auto* number = std::get_if<std::int64_t>(&value)) return std::to_string(*number);
  if (auto* ref = std::get_if<TextRef>(&value)) return std::string(ref->text());
  return {};
}

std::optional<std::string> Row::optional_text(std::size_t column) const {
  if (is_null(column)) return std::nullopt;
  return text(column);
}

std::optional<std::int64_t> Row::optional_integer(std::size_t column) const {
  if (is_null(column)) return std::nullopt;
  return integer(column);
}

std::int64_t Row::integer(std::size_t column) const {
  const Value& value = values_.at(column);
  if (auto* number = std::get_if<std::int64_t>(&value)) return *number;
  if (auto* text = std::get_if<std::string>(&value)) {
    // PostgreSQL returns text; a non-numeric column read as integer is a bug in our SQL.
    std::size_t used = 0;
    std::int64_t parsed = std::stoll(*text, &used);
    if (used != text->size()) throw StoreError("column is not an integer: " + *text, false);
    return parsed;
  }
  return 0;
}

std::int64_t Tx::append_rows(std::string_view table_columns, std::size_t width,
                             std::span<const Value> values) {
  return exec_many(*this, "INSERT INTO " + std::string(table_columns), width, "", values);
}

namespace {
thread_local ArmedCheck* t_armed_check = nullptr;
}  // namespace

ArmedCheck::ArmedCheck(Check check) : check_(std::move(check)) { t_armed_check = this; }

ArmedCheck::~ArmedCheck() {
  if (t_armed_check == this) t_armed_check = nullptr;
}

ArmedCheck* ArmedCheck::pending() {
  return t_armed_check && !t_armed_check->done_ ? t_armed_check : nullptr;
}

std::optional<Row> Tx::query_one(std::string_view sql, const Params& params) {
  Rows rows = query(sql, params);
  if (rows.empty()) return std::nullopt;
  return std::move(rows.front());
}

std::unique_ptr<Store> open(const Options& options) {
  if (!options.database_url.empty()) {
#ifdef TESORO_WITH_POSTGRES
    return open_postgres(options);
#else
    throw StoreError("this build has no PostgreSQL engine", false);
#endif
  }
  return open_sqlite(options);
}

void Store::run_after_commit(std::vector<Tx::Hook>& hooks, const std::vector<std::string>& topics) {
  // The unit is durable: a failing hook is logged, never turned into a failure of the write.
  for (Tx::Hook& hook : hooks) {
    try {
      hook();
    } catch (const std::exception& failure) {
      log::write(log::Level::error, "store.after_commit_failed", {{"what", failure.what()}});
    }
  }
  if (!listener_) return;
  for (const std::string& topic : topics) listener_(topic);
}

void Store::send_pending_check() {
  if (!ArmedCheck::pending()) return;
  run_read_single([](Tx& tx) { tx.query("SELECT 1"); });
}

bool Store::ping() {
  try {
    run_read([](Tx& tx) { tx.query("SELECT 1"); });
    return true;
  } catch (const StoreError&) {
    return false;
  }
}

bool has_schema(Store& store) {
  // The catalog differs per engine; `tenants` comes with the first migration.
  std::string_view sql = store.engine() == Engine::postgres
                             ? "SELECT COUNT(*) FROM information_schema.tables "
                               "WHERE table_schema = current_schema() AND table_name = 'tenants'"
                             : "SELECT COUNT(*) FROM sqlite_master "
                               "WHERE type = 'table' AND name = 'tenants'";
  auto result = store.read<bool>(
      [&](Tx& tx) -> Result<bool> { return tx.query_one(sql)->integer(0) > 0; });
  return result.ok() && result.value();
}

bool is_initialised(Store& store) {
  if (!has_schema(store)) return false;
  auto result = store.read<bool>([](Tx& tx) -> Result<bool> {
    return tx.query_one("SELECT COUNT(*) FROM tenants")->integer(0) > 0;
  });
  return result.ok() && result.value();
}

}  // namespace tesoro::store
