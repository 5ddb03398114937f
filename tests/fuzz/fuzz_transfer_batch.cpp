// The body of POST /api/v1/outgoing_transfers as its handler reads it (api::decode_transfer_batch).
// Every item is either decoded or rejected with at least one problem, each at a path under its
// index.
#include <string>
#include <string_view>

#include "api/participant/batch_decoders.hpp"
#include "fuzz.hpp"
#include "settings.hpp"

using namespace tesoro;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto batch = api::decode_transfer_batch(body, sandbox_settings());
  if (!batch) {
    FUZZ_CHECK(!batch.error().errors.empty());
    return 0;
  }
  for (const auto& rejected : batch->rejected) {
    FUZZ_CHECK(!rejected.error.errors.empty());
    const std::string prefix = "transfers." + std::to_string(rejected.index);
    for (const auto& problem : rejected.error.errors) {
      FUZZ_CHECK(!problem.path || problem.path->starts_with(prefix));
    }
  }
  return 0;
}
