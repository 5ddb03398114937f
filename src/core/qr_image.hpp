#pragma once
// QR symbols as PNG images: libqrencode makes the symbol (its mask chosen by core/qr_mask,
// module for module libqrencode's own choice, at a fraction of the cost), core/row_deflate
// compresses its pixel rows and libpng writes the file around them. No I/O.
//
// The image is a width x width grayscale PNG of bit depth 1. Each module is a square of whole
// pixels, pixels_per_module = floor(width / (modules + 8)), so the quiet zone is at least 4
// modules on every side; the symbol is centred and the leftover pixels only widen the quiet zone
// (see docs/decisions.md, "QR payloads and images").
#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace tesoro::qr_image {

// Error-correction levels L, M, Q, H (about 7, 15, 25 and 30 % of the symbol recoverable).
enum class Level { low, medium, quarter, high };
std::optional<Level> level_from_string(std::string_view);   // "low","medium","quarter","high"
std::string_view to_string(Level level);

inline constexpr int k_quiet_zone_modules = 4;

// Where the symbol of `text` at `level` sits in a `width` image.
struct Layout {
  int version = 0;            // 1..40
  int modules = 0;            // 17 + 4 * version modules a side
  int pixels_per_module = 0;
  int margin = 0;             // pixels from the top and left edges to the symbol
};
// Error when the text does not fit or the width is too small for the symbol + quiet zone.
Result<Layout> layout(std::string_view text, Level level, int width);

// A PNG of exactly width x width pixels (grayscale, bit depth 1) of the QR symbol of `text`
// (libqrencode, 8-bit mode, smallest version, case-sensitive) at `level`, with whole pixels per
// module and a quiet zone of at least 4 modules, centred. Error when the text does not fit or
// the width is too small for the symbol + quiet zone (path image_width).
Result<std::string> png(std::string_view text, Level level, int width);   // raw PNG bytes
std::string data_url(std::string_view png_bytes);    // "data:image/png;base64,..."

}  // namespace tesoro::qr_image
