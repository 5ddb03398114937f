#include "core/log.hpp"

#include <atomic>
#include <charconv>
#include <cmath>

#include "core/time.hpp"

namespace tesoro::log {
namespace {

std::atomic<int> g_level{static_cast<int>(Level::info)};
std::atomic<Sink> g_sink{nullptr};

const char* name(Level level) {
  switch (level) {
    case Level::debug: return "debug";
    case Level::info: return "info";
    case Level::warn: return "warn";
    case Level::error: return "error";
  }
  return "info";
}

void append_escaped(std::string& out, std::string_view text) {
  static constexpr char k_hex[] = "0123456789abcdef";
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {  // keep the log line ASCII, whatever the client sent
          out += "\\u00";
          out += k_hex[c >> 4];
          out += k_hex[c & 0xF];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
}

void append_value(std::string& out, const Value& value) {
  if (const auto* text = std::get_if<std::string>(&value.data())) {
    out += '"';
    append_escaped(out, *text);
    out += '"';
  } else if (const auto* integer = std::get_if<std::int64_t>(&value.data())) {
    out += std::to_string(*integer);
  } else {
    double number = std::get<double>(value.data());
    if (!std::isfinite(number)) {  // JSON has no NaN or infinity
      out += "null";
      return;
    }
    char buffer[32];
    auto [end, ignored] = std::to_chars(buffer, buffer + sizeof buffer, number);
    out.append(buffer, end);
  }
}

}  // namespace

void set_level(Level level) { g_level.store(static_cast<int>(level)); }

bool parse_level(std::string_view text, Level& out) {
  if (text == "debug") out = Level::debug;
  else if (text == "info") out = Level::info;
  else if (text == "warn" || text == "warning") out = Level::warn;
  else if (text == "error") out = Level::error;
  else return false;
  return true;
}

bool enabled(Level level) { return static_cast<int>(level) >= g_level.load(); }

Sink set_sink(Sink sink) { return g_sink.exchange(sink); }

void write(Level level, std::string_view event, const Fields& fields) {
  const Sink sink = g_sink.load();
  if (sink == nullptr || !enabled(level)) return;
  std::string line = "{\"ts\":\"" + time::iso_now() + "\",\"level\":\"" + name(level) +
                     "\",\"event\":\"";
  append_escaped(line, event);
  line += '"';
  for (const auto& [key, value] : fields) {
    line += ",\"";
    append_escaped(line, key);
    line += "\":";
    append_value(line, value);
  }
  line += "}\n";
  sink(line);
}

}  // namespace tesoro::log
