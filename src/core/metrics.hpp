#pragma once
// Process metrics, rendered in the Prometheus text format at GET /metrics.
#include <cstddef>
#include <string>
#include <string_view>

namespace tesoro::metrics {

void count_request(std::string_view route, std::string_view method, int status, double seconds);
void observe_commit_batch(std::size_t units, double seconds);
void set_write_queue_depth(std::size_t depth);
void add_in_flight(int delta);
std::string render_prometheus();

}  // namespace tesoro::metrics
