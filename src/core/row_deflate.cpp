#include "core/row_deflate.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tesoro::row_deflate {

namespace {

// A Huffman code, as deflate sends it: most significant bit first, so reversed here.
struct Code {
  std::uint16_t bits = 0;
  std::uint8_t length = 0;
};
constexpr Code reversed(std::uint32_t code, int length) {
  std::uint32_t bits = 0;
  for (int i = 0; i < length; ++i) bits |= ((code >> i) & 1u) << (length - 1 - i);
  return {static_cast<std::uint16_t>(bits), static_cast<std::uint8_t>(length)};
}
// The fixed literal/length code (RFC 1951, 3.2.6): 0-143 in 8 bits from 0x30, 144-255 in 9
// bits from 0x190, 256-279 in 7 bits from 0, 280-287 in 8 bits from 0xC0.
constexpr std::array<Code, 288> k_literal_codes = [] {
  std::array<Code, 288> codes{};
  for (std::uint32_t value = 0; value < 288; ++value) {
    if (value < 144) {
      codes[value] = reversed(0x30u + value, 8);
    } else if (value < 256) {
      codes[value] = reversed(0x190u + (value - 144u), 9);
    } else if (value < 280) {
      codes[value] = reversed(value - 256u, 7);
    } else {
      codes[value] = reversed(0xC0u + (value - 280u), 8);
    }
  }
  return codes;
}();
// The fixed distance code: the 30 symbols in 5 bits.
constexpr std::array<Code, 30> k_distance_codes = [] {
  std::array<Code, 30> codes{};
  for (std::uint32_t value = 0; value < 30; ++value) codes[value] = reversed(value, 5);
  return codes;
}();

// The length symbol of each copy length 3..258 (RFC 1951, 3.2.5) and its extra bits.
struct LengthCode {
  std::uint16_t symbol = 0;
  std::uint8_t extra_bits = 0;
  std::uint8_t extra = 0;
};
constexpr std::array<LengthCode, 259> k_length_codes = [] {
  constexpr std::uint16_t k_base[] = {3,  4,  5,  6,  7,  8,  9,  10,  11,  13,
                                      15, 17, 19, 23, 27, 31, 35, 43,  51,  59,
                                      67, 83, 99, 115, 131, 163, 195, 227, 258};
  constexpr std::uint8_t k_extra_bits[] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                           2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
  std::array<LengthCode, 259> codes{};
  int index = 0;
  for (std::uint32_t length = 3; length <= 258; ++length) {
    while (index < 28 && k_base[index + 1] <= length) ++index;
    codes[length] = {static_cast<std::uint16_t>(257 + index), k_extra_bits[index],
                     static_cast<std::uint8_t>(length - k_base[index])};
  }
  return codes;
}();

}  // namespace

// One deflate block (RFC 1951) with the fixed Huffman codes.
class FixedDeflate {
 public:
  explicit FixedDeflate(std::string& out) : out_(out) {
    put(1, 1);  // BFINAL: the only block
    put(1, 2);  // BTYPE 01: fixed Huffman codes
  }

  void literal(unsigned char byte) { symbol(byte); }

  // Literals for `count` bytes in a row: most of a QR image's new rows. The bit buffer stays in
  // locals, which the loop's stores into the output (char, so aliasing anything) cannot touch.
  void literals(const unsigned char* bytes, std::size_t count) {
    std::uint64_t bits = bits_;
    int filled = count_;
    for (std::size_t i = 0; i < count; ++i) {
      const Code code = k_literal_codes[bytes[i]];
      bits |= static_cast<std::uint64_t>(code.bits) << filled;
      filled += code.length;
      if (filled >= 32) {
        emit32(static_cast<std::uint32_t>(bits));
        bits >>= 32;
        filled -= 32;
      }
    }
    bits_ = bits;
    count_ = filled;
  }

  // Copies `length` bytes (3 or more) from `distance` bytes back (1..32,768).
  void copy(std::size_t length, std::size_t distance) {
    while (length > 0) {
      // At most 258 per symbol, and never leave fewer than 3 for the next one.
      std::size_t part = length <= 258 ? length : (length - 258 < 3 ? length - 3 : 258);
      length -= part;
      length_symbol(part);
      distance_symbol(distance);
    }
  }

