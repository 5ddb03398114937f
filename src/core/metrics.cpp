#include "core/metrics.hpp"

#include <array>
#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <tuple>

namespace tesoro::metrics {
namespace {

template <std::size_t N>
struct Histogram {
  std::array<double, N> bounds;
  std::array<std::uint64_t, N> counts{};
  std::uint64_t count = 0;
  double sum = 0;

  void observe(double value) {
    for (std::size_t i = 0; i < N; ++i) {
      if (value <= bounds[i]) ++counts[i];  // cumulative, as Prometheus wants
    }
    ++count;
    sum += value;
  }
};

using LatencyHistogram = Histogram<12>;
constexpr std::array<double, 12> k_latency_bounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                     0.05,   0.1,   0.25,   0.5,   1.0,  2.5};
constexpr std::array<double, 9> k_batch_bounds = {1, 2, 4, 8, 16, 32, 64, 128, 256};

struct State {
  std::mutex mutex;
  std::map<std::tuple<std::string, std::string, int>, std::uint64_t> requests;
  std::map<std::string, LatencyHistogram> latency;
  Histogram<9> commit_batch{k_batch_bounds};
  LatencyHistogram commit_seconds{k_latency_bounds};
  std::atomic<std::size_t> write_queue_depth{0};
  std::atomic<int> handler_threads{0};
  std::atomic<int> batch_threads{0};
  std::atomic<long> in_flight{0};
  std::atomic<std::uint64_t> store_retries{0};
  std::atomic<std::uint64_t> store_commits_unacknowledged{0};
  struct Worker {
    std::uint64_t runs = 0;
    std::uint64_t failures = 0;
    double lag_seconds = 0;
  };
  std::map<std::string, Worker, std::less<>> workers;  // names come from code, never clients
};

State& state() {
  static State instance;
  return instance;
}

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  return buffer;
}

template <std::size_t N>
void render_histogram(std::string& out, const std::string& name, const std::string& labels,
                      const Histogram<N>& histogram) {
  std::string separator = labels.empty() ? "" : ",";
  for (std::size_t i = 0; i < N; ++i) {
    out += name + "_bucket{" + labels + separator + "le=\"" + number(histogram.bounds[i]) +
           "\"} " + std::to_string(histogram.counts[i]) + "\n";
  }
  out += name + "_bucket{" + labels + separator + "le=\"+Inf\"} " +
         std::to_string(histogram.count) + "\n";
  std::string braces = labels.empty() ? "" : "{" + labels + "}";
  out += name + "_sum" + braces + " " + number(histogram.sum) + "\n";
  out += name + "_count" + braces + " " + std::to_string(histogram.count) + "\n";
}

}  // namespace

void count_request(std::string_view route, std::string_view method, int status, double seconds) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  ++s.requests[{std::string(route), std::string(method), status}];
  auto [it, inserted] = s.latency.try_emplace(std::string(route), LatencyHistogram{k_latency_bounds});
  it->second.observe(seconds);
}

void observe_commit_batch(std::size_t units, double seconds) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.commit_batch.observe(static_cast<double>(units));
  s.commit_seconds.observe(seconds);
}

void set_write_queue_depth(std::size_t depth) { state().write_queue_depth.store(depth); }
void set_handler_threads(int threads) { state().handler_threads.store(threads); }
void set_batch_threads(int threads) { state().batch_threads.store(threads); }
void count_store_retry() { state().store_retries.fetch_add(1); }
std::uint64_t store_retries() { return state().store_retries.load(); }
void count_store_commit_unacknowledged() { state().store_commits_unacknowledged.fetch_add(1); }

void count_worker_run(std::string_view worker, bool failed) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  auto& entry = s.workers[std::string(worker)];
  ++entry.runs;
  if (failed) ++entry.failures;
}

void set_worker_lag(std::string_view worker, double seconds) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.workers[std::string(worker)].lag_seconds = seconds;
}
void add_in_flight(int delta) { state().in_flight.fetch_add(delta); }

