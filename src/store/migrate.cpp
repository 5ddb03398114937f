#include <string>

#include "core/time.hpp"
#include "store/migrations/migrations.hpp"
#include "store/store.hpp"

namespace tesoro::store {

int migrate(Store& store) { return migrate(store, migrations().back().version); }

int migrate(Store& store, int target_version) {
  auto result = store.write<int>([&](Tx& tx) -> Result<int> {
    if (tx.engine() == Engine::postgres) {
      // Several nodes may start at once: one migrates, the others wait and find it done.
      tx.query("SELECT pg_advisory_xact_lock(7301)");
    }
    tx.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
            "name TEXT NOT NULL, applied_at TEXT NOT NULL)");
    int current = static_cast<int>(
        tx.query_one("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")->integer(0));
    int known = migrations().back().version;
    if (current > known) {
      // A newer node migrated this database; an older binary must not serve it.
      throw StoreError("the database schema is version " + std::to_string(current) +
                           ", newer than this binary's " + std::to_string(known),
                       false);
    }
    for (const Migration& migration : migrations()) {
      if (migration.version <= current || migration.version > target_version) continue;
      for (const Statement& statement : migration.statements) {
        const std::string& sql =
            tx.engine() == Engine::postgres ? statement.postgres : statement.sqlite;
        if (!sql.empty()) tx.exec(sql);
      }
      if (migration.then) migration.then(tx);
      tx.exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
              {std::int64_t{migration.version}, migration.name, time::iso_now()});
      current = migration.version;
    }
    return current;
  });
  return result.value();
}

}  // namespace tesoro::store
