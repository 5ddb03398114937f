#pragma once
// Result<T>: a value or an Error. Expected failures travel as values (absl::StatusOr style);
// exceptions are reserved for start-up and for faults caught once at the request boundary.
#include <cassert>
#include <utility>
#include <variant>

#include "core/error.hpp"

namespace tesoro {

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}          // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}      // NOLINT: implicit by design

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(state_); }
  const T& value() const& { assert(ok()); return std::get<0>(state_); }
  // By value from a temporary, never a reference into it: `for (auto& x : f().value())` would
  // otherwise iterate a Result destroyed before the loop's first step.
  T value() && { assert(ok()); return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const& { assert(!ok()); return std::get<1>(state_); }
  Error error() && { assert(!ok()); return std::get<1>(std::move(state_)); }

 private:
  std::variant<T, Error> state_;
};

struct Unit {};
using Status = Result<Unit>;
inline Status ok_status() { return Unit{}; }

}  // namespace tesoro
