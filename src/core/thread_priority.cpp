#include "core/thread_priority.hpp"

#include <pthread.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "core/log.hpp"

namespace tesoro::thread_priority {

bool lower_this_thread(int levels) {
  errno = 0;
  const int current = getpriority(PRIO_PROCESS, 0);  // 0: the calling thread, on Linux
  if (errno == 0 && setpriority(PRIO_PROCESS, 0, std::min(current + levels, 19)) == 0) {
    return true;
  }
  const int failure = errno;
  static std::atomic<bool> said{false};
  if (!said.exchange(true)) {
    log::write(log::Level::warn, "server.priority_unchanged", {{"error", std::strerror(failure)}});
  }
  return false;
}

void name_this_thread(std::string_view name) {
  const std::string kept(name.substr(0, 15));  // the kernel keeps 16 bytes with the NUL
  pthread_setname_np(pthread_self(), kept.c_str());
}

}  // namespace tesoro::thread_priority
