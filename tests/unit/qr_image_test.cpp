#include "core/qr_image.hpp"

#include <gtest/gtest.h>
#include <png.h>
#include <qrencode.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/crypto.hpp"
#include "core/emvco.hpp"
#include "core/limits.hpp"
#include "core/qr_mask.hpp"
#include "emvco_vectors.hpp"

// libqrencode's own mask evaluation (N1 + N2 + N3 of a masked symbol), the oracle of the
// QrMaskPenalty tests. Like the functions core/qr_mask.cpp uses, Debian's libqrencode4 4.1.1
// exports it but only its private header (mask.h) declares it.
extern "C" int Mask_evaluateSymbol(int width, unsigned char* frame);

using namespace tesoro;
using qr_image::Level;

namespace {

constexpr Level k_levels[] = {Level::low, Level::medium, Level::quarter, Level::high};

// A real Colombian dynamic payload, as the QR endpoint makes them.
std::string colombian_text() {
  auto built = emvco::build({.dynamic = true,
                             .key_type = "alphanumeric",
                             .key_value = "@TESORO8K2J4QX",
                             .amount_minor = 4'590'050,
                             .merchant_name = "Panaderia La Esquina",
                             .merchant_city = "Medellin",
                             .terminal_label = "TESORO",
                             .transaction_id = "Q7Hx2ZkP9aLm3VbN8Rt"});
  EXPECT_TRUE(built.ok()) << built.error().errors.at(0).message;
  return *built;
}

std::uint32_t big_endian_32(const std::string& bytes, std::size_t at) {
  auto byte = [&](std::size_t i) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + i]));
  };
  return byte(0) << 24 | byte(1) << 16 | byte(2) << 8 | byte(3);
}

// The text zbarimg reads from `png`; fails the test when zbarimg is missing or finds nothing.
std::string decode_with_zbarimg(const std::string& png) {
  if (std::system("command -v zbarimg > /dev/null 2>&1") != 0) {
    ADD_FAILURE() << "zbarimg not found: install zbar-tools (scripts/install-deps)";
    return {};
  }
  char path[] = "/tmp/tesoro-qr-test-XXXXXX.png";
  int fd = ::mkstemps(path, 4);
  EXPECT_GE(fd, 0);
  if (fd < 0) return {};
  EXPECT_EQ(::write(fd, png.data(), png.size()), static_cast<ssize_t>(png.size()));
  ::close(fd);
  // zbarimg prints harmless bus warnings on stderr; the decoded text alone goes to stdout.
  std::string command = std::string("zbarimg -q --raw ") + path + " 2>/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  EXPECT_NE(pipe, nullptr);
  std::string out;
  if (pipe) {
    char buffer[4096];
    std::size_t got;
    while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, got);
    int status = ::pclose(pipe);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "zbarimg exited with status " << status << " (no symbol found, or zbarimg missing)";
  }
  ::unlink(path);
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// The PNG's pixels, 0 (black) or 255 (white), row by row.
std::vector<unsigned char> pixels_of(const std::string& png, int& width, int& height) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  std::vector<unsigned char> pixels;
  if (!png_image_begin_read_from_memory(&image, png.data(), png.size())) {
    ADD_FAILURE() << "libpng cannot read the image: " << image.message;
    return pixels;
  }
  image.format = PNG_FORMAT_GRAY;
  pixels.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, pixels.data(), 0, nullptr)) {
    ADD_FAILURE() << "libpng cannot decode the image: " << image.message;
  }
  width = static_cast<int>(image.width);
  height = static_cast<int>(image.height);
  return pixels;
}

}  // namespace

TEST(QrImageLevel, NamesMapBothWays) {
  EXPECT_EQ(qr_image::level_from_string("low"), Level::low);
  EXPECT_EQ(qr_image::level_from_string("medium"), Level::medium);
  EXPECT_EQ(qr_image::level_from_string("quarter"), Level::quarter);
  EXPECT_EQ(qr_image::level_from_string("high"), Level::high);
  EXPECT_FALSE(qr_image::level_from_string("HIGH").has_value());
  EXPECT_FALSE(qr_image::level_from_string("L").has_value());
  EXPECT_FALSE(qr_image::level_from_string("").has_value());
  for (Level level : k_levels)
    EXPECT_EQ(qr_image::level_from_string(qr_image::to_string(level)), level);
}

