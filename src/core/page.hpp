#pragma once
// One page of a list and the size of the whole list.
#include <cstdint>
#include <vector>

namespace tesoro {

template <class T>
struct PageOf {
  std::vector<T> items;
  std::int64_t total_items = 0;
};

}  // namespace tesoro
