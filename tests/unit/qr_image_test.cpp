#include "core/qr_image.hpp"

#include <gtest/gtest.h>
#include <png.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "core/crypto.hpp"
#include "core/emvco.hpp"
#include "core/limits.hpp"

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