std::string render_prometheus() {
  State& s = state();
  std::string out;
  std::lock_guard lock(s.mutex);
  out += "# HELP tesoro_http_requests_total HTTP requests by route template, method and status.\n";
  out += "# TYPE tesoro_http_requests_total counter\n";
  for (const auto& [key, count] : s.requests) {
    const auto& [route, method, status] = key;
    out += "tesoro_http_requests_total{route=\"" + route + "\",method=\"" + method +
           "\",status=\"" + std::to_string(status) + "\"} " + std::to_string(count) + "\n";
  }
  out += "# HELP tesoro_http_request_duration_seconds Time from request read to response ready.\n";
  out += "# TYPE tesoro_http_request_duration_seconds histogram\n";
  for (const auto& [route, histogram] : s.latency) {
    render_histogram(out, "tesoro_http_request_duration_seconds", "route=\"" + route + "\"",
                     histogram);
  }
  out += "# HELP tesoro_store_commit_batch_units Write units committed per group commit.\n";
  out += "# TYPE tesoro_store_commit_batch_units histogram\n";
  render_histogram(out, "tesoro_store_commit_batch_units", "", s.commit_batch);
  out += "# HELP tesoro_store_commit_seconds Time of one group commit, fsync included.\n";
  out += "# TYPE tesoro_store_commit_seconds histogram\n";
  render_histogram(out, "tesoro_store_commit_seconds", "", s.commit_seconds);
  out += "# HELP tesoro_store_write_queue_depth Write units waiting for the writer.\n";
  out += "# TYPE tesoro_store_write_queue_depth gauge\n";
  out += "tesoro_store_write_queue_depth " + std::to_string(s.write_queue_depth.load()) + "\n";
  out += "# HELP tesoro_http_handler_threads Handler threads of this process (--workers).\n";
  out += "# TYPE tesoro_http_handler_threads gauge\n";
  out += "tesoro_http_handler_threads " + std::to_string(s.handler_threads.load()) + "\n";
  out += "# HELP tesoro_http_batch_threads Threads for batches (SQLite), besides the handlers.\n";
  out += "# TYPE tesoro_http_batch_threads gauge\n";
  out += "tesoro_http_batch_threads " + std::to_string(s.batch_threads.load()) + "\n";
  out += "# HELP tesoro_http_in_flight Requests being handled now.\n";
  out += "# TYPE tesoro_http_in_flight gauge\n";
  out += "tesoro_http_in_flight " + std::to_string(s.in_flight.load()) + "\n";
  out += "# HELP tesoro_store_retries_total PostgreSQL units run again after a deadlock or "
         "serialization failure.\n";
  out += "# TYPE tesoro_store_retries_total counter\n";
  out += "tesoro_store_retries_total " + std::to_string(s.store_retries.load()) + "\n";
  out += "# HELP tesoro_store_commits_unacknowledged_total PostgreSQL commits whose synchronous "
         "standbys did not acknowledge them in time (answered 503).\n";
  out += "# TYPE tesoro_store_commits_unacknowledged_total counter\n";
  out += "tesoro_store_commits_unacknowledged_total " +
         std::to_string(s.store_commits_unacknowledged.load()) + "\n";
  out += "# HELP tesoro_worker_runs_total Background worker runs (jobs handled, periodic passes).\n";
  out += "# TYPE tesoro_worker_runs_total counter\n";
  for (const auto& [name, worker] : s.workers) {
    out += "tesoro_worker_runs_total{worker=\"" + name + "\"} " + std::to_string(worker.runs) + "\n";
  }
  out += "# HELP tesoro_worker_failures_total Background worker runs that failed.\n";
  out += "# TYPE tesoro_worker_failures_total counter\n";
  for (const auto& [name, worker] : s.workers) {
    out += "tesoro_worker_failures_total{worker=\"" + name + "\"} " +
           std::to_string(worker.failures) + "\n";
  }
  out += "# HELP tesoro_worker_lag_seconds How late the worker's last job started after it was "
         "due.\n";
  out += "# TYPE tesoro_worker_lag_seconds gauge\n";
  for (const auto& [name, worker] : s.workers) {
    out += "tesoro_worker_lag_seconds{worker=\"" + name + "\"} " + number(worker.lag_seconds) + "\n";
  }
  return out;
}

}  // namespace tesoro::metrics
