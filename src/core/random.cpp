#include "core/random.hpp"

#include <atomic>

namespace tesoro::random {

namespace {
std::atomic<Source*> g_replacement{nullptr};
}  // namespace

Source* replacement() { return g_replacement.load(std::memory_order_acquire); }

std::chrono::system_clock::time_point id_time() {
  Source* source = replacement();
  return source ? source->id_time() : std::chrono::system_clock::now();
}

Replaced::Replaced(Source& source)
    : previous_(g_replacement.exchange(&source, std::memory_order_acq_rel)) {}

Replaced::~Replaced() { g_replacement.store(previous_, std::memory_order_release); }

}  // namespace tesoro::random
