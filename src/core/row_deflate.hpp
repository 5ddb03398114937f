#pragma once
// The zlib stream of image data made of rows that repeat, as a PNG of a QR symbol is: each module
// row is repeated pixels_per_module times and its pixels come in runs. One deflate block with the
// fixed Huffman codes (RFC 1951): a row equal to the row above is one copy from a row back; in a
// new row, at each byte, the longer of the run equal to the row above and the run repeating the
// byte before becomes a copy, other bytes are literals. Any inflater reads it.
//
// Why not zlib's deflate: at its fastest level it spent about 29 instructions per byte of a
// 400 px QR image (20 KiB of rows) finding those same matches, more than making the symbol; this
// finds them for a few instructions per byte, at about 1.6 times zlib's size (2.4 KiB instead of
// 1.4 KiB at 400 px). zlib computes the Adler-32 of each distinct row; the share of its repeats
// is derived from it (adler_repeated in the .cpp).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tesoro::row_deflate {

// The zlib stream (RFC 1950: header, deflate data, Adler-32) of `data`, read as rows of `stride`
// bytes (the last one may be shorter). A stride of 0 or above 32,768 (deflate's window) makes
// no copies from a row back, only byte runs. Any data is accepted.
std::string zlib(std::string_view data, std::size_t stride);

class FixedDeflate;

// The same stream, given as its rows and how many times each repeats, for data whose rows are
// known to repeat (a QR image: each module row pixels_per_module times): no need to lay the
// repeats out in memory, compare them or checksum each. Rows are `stride` bytes; only the last
// may be shorter. A row equal to the one before it is coded as its repeat, so the stream is
// zlib()'s of the same data, byte for byte. Each row must stay in place until the next call.
class Encoder {
 public:
  // size_hint: the data's expected size, for the output's first allocation.
  explicit Encoder(std::size_t stride, std::size_t size_hint = 0);
  ~Encoder();
  Encoder(const Encoder&) = delete;
  Encoder& operator=(const Encoder&) = delete;

  // `times` copies of the `length` bytes at `row`.
  void rows(const unsigned char* row, std::size_t length, std::size_t times);
  std::string finish() &&;

 private:
  void new_row(const unsigned char* row, std::size_t length, bool has_above);
  void flush_repeats();

  std::size_t stride_;
  bool by_rows_;
  std::string out_;
  std::unique_ptr<FixedDeflate> deflate_;  // writes into out_
  std::uint32_t checksum_ = 1;             // Adler-32 of the data so far
  const unsigned char* above_ = nullptr;   // the last row, when it was a full one
  unsigned char last_byte_ = 0;
  bool written_ = false;                   // whether any data came yet
  std::size_t pending_repeats_ = 0;        // repeats of the row above not coded yet
  // new_row's bit masks, kept between rows: where a byte equals the one before it or the one
  // above it, and where such a run of a copy's length starts.
  std::vector<std::uint64_t> same_before_, same_above_, before_starts_, above_starts_;
};

}  // namespace tesoro::row_deflate
