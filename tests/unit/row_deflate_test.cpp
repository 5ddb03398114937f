#include "core/row_deflate.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <string>
#include <vector>

using namespace tesoro;

namespace {

// zlib's own inflater, the reference reader: checks the header, every code and the Adler-32.
std::string inflate_all(const std::string& stream, std::size_t expected_size, int& status) {
  std::string out(expected_size + 1, '\0');  // one spare byte: longer output is an error too
  uLongf out_size = static_cast<uLongf>(out.size());
  status = uncompress(reinterpret_cast<Bytef*>(out.data()), &out_size,
                      reinterpret_cast<const Bytef*>(stream.data()),
                      static_cast<uLong>(stream.size()));
  out.resize(out_size);
  return out;
}

void expect_round_trip(const std::string& data, std::size_t stride) {
  std::string stream = row_deflate::zlib(data, stride);
  int status = Z_OK;
  std::string back = inflate_all(stream, data.size(), status);
  EXPECT_EQ(status, Z_OK) << "stride " << stride << ", " << data.size() << " bytes";
  EXPECT_TRUE(back == data) << "stride " << stride << ", " << data.size() << " bytes";
}

// Rows of `stride` bytes like a QR image's: runs of 0x00 and 0xFF with partial bytes between,
// each row repeated a few times, some rows random; `size` need not be a multiple of stride.
std::string image_like(std::mt19937& random, std::size_t stride, std::size_t size) {
  std::string data;
  while (data.size() < size) {
    std::string row(stride, '\xFF');
    int kind = static_cast<int>(random() % 4);
    for (std::size_t x = 0; x < stride;) {
      std::size_t run = 1 + random() % 40;
      char value = kind == 3 ? static_cast<char>(random()) : (random() % 2 ? '\xFF' : '\x00');
      for (std::size_t i = 0; i < run && x < stride; ++i, ++x) {
        row[x] = kind == 3 && random() % 2 ? static_cast<char>(random()) : value;
      }
    }
    std::size_t repeats = 1 + random() % 12;
    for (std::size_t i = 0; i < repeats; ++i) data += row;
  }
  data.resize(size);
  return data;
}

}  // namespace

TEST(RowDeflate, ZlibInflatesBackTheExactDataForManyShapes) {
  std::mt19937 random(26112026);
  for (std::size_t stride : {1u, 2u, 3u, 4u, 51u, 257u, 258u, 259u, 2049u}) {
    for (int round = 0; round < 20; ++round) {
      std::size_t size = random() % (stride * 40 + 600);
      expect_round_trip(image_like(random, stride, size), stride);
    }
  }
}

TEST(RowDeflate, LongRunsAndRepeatsAreSplitIntoValidCopies) {
  // Copies are at most 258 bytes: every length around the multiples of 258, from a byte back
  // and from a row back.
  for (std::size_t length = 250; length < 800; ++length) {
    expect_round_trip(std::string(length, '\xFF'), 0);
    expect_round_trip(std::string(length, '\x00'), 51);
    const std::string row("\x00\xFF\x12\x34\xFF", 5);
    std::string repeated_rows;
    while (repeated_rows.size() < length) repeated_rows += row[repeated_rows.size() % 5];
    expect_round_trip(repeated_rows, 5);
  }
}