TEST(QrImagePng, IhdrWidthAndHeightAreTheRequestedWidth) {
  const std::string text = colombian_text();
  for (int width : {400, 777, 2048}) {
    auto png = qr_image::png(text, Level::medium, width);
    ASSERT_TRUE(png.ok()) << png.error().errors.at(0).message;
    ASSERT_GT(png->size(), 33u);
    EXPECT_EQ(png->substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
    EXPECT_EQ(png->substr(12, 4), "IHDR");
    EXPECT_EQ(big_endian_32(*png, 16), static_cast<std::uint32_t>(width));
    EXPECT_EQ(big_endian_32(*png, 20), static_cast<std::uint32_t>(width));
    EXPECT_EQ((*png)[24], 1) << "bit depth";
    EXPECT_EQ((*png)[25], 0) << "colour type: grayscale";
  }
}

TEST(QrImagePng, ZbarimgDecodesTheExactTextAtEveryLevelAndWidth) {
  const std::string text = colombian_text();
  for (int width : {400, 2048}) {
    for (Level level : k_levels) {
      auto png = qr_image::png(text, level, width);
      ASSERT_TRUE(png.ok()) << png.error().errors.at(0).message;
      EXPECT_EQ(decode_with_zbarimg(*png), text)
          << "width " << width << " level " << qr_image::to_string(level);
    }
  }
}

TEST(QrImagePng, HigherLevelsMakeLargerSymbols) {
  const std::string text = colombian_text();
  int previous_version = 0;
  for (Level level : k_levels) {
    auto layout = qr_image::layout(text, level, 400);
    ASSERT_TRUE(layout.ok()) << layout.error().errors.at(0).message;
    EXPECT_GE(layout->version, previous_version) << qr_image::to_string(level);
    EXPECT_EQ(layout->modules, 17 + 4 * layout->version);
    previous_version = layout->version;
  }
  EXPECT_GT(qr_image::layout(text, Level::high, 400)->version,
            qr_image::layout(text, Level::low, 400)->version);
}

TEST(QrImagePng, ModulesAreWholePixelSquaresCentredInAWhiteQuietZone) {
  const std::string text = colombian_text();
  for (int width : {400, 777, 2048}) {
    for (Level level : {Level::low, Level::high}) {
      auto layout = qr_image::layout(text, level, width);
      ASSERT_TRUE(layout.ok());
      const int scale = layout->pixels_per_module;
      EXPECT_EQ(scale, width / (layout->modules + 8));
      EXPECT_GE(layout->margin, 4 * scale);
      const int symbol_end = layout->margin + layout->modules * scale;
      EXPECT_LE(std::abs((width - symbol_end) - layout->margin), 1) << "centred";

      auto png = qr_image::png(text, level, width);
      ASSERT_TRUE(png.ok());
      int image_width = 0, image_height = 0;
      std::vector<unsigned char> pixels = pixels_of(*png, image_width, image_height);
      ASSERT_EQ(image_width, width);
      ASSERT_EQ(image_height, width);
      int wrong_quiet = 0, ragged_modules = 0, dark = 0;
      for (int y = 0; y < width; ++y) {
        for (int x = 0; x < width; ++x) {
          unsigned char pixel = pixels[static_cast<std::size_t>(y) * width + x];
          bool in_symbol =
              x >= layout->margin && x < symbol_end && y >= layout->margin && y < symbol_end;
          if (!in_symbol) {
            wrong_quiet += pixel != 255;
            continue;
          }
          int module_x = layout->margin + (x - layout->margin) / scale * scale;
          int module_y = layout->margin + (y - layout->margin) / scale * scale;
          ragged_modules += pixel != pixels[static_cast<std::size_t>(module_y) * width + module_x];
          dark += pixel == 0;
        }
      }
      EXPECT_EQ(wrong_quiet, 0) << "width " << width;
      EXPECT_EQ(ragged_modules, 0) << "width " << width;
      EXPECT_GT(dark, 0);
      // The top-left finder pattern: a row of 7 dark modules, then the white separator.
      const std::size_t finder_row = static_cast<std::size_t>(layout->margin) * width;
      for (int module = 0; module < 7; ++module) {
        EXPECT_EQ(pixels[finder_row + layout->margin + module * scale], 0) << module;
      }
      EXPECT_EQ(pixels[finder_row + layout->margin + 7 * scale], 255);
    }
  }
}

// Every pixel of the PNG, as libpng decodes it (zlib stream, Adler-32 and chunk CRCs checked),
// is the module of libqrencode's own symbol under it, or white in the quiet zone.
void expect_pixels_are_the_symbol(const std::string& text, Level level, int width) {
  SCOPED_TRACE("width " + std::to_string(width) + " level " +
               std::string(qr_image::to_string(level)) + " text " + text.substr(0, 40));
  auto layout = qr_image::layout(text, level, width);
  ASSERT_TRUE(layout.ok()) << layout.error().errors.at(0).message;
  auto png = qr_image::png(text, level, width);
  ASSERT_TRUE(png.ok()) << png.error().errors.at(0).message;
  int image_width = 0, image_height = 0;
  std::vector<unsigned char> pixels = pixels_of(*png, image_width, image_height);
  ASSERT_EQ(image_width, width);
  ASSERT_EQ(image_height, width);
  static constexpr QRecLevel k_qrencode_levels[] = {QR_ECLEVEL_L, QR_ECLEVEL_M, QR_ECLEVEL_Q,
                                                    QR_ECLEVEL_H};
  const QRecLevel qrencode_level = k_qrencode_levels[static_cast<int>(level)];
  std::unique_ptr<QRcode, void (*)(QRcode*)> symbol(
      QRcode_encodeString(text.c_str(), 0, qrencode_level, QR_MODE_8, 1), QRcode_free);
  ASSERT_NE(symbol, nullptr);
  ASSERT_EQ(symbol->width, layout->modules);
  const int scale = layout->pixels_per_module;
  const int margin = layout->margin;
  int wrong = 0;
  for (int y = 0; y < width; ++y) {
    for (int x = 0; x < width; ++x) {
      int module_x = (x - margin) >= 0 ? (x - margin) / scale : -1;
      int module_y = (y - margin) >= 0 ? (y - margin) / scale : -1;
      bool dark = module_x >= 0 && module_y >= 0 && module_x < symbol->width &&
                  module_y < symbol->width &&
                  (symbol->data[module_y * symbol->width + module_x] & 1);
      wrong += pixels[static_cast<std::size_t>(y) * width + x] != (dark ? 0 : 255);
    }
  }
  EXPECT_EQ(wrong, 0) << "pixels that are not the symbol's module";
}

TEST(QrImagePng, EveryPixelIsTheSymbolsModuleAtAnyWidth) {
  const std::string text = colombian_text();
  const int smallest = qr_image::layout(text, Level::high, 400)->modules + 8;
  for (int width : {smallest, smallest + 1, 399, 400, 401, 777, 1024, 2048, 4099}) {
    for (Level level : {Level::low, Level::high}) {
      if (qr_image::layout(text, level, width).ok()) {
        expect_pixels_are_the_symbol(text, level, width);
      }
    }
  }
}

TEST(QrImagePng, EveryPixelIsTheSymbolsModuleForRandomTextsAndWidths) {
  // The image data is compressed by our own deflate writer (rows copied from the row above,
  // byte runs, copies split at 258 bytes): random texts and widths exercise its boundaries.
  std::mt19937 random(20261126);
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 .-@";
  for (int round = 0; round < 60; ++round) {
    std::string text(1 + random() % 300, ' ');
    for (char& c : text) c = alphabet[random() % alphabet.size()];
    Level level = k_levels[random() % 4];
    auto layout = qr_image::layout(text, level, 4000);
    ASSERT_TRUE(layout.ok());
    int width = layout->modules + 8 + static_cast<int>(random() % 1200);
    expect_pixels_are_the_symbol(text, level, width);
  }
}

TEST(QrImagePng, ImagesStaySmall) {
  // The compression keeps a default QR light in its JSON (the PNG travels as base64).
  const std::string text = colombian_text();
  for (Level level : k_levels) {
    auto narrow = qr_image::png(text, level, 400);
    auto wide = qr_image::png(text, level, 2048);
    ASSERT_TRUE(narrow.ok() && wide.ok());
    EXPECT_LT(narrow->size(), 4096u) << qr_image::to_string(level);
    EXPECT_LT(wide->size(), 16384u) << qr_image::to_string(level);
  }
}

TEST(QrImagePng, TheSmallestWidthHasOnePixelPerModule) {
  const std::string text = colombian_text();
  auto layout = qr_image::layout(text, Level::low, 400);
  ASSERT_TRUE(layout.ok());
  const int smallest = layout->modules + 8;
  auto exact = qr_image::layout(text, Level::low, smallest);
  ASSERT_TRUE(exact.ok()) << exact.error().errors.at(0).message;
  EXPECT_EQ(exact->pixels_per_module, 1);
  EXPECT_EQ(exact->margin, 4);
  auto png = qr_image::png(text, Level::low, smallest);
  ASSERT_TRUE(png.ok());
  EXPECT_EQ(big_endian_32(*png, 16), static_cast<std::uint32_t>(smallest));
}

TEST(QrImagePng, AWidthTooSmallFailsCleanly) {
  const std::string text = colombian_text();
  auto layout = qr_image::layout(text, Level::high, 400);
  ASSERT_TRUE(layout.ok());
  for (int width : {layout->modules + 7, layout->modules, 10, 1, 0, -400}) {
    auto png = qr_image::png(text, Level::high, width);
    ASSERT_FALSE(png.ok()) << width;
    EXPECT_EQ(png.error().first_code(), "validation_error");
    EXPECT_EQ(png.error().errors[0].path.value_or(""), "image_width");
    EXPECT_NE(png.error().errors.at(0).message.find("too small"), std::string::npos)
        << png.error().errors.at(0).message;
    EXPECT_FALSE(qr_image::layout(text, Level::high, width).ok());
  }
  auto huge = qr_image::png(text, Level::high, limits::k_qr_image_width_max_pixels + 1);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().errors[0].path.value_or(""), "image_width");
}

