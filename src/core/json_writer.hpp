#pragma once
// JSON text written directly, for the hot paths (a card authorization) where building a
// Boost.JSON value only to serialise it cost more than the SQL. The output is byte-identical to
// boost::json::serialize of the same object (keys in the order written, strings escaped as it
// escapes them: \" \\ \b \f \n \r \t, other control bytes as \u00xx, every other byte as is);
// a unit test compares the two. No validation: the caller writes a well-formed sequence.
#include <algorithm>
#include <charconv>
#include <cstring>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace tesoro::json_text {

class Writer {
 public:
  explicit Writer(std::size_t capacity = 256) { out_.reserve(capacity); }

  Writer& begin_object() {
    separate();
    out_ += '{';
    need_comma_ = false;
    return *this;
  }
  Writer& end_object() {
    out_ += '}';
    need_comma_ = true;
    return *this;
  }
  Writer& begin_array() {
    separate();
    out_ += '[';
    need_comma_ = false;
    return *this;
  }
  Writer& end_array() {
    out_ += ']';
    need_comma_ = true;
    return *this;
  }
  // The key of the next value, which follows it without a comma. Keys are the program's own
  // names (letters, digits, '_'): written without the escaping scan.
  Writer& key(std::string_view name) {
    if (name.size() <= k_short_bytes) {
      append_short_quoted(name, ':');
    } else {
      separate();
      out_ += '"';
      out_ += name;
      out_ += "\":";
    }
    after_key_ = true;
    return *this;
  }
  Writer& string(std::string_view text) {
    if (text.size() <= k_short_bytes && !any_needs_escape(text)) {
      append_short_quoted(text, '\0');  // ids, names, times
    } else {
      separate();
      append_string(text);
    }
    need_comma_ = true;
    return *this;
  }
  Writer& integer(std::int64_t value) {
    separate();
    char buffer[24];
    auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
    out_.append(buffer, end);
    need_comma_ = true;
    return *this;
  }
  Writer& null() {
    separate();
    out_ += "null";
    need_comma_ = true;
    return *this;
  }
  // JSON text made elsewhere (one complete value), written as is.
  Writer& raw(std::string_view json) {
    separate();
    out_ += json;
    need_comma_ = true;
    return *this;
  }

  // Members made elsewhere (`"key":value` pairs separated by commas, at least one), written as
  // is inside the open object: the constant run of an object written many times. Separated from
  // what comes before and after as a value is, so written as raw() writes one.
  Writer& members(std::string_view json) { return raw(json); }

  const std::string& text() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  // Texts up to this long are written through a buffer on the stack, in one append.
  static constexpr std::size_t k_short_bytes = 64;

  void separate() {
    if (after_key_) {
      after_key_ = false;
    } else if (need_comma_) {
      out_ += ',';
    }
  }
  // The separator, `text` (at most k_short_bytes, nothing to escape) in quotes and `after`
  // (unless NUL) in one append: short keys and texts are most of what a response writes, and
  // four appends each were a fifth of writing a transfer's text (35 keys).
  void append_short_quoted(std::string_view text, char after) {
    char buffer[k_short_bytes + 4];
    char* end = buffer;
    if (after_key_) {
      after_key_ = false;
    } else if (need_comma_) {
      *end++ = ',';
    }
    *end++ = '"';
    end = std::copy(text.begin(), text.end(), end);
    *end++ = '"';
    if (after != '\0') *end++ = after;
    out_.append(buffer, static_cast<std::size_t>(end - buffer));
  }

  static bool any_needs_escape(std::string_view text) {
    std::size_t i = 0;
    for (std::uint64_t v; i + 8 <= text.size(); i += 8) {
      std::memcpy(&v, text.data() + i, 8);
      if (needs_escape(v)) return true;
    }
    for (; i < text.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(text[i]);
      if (c < 0x20 || c == '"' || c == '\\') return true;
    }
    return false;
  }

  // Whether any of the 8 bytes of `v` needs escaping: below 0x20, '"' or '\\'. Exact (the
  // classic "has a byte less than n" and "has a zero byte" tests): a borrow between bytes only
  // ever follows a byte that matched.
  static bool needs_escape(std::uint64_t v) {
    constexpr std::uint64_t k_ones = 0x0101010101010101u;
    constexpr std::uint64_t k_highs = 0x8080808080808080u;
    auto has_below = [](std::uint64_t x, std::uint64_t n) {
      return (x - k_ones * n) & ~x & k_highs;
    };
    return (has_below(v, 0x20) | has_below(v ^ (k_ones * '"'), 1) |
            has_below(v ^ (k_ones * '\\'), 1)) != 0;
  }

  void append_string(std::string_view text) {
    static constexpr char k_hex[] = "0123456789abcdef";
    out_ += '"';
    const char* data = text.data();
    const std::size_t size = text.size();
    std::size_t plain_from = 0;
    std::size_t i = 0;
    while (i < size) {
      // Plain bytes 8 at a time (a QR image's base64 is thousands of them), then the next 8
      // (or the rest) one by one.
      for (std::uint64_t v; i + 8 <= size; i += 8) {
        std::memcpy(&v, data + i, 8);
        if (needs_escape(v)) break;
      }
      for (const std::size_t end = std::min(size, i + 8); i < end; ++i) {
        const unsigned char c = static_cast<unsigned char>(data[i]);
        if (c >= 0x20 && c != '"' && c != '\\') [[likely]] continue;
        out_.append(data + plain_from, i - plain_from);
        plain_from = i + 1;
        switch (c) {
          case '"': out_ += "\\\""; break;
          case '\\': out_ += "\\\\"; break;
          case '\b': out_ += "\\b"; break;
          case '\f': out_ += "\\f"; break;
          case '\n': out_ += "\\n"; break;
          case '\r': out_ += "\\r"; break;
          case '\t': out_ += "\\t"; break;
          default:
            out_ += "\\u00";
            out_ += k_hex[c >> 4];
            out_ += k_hex[c & 0xF];
        }
      }
    }
    out_.append(data + plain_from, size - plain_from);
    out_ += '"';
  }

  std::string out_;
  bool need_comma_ = false;
  bool after_key_ = false;
};

}  // namespace tesoro::json_text
