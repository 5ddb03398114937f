#pragma once
// Structured logging: one JSON object per line. Callers pass fields; nothing here knows about
// secrets, so callers never pass them (the Authorization header is never logged). Core does no
// I/O: a line is handed to the sink the program installed (app::log_to_stderr: the server and
// every command write to stderr); until one is, lines are dropped.
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace tesoro::log {

enum class Level { debug = 0, info = 1, warn = 2, error = 3 };

void set_level(Level level);
bool parse_level(std::string_view text, Level& out);
bool enabled(Level level);

// A field's value: text is written as a JSON string, a number as a JSON number, so that a log
// pipeline can compare and sum `status` or `duration_ms` without parsing strings.
class Value {
 public:
  Value(std::string text) : data_(std::move(text)) {}
  Value(std::string_view text) : data_(std::string(text)) {}
  Value(const char* text) : data_(std::string(text)) {}
  template <std::integral Integer>
    requires(!std::same_as<Integer, bool> && !std::same_as<Integer, char>)
  Value(Integer number) : data_(static_cast<std::int64_t>(number)) {}
  Value(double number) : data_(number) {}

  const std::variant<std::string, std::int64_t, double>& data() const { return data_; }

 private:
  std::variant<std::string, std::int64_t, double> data_;
};

using Fields = std::vector<std::pair<std::string, Value>>;
void write(Level level, std::string_view event, const Fields& fields);

// Receives each line (a JSON object and its newline), from any thread; it must be safe to call
// concurrently. Returns the sink it replaces (nullptr: none).
using Sink = void (*)(std::string_view line);
Sink set_sink(Sink sink);

}  // namespace tesoro::log