TEST(QrImagePng, TextThatDoesNotFitFails) {
  // Version 40 holds 2,953 bytes at level low and 1,273 at level high.
  const std::string long_text(1500, 'x');
  EXPECT_TRUE(qr_image::png(long_text, Level::low, 2048).ok());
  auto too_long = qr_image::png(long_text, Level::high, 2048);
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.error().errors.at(0).message.find("too long"), std::string::npos)
      << too_long.error().errors.at(0).message;
  EXPECT_FALSE(qr_image::png(std::string(3000, 'x'), Level::low, 2048).ok());
  EXPECT_FALSE(qr_image::png("", Level::low, 400).ok());
  EXPECT_FALSE(qr_image::png(std::string("a\0b", 3), Level::low, 400).ok());
}

TEST(QrImagePng, TextIsCaseSensitive) {
  auto upper = qr_image::png("HELLO tesoro", Level::medium, 400);
  auto lower = qr_image::png("hello tesoro", Level::medium, 400);
  ASSERT_TRUE(upper.ok() && lower.ok());
  EXPECT_EQ(decode_with_zbarimg(*upper), "HELLO tesoro");
  EXPECT_EQ(decode_with_zbarimg(*lower), "hello tesoro");
}

TEST(QrImagePng, ThreadsMakeTheSameImage) {
  // Handlers run on many worker threads at once.
  const std::string text = colombian_text();
  auto expected = qr_image::png(text, Level::quarter, 400);
  ASSERT_TRUE(expected.ok());
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        auto png = qr_image::png(text, Level::quarter, 400);
        mismatches[t] += !png.ok() || *png != *expected;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(mismatches[t], 0);
}

