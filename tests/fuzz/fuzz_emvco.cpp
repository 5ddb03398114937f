// The EMVCo QR payload reader (core/emvco), with the round trip: whatever `read` accepts and
// `build` writes again must read back to the same payload and the same text.
#include <string>
#include <string_view>

#include "core/emvco.hpp"
#include "fuzz.hpp"

using namespace tesoro;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto objects = emvco::parse(text);
  auto payload = emvco::read(text);
  FUZZ_CHECK(!payload.ok() || objects.ok());  // what reads as a payload parses as objects
  if (!payload) return 0;
  auto built = emvco::build(payload.value());
  if (!built) return 0;  // a payload another writer made may break our writer's rules
  auto again = emvco::read(built.value());
  FUZZ_CHECK(again.ok());
  auto rebuilt = emvco::build(again.value());
  FUZZ_CHECK(rebuilt.ok() && rebuilt.value() == built.value());
  return 0;
}
