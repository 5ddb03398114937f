#pragma once
// What every fuzz target shares: libFuzzer's entry point, and a check that stays on in every
// build (a failed round trip is a finding, reported as a crash with its input).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

#define FUZZ_CHECK(condition)                                                       \
  do {                                                                              \
    if (!(condition)) {                                                             \
      std::fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", #condition, __FILE__, \
                   __LINE__);                                                       \
      std::abort();                                                                 \
    }                                                                               \
  } while (0)
