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
// 1.4 KiB at 400 px). zlib still computes the Adler-32 checksum.
#include <cstddef>
#include <string>
#include <string_view>

namespace tesoro::row_deflate {

// The zlib stream (RFC 1950: header, deflate data, Adler-32) of `data`, read as rows of `stride`
// bytes (the last one may be shorter). A stride of 0 or above 32,768 (deflate's window) makes
// no copies from a row back, only byte runs. Any data is accepted.
std::string zlib(std::string_view data, std::size_t stride);

}  // namespace tesoro::row_deflate