TEST(RowDeflate, StridesOutsideTheWindowAndEmptyDataStillInflate) {
  std::mt19937 random(7);
  expect_round_trip("", 0);
  expect_round_trip("", 51);
  expect_round_trip("x", 51);
  for (std::size_t stride : {0u, 32'768u, 32'769u, 70'000u}) {
    expect_round_trip(image_like(random, 32'768, 100'000), stride);
  }
}

TEST(RowDeflate, RepeatedRowsCostAlmostNothing) {
  // 400 rows of 51 bytes, each distinct row repeated 8 times, as a 400 px QR image: the copies
  // make it far smaller than the 20,400 bytes.
  std::mt19937 random(400);
  std::string data;
  for (int module_row = 0; module_row < 50; ++module_row) {
    std::string row(51, '\xFF');
    for (std::size_t x = 1; x < row.size(); ++x) row[x] = random() % 2 ? '\xFF' : '\x00';
    for (int repeat = 0; repeat < 8; ++repeat) data += row;
  }
  std::string stream = row_deflate::zlib(data, 51);
  EXPECT_LT(stream.size(), 3'600u);
  int status = Z_OK;
  EXPECT_EQ(inflate_all(stream, data.size(), status), data);
  EXPECT_EQ(status, Z_OK);
}

namespace {

struct RowRun {
  std::string row;
  std::size_t times;
};

// The same data given to the encoder as runs and laid out in full for zlib().
void expect_runs_as_laid_out(const std::vector<RowRun>& runs, std::size_t stride) {
  std::string data;
  row_deflate::Encoder encoder(stride);
  for (const RowRun& run : runs) {
    for (std::size_t i = 0; i < run.times; ++i) data += run.row;
    encoder.rows(reinterpret_cast<const unsigned char*>(run.row.data()), run.row.size(),
                 run.times);
  }
  std::string stream = std::move(encoder).finish();
  EXPECT_TRUE(stream == row_deflate::zlib(data, stride))
      << "stride " << stride << ", " << runs.size() << " runs, " << data.size() << " bytes";
  int status = Z_OK;
  EXPECT_TRUE(inflate_all(stream, data.size(), status) == data);
  EXPECT_EQ(status, Z_OK);  // the Adler-32 of the repeats included
}

}  // namespace

TEST(RowDeflate, RowsGivenWithTheirRepeatsMakeZlibsStreamByteForByte) {
  std::mt19937 random(23112026);
  for (std::size_t stride : {1u, 2u, 3u, 4u, 51u, 257u, 2049u}) {
    for (int round = 0; round < 20; ++round) {
      std::vector<RowRun> runs;
      const std::size_t count = random() % 30;
      for (std::size_t r = 0; r < count; ++r) {
        // Some runs repeat the row before (the encoder must see them as repeats), some are
        // empty; image-like rows otherwise.
        std::string row = !runs.empty() && random() % 4 == 0 ? runs.back().row
                                                             : image_like(random, stride, stride);
        runs.push_back({row, random() % 12});
      }
      if (random() % 3 == 0) {  // a shorter last row, once
        runs.push_back({image_like(random, stride, random() % stride), 1});
      }
      expect_runs_as_laid_out(runs, stride);
    }
  }
}

TEST(RowDeflate, ManyRepeatsKeepTheChecksumRight) {
  // The Adler-32 of k repeats is computed, not summed: past 65,521 repeats (its modulus), and
  // with rows of bytes near 0xFF that make every sum wrap.
  expect_runs_as_laid_out({{std::string("\xFE", 1), 70'000}}, 1);
  expect_runs_as_laid_out({{std::string("\xFF\xFE\xFD", 3), 30'000}, {"abc", 65'522}}, 3);
  std::mt19937 random(11);
  expect_runs_as_laid_out({{image_like(random, 51, 51), 400}, {image_like(random, 51, 51), 9}}, 51);
}

TEST(RowDeflate, AShortRowGivenWithRepeatsStillInflatesToItsCopies) {
  // Outside the contract (only the last row may be short), and still no wrong stream: each copy
  // of a short row is coded on its own, never as a copy from a row back.
  std::mt19937 random(5);
  const std::string full = image_like(random, 51, 51);
  const std::string short_row = image_like(random, 51, 20);
  row_deflate::Encoder encoder(51);
  encoder.rows(reinterpret_cast<const unsigned char*>(full.data()), full.size(), 2);
  encoder.rows(reinterpret_cast<const unsigned char*>(short_row.data()), short_row.size(), 3);
  const std::string data = full + full + short_row + short_row + short_row;
  int status = Z_OK;
  EXPECT_TRUE(inflate_all(std::move(encoder).finish(), data.size(), status) == data);
  EXPECT_EQ(status, Z_OK);
}

TEST(RowDeflate, RunsThatCrossSixtyFourByteBoundariesBecomeCopies) {
  // The encoder finds runs through bit masks of 64 bytes a word: a run crossing words, and one
  // ending at a row's last byte, must still be one copy each. Random bytes (literals, 8 or 9
  // bits each) around them; the runs, coded as literals, would cost ~200 bytes more.
  std::mt19937 random(64);
  const std::size_t stride = 200;
  std::string first(stride, '\0');
  for (std::size_t x = 0; x < stride; ++x) first[x] = static_cast<char>(random());
  for (std::size_t x = 62; x < 162; ++x) first[x] = '\x5A';  // a byte run over bytes 62-161
  std::string second(stride, '\0');
  for (std::size_t x = 0; x < stride; ++x) second[x] = static_cast<char>(random());
  for (std::size_t x = 30; x < stride; ++x) second[x] = first[x];  // equal to above: 30-199
  const std::string data = first + second;
  const std::string stream = row_deflate::zlib(data, stride);
  // Literals: 100 in the first row, 30 in the second, at most 9 bits each; a few copies.
  EXPECT_LT(stream.size(), (130u * 9 + 7) / 8 + 40);
  int status = Z_OK;
  EXPECT_TRUE(inflate_all(stream, data.size(), status) == data);
  EXPECT_EQ(status, Z_OK);
}
