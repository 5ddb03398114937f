#pragma once
// Invariants that stay checked in every build, Release included (assert() is compiled out
// there). A failed check is a bug that would otherwise reach the books: it writes one error line
// (`invariant.failed`, with the condition, where it is and what it was about) and aborts the
// process before the unit commits. The abort is a crash like kill -9, which the durability
// tests prove safe: the unit's transaction never commits, and the answer is never sent.
//
//   TESORO_CHECK(sum == 0, "entry " + entry_id + " does not balance");
//
// The context is evaluated only when the check fails, so it costs nothing on the way through.
#include <string_view>

namespace tesoro::check {

[[noreturn]] void failed(std::string_view condition, std::string_view file, int line,
                         std::string_view context);

}  // namespace tesoro::check

#define TESORO_CHECK(condition, context)                                           \
  do {                                                                             \
    if (!(condition)) [[unlikely]] {                                               \
      ::tesoro::check::failed(#condition, __FILE__, __LINE__, (context));          \
    }                                                                              \
  } while (0)
