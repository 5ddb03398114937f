// The body of POST /api/v1/collections as its handler reads it (api::decode_collection_batch):
// one decoded or refused item per item written, problems at paths under the item's index.
#include <string>
#include <string_view>

#include "api/participant/batch_decoders.hpp"
#include "fuzz.hpp"
#include "settings.hpp"

using namespace tesoro;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto batch = api::decode_collection_batch(body, sandbox_settings());
  if (!batch) {
    FUZZ_CHECK(!batch.error().errors.empty());
    return 0;
  }
  FUZZ_CHECK(batch->items.size() == batch->written().size());
  for (std::size_t i = 0; i < batch->items.size(); ++i) {
    if (batch->items[i]) continue;
    const std::string prefix = "collections." + std::to_string(i);
    FUZZ_CHECK(!batch->items[i].error().errors.empty());
    for (const auto& problem : batch->items[i].error().errors) {
      FUZZ_CHECK(!problem.path || problem.path->starts_with(prefix));
    }
  }
  return 0;
}
