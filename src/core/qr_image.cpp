#include "core/qr_image.hpp"

#include <png.h>
#include <qrencode.h>

#include <cerrno>
#include <csetjmp>
#include <cstring>
#include <memory>
#include <new>

#include "core/crypto.hpp"
#include "core/limits.hpp"
#include "core/qr_mask.hpp"
#include "core/row_deflate.hpp"

namespace tesoro::qr_image {

namespace {

struct QrcodeFree {
  void operator()(QRcode* code) const { QRcode_free(code); }
};
using Symbol = std::unique_ptr<QRcode, QrcodeFree>;

QRecLevel qrencode_level(Level level) {
  switch (level) {
    case Level::low: return QR_ECLEVEL_L;
    case Level::medium: return QR_ECLEVEL_M;
    case Level::quarter: return QR_ECLEVEL_Q;
    case Level::high: return QR_ECLEVEL_H;
  }
  return QR_ECLEVEL_M;
}

Result<Symbol> encode(std::string_view text, Level level) {
  if (text.empty()) return errors::validation("the QR text is empty", std::nullopt);
  // QRcode_encodeString reads a C string: an embedded NUL would cut the text short.
  if (text.find('\0') != std::string_view::npos) {
    return errors::validation("the QR text contains a NUL character", std::nullopt);
  }
  std::string c_text(text);
  errno = 0;
  // QRcode_encodeString(text, 0, level, QR_MODE_8, 1), with the mask chosen by qr_mask at a
  // fraction of libqrencode's cost (the same symbol, module for module). Version 0: the smallest
  // that holds the text. QR_MODE_8 keeps every byte as is (runs of digits may still use numeric
  // mode, which only makes the symbol smaller); case-sensitive.
  Symbol symbol(qr_mask::encode_string(c_text.c_str(), qrencode_level(level)));
  if (!symbol) {
    if (errno == ERANGE) {
      return errors::validation(
          "the QR text is too long for a QR symbol at error-correction level " +
              std::string(to_string(level)),
          std::nullopt);
    }
    if (errno == ENOMEM) throw std::bad_alloc();
    return errors::validation("libqrencode cannot encode the QR text", std::nullopt);
  }
  return symbol;
}

Result<Layout> place(const QRcode& symbol, int width) {
  if (width > limits::k_qr_image_width_max_pixels) {
    return errors::validation(
        "image_width is at most " + std::to_string(limits::k_qr_image_width_max_pixels) + " pixels",
        "image_width");
  }
  Layout layout;
  layout.version = symbol.version;
  layout.modules = symbol.width;
  int modules_total = symbol.width + 2 * k_quiet_zone_modules;
  if (width < modules_total) {
    std::string message = "image_width " + std::to_string(width) + " is too small for this " +
                          std::to_string(symbol.width) +
                          "-module QR symbol and its quiet zone (at least " +
                          std::to_string(modules_total) + " pixels)";
    return errors::validation(std::move(message), "image_width");
  }
  layout.pixels_per_module = width / modules_total;
  layout.margin = (width - symbol.width * layout.pixels_per_module) / 2;
  return layout;
}

// The PNG's pixel rows: blank (all white) rows for the quiet zone, and for each module row of
// the symbol one packed row repeated pixels_per_module times. In a gray image of bit depth 1,
// bit 1 is white; the most significant bit of a byte is the leftmost pixel.
struct Image {
  const QRcode* symbol;
  Layout layout;
  int width;
  std::string out;
  bool out_of_memory = false;
};

// Clears (makes black) pixels [from, from + count) of a packed row (count >= 1): the partial
// bytes at both ends by a mask, the whole bytes between at once.
void paint_black(unsigned char* row, int from, int count) {
  const int last_pixel = from + count - 1;
  const int first = from / 8;
  const int last = last_pixel / 8;
  const unsigned head = 0xFFu >> (from % 8);  // from `from` to its byte's end
  const unsigned tail = (0xFF00u >> (last_pixel % 8 + 1)) & 0xFFu;  // its byte's start to last
  if (first == last) {
    row[first] &= static_cast<unsigned char>(~(head & tail));
    return;
  }
  row[first] &= static_cast<unsigned char>(~head);
  if (last - first > 1) {
    std::memset(row + first + 1, 0x00, static_cast<std::size_t>(last - first - 1));
  }
  row[last] &= static_cast<unsigned char>(~tail);
}

// Paints module row module_y into row (row_bytes long, already white).
void fill_row(const Image& image, int module_y, unsigned char* row) {
  const unsigned char* modules = image.symbol->data + module_y * image.symbol->width;
  const int size = image.symbol->width;
  const int scale = image.layout.pixels_per_module;
  for (int x = 0; x < size;) {
    // A dark module has bit 0 set; a run of them is painted at once.
    if (!(modules[x] & 1)) {
      ++x;
      continue;
    }
    int run_start = x;
    while (x < size && (modules[x] & 1)) ++x;
    paint_black(row, image.layout.margin + run_start * scale, (x - run_start) * scale);
  }
}

// Bytes per row of the image data: the filter-type byte, then the packed pixels.
std::size_t row_stride(int width) { return (static_cast<std::size_t>(width) + 7) / 8 + 1; }

// The image data of the PNG (PNG 11.2.4), compressed: every pixel row behind its filter-type
// byte, 0 (None). Only the distinct rows are drawn (a blank one, then one per module row), each
// given to the encoder with its number of repeats.
std::string compressed_image_data(const Image& image) {
  const std::size_t stride = row_stride(image.width);
  const int modules = image.symbol->width;
  const int margin = image.layout.margin;
  const int scale = image.layout.pixels_per_module;
  std::string rows(stride * static_cast<std::size_t>(modules + 1), '\xFF');
  auto* bytes = reinterpret_cast<unsigned char*>(rows.data());
  auto row = [&](int index) { return bytes + static_cast<std::size_t>(index) * stride; };
  for (int index = 0; index <= modules; ++index) row(index)[0] = 0;  // filter type None
  row_deflate::Encoder encoder(stride, stride * static_cast<std::size_t>(image.width));
  encoder.rows(row(0), stride, static_cast<std::size_t>(margin));  // the blank row: quiet zone
  for (int module_y = 0; module_y < modules; ++module_y) {
    fill_row(image, module_y, row(module_y + 1) + 1);
    encoder.rows(row(module_y + 1), stride, static_cast<std::size_t>(scale));
  }
  encoder.rows(row(0), stride, static_cast<std::size_t>(image.width - margin - modules * scale));
  return std::move(encoder).finish();
}

void append_bytes(png_structp png, png_bytep data, png_size_t length) {
  auto* image = static_cast<Image*>(png_get_io_ptr(png));
  try {
    image->out.append(reinterpret_cast<const char*>(data), length);
  } catch (const std::bad_alloc&) {
    image->out_of_memory = true;  // never unwind through libpng's C frames
  }
}

void flush_nothing(png_structp) {}

[[noreturn]] void on_png_error(png_structp png, png_const_charp) { png_longjmp(png, 1); }
void on_png_warning(png_structp, png_const_charp) {}

// Writes the whole PNG into image.out: libpng writes the signature, IHDR and the chunks' framing
// and CRCs; the image data arrives compressed (row_deflate) as one IDAT chunk. libpng reports
// errors by longjmp: nothing with a destructor lives in this frame, so the jump skips none.
bool write_png(png_structp png, png_infop info, Image& image, const std::string& idat) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_set_write_fn(png, &image, append_bytes, flush_nothing);
  png_set_IHDR(png, info, static_cast<png_uint_32>(image.width),
               static_cast<png_uint_32>(image.width), 1, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  png_write_chunk(png, reinterpret_cast<png_const_bytep>("IDAT"),
                  reinterpret_cast<png_const_bytep>(idat.data()), idat.size());
  png_write_chunk(png, reinterpret_cast<png_const_bytep>("IEND"), nullptr, 0);
  return true;
}

}  // namespace

std::optional<Level> level_from_string(std::string_view text) {
  if (text == "low") return Level::low;
  if (text == "medium") return Level::medium;
  if (text == "quarter") return Level::quarter;
  if (text == "high") return Level::high;
  return std::nullopt;
}

std::string_view to_string(Level level) {
  switch (level) {
    case Level::low: return "low";
    case Level::medium: return "medium";
    case Level::quarter: return "quarter";
    case Level::high: return "high";
  }
  return "medium";
}

Result<Layout> layout(std::string_view text, Level level, int width) {
  auto symbol = encode(text, level);
  if (!symbol) return std::move(symbol).error();
  return place(**symbol, width);
}

Result<std::string> png(std::string_view text, Level level, int width) {
  auto symbol = encode(text, level);
  if (!symbol) return std::move(symbol).error();
  auto placed = place(**symbol, width);
  if (!placed) return std::move(placed).error();

  Image image{symbol->get(), *placed, width, {}};
  std::string idat = compressed_image_data(image);
  image.out.reserve(idat.size() + 128);

  png_structp png =
      png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, on_png_error, on_png_warning);
  if (!png) throw std::bad_alloc();
  png_infop info = png_create_info_struct(png);
  if (!info) {
    png_destroy_write_struct(&png, nullptr);
    throw std::bad_alloc();
  }
  bool written = write_png(png, info, image, idat);
  png_destroy_write_struct(&png, &info);
  if (image.out_of_memory) throw std::bad_alloc();
  if (!written) return errors::internal();  // libpng refused its own input: a bug here
  return std::move(image.out);
}

std::string data_url(std::string_view png_bytes) {
  constexpr std::string_view k_prefix = "data:image/png;base64,";
  std::string url;
  url.reserve(k_prefix.size() + (png_bytes.size() + 2) / 3 * 4);
  url += k_prefix;
  crypto::append_base64(url, png_bytes);
  return url;
}

}  // namespace tesoro::qr_image
