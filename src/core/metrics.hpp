#pragma once
// Process metrics, rendered in the Prometheus text format at GET /metrics.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tesoro::metrics {

void count_request(std::string_view route, std::string_view method, int status, double seconds);
void observe_commit_batch(std::size_t units, double seconds);
void set_write_queue_depth(std::size_t depth);
// The handler threads this process runs (--workers, or the engine's default).
void set_handler_threads(int threads);
// The threads for batches besides them (SQLite; 0 when batches go to the handler threads).
void set_batch_threads(int threads);
void add_in_flight(int delta);
// A PostgreSQL unit run again after a deadlock or serialization failure.
void count_store_retry();
std::uint64_t store_retries();
// A PostgreSQL commit whose synchronous standbys did not acknowledge it in time (answered 503).
void count_store_commit_unacknowledged();
// Background workers: one run (a job handled, or a periodic pass), a failed run, and how late the
// last job started after it was due (tenant clock).
void count_worker_run(std::string_view worker, bool failed);
void set_worker_lag(std::string_view worker, double seconds);
std::string render_prometheus();

}  // namespace tesoro::metrics