  void finish() {
    symbol(256);  // end of block
    flush();      // room for the last bits' bytes
    while (count_ > 0) {
      buffer_[buffered_++] = static_cast<unsigned char>(bits_ & 0xFF);
      bits_ >>= 8;
      count_ -= 8;
    }
    bits_ = 0;
    count_ = 0;
    flush();
  }

 private:
  // Deflate packs bits from the least significant end of each byte.
  // Bits gather in a 64-bit word and leave four bytes at a time, into a buffer that goes to the
  // output string a few hundred bytes at a time (one append, not one per four bytes).
  void put(std::uint32_t value, int bits) {
    bits_ |= static_cast<std::uint64_t>(value) << count_;
    count_ += bits;
    if (count_ >= 32) {
      emit32(static_cast<std::uint32_t>(bits_));
      bits_ >>= 32;
      count_ -= 32;
    }
  }
  void emit32(std::uint32_t word) {
    if (buffered_ + 4 > sizeof buffer_) flush();
    buffer_[buffered_] = static_cast<unsigned char>(word & 0xFF);
    buffer_[buffered_ + 1] = static_cast<unsigned char>((word >> 8) & 0xFF);
    buffer_[buffered_ + 2] = static_cast<unsigned char>((word >> 16) & 0xFF);
    buffer_[buffered_ + 3] = static_cast<unsigned char>((word >> 24) & 0xFF);
    buffered_ += 4;
  }
  void flush() {
    out_.append(reinterpret_cast<const char*>(buffer_), buffered_);
    buffered_ = 0;
  }
  void symbol(std::uint32_t value) {
    put(k_literal_codes[value].bits, k_literal_codes[value].length);
  }

  void length_symbol(std::size_t length) {
    const LengthCode& code = k_length_codes[length];
    symbol(code.symbol);
    if (code.extra_bits > 0) put(code.extra, code.extra_bits);
  }

  // Distance symbols (RFC 1951, 3.2.5): 1-4 have their own; above, each power of two splits in
  // two symbols with (its exponent - 1) extra bits.
  void distance_symbol(std::size_t distance) {
    std::uint32_t index = 0;
    std::uint32_t extra_bits = 0;
    std::uint32_t base = 1;
    if (distance <= 4) {
      index = static_cast<std::uint32_t>(distance - 1);
    } else {
      auto from_zero = static_cast<std::uint32_t>(distance - 1);
      auto exponent = static_cast<std::uint32_t>(std::bit_width(from_zero) - 1);
      index = 2 * exponent + ((from_zero >> (exponent - 1)) & 1u);
      extra_bits = index / 2 - 1;
      base = ((2u + (index & 1u)) << extra_bits) + 1;
    }
    put(k_distance_codes[index].bits, k_distance_codes[index].length);
    if (extra_bits > 0) {
      put(static_cast<std::uint32_t>(distance) - base, static_cast<int>(extra_bits));
    }
  }

  std::string& out_;
  std::uint64_t bits_ = 0;
  int count_ = 0;
  unsigned char buffer_[512];
  std::size_t buffered_ = 0;
};

namespace {

// The shortest copy worth making: three literals cost 24 to 27 bits, a copy of 3 from a byte or
// a row back 12 to 21.
constexpr std::size_t k_min_copy = 3;

// Deflate's window: the farthest a copy may reach back.
constexpr std::size_t k_max_distance = 32'768;

// Adler-32 (RFC 1950, 8.2) of the data of `checksum` followed by `times` copies of a block of
// `length` bytes whose own Adler-32 is `block`. A block of sum S and weighted sum W (the last
// byte once, the one before twice, ...) takes (a, b) to (a + S, b + length * a + W); k of them,
// to (a + k S, b + k length a + k W + length S k (k - 1) / 2), all modulo 65,521. What
// adler32_combine does k times, in a few multiplications.
std::uint32_t adler_repeated(std::uint32_t checksum, std::uint32_t block, std::size_t length,
                             std::size_t times) {
  constexpr std::uint64_t k_modulus = 65'521;
  const std::uint64_t n = length % k_modulus;
  const std::uint64_t k = times % k_modulus;
  const std::uint64_t pairs = (static_cast<std::uint64_t>(times) * (times - 1) / 2) % k_modulus;
  const std::uint64_t a = checksum & 0xFFFFu;
  const std::uint64_t b = checksum >> 16;
  // The block's own checksum starts from a = 1: its a is 1 + S, its b is length + W.
  const std::uint64_t sum = ((block & 0xFFFFu) + k_modulus - 1) % k_modulus;
  const std::uint64_t weighted = ((block >> 16) + k_modulus - n) % k_modulus;
  const std::uint64_t new_a = (a + k * sum) % k_modulus;
  const std::uint64_t new_b =
      (b + k * n % k_modulus * a + k * weighted + n * sum % k_modulus * pairs) % k_modulus;
  return static_cast<std::uint32_t>(new_b << 16 | new_a);
}

}  // namespace

