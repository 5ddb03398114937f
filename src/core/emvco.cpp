#include "core/emvco.hpp"

#include <array>
#include <cstdio>
#include <set>

namespace tesoro::emvco {

namespace {

// Tag 63 with its length: the CRC covers the payload up to and including these four characters.
constexpr std::string_view k_crc_header = "6304";
constexpr std::string_view k_country = "CO";
constexpr std::string_view k_currency_cop = "170";

struct KeyTag {
  std::string_view key_type;
  std::string_view sub_tag;
};
constexpr std::array<KeyTag, 5> k_key_tags{{
    {"identification", "01"},
    {"cellphone", "02"},
    {"email", "03"},
    {"alphanumeric", "04"},
    {"merchant_code", "05"},
}};

constexpr std::array<std::uint16_t, 256> make_crc_table() {
  std::array<std::uint16_t, 256> table{};
  for (unsigned byte = 0; byte < 256; ++byte) {
    std::uint16_t crc = static_cast<std::uint16_t>(byte << 8);
    for (int bit = 0; bit < 8; ++bit) {
      crc = static_cast<std::uint16_t>((crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1);
    }
    table[byte] = crc;
  }
  return table;
}
constexpr std::array<std::uint16_t, 256> k_crc_table = make_crc_table();

bool is_printable_ascii(char c) { return c >= 0x20 && c <= 0x7E; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_upper_alnum(char c) { return is_digit(c) || (c >= 'A' && c <= 'Z'); }
bool is_alnum(char c) { return is_upper_alnum(c) || (c >= 'a' && c <= 'z'); }

template <class Pred>
bool all_of(std::string_view text, Pred pred) {
  for (char c : text) {
    if (!pred(c)) return false;
  }
  return true;
}

std::string two_digits(std::size_t n) {
  return std::string{static_cast<char>('0' + n / 10), static_cast<char>('0' + n % 10)};
}

// `tag`, its two-digit length and `value`; the caller has checked value.size() <= 99.
void append_object(std::string& out, std::string_view tag, std::string_view value) {
  out.append(tag);
  out.append(two_digits(value.size()));
  out.append(value);
}

std::string gui(std::string_view network, std::string_view kind) {
  std::string out = "CO.COM.";
  out.append(network);
  out.push_back('.');
  out.append(kind);
  return out;
}

std::optional<std::string_view> key_sub_tag(std::string_view key_type) {
  for (const KeyTag& entry : k_key_tags) {
    if (entry.key_type == key_type) return entry.sub_tag;
  }
  return std::nullopt;
}

Error field_error(std::string_view field, std::string message) {
  return errors::validation(std::string(field) + " " + message, std::string(field));
}

// A required printable-ASCII text of 1..max characters.
std::optional<Error> check_text(std::string_view field, std::string_view value, std::size_t max,
                                std::string_view tag) {
  if (value.empty()) return field_error(field, "is required (EMVCo tag " + std::string(tag) + ")");
  if (value.size() > max) {
    return field_error(field, "is at most " + std::to_string(max) + " characters (EMVCo tag " +
                                  std::string(tag) + ")");
  }
  if (!all_of(value, is_printable_ascii)) {
    return field_error(
        field, "may hold only printable ASCII characters (EMVCo tag " + std::string(tag) + ")");
  }
  return std::nullopt;
}

// The key's room in template 26: 99 less the GUI object and the key's own tag and length.
std::size_t key_value_max(const Payload& payload) {
  return k_value_max_chars - 4 - gui(payload.network, "LLA").size() - 4;
}

// Every rule build() holds to; read() applies them too, so what it returns builds.
std::optional<Error> validate(const Payload& payload) {
  if (payload.network.empty() || payload.network.size() > k_network_max_chars ||
      !all_of(payload.network, is_upper_alnum)) {
    return field_error("network",
                       "is 1 to 4 uppercase letters or digits (the <NET> of CO.COM.<NET>)");
  }
  if (!key_sub_tag(payload.key_type)) {
    return field_error("key_type",
                       "is one of identification, cellphone, email, alphanumeric, merchant_code");
  }
  if (auto problem = check_text("key_value", payload.key_value, key_value_max(payload), "26")) {
    return problem;
  }
  if (payload.merchant_category_code.size() != 4 ||
      !all_of(payload.merchant_category_code, is_digit)) {
    return field_error("merchant_category_code", "is 4 digits (EMVCo tag 52)");
  }
  if (payload.amount_minor &&
      (*payload.amount_minor < 1 || *payload.amount_minor > k_amount_max_minor)) {
    return field_error("amount_minor", "is 1 to " + std::to_string(k_amount_max_minor) +
                                           " minor units: tag 54 holds at most 13 characters");
  }
  if (auto problem =
          check_text("merchant_name", payload.merchant_name, k_merchant_name_max_chars, "59")) {
    return problem;
  }
  if (auto problem =
          check_text("merchant_city", payload.merchant_city, k_merchant_city_max_chars, "60")) {
    return problem;
  }
  if (payload.postal_code) {
    if (auto problem =
            check_text("postal_code", *payload.postal_code, k_postal_code_max_chars, "61")) {
      return problem;
    }
  }
  if (auto problem = check_text("terminal_label", payload.terminal_label,
                                k_terminal_label_max_chars, "62 07")) {
    return problem;
  }
  if (payload.purpose.size() != 2 || !all_of(payload.purpose, is_digit)) {
    return field_error("purpose", "is 2 digits, e.g. 00 purchase (EMVCo tag 62 08)");
  }
  if (payload.transaction_id.empty() ||
      payload.transaction_id.size() > k_transaction_id_max_chars ||
      !all_of(payload.transaction_id, is_alnum)) {
    return field_error("transaction_id", "is 1 to 19 letters or digits (EMVCo tag 90 01)");
  }
  return std::nullopt;
}

Error parse_error(std::string message) {
  return errors::validation("emvco payload: " + std::move(message), std::nullopt);
}

bool is_template(int tag) {
  return (tag >= 26 && tag <= 51) || tag == 62 || tag == 64 || (tag >= 80 && tag <= 99);
}

// The objects of `text` (a whole payload or one template's value). `base` is the offset of
// `text` in the payload, for messages.
Result<std::vector<DataObject>> parse_objects(std::string_view text, std::size_t base,
                                              bool nested) {
  std::vector<DataObject> objects;
  std::size_t at = 0;
  while (at < text.size()) {
    std::string where = "at offset " + std::to_string(base + at);
    if (text.size() - at < 4) return parse_error("a data object is cut short " + where);
    std::string_view tag = text.substr(at, 2);
    std::string_view length_text = text.substr(at + 2, 2);
    if (!all_of(tag, is_digit)) {
      return parse_error("tag '" + std::string(tag) + "' " + where + " is not 2 digits");
    }
    if (!all_of(length_text, is_digit)) {
      return parse_error("tag " + std::string(tag) + " " + where + " has length '" +
                         std::string(length_text) + "', not 2 digits");
    }
    std::size_t length =
        static_cast<std::size_t>((length_text[0] - '0') * 10 + (length_text[1] - '0'));
    if (length == 0) return parse_error("tag " + std::string(tag) + " " + where + " is empty");
    if (length > text.size() - at - 4) {
      return parse_error("tag " + std::string(tag) + " " + where + " has length " +
                         std::to_string(length) + ", past the end of " +
                         (nested ? "its template" : "the payload"));
    }
    DataObject object{std::string(tag), std::string(text.substr(at + 4, length)), {}};
    int tag_number = (tag[0] - '0') * 10 + (tag[1] - '0');
    if (!nested && is_template(tag_number)) {
      auto children = parse_objects(object.value, base + at + 4, true);
      if (!children) return std::move(children).error();
      object.children = std::move(*children);
    }
    objects.push_back(std::move(object));
    at += 4 + length;
  }
  return objects;
}

int hex_digit(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

std::optional<std::uint16_t> parse_hex16(std::string_view text) {
  if (text.size() != 4) return std::nullopt;
  std::uint16_t value = 0;
  for (char c : text) {
    int digit = hex_digit(c);
    if (digit < 0) return std::nullopt;
    value = static_cast<std::uint16_t>(value << 4 | digit);
  }
  return value;
}

// "15000.00", "15000.5" or "15000" -> minor units of a 2-decimal currency.
std::optional<std::int64_t> parse_amount(std::string_view text) {
  if (text.empty() || text.size() > k_amount_max_chars) return std::nullopt;
  std::size_t dot = text.find('.');
  std::string_view whole = text.substr(0, dot);
  std::string_view cents =
      dot == std::string_view::npos ? std::string_view{} : text.substr(dot + 1);
  if (whole.empty() || !all_of(whole, is_digit) || !all_of(cents, is_digit) || cents.size() > 2) {
    return std::nullopt;
  }
  std::int64_t value = 0;
  for (char c : whole) value = value * 10 + (c - '0');  // <= 13 digits: no overflow
  for (std::size_t i = 0; i < 2; ++i) value = value * 10 + (i < cents.size() ? cents[i] - '0' : 0);
  return value;
}

// The <NET> of "CO.COM.<NET>.<kind>", or nullopt.
std::optional<std::string> network_of(std::string_view guid, std::string_view kind) {
  constexpr std::string_view prefix = "CO.COM.";
  std::string suffix = "." + std::string(kind);
  if (guid.size() <= prefix.size() + suffix.size() || !guid.starts_with(prefix) ||
      !guid.ends_with(suffix)) {
    return std::nullopt;
  }
  return std::string(guid.substr(prefix.size(), guid.size() - prefix.size() - suffix.size()));
}

Error not_colombian(std::string message) {
  return errors::validation("not a Colombian EMVCo payload: " + std::move(message), std::nullopt);
}

// Sub-object `sub` of template `tag`, required.
Result<std::string> required_child(const std::vector<DataObject>& objects, std::string_view tag,
                                   std::string_view sub) {
  const DataObject* parent = find(objects, tag);
  if (!parent) return not_colombian("tag " + std::string(tag) + " is missing");
  const DataObject* child = find(parent->children, sub);
  if (!child) {
    return not_colombian("tag " + std::string(tag) + " has no sub-tag " + std::string(sub));
  }
  return child->value;
}

// The ASCII stand-in of a code point for ascii_field, or '\0' to drop it.
char ascii_of(unsigned code) {
  // U+00C0..U+00FF without their marks; '\0' drops the character (×, ÷, Þ, þ).
  static constexpr char k_latin1_letters[] =
      "AAAAAAACEEEEIIII"
      "DNOOOOO\0OUUUUY\0s"
      "aaaaaaaceeeeiiii"
      "dnooooo\0ouuuuy\0y";
  if (code < 0x80) {
    if (is_printable_ascii(static_cast<char>(code))) return static_cast<char>(code);
    return code == '\t' || code == '\n' || code == '\r' ? ' ' : '\0';
  }
  if (code == 0xA0) return ' ';  // no-break space
  if (code >= 0xC0 && code <= 0xFF) return k_latin1_letters[code - 0xC0];
  return '\0';
}

}  // namespace

std::uint16_t crc16(std::string_view text) {
  std::uint16_t crc = 0xFFFF;
  for (char c : text) {
    crc = static_cast<std::uint16_t>(
        (crc << 8) ^ k_crc_table[((crc >> 8) ^ static_cast<unsigned char>(c)) & 0xFF]);
  }
  return crc;
}

std::string format_amount(std::int64_t amount_minor) {
  std::string digits = std::to_string(amount_minor);
  if (digits.size() < 3) digits.insert(0, 3 - digits.size(), '0');
  digits.insert(digits.size() - 2, 1, '.');
  return digits;
}

Result<std::string> build(const Payload& payload) {
  if (auto problem = validate(payload)) return std::move(*problem);

  std::string key_template;
  append_object(key_template, "00", gui(payload.network, "LLA"));
  append_object(key_template, *key_sub_tag(payload.key_type), payload.key_value);
  std::string network_template;
  append_object(network_template, "00", gui(payload.network, "RED"));
  append_object(network_template, "01", payload.network);
  std::string additional_data;
  append_object(additional_data, "07", payload.terminal_label);
  append_object(additional_data, "08", payload.purpose);
  std::string transaction_template;
  append_object(transaction_template, "00", gui(payload.network, "TRXID"));
  append_object(transaction_template, "01", payload.transaction_id);
  // validate() bounds every part: each template fits two length digits (26 by key_value_max,
  // the others are at most 44 characters) and the whole payload is at most 341 characters, under
  // EMVCo's 512.

  std::string out;
  out.reserve(256);
  append_object(out, "00", "01");
  append_object(out, "01", payload.dynamic ? "12" : "11");
  append_object(out, "26", key_template);
  append_object(out, "49", network_template);
  append_object(out, "52", payload.merchant_category_code);
  append_object(out, "53", k_currency_cop);
  if (payload.amount_minor) append_object(out, "54", format_amount(*payload.amount_minor));
  append_object(out, "58", k_country);
  append_object(out, "59", payload.merchant_name);
  append_object(out, "60", payload.merchant_city);
  if (payload.postal_code) append_object(out, "61", *payload.postal_code);
  append_object(out, "62", additional_data);
  append_object(out, "90", transaction_template);
  out.append(k_crc_header);
  char crc_text[5];
  std::snprintf(crc_text, sizeof crc_text, "%04X", crc16(out));
  out.append(crc_text, 4);
  return out;
}

Result<std::vector<DataObject>> parse(std::string_view text) {
  if (text.size() > k_payload_max_chars) {
    return parse_error("longer than " + std::to_string(k_payload_max_chars) + " characters");
  }
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!is_printable_ascii(text[i])) {
      return parse_error("a character that is not printable ASCII at offset " + std::to_string(i));
    }
  }
  auto objects = parse_objects(text, 0, false);
  if (!objects) return objects;
  if (objects->empty() || objects->front().tag != "00") {
    return parse_error("tag 00 (payload format indicator) does not come first");
  }
  if (objects->front().value != "01") {
    return parse_error("tag 00 is '" + objects->front().value + "', not 01");
  }
  if (objects->back().tag != "63") return parse_error("tag 63 (CRC) does not come last");
  std::set<std::string_view> seen;
  for (const DataObject& object : *objects) {
    if (!seen.insert(object.tag).second) {
      return parse_error("tag " + object.tag + " appears more than once");
    }
  }
  const std::string& crc_text = objects->back().value;
  auto written = parse_hex16(crc_text);
  if (!written) return parse_error("tag 63 is '" + crc_text + "', not 4 hexadecimal digits");
  std::uint16_t computed = crc16(text.substr(0, text.size() - 4));
  if (*written != computed) {
    char expected[5];
    std::snprintf(expected, sizeof expected, "%04X", computed);
    return parse_error("CRC " + crc_text + " does not match the payload (" + expected + ")");
  }
  return objects;
}

const DataObject* find(const std::vector<DataObject>& objects, std::string_view tag) {
  for (const DataObject& object : objects) {
    if (object.tag == tag) return &object;
  }
  return nullptr;
}

Result<Payload> read(std::string_view text) {
  auto parsed = parse(text);
  if (!parsed) return std::move(parsed).error();
  const std::vector<DataObject>& objects = *parsed;
  Payload payload;

  const DataObject* initiation = find(objects, "01");
  if (!initiation || (initiation->value != "11" && initiation->value != "12")) {
    return not_colombian("tag 01 is not 11 (static) or 12 (dynamic)");
  }
  payload.dynamic = initiation->value == "12";

  // The network, named by all three GUIs and by 49 01, the same everywhere.
  auto key_gui = required_child(objects, "26", "00");
  if (!key_gui) return std::move(key_gui).error();
  auto network = network_of(*key_gui, "LLA");
  if (!network) return not_colombian("tag 26 GUI '" + *key_gui + "' is not CO.COM.<NET>.LLA");
  payload.network = *network;
  for (auto [tag, kind] : {std::pair{"49", "RED"}, std::pair{"90", "TRXID"}}) {
    auto value = required_child(objects, tag, "00");
    if (!value) return std::move(value).error();
    if (*value != gui(payload.network, kind)) {
      return not_colombian("tag " + std::string(tag) + " GUI '" + *value + "' is not " +
                           gui(payload.network, kind));
    }
  }
  auto network_code = required_child(objects, "49", "01");
  if (!network_code) return std::move(network_code).error();
  if (*network_code != payload.network) {
    return not_colombian("tag 49 01 '" + *network_code + "' differs from the GUIs' " +
                         payload.network);
  }

  const DataObject* key_template = find(objects, "26");
  for (const KeyTag& entry : k_key_tags) {
    const DataObject* key = find(key_template->children, entry.sub_tag);
    if (!key) continue;
    if (!payload.key_type.empty()) return not_colombian("tag 26 holds more than one key");
    payload.key_type = entry.key_type;
    payload.key_value = key->value;
  }
  if (payload.key_type.empty()) return not_colombian("tag 26 holds no key (sub-tags 01 to 05)");

  const DataObject* category = find(objects, "52");
  if (!category) return not_colombian("tag 52 is missing");
  payload.merchant_category_code = category->value;
  const DataObject* currency = find(objects, "53");
  if (!currency || currency->value != k_currency_cop) {
    return not_colombian("tag 53 is not 170 (COP)");
  }
  if (const DataObject* amount = find(objects, "54")) {
    payload.amount_minor = parse_amount(amount->value);
    if (!payload.amount_minor) {
      return not_colombian("tag 54 '" + amount->value + "' is not an amount");
    }
  }
  const DataObject* country = find(objects, "58");
  if (!country || country->value != k_country) return not_colombian("tag 58 is not CO");
  const DataObject* name = find(objects, "59");
  const DataObject* city = find(objects, "60");
  if (!name || !city) return not_colombian("tag 59 or 60 is missing");
  payload.merchant_name = name->value;
  payload.merchant_city = city->value;
  if (const DataObject* postal = find(objects, "61")) payload.postal_code = postal->value;

  auto terminal = required_child(objects, "62", "07");
  if (!terminal) return std::move(terminal).error();
  payload.terminal_label = *terminal;
  auto purpose = required_child(objects, "62", "08");
  if (!purpose) return std::move(purpose).error();
  payload.purpose = *purpose;
  auto transaction = required_child(objects, "90", "01");
  if (!transaction) return std::move(transaction).error();
  payload.transaction_id = *transaction;

  if (auto problem = validate(payload)) return std::move(*problem);
  return payload;
}

std::string payment_id(const Payload& payload) {
  // gui(network, "TRXID") and the transaction id, in one allocation (a batch makes a thousand).
  constexpr std::string_view k_head = "CO.COM.", k_kind = ".TRXID";
  std::string out;
  out.reserve(k_head.size() + payload.network.size() + k_kind.size() +
              payload.transaction_id.size());
  out.append(k_head).append(payload.network).append(k_kind).append(payload.transaction_id);
  return out;
}

std::string ascii_field(std::string_view utf8, std::size_t max_chars) {
  std::string out;
  out.reserve(utf8.size());
  for (std::size_t i = 0; i < utf8.size();) {
    unsigned char lead = static_cast<unsigned char>(utf8[i]);
    // The code point (only ASCII and 2-byte sequences can map to a character) and its length;
    // a byte that starts no valid sequence counts as one unmappable character.
    unsigned code = 0xFFFF;
    std::size_t length = 1;
    if (lead < 0x80) {
      code = lead;
    } else if (lead >= 0xC0 && i + 1 < utf8.size() &&
               (static_cast<unsigned char>(utf8[i + 1]) & 0xC0) == 0x80) {
      length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
      if (length == 2)
        code = (lead & 0x1Fu) << 6 | (static_cast<unsigned char>(utf8[i + 1]) & 0x3Fu);
    }
    i += length;
    char c = ascii_of(code);
    if (c == '\0') continue;
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;  // no leading or double spaces
    out.push_back(c);
  }
  if (out.size() > max_chars) out.resize(max_chars);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace tesoro::emvco
