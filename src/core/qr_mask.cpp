#include "core/qr_mask.hpp"

#include <array>
#include <bit>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>

// libqrencode 4.1.1 internals, declared here because only libqrencode's private headers
// (qrencode_inner.h, split.h) declare them; Debian's libqrencode4 exports both (nm -D).
// QRcode_encodeString is QRinput_new2 + Split_splitStringToQRinput (which also puts runs of digits
// or uppercase letters in the numeric or alphanumeric mode) + QRcode_encodeMask(input, -1), where
// -1 means "choose the mask"; a mask of 0 to 7 is applied as given, with its format information,
// and -2 applies none and leaves the format information light (libqrencode's debugging path, kept
// in every release: the unmasked frame, which we mask ourselves). QRinput_append(QR_MODE_8) alone
// would not split the text, so it could make a different (larger) symbol. A libqrencode that stops
// exporting them fails at link time, and a change of behaviour fails the unit tests that compare
// our symbols with QRcode_encodeString's.
extern "C" {
QRcode* QRcode_encodeMask(QRinput* input, int mask);
int Split_splitStringToQRinput(const char* string, QRinput* input, QRencodeMode hint,
                               int casesensitive);
}

namespace tesoro::qr_mask {

namespace {

constexpr int k_masks = 8;
constexpr int k_width_max = 177;  // version 40
constexpr int k_words_max = 3;    // 177 modules in 64-bit words

// libqrencode's demerit weights (N1 + run length - 5 for a run of 5 or more, N2 a 2x2 block, N3
// a finder-like pattern, N4 each 5 % of dark proportion away from 50 %).
constexpr int k_n1 = 3;
constexpr int k_n2 = 3;
constexpr int k_n3 = 40;
constexpr int k_n4 = 10;

// libqrencode's module bits (qrencode.h, QRcode): bit 0 dark; bit 7 set on every module that is
// not data or error correction (finder, timing, alignment, version and format information).
constexpr unsigned char k_dark = 0x01;
constexpr unsigned char k_function = 0x80;
// A format information module as libqrencode writes it: bit 2 (format) and bit 7.
constexpr unsigned char k_format_module = 0x84;

using Word = std::uint64_t;

// One row or column of the symbol: module i is bit i % 64 of word i / 64, 1 = dark. Bits past
// the symbol's width are 0 and shifts bring in 0 at both ends, so the symbol reads as if it were
// surrounded by light modules, which is how libqrencode treats the edges in N3.
template <int W>
struct Line {
  Word w[W];
};

template <int W>
Line<W> operator&(const Line<W>& a, const Line<W>& b) {
  Line<W> r;
  for (int i = 0; i < W; ++i) r.w[i] = a.w[i] & b.w[i];
  return r;
}
template <int W>
Line<W> operator|(const Line<W>& a, const Line<W>& b) {
  Line<W> r;
  for (int i = 0; i < W; ++i) r.w[i] = a.w[i] | b.w[i];
  return r;
}
template <int W>
Line<W> operator^(const Line<W>& a, const Line<W>& b) {
  Line<W> r;
  for (int i = 0; i < W; ++i) r.w[i] = a.w[i] ^ b.w[i];
  return r;
}
template <int W>
Line<W> operator~(const Line<W>& a) {
  Line<W> r;
  for (int i = 0; i < W; ++i) r.w[i] = ~a.w[i];
  return r;
}

// Bit i of the result is module i + k (0 < k < 64): what lies k modules ahead.
template <int W>
Line<W> ahead(const Line<W>& a, int k) {
  Line<W> r;
  for (int i = 0; i < W; ++i) {
    r.w[i] = a.w[i] >> k;
    if (i + 1 < W) r.w[i] |= a.w[i + 1] << (64 - k);
  }
  return r;
}

// Bit i of the result is module i - k (0 < k < 64): what lies k modules behind.
template <int W>
Line<W> behind(const Line<W>& a, int k) {
  Line<W> r;
  for (int i = 0; i < W; ++i) {
    r.w[i] = a.w[i] << k;
    if (i > 0) r.w[i] |= a.w[i - 1] >> (64 - k);
  }
  return r;
}

// The number of 1 bits. Baseline x86-64 has no POPCNT instruction, so std::popcount there is a
// call into libgcc (measured: 15 % of the whole symbol's time); this counts in registers.
inline int count_bits(Word v) {
#if defined(__x86_64__) && !defined(__POPCNT__)
  v = v - ((v >> 1) & 0x5555555555555555u);
  v = (v & 0x3333333333333333u) + ((v >> 2) & 0x3333333333333333u);
  v = (v + (v >> 4)) & 0x0F0F0F0F0F0F0F0Fu;
  return static_cast<int>((v * 0x0101010101010101u) >> 56);
#else
  return std::popcount(v);
#endif
}

template <int W>
int count(const Line<W>& a) {
  int n = 0;
  for (int i = 0; i < W; ++i) n += count_bits(a.w[i]);
  return n;
}

template <int W>
bool any(const Line<W>& a) {
  Word all = 0;
  for (int i = 0; i < W; ++i) all |= a.w[i];
  return all != 0;
}

template <int W>
bool dark_at(const Line<W>& line, int width, int i) {
  return i >= 0 && i < width && ((line.w[i / 64] >> (i % 64)) & 1) != 0;
}

template <int W>
void set_dark(Line<W>& line, int i) {
  line.w[i / 64] |= Word{1} << (i % 64);
}

// Whether mask `mask` flips the data module at column x, row y (ISO/IEC 18004 table 10, the
// expressions of libqrencode's mask.c: a module flips where the expression is 0).
constexpr bool flips(int mask, int x, int y) {
  switch (mask) {
    case 0: return (x + y) % 2 == 0;
    case 1: return y % 2 == 0;
    case 2: return x % 3 == 0;
    case 3: return (x + y) % 3 == 0;
    case 4: return (y / 2 + x / 3) % 2 == 0;
    case 5: return (x * y) % 2 + (x * y) % 3 == 0;
    case 6: return ((x * y) % 2 + (x * y) % 3) % 2 == 0;
    default: return ((x * y) % 3 + (x + y) % 2) % 2 == 0;
  }
}

// Every mask repeats across every 1, 2, 3 or 6 columns and down every 1, 2, 3, 4 or 6 rows, so
// 12 lines of each direction hold them all: rows[mask][y % 12] are the modules of row y that the
// mask flips, columns[mask][x % 12] those of column x. Built at compile time.
constexpr int k_mask_period = 12;
struct FlipTable {
  Word rows[k_masks][k_mask_period][k_words_max];
  Word columns[k_masks][k_mask_period][k_words_max];
};

constexpr FlipTable make_flip_table() {
  FlipTable table{};
  for (int mask = 0; mask < k_masks; ++mask) {
    for (int phase = 0; phase < k_mask_period; ++phase) {
      for (int i = 0; i < k_words_max * 64; ++i) {
        if (flips(mask, i, phase)) table.rows[mask][phase][i / 64] |= Word{1} << (i % 64);
        if (flips(mask, phase, i)) table.columns[mask][phase][i / 64] |= Word{1} << (i % 64);
      }
    }
  }
  return table;
}

constexpr FlipTable k_flip_table = make_flip_table();

template <int W>
Line<W> row_flips(int mask, int y) {
  Line<W> r;
  for (int i = 0; i < W; ++i) r.w[i] = k_flip_table.rows[mask][y % k_mask_period][i];
  return r;
}
template <int W>
Line<W> column_flips(int mask, int x) {
  Line<W> r;
  for (int i = 0; i < W; ++i) r.w[i] = k_flip_table.columns[mask][x % k_mask_period][i];
  return r;
}

// The 15 bits of format information for (level, mask): 2 level bits (L 01, M 00, Q 11, H 10)
// and the 3 mask bits, then a BCH(15, 5) code (generator 0x537), XORed with 0x5412 (ISO/IEC
// 18004 7.9).
int format_information(QRecLevel level, int mask) {
  static constexpr int k_level_bits[] = {1, 0, 3, 2};  // QR_ECLEVEL_L, M, Q, H
  const int data = k_level_bits[level] << 3 | mask;
  int remainder = data << 10;
  for (int bit = 14; bit >= 10; --bit) {
    if (remainder & (1 << bit)) remainder ^= 0x537 << (bit - 10);
  }
  return ((data << 10) | remainder) ^ 0x5412;
}

// Where libqrencode writes format bit `bit` (0 the least significant): twice, once around the
// top-left finder and once split between the other two (its Mask_writeFormatInformation).
struct FormatModule {
  int x;
  int y;
  int bit;
};
using FormatModules = std::array<FormatModule, 30>;

FormatModules format_modules(int width) {
  FormatModules modules{};
  int n = 0;
  for (int i = 0; i < 8; ++i) {
    modules[n++] = {width - 1 - i, 8, i};
    modules[n++] = {8, i < 6 ? i : i + 1, i};
  }
  for (int i = 0; i < 7; ++i) {
    modules[n++] = {8, width - 7 + i, 8 + i};
    modules[n++] = {i == 0 ? 7 : 6 - i, 8, 8 + i};
  }
  return modules;
}

// N1 and N3 of one row or column; `inner` has bits 0 .. width - 2 set.
template <int W>
int line_penalty(const Line<W>& line, const Line<W>& inner, int width) {
  // N1: a run of n >= 5 modules costs N1 + (n - 5) = (n - 4) + (N1 - 1): one for each of its
  // n - 4 windows of 5 equal modules, and N1 - 1 more at the window that starts the run.
  const Line<W> same = ~(line ^ ahead(line, 1)) & inner;  // module i is module i + 1's colour
  const Line<W> five = same & ahead(same, 1) & ahead(same, 2) & ahead(same, 3);
  const Line<W> run_start = ~behind(same, 1);
  int penalty = count(five) + (k_n1 - 1) * count(five & run_start);

  // N3 at one module per unit: dark, light, 3 dark, light, dark (each run exactly that long), with
  // at least 4 light modules (or the edge) on one side. The edges count as light modules.
  const Line<W> core = line & ~ahead(line, 1) & ahead(line, 2) & ahead(line, 3) &
                       ahead(line, 4) & ~ahead(line, 5) & ahead(line, 6);
  if (any(core)) {
    const Line<W> before1 = behind(line, 1);
    const Line<W> before4 = before1 | behind(line, 2) | behind(line, 3) | behind(line, 4);
    const Line<W> after1 = ahead(line, 7);
    const Line<W> after4 = after1 | ahead(line, 8) | ahead(line, 9) | ahead(line, 10);
    penalty += k_n3 * count(core & ((~before4 & ~after1) | (~before1 & ~after4)));
  }

  // N3 at f >= 2 modules per unit: the middle run is a dark run of exactly 3f >= 6 modules.
  // Rare in data, so each start of a dark run of 6 or more is checked one module at a time.
  Line<W> long_runs = line & ~behind(line, 1) & ahead(line, 1) & ahead(line, 2) &
                      ahead(line, 3) & ahead(line, 4) & ahead(line, 5);
  for (int i = 0; i < W; ++i) {
    while (long_runs.w[i] != 0) {
      const int start = i * 64 + std::countr_zero(long_runs.w[i]);
      long_runs.w[i] &= long_runs.w[i] - 1;
      int length = 6;
      while (dark_at(line, width, start + length)) ++length;
      if (length % 3 != 0) continue;
      const int f = length / 3;
      const int from = start - 2 * f;  // the pattern is modules [from, to)
      const int to = start + 5 * f;
      auto all = [&](int first, int last, bool dark) {
        for (int m = first; m < last; ++m) {
          if (dark_at(line, width, m) != dark) return false;
        }
        return true;
      };
      if (from < 0 || to > width) continue;
      if (dark_at(line, width, from - 1) || !all(from, from + f, true) ||
          !all(from + f, start, false) || !all(start + 3 * f, start + 4 * f, false) ||
          !all(start + 4 * f, to, true) || dark_at(line, width, to)) {
        continue;
      }
      if (all(from - 4 * f, from, false) || all(to, to + 4 * f, false)) penalty += k_n3;
    }
  }
  return penalty;
}

// N2 between two adjacent rows: each 2x2 block of one colour (blocks may overlap).
template <int W>
int block_penalty(const Line<W>& top, const Line<W>& bottom, const Line<W>& inner) {
  const Line<W> same_below = ~(top ^ bottom);
  const Line<W> blocks =
      same_below & ahead(same_below, 1) & ~(top ^ ahead(top, 1)) & inner;
  return k_n2 * count(blocks);
}

// Modules 0 .. n - 1.
template <int W>
Line<W> first_modules(int n) {
  Line<W> line{};
  for (int i = 0; i < n; ++i) set_dark(line, i);
  return line;
}

// `penalty` plus N1 + N2 + N3 of a symbol given as its rows and its columns; stops adding (and
// returns a sum >= `enough`) once the sum reaches `enough`: every term is >= 0, so such a mask
// cannot be the strictly lowest any more.
template <int W>
int add_pattern_penalty(int penalty, const Line<W>* rows, const Line<W>* columns, int width,
                        const Line<W>& inner, int enough) {
  for (int y = 0; y < width; ++y) {
    penalty += line_penalty(rows[y], inner, width);
    if (y + 1 < width) penalty += block_penalty(rows[y], rows[y + 1], inner);
    if (penalty >= enough) return penalty;
  }
  for (int x = 0; x < width && penalty < enough; ++x) {
    penalty += line_penalty(columns[x], inner, width);
  }
  return penalty;
}

// Reading and writing 8 module bytes as one word assumes the first byte is the least
// significant one.
static_assert(std::endian::native == std::endian::little);

// Bit 0 of each of the 8 bytes of `bytes`, as bits 0 to 7: the multiplication moves byte k's bit
// to bit 56 + k, and no two partial products land on the same bit (so nothing carries there).
inline Word gather_bit0(Word bytes) {
  return ((bytes & 0x0101010101010101u) * 0x0102040810204080u) >> 56;
}

// k_spread[b] has bit k of b in bit 0 of its byte k: 8 modules' worth of flips for 8 bytes.
constexpr std::array<Word, 256> make_spread() {
  std::array<Word, 256> spread{};
  for (int b = 0; b < 256; ++b) {
    for (int k = 0; k < 8; ++k) spread[b] |= Word((b >> k) & 1) << (8 * k);
  }
  return spread;
}
constexpr std::array<Word, 256> k_spread = make_spread();

// The dark modules and the function modules of one row of libqrencode's symbol, 8 at a time.
template <int W>
void pack_row(const unsigned char* row, int width, Line<W>& dark, Line<W>& function) {
  dark = {};
  function = {};
  int x = 0;
  for (; x + 8 <= width; x += 8) {  // x % 64 <= 56: the 8 bits never straddle two words
    Word bytes;
    std::memcpy(&bytes, row + x, sizeof bytes);
    dark.w[x / 64] |= gather_bit0(bytes) << (x % 64);
    function.w[x / 64] |= gather_bit0(bytes >> 7) << (x % 64);
  }
  for (; x < width; ++x) {
    dark.w[x / 64] |= Word{(row[x] & k_dark) != 0} << (x % 64);
    function.w[x / 64] |= Word{(row[x] & k_function) != 0} << (x % 64);
  }
}

// Transposes a 64 x 64 bit matrix in place (bit c of a[r] and bit r of a[c] trade places) by
// swapping the off-diagonal blocks of 32, then 16, ..., then 1 bits (Hacker's Delight, 7-3).
void transpose64(Word a[64]) {
  Word low = 0x00000000FFFFFFFFu;  // the low `half` bits of every 2 * half bits
  for (int half = 32; half != 0; half >>= 1, low ^= low << half) {
    for (int k = 0; k < 64; k = ((k | half) + 1) & ~half) {
      const Word t = ((a[k] >> half) ^ a[k | half]) & low;
      a[k] ^= t << half;
      a[k | half] ^= t;
    }
  }
}

// columns[x] bit y = rows[y] bit x, for the width x width modules, 64 x 64 bits at a time.
template <int W>
void transpose(const Line<W>* rows, Line<W>* columns, int width) {
  for (int block_row = 0; block_row < W; ++block_row) {
    for (int block_column = 0; block_column < W; ++block_column) {
      Word block[64];
      for (int r = 0; r < 64; ++r) {
        const int y = 64 * block_row + r;
        block[r] = y < width ? rows[y].w[block_column] : 0;
      }
      transpose64(block);
      for (int c = 0; c < 64 && 64 * block_column + c < width; ++c) {
        columns[64 * block_column + c].w[block_row] = block[c];
      }
    }
  }
}

// The symbol packed by rows and by columns: `dark_*` without mask and without format
// information (those modules light), `data_*` the modules a mask flips.
template <int W>
struct Packed {
  Line<W> dark_rows[k_width_max];
  Line<W> dark_columns[k_width_max];
  Line<W> data_rows[k_width_max];
  Line<W> data_columns[k_width_max];
};

template <int W>
void pack_symbol(const QRcode& symbol, const FormatModules& format, Packed<W>& packed) {
  const int width = symbol.width;
  const Line<W> all = first_modules<W>(width);
  for (int y = 0; y < width; ++y) {
    Line<W> function;
    pack_row(symbol.data + y * width, width, packed.dark_rows[y], function);
    packed.data_rows[y] = all & ~function;
  }
  // Format information modules are function modules, so not data: make them light.
  for (const FormatModule& module : format) {
    packed.dark_rows[module.y].w[module.x / 64] &= ~(Word{1} << (module.x % 64));
  }
  transpose(packed.dark_rows, packed.dark_columns, width);
  transpose(packed.data_rows, packed.data_columns, width);
}

// libqrencode's choice among the 8 masks: the lowest N1 + N2 + N3 + N4, the first mask on a tie
// (its Mask_mask).
template <int W>
int best_mask(const Packed<W>& packed, int width, QRecLevel level, const FormatModules& format) {
  const Line<W> inner = first_modules<W>(width - 1);
  const int modules = width * width;
  int best = 0;
  int best_penalty = INT_MAX;
  Line<W> rows[k_width_max];
  Line<W> columns[k_width_max];
  for (int mask = 0; mask < k_masks; ++mask) {
    for (int i = 0; i < width; ++i) {
      rows[i] = packed.dark_rows[i] ^ (row_flips<W>(mask, i) & packed.data_rows[i]);
      columns[i] = packed.dark_columns[i] ^ (column_flips<W>(mask, i) & packed.data_columns[i]);
    }
    const int bits = format_information(level, mask);
    for (const FormatModule& module : format) {
      if ((bits >> module.bit) & 1) {
        set_dark(rows[module.y], module.x);
        set_dark(columns[module.x], module.y);
      }
    }
    int dark = 0;
    for (int y = 0; y < width; ++y) dark += count(rows[y]);
    // N4 as libqrencode rounds it: the dark percentage rounded half up, then every full 5 %
    // away from 50 % costs 10.
    const int percent = (200 * dark + modules) / modules / 2;
    const int penalty = add_pattern_penalty(std::abs(percent - 50) / 5 * k_n4, rows, columns,
                                            width, inner, best_penalty);
    if (penalty < best_penalty) {
      best_penalty = penalty;
      best = mask;
    }
  }
  return best;
}

// Turns `symbol`, which libqrencode left unmasked, into the symbol with the best mask: data
// modules flip where the best mask flips them, and the format
// information is rewritten as libqrencode writes it (0x85 dark, 0x84 light).
template <int W>
void apply_best_mask(QRcode& symbol, QRecLevel level, const FormatModules& format) {
  const int width = symbol.width;
  Packed<W> packed{};  // zeroed for GCC's maybe-uninitialized only: every line read is written
  pack_symbol(symbol, format, packed);
  const int mask = best_mask(packed, width, level, format);
  for (int y = 0; y < width; ++y) {
    const Line<W> change = row_flips<W>(mask, y) & packed.data_rows[y];
    unsigned char* row = symbol.data + y * width;
    int x = 0;
    for (; x + 8 <= width; x += 8) {
      Word bytes;
      std::memcpy(&bytes, row + x, sizeof bytes);
      bytes ^= k_spread[(change.w[x / 64] >> (x % 64)) & 0xFF];
      std::memcpy(row + x, &bytes, sizeof bytes);
    }
    for (; x < width; ++x) {
      row[x] ^= static_cast<unsigned char>((change.w[x / 64] >> (x % 64)) & k_dark);
    }
  }
  const int bits = format_information(level, mask);
  for (const FormatModule& module : format) {
    symbol.data[module.y * width + module.x] =
        static_cast<unsigned char>(k_format_module | ((bits >> module.bit) & 1));
  }
}

template <int W>
int pattern_penalty_packed(const unsigned char* modules, int width) {
  Line<W> rows[k_width_max]{};
  Line<W> columns[k_width_max]{};
  for (int y = 0; y < width; ++y) {
    Line<W> function;
    pack_row(modules + y * width, width, rows[y], function);
  }
  transpose(rows, columns, width);
  return add_pattern_penalty(0, rows, columns, width, first_modules<W>(width - 1), INT_MAX);
}

// Keeps errno across a call that may change it on success (free() may).
template <typename Fn>
void keeping_errno(Fn&& fn) {
  const int saved = errno;
  fn();
  errno = saved;
}

}  // namespace

QRcode* encode_string(const char* text, QRecLevel level) {
  QRinput* input = QRinput_new2(0, level);
  if (!input) return nullptr;
  if (Split_splitStringToQRinput(text, input, QR_MODE_8, 1) < 0) {
    keeping_errno([&] { QRinput_free(input); });
    return nullptr;
  }
  QRcode* symbol = QRcode_encodeMask(input, -2);  // unmasked: masked below
  keeping_errno([&] { QRinput_free(input); });
  if (!symbol) return nullptr;

  const FormatModules format = format_modules(symbol->width);
  switch ((symbol->width + 63) / 64) {
    case 1: apply_best_mask<1>(*symbol, level, format); break;   // versions 1 to 11
    case 2: apply_best_mask<2>(*symbol, level, format); break;   // 12 to 27
    default: apply_best_mask<3>(*symbol, level, format); break;  // 28 to 40
  }
  return symbol;
}

int pattern_penalty(const unsigned char* modules, int width) {
  if (width <= 0 || width > k_width_max) return 0;
  const int words = (width + 63) / 64;
  if (words == 1) return pattern_penalty_packed<1>(modules, width);
  if (words == 2) return pattern_penalty_packed<2>(modules, width);
  return pattern_penalty_packed<3>(modules, width);
}

}  // namespace tesoro::qr_mask
