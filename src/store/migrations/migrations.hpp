#pragma once
// Versioned schema migrations. Each is a list of statements per engine; where the dialects agree,
// the PostgreSQL list is empty and the SQLite one serves both. Every table carries tenant_id, and
// every primary key and unique constraint of tenant data includes it (ready for distribution by
// tenant); the credential lookup tables are global by nature (looked up by secret hash).
#include <string>
#include <vector>

namespace tesoro::store {

struct Migration {
  int version;
  std::string name;
  std::vector<std::string> sqlite;
  std::vector<std::string> postgres;  // empty: same as sqlite
};

const std::vector<Migration>& migrations();

}  // namespace tesoro::store
