#pragma once
// Versioned schema migrations, one file per area (foundation, account holders, jobs, ledger,
// events, cards, collections, transfers, webhooks, console); migrations() merges them in
// version order. A statement runs on both engines unless it says otherwise: where the dialects
// differ it carries a PostgreSQL text of its own, and an empty text means "nothing to run on
// that engine" (SQLite rebuilds a table where PostgreSQL alters a column). Every table carries
// tenant_id, and every primary key and unique constraint of tenant data includes it (ready for
// distribution by tenant); the credential lookup tables (looked up by secret hash) and the
// network key directory (looked up by key) are global by nature.
#include <functional>
#include <string>
#include <vector>

namespace tesoro::store {

class Tx;

struct Statement {
  Statement(const char* both) : sqlite(both), postgres(both) {}  // NOLINT: implicit by design
  Statement(std::string sqlite_text, std::string postgres_text)
      : sqlite(std::move(sqlite_text)), postgres(std::move(postgres_text)) {}
  std::string sqlite;
  std::string postgres;
};

inline Statement sqlite_only(std::string sql) { return {std::move(sql), ""}; }
inline Statement postgres_only(std::string sql) { return {"", std::move(sql)}; }

struct Migration {
  int version;
  std::string name;
  std::vector<Statement> statements;
  // Data the statements cannot derive in SQL, filled in after them in the same transaction.
  std::function<void(Tx&)> then = nullptr;
};

// Each module's migrations.
std::vector<Migration> foundation_migrations();
std::vector<Migration> account_holder_migrations();
std::vector<Migration> job_migrations();
std::vector<Migration> ledger_migrations();
std::vector<Migration> event_migrations();
std::vector<Migration> card_migrations();
std::vector<Migration> collection_migrations();
std::vector<Migration> transfer_migrations();
std::vector<Migration> webhook_migrations();
std::vector<Migration> console_migrations();

// All of them, in version order (versions are unique and have no gaps).
const std::vector<Migration>& migrations();

// SQLite cannot drop NOT NULL from a column: these statements rebuild `table` from `create_new`
// (which must create `<table>_new` with the same columns in the same order), copy the rows,
// swap the tables and run `after` (the table's indexes, dropped with the old table).
std::vector<Statement> sqlite_rebuild(const std::string& table, const std::string& create_new,
                                      const std::vector<std::string>& after);
// `column` of `table` may be null from now on: PostgreSQL alters the column, SQLite rebuilds
// the table (create_new and after as for sqlite_rebuild, with the column declared nullable).
std::vector<Statement> drop_not_null(const std::string& table, const std::string& column,
                                     const std::string& create_new,
                                     const std::vector<std::string>& after);

}  // namespace tesoro::store
