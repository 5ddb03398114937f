#include "store/migrations/migrations.hpp"

#include <algorithm>
#include <stdexcept>

namespace tesoro::store {

std::vector<Statement> sqlite_rebuild(const std::string& table, const std::string& create_new,
                                      const std::vector<std::string>& after) {
  std::vector<Statement> out = {
      sqlite_only(create_new),
      sqlite_only("INSERT INTO " + table + "_new SELECT * FROM " + table),
      sqlite_only("DROP TABLE " + table),
      sqlite_only("ALTER TABLE " + table + "_new RENAME TO " + table),
  };
  for (const std::string& statement : after) out.push_back(sqlite_only(statement));
  return out;
}

std::vector<Statement> drop_not_null(const std::string& table, const std::string& column,
                                     const std::string& create_new,
                                     const std::vector<std::string>& after) {
  std::vector<Statement> out = sqlite_rebuild(table, create_new, after);
  out.push_back(
      postgres_only("ALTER TABLE " + table + " ALTER COLUMN " + column + " DROP NOT NULL"));
  return out;
}

const std::vector<Migration>& migrations() {
  static const std::vector<Migration> k_migrations = [] {
    std::vector<Migration> all;
    for (auto* module : {foundation_migrations, account_holder_migrations, job_migrations,
                         ledger_migrations, event_migrations, card_migrations,
                         collection_migrations, transfer_migrations, webhook_migrations,
                         console_migrations}) {
      for (Migration& migration : module()) all.push_back(std::move(migration));
    }
    std::sort(all.begin(), all.end(),
              [](const Migration& a, const Migration& b) { return a.version < b.version; });
    for (std::size_t i = 0; i < all.size(); ++i) {
      // Two modules claiming one version, or a hole, is a bug caught at the first start.
      if (all[i].version != static_cast<int>(i) + 1) {
        throw std::logic_error("migration versions must be 1..N without repeats: " +
                               all[i].name);
      }
    }
    return all;
  }();
  return k_migrations;
}

}  // namespace tesoro::store
