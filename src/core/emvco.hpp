#pragma once
// EMVCo merchant-presented QR payloads, Colombian profile (EASPBV "Campos QR Code EMVCo" v1.4):
// a builder and its parser twin. Pure text in, text out: no I/O, no clock.
//
// A payload is a run of data objects `IILLvalue` (2-digit id, 2-digit decimal length, value);
// templates nest objects the same way; 00 comes first and 63, the CRC, last. Every field is
// printable ASCII, so lengths in characters and in bytes agree (see docs/decisions.md, "QR
// payloads and images").
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace tesoro::emvco {

// The EMVCo limits build() and parse() hold to.
inline constexpr std::size_t k_payload_max_chars = 512;
inline constexpr std::size_t k_value_max_chars = 99;        // two decimal digits of length
inline constexpr std::size_t k_network_max_chars = 4;       // payment_id stays <= 36 characters
inline constexpr std::size_t k_merchant_name_max_chars = 25;
inline constexpr std::size_t k_merchant_city_max_chars = 15;
inline constexpr std::size_t k_postal_code_max_chars = 10;
inline constexpr std::size_t k_terminal_label_max_chars = 25;
inline constexpr std::size_t k_transaction_id_max_chars = 19;  // Bre-B
inline constexpr std::size_t k_amount_max_chars = 13;          // "9999999999.99"
inline constexpr std::int64_t k_amount_max_minor = 999'999'999'999;
// The transaction id of every static code.
inline constexpr std::string_view k_static_transaction_id = "000000";

// CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final xor).
std::uint16_t crc16(std::string_view text);

struct Payload {              // one Colombian EMVCo merchant-presented payload
  bool dynamic = false;       // tag 01: "12" dynamic, "11" static
  std::string network = "CRB";  // <NET> in the GUIs CO.COM.<NET>.LLA / .RED / .TRXID; tag 49 sub 01
  std::string key_type;       // identification|cellphone|email|alphanumeric|merchant_code -> tag 26 sub 01..05
  std::string key_value;
  std::string merchant_category_code = "0000";   // 52
  std::optional<std::int64_t> amount_minor;      // 54, COP minor units written with two decimals ("15000.00"); absent when the payer types it
  std::string merchant_name;  // 59, at most 25 characters (longer is an error)
  std::string merchant_city;  // 60, at most 15
  std::optional<std::string> postal_code;        // 61
  std::string terminal_label; // 62 sub 07 (mandatory in Colombia)
  std::string purpose = "00"; // 62 sub 08
  std::string transaction_id; // 90 sub 01, at most 19 characters ("000000" for static codes)

  bool operator==(const Payload&) const = default;
};

// The payload text with tags in ascending order and tag 63 CRC last (4 uppercase hex digits).
// A validation_error (path: the Payload field) when a field breaks a length or character rule:
// see docs/decisions.md for the list. 54 is written whenever amount_minor is set, static or not.
Result<std::string> build(const Payload& payload);

// Parser twin: the top-level data objects (and the sub-objects of templates 26-51, 62, 64,
// 80-99) of a payload; fails on a bad length, a missing/late 00 or 63, or a wrong CRC.
struct DataObject {
  std::string tag;
  std::string value;
  std::vector<DataObject> children;

  bool operator==(const DataObject&) const = default;
};
Result<std::vector<DataObject>> parse(std::string_view text);

// The object with `tag` among `objects`, or nullptr.
const DataObject* find(const std::vector<DataObject>& objects, std::string_view tag);

// Convenience: a parsed payload back into Payload (fails when it is not a Colombian one: 58 CO,
// 53 170, the three CO.COM.<NET> GUIs agreeing with 49 sub 01, one key in 26, 62 with 07 and 08,
// 90 with its id). Tags Payload does not carry (80 channel, 91 hash, ...) are ignored.
Result<Payload> read(std::string_view text);

// "CO.COM.<NET>.TRXID" + transaction_id: the API's payment_id (reference-notes inference).
std::string payment_id(const Payload& payload);

// COP minor units as tag 54 writes them: 1 -> "0.01", 1500000 -> "15000.00".
std::string format_amount(std::int64_t amount_minor);

// `text` made fit for a payload field: common Latin letters with accents lose them (á -> a,
// Ñ -> N), any other character outside printable ASCII is dropped, runs of spaces become one,
// and the result is cut to `max_chars`. For merchant names and cities taken from free text.
std::string ascii_field(std::string_view utf8, std::size_t max_chars);

}  // namespace tesoro::emvco