Encoder::Encoder(std::size_t stride, std::size_t size_hint)
    : stride_(stride), by_rows_(stride >= 1 && stride <= k_max_distance) {
  out_.reserve(size_hint / 8 + 64);
  out_.push_back('\x78');  // deflate, 32 KiB window
  out_.push_back('\x01');  // no dictionary, fastest; (0x78 * 256 + 0x01) % 31 == 0
  deflate_ = std::make_unique<FixedDeflate>(out_);
}

Encoder::~Encoder() = default;

void Encoder::rows(const unsigned char* row, std::size_t length, std::size_t times) {
  if (times == 0 || length == 0) return;
  const bool full = by_rows_ && length == stride_;
  if (!full && times > 1) {
    // Only a full row repeats by a copy from a row back: a shorter one goes in once per copy.
    for (std::size_t copy = 0; copy < times; ++copy) rows(row, length, 1);
    return;
  }
  const bool has_above = by_rows_ && above_ != nullptr;
  std::size_t repeats = times - 1;  // copies of this row after its first
  if (has_above && full && std::memcmp(row, above_, stride_) == 0) {
    repeats = times;  // the first is a repeat of the row above as well
  } else {
    flush_repeats();
    new_row(row, length, has_above);
  }
  pending_repeats_ += repeats;
  const auto row_checksum = static_cast<std::uint32_t>(adler32_z(1, row, length));
  checksum_ = adler_repeated(checksum_, row_checksum, length, times);
  above_ = full ? row : nullptr;
  last_byte_ = row[length - 1];
  written_ = true;
}

// Every repeat of the last row at once, however many calls gave them: one copy from a row back
// (it may overlap what it writes, as deflate allows), as zlib() codes them.
void Encoder::flush_repeats() {
  if (pending_repeats_ == 0) return;
  const std::size_t repeated = pending_repeats_ * stride_;
  if (repeated >= k_min_copy) {
    deflate_->copy(repeated, stride_);
  } else {
    for (std::size_t i = 0; i < repeated; ++i) deflate_->literal(above_[i % stride_]);
  }
  pending_repeats_ = 0;
}

namespace {

using Word = std::uint64_t;

// Bit i % 64 of words[i / 64] is 1 where a[i] == b[i], for i < length.
void equal_bytes(const unsigned char* a, const unsigned char* b, std::size_t length,
                 std::vector<Word>& words) {
  words.assign((length + 63) / 64, 0);
  std::size_t i = 0;
#if defined(__SSE2__)
  for (; i + 16 <= length; i += 16) {  // i % 64 is 0, 16, 32 or 48: never across two words
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i));
    const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i));
    const auto bits = static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, y)));
    words[i / 64] |= Word{bits} << (i % 64);
  }
#endif
  for (; i < length; ++i) words[i / 64] |= Word{a[i] == b[i]} << (i % 64);
}

// How many bits are 1 from bit `from` on, stopping at `length`.
std::size_t ones_from(const std::vector<Word>& words, std::size_t from, std::size_t length) {
  std::size_t count = 0;
  for (std::size_t i = from; i < length;) {
    const std::size_t run = static_cast<std::size_t>(std::countr_one(words[i / 64] >> (i % 64)));
    const std::size_t left_in_word = 64 - i % 64;
    count += std::min(run, left_in_word);
    if (run < left_in_word) break;
    i += left_in_word;
  }
  return std::min(count, length - from);
}

