#pragma once
// QR symbols exactly as libqrencode makes them, with the mask chosen here instead of inside
// libqrencode. No I/O.
//
// Why: libqrencode 4.1.1 scores each of the 8 masks byte by byte (a masked copy of the symbol,
// then run lengths row by row and column by column). Under the QR benchmark that was about 29 %
// of the server's CPU, most of libqrencode's time. Here libqrencode encodes once, unmasked, and
// the 8 masks are scored on bit-packed rows and columns (64 modules a machine word) with exactly
// libqrencode's rules (ISO/IEC 18004 N1 to N4 as libqrencode reads them), so the chosen mask and
// every module are the same as QRcode_encodeString's: the unit tests compare them bit for bit
// (see docs/decisions.md, "QR payloads and images").
#include <qrencode.h>

namespace tesoro::qr_mask {

// The same symbol and contract as QRcode_encodeString(text, 0, level, QR_MODE_8, 1): the
// smallest version that holds the C string `text` (free it with QRcode_free), or nullptr with
// errno set (ERANGE: too long for any version; ENOMEM; EINVAL).
QRcode* encode_string(const char* text, QRecLevel level);

// What libqrencode's mask evaluation (Mask_evaluateSymbol) charges the symbol `modules` (width
// x width bytes, row by row, bit 0 = dark): N1 runs of 5 or more modules and N3 finder-like
// 1:1:3:1:1 patterns in every row and column, N2 2x2 blocks. N4 (the dark proportion) is not in
// it. Exposed for the tests, which check it against libqrencode's own.
int pattern_penalty(const unsigned char* modules, int width);

}  // namespace tesoro::qr_mask
