#include "app/log_output.hpp"

#include <cstdio>
#include <mutex>
#include <string_view>

#include "core/log.hpp"

namespace tesoro::app {
namespace {

std::mutex g_stderr_mutex;

void write_to_stderr(std::string_view line) {
  std::lock_guard lock(g_stderr_mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace

void log_to_stderr() { log::set_sink(&write_to_stderr); }

}  // namespace tesoro::app
