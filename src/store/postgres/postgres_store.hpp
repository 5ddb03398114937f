#pragma once
#include <memory>

#include "store/store.hpp"

namespace tesoro::store {

// PostgreSQL through libpq: a bounded pool of connections; each write unit is one transaction
// at READ COMMITTED (row locks taken with FOR UPDATE, in id order, by domain code), retried a
// bounded number of times on serialization failure or deadlock. Reads run in a REPEATABLE READ,
// READ ONLY transaction so that a count and its page agree. Lost connections are re-opened on
// the next use; while the server is away calls throw StoreError{unavailable}.
std::unique_ptr<Store> open_postgres(const Options& options);

// How many synchronous standbys `synchronous_standby_names` asks to acknowledge a commit: 0 when
// empty, N for `ANY N (...)`, `FIRST N (...)` and `N (...)`, 1 for a plain list of names.
int synchronous_standbys_required(std::string_view names);

// `?` placeholders to `$1..$n`, leaving quoted text alone.
std::string translate_placeholders(std::string_view sql);

}  // namespace tesoro::store
