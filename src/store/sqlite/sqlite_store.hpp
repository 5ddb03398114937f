#pragma once
#include <memory>

#include "store/store.hpp"

namespace tesoro::store {

// SQLite in WAL mode with synchronous=FULL. One writer thread commits queued write units in
// groups (one SAVEPOINT per unit, one fsync per group); reads use a pool of connections, each
// read inside its own snapshot.
std::unique_ptr<Store> open_sqlite(const Options& options);

}  // namespace tesoro::store