TEST(QrImageDataUrl, IsBase64OfThePng) {
  auto png = qr_image::png(colombian_text(), Level::medium, 400);
  ASSERT_TRUE(png.ok());
  std::string url = qr_image::data_url(*png);
  const std::string prefix = "data:image/png;base64,";
  ASSERT_TRUE(url.starts_with(prefix));
  bool ok = false;
  EXPECT_EQ(crypto::base64_decode(url.substr(prefix.size()), ok), *png);
  EXPECT_TRUE(ok);
  EXPECT_EQ(url.find_first_of("-_\n", prefix.size()), std::string::npos)
      << "standard base64, one line";
}

// ---- qr_mask: libqrencode's symbol, with the mask chosen at a fraction of the cost ----

namespace {

struct QrcodeDeleter {
  void operator()(QRcode* code) const { QRcode_free(code); }
};
using QrcodePtr = std::unique_ptr<QRcode, QrcodeDeleter>;

constexpr QRecLevel k_qrencode_levels[] = {QR_ECLEVEL_L, QR_ECLEVEL_M, QR_ECLEVEL_Q, QR_ECLEVEL_H};

// The mask a symbol carries, read from its format information around the top-left finder (bits
// 0 to 7 down column 8, skipping the timing row; bits 8 to 14 leftwards along row 8, skipping the
// timing column): the 5 data bits are under the XOR mask 0x5412, the mask the low 3 of them.
int mask_of(const QRcode& code) {
  auto dark = [&](int x, int y) { return code.data[y * code.width + x] & 1; };
  int bits = 0;
  for (int i = 0; i < 8; ++i) bits |= dark(8, i < 6 ? i : i + 1) << i;
  for (int i = 0; i < 7; ++i) bits |= dark(i == 0 ? 7 : 6 - i, 8) << (8 + i);
  return ((bits ^ 0x5412) >> 10) & 7;
}

// Empty when qr_mask::encode_string and QRcode_encodeString(text, 0, level, QR_MODE_8, 1) give
// the same symbol (version, width, every module byte), or both fail with the same errno; what
// differs otherwise. `mask` gets the symbol's mask (-1 when there is none).
std::string compare_with_libqrencode(const std::string& text, QRecLevel level, int& mask) {
  mask = -1;
  errno = 0;
  QrcodePtr ours(qr_mask::encode_string(text.c_str(), level));
  const int our_errno = errno;
  errno = 0;
  QrcodePtr reference(QRcode_encodeString(text.c_str(), 0, level, QR_MODE_8, 1));
  const int reference_errno = errno;
  if (!ours || !reference) {
    if (!ours && !reference && our_errno == reference_errno) return {};
    return "one failed: ours " + std::string(ours ? "ok" : "failed") + " (errno " +
           std::to_string(our_errno) + "), libqrencode's " +
           std::string(reference ? "ok" : "failed") + " (errno " +
           std::to_string(reference_errno) + ")";
  }
  if (ours->version != reference->version || ours->width != reference->width) {
    return "version " + std::to_string(ours->version) + " width " + std::to_string(ours->width) +
           ", libqrencode's version " + std::to_string(reference->version) + " width " +
           std::to_string(reference->width);
  }
  mask = mask_of(*reference);
  const int modules = ours->width * ours->width;
  for (int i = 0; i < modules; ++i) {
    if (ours->data[i] != reference->data[i]) {
      return "module (" + std::to_string(i % ours->width) + ", " +
             std::to_string(i / ours->width) + ") is " + std::to_string(ours->data[i]) +
             ", libqrencode's " + std::to_string(reference->data[i]) + "; our mask " +
             std::to_string(mask_of(*ours)) + ", libqrencode's " + std::to_string(mask);
    }
  }
  return {};
}

// A random Colombian-shaped payload: every field's length varies, and the text mixes runs of
// digits, of uppercase letters and lowercase text, so libqrencode's split puts pieces in the
// numeric, alphanumeric and 8-bit modes.
std::string random_payload(std::mt19937& random) {
  auto pick = [&](int low, int high) {
    return std::uniform_int_distribution<int>(low, high)(random);
  };
  auto text = [&](std::string_view alphabet, int length) {
    std::string out;
    for (int i = 0; i < length; ++i) {
      out += alphabet[static_cast<std::size_t>(pick(0, static_cast<int>(alphabet.size()) - 1))];
    }
    return out;
  };
  constexpr std::string_view k_digits = "0123456789";
  constexpr std::string_view k_upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 $%*+-./:";
  constexpr std::string_view k_printable =
      " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`"
      "abcdefghijklmnopqrstuvwxyz{|}~";
  constexpr std::string_view k_alphabets[] = {k_digits, k_upper, k_printable};
  auto field = [&](int low, int high) {
    return text(k_alphabets[pick(0, 2)], pick(low, high));
  };
  constexpr const char* k_key_types[] = {"identification", "cellphone", "email", "alphanumeric",
                                         "merchant_code"};
  emvco::Payload payload;
  payload.dynamic = pick(0, 1) == 1;
  payload.network = text("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", pick(1, 4));
  payload.key_type = k_key_types[pick(0, 4)];
  payload.key_value = field(1, 60);
  payload.merchant_category_code = text(k_digits, 4);
  if (pick(0, 3) != 0) payload.amount_minor = pick(1, 2'000'000'000);
  payload.merchant_name = field(1, 25);
  payload.merchant_city = field(1, 15);
  if (pick(0, 1) == 1) payload.postal_code = text(k_digits, pick(1, 10));
  payload.terminal_label = field(1, 25);
  payload.purpose = text(k_digits, 2);
  constexpr std::string_view k_letters_and_digits =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  payload.transaction_id = payload.dynamic ? text(k_letters_and_digits, pick(1, 19))
                                           : std::string(emvco::k_static_transaction_id);
  auto built = emvco::build(payload);
  EXPECT_TRUE(built.ok()) << built.error().errors.at(0).message;
  return built.ok() ? *built : std::string("build failed");
}

}  // namespace

TEST(QrMaskSymbol, IsLibqrencodesSymbolForTheReferenceVectorsAndEdgeCases) {
  std::vector<std::string> texts = {
      std::string(test_vectors::k_colombian), std::string(test_vectors::k_pix_static),
      std::string(test_vectors::k_pix_static_fixed), std::string(test_vectors::k_pix_dynamic),
      colombian_text(), "A", "HELLO tesoro", "hello tesoro", "0123456789012345678901234567890",
      std::string(1500, 'x'),  // version 40 at level low, too long for level high
      std::string(2953, 'x'),  // the most bytes version 40 holds (level low)
      std::string(2954, 'x'),  // one too many at every level
      std::string(7089, '7'),  // the most digits version 40 holds (level low)
      // Small symbols whose best mask changes if the dark proportion (N4) were truncated to a
      // whole percent instead of rounded: "Ok" at M, "qBW" at L, "0g " at Q, "n-h" at H.
      "Ok", "qBW", "0g ", "n-h",
  };
  for (const std::string& text : texts) {
    for (QRecLevel level : k_qrencode_levels) {
      int mask = -1;
      EXPECT_EQ(compare_with_libqrencode(text, level, mask), "")
          << "level " << level << ", text of " << text.size() << " bytes: " << text.substr(0, 40);
    }
  }
  errno = 0;
  EXPECT_EQ(qr_mask::encode_string(std::string(2954, 'x').c_str(), QR_ECLEVEL_L), nullptr);
  EXPECT_EQ(errno, ERANGE) << "too long for any version";
}

TEST(QrMaskSymbol, IsLibqrencodesSymbolFor2000RandomPayloadsAtEveryLevel) {
  // The mask is chosen among 8 by penalty: the same symbol, module for module, for thousands of
  // payloads means the same scores and the same tie-break as libqrencode's. Every mask is the
  // best one for some of them (so the choice is really made).
  std::mt19937 random(20240611);
  std::array<int, 8> chosen{};
  int compared = 0;
  for (int i = 0; i < 2000; ++i) {
    const std::string text = random_payload(random);
    for (QRecLevel level : k_qrencode_levels) {
      int mask = -1;
      const std::string difference = compare_with_libqrencode(text, level, mask);
      ASSERT_EQ(difference, "") << "level " << level << ", payload " << text;
      ASSERT_GE(mask, 0) << text;
      ++chosen[static_cast<std::size_t>(mask)];
      ++compared;
    }
  }
  EXPECT_EQ(compared, 8000);
  for (int mask = 0; mask < 8; ++mask) EXPECT_GT(chosen[mask], 0) << "mask " << mask;
}

TEST(QrMaskSymbol, IsLibqrencodesSymbolFor2000ShortRandomTextsAtEveryLevel) {
  // Versions 1 to 4: in small symbols the dark proportion (N4) and ties between masks decide
  // more often than in payload-sized ones.
  std::mt19937 random(1811);
  constexpr std::string_view k_alphabet =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ abcdefghijklmnopqrstuvwxyz.-@/:$%*+";
  for (int i = 0; i < 2000; ++i) {
    std::string text;
    const int length = std::uniform_int_distribution<int>(1, 60)(random);
    std::uniform_int_distribution<std::size_t> character(0, k_alphabet.size() - 1);
    for (int k = 0; k < length; ++k) text += k_alphabet[character(random)];
    for (QRecLevel level : k_qrencode_levels) {
      int mask = -1;
      ASSERT_EQ(compare_with_libqrencode(text, level, mask), "")
          << "level " << level << ": " << text;
    }
  }
}

TEST(QrMaskPenalty, ALightSymbolPaysForItsRunsAndBlocks) {
  // 21 x 21 light modules: 42 lines that are one run of 21 (N1: 3 + 16 each) and 20 x 20 2x2
  // blocks (N2: 3 each); no finder-like pattern.
  std::vector<unsigned char> modules(21 * 21, 0);
  EXPECT_EQ(qr_mask::pattern_penalty(modules.data(), 21), 42 * (3 + 16) + 400 * 3);
  // The same with a checkerboard: no run of 5, no block, no pattern.
  for (int y = 0; y < 21; ++y) {
    for (int x = 0; x < 21; ++x) modules[y * 21 + x] = static_cast<unsigned char>((x + y) % 2);
  }
  EXPECT_EQ(qr_mask::pattern_penalty(modules.data(), 21), 0);
}

TEST(QrMaskPenalty, IsLibqrencodesEvaluationOnRandomAndFinderLikeModules) {
  // Symbols rarely hold finder-like patterns two or more modules a unit, or long runs: these
  // planted ones make each rule of N1, N2 and N3 count (edges, one light side, wide units).
  std::mt19937 random(7);
  auto pick = [&](int low, int high) {
    return std::uniform_int_distribution<int>(low, high)(random);
  };
  int differing = 0;
  for (int round = 0; round < 1500; ++round) {
    const int width = 17 + 4 * pick(1, 40);
    const int dark_percent = pick(0, 100);
    std::vector<unsigned char> modules(static_cast<std::size_t>(width) * width);
    for (auto& module : modules) module = pick(0, 99) < dark_percent ? 1 : 0;
    const int planted = pick(0, 30);
    for (int n = 0; n < planted; ++n) {
      // light, dark, light, 3 dark, light, dark, light: each unit `unit` modules; the light
      // margins 0 to 5 units, so some have 4 or more and some not.
      const int unit = pick(1, 5);
      const int before = pick(0, 5);
      const int after = pick(0, 5);
      std::vector<unsigned char> pattern(static_cast<std::size_t>(before) * unit, 0);
      for (int part : {1, 0, 1, 1, 1, 0, 1}) pattern.insert(pattern.end(), unit, part);
      pattern.insert(pattern.end(), static_cast<std::size_t>(after) * unit, 0);
      const int line = pick(0, width - 1);
      const int from = pick(-static_cast<int>(pattern.size()) / 2, width - 1);
      const bool column = pick(0, 1) == 1;
      for (int k = 0; k < static_cast<int>(pattern.size()); ++k) {
        const int at = from + k;
        if (at < 0 || at >= width) continue;
        modules[column ? at * width + line : line * width + at] = pattern[k];
      }
    }
    const int ours = qr_mask::pattern_penalty(modules.data(), width);
    const int libqrencode = Mask_evaluateSymbol(width, modules.data());
    if (ours != libqrencode) {
      ++differing;
      ADD_FAILURE() << "width " << width << ": ours " << ours << ", libqrencode's " << libqrencode;
      if (differing > 5) break;
    }
  }
  EXPECT_EQ(differing, 0);
}
