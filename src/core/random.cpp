#include "core/random.hpp"

#include <atomic>

namespace tesoro::random {

namespace {
std::atomic<Source*> g_replacement{nullptr};
}  // namespace

Source* replacement() { return g_replacement.load(std::memory_order_acquire); }

Replaced::Replaced(Source& source)
    : previous_(g_replacement.exchange(&source, std::memory_order_acq_rel)) {}

Replaced::~Replaced() { g_replacement.store(previous_, std::memory_order_release); }

}  // namespace tesoro::random