// Bit i of the result is 1 where bits i, i + 1 and i + 2 of `words` all are: where a run of at
// least k_min_copy starts. The bits of `words` past the row's end are 0, so none starts there.
void run_starts(const std::vector<Word>& words, std::vector<Word>& starts) {
  static_assert(k_min_copy == 3);
  starts.resize(words.size());
  for (std::size_t w = 0; w < words.size(); ++w) {
    const Word next = w + 1 < words.size() ? words[w + 1] : 0;
    const Word ahead1 = (words[w] >> 1) | (next << 63);
    const Word ahead2 = (words[w] >> 2) | (next << 62);
    starts[w] = words[w] & ahead1 & ahead2;
  }
}

// The first 1 bit at or after `from` in `a | b`, or `length` when there is none.
std::size_t next_start(const std::vector<Word>& a, const std::vector<Word>* b, std::size_t from,
                       std::size_t length) {
  for (std::size_t w = from / 64; w < a.size(); ++w) {
    Word bits = a[w] | (b != nullptr ? (*b)[w] : 0);
    if (w == from / 64) bits &= ~Word{0} << (from % 64);
    if (bits != 0) return w * 64 + static_cast<std::size_t>(std::countr_zero(bits));
  }
  return length;
}

}  // namespace

// A row not equal to the one above: at each byte, the longer of the run equal to the row above
// (a copy from a row back) and the run repeating the byte before (a copy from a byte back), when
// worth a copy; other bytes are literals. Both kinds of runs are found for the whole row first,
// as bit masks (16 bytes compared at once), so that the bytes between copies, most of a QR
// image's new rows, go out as literals without a search at each.
void Encoder::new_row(const unsigned char* row, std::size_t length, bool has_above) {
  // same_before_ bit i: row[i] equals the byte before it (for i = 0, the last byte written).
  const std::size_t words = (length + 63) / 64;
  if (length > 1) {
    equal_bytes(row + 1, row, length - 1, same_before_);
    same_before_.resize(words, 0);  // the shift below may carry into one more word
    // Shift the whole mask up one bit: bit i + 1 stands for row[i + 1] == row[i].
    for (std::size_t w = same_before_.size(); w-- > 0;) {
      same_before_[w] = (same_before_[w] << 1) | (w > 0 ? same_before_[w - 1] >> 63 : 0);
    }
  } else {
    same_before_.assign(words, 0);
  }
  if (written_ && row[0] == last_byte_) same_before_[0] |= 1;
  run_starts(same_before_, before_starts_);
  if (has_above) {
    equal_bytes(row, above_, length, same_above_);
    run_starts(same_above_, above_starts_);
  }
  for (std::size_t x = 0; x < length;) {
    const std::size_t start =
        next_start(before_starts_, has_above ? &above_starts_ : nullptr, x, length);
    deflate_->literals(row + x, start - x);
    x = start;
    if (x >= length) break;
    const std::size_t same_above = has_above ? ones_from(same_above_, x, length) : 0;
    const std::size_t same_before = ones_from(same_before_, x, length);
    const bool from_above = same_above >= same_before;
    const std::size_t copied = from_above ? same_above : same_before;
    deflate_->copy(copied, from_above ? stride_ : 1);
    x += copied;
  }
}

std::string Encoder::finish() && {
  flush_repeats();
  deflate_->finish();
  for (int shift = 24; shift >= 0; shift -= 8) {
    out_.push_back(static_cast<char>((checksum_ >> shift) & 0xFF));
  }
  return std::move(out_);
}

std::string zlib(std::string_view data, std::size_t stride) {
  // Row by row: the encoder finds the repeats itself (a row equal to the one above), so this
  // needs no run detection of its own. Outside deflate's window the data is one row.
  Encoder encoder(stride, data.size());
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  const std::size_t size = data.size();
  const bool by_rows = stride >= 1 && stride <= k_max_distance;
  const std::size_t row_length = by_rows ? stride : std::max<std::size_t>(size, 1);
  for (std::size_t start = 0; start < size; start += row_length) {
    encoder.rows(bytes + start, std::min(row_length, size - start), 1);
  }
  return std::move(encoder).finish();
}

}  // namespace tesoro::row_deflate
