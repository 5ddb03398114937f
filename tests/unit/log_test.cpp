// The log does no I/O of its own: its lines go to the sink the program installed, and nowhere
// before one is. The unit tests install the server's (stderr), as `tesoro` does first thing.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "app/log_output.hpp"
#include "core/log.hpp"

using namespace tesoro;

namespace {

// What the server does at start, for every test of this binary: a failing test's log is shown.
const bool k_logs_to_stderr = (app::log_to_stderr(), true);

std::mutex g_captured_mutex;
std::vector<std::string> g_captured;

void capture(std::string_view line) {
  std::lock_guard lock(g_captured_mutex);
  g_captured.emplace_back(line);
}

std::vector<std::string> take_captured() {
  std::lock_guard lock(g_captured_mutex);
  return std::exchange(g_captured, {});
}

// Puts the sink back as it was when the test ends.
struct SinkReplaced {
  explicit SinkReplaced(log::Sink sink) : previous(log::set_sink(sink)) {}
  ~SinkReplaced() { log::set_sink(previous); }
  log::Sink previous;
};

}  // namespace

TEST(Log, ALineGoesToTheInstalledSinkAsOneJsonObject) {
  ASSERT_TRUE(k_logs_to_stderr);
  SinkReplaced replaced(&capture);
  take_captured();
  log::write(log::Level::warn, "test.event",
             {{"text", "a \"quoted\"\nline"}, {"count", 3}, {"ratio", 0.5}});
  const std::vector<std::string> lines = take_captured();
  ASSERT_EQ(lines.size(), 1u);
  ASSERT_TRUE(lines[0].ends_with("}\n")) << "one line, newline included";
  const boost::json::object line = boost::json::parse(lines[0]).as_object();
  EXPECT_EQ(line.at("level"), "warn");
  EXPECT_EQ(line.at("event"), "test.event");
  EXPECT_EQ(line.at("text"), "a \"quoted\"\nline");
  EXPECT_EQ(line.at("count"), 3);
  EXPECT_EQ(line.at("ratio"), 0.5);
  EXPECT_TRUE(line.contains("ts"));
}

TEST(Log, WithoutASinkOrBelowTheLevelNothingIsWritten) {
  SinkReplaced replaced(&capture);
  take_captured();
  log::write(log::Level::debug, "test.below_level", {});
  EXPECT_TRUE(take_captured().empty()) << "the level is info";
  EXPECT_EQ(log::set_sink(nullptr), &capture);
  log::write(log::Level::error, "test.no_sink", {});
  EXPECT_TRUE(take_captured().empty());
}
