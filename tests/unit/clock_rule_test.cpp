// The rule of core/clock.hpp, enforced: domain, API and worker code takes real time from a Clock
// or a `now` parameter, never from the system clock, so that a tenant's clock (domain/tenant_clock) and
// the tests govern it. A review misses a stray clock read; this scan of the sources does not.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// tests/unit/clock_rule_test.cpp -> the repository's src/ (CMake compiles with absolute paths).
const fs::path k_src = fs::path(__FILE__).parent_path().parent_path().parent_path() / "src";

// Ways to read the wall clock. steady_clock is not among them: it measures durations (timeouts,
// latencies) and never reaches stored or shown data.
const std::vector<std::string> k_clock_reads = {"now_micros(", "iso_now(", "system_clock::now",
                                                "high_resolution_clock::now", "gettimeofday("};

std::vector<std::string> clock_reads_in(const std::string& text) {
  std::vector<std::string> found;
  for (const std::string& read : k_clock_reads) {
    if (text.find(read) != std::string::npos) found.push_back(read);
  }
  return found;
}

}  // namespace

TEST(ClockRule, TheScanRecognisesEachWayOfReadingTheClock) {
  EXPECT_EQ(clock_reads_in("auto at = time::now_micros();").size(), 1u);
  EXPECT_EQ(clock_reads_in("{time::iso_now(), id}").size(), 1u);
  EXPECT_EQ(clock_reads_in("std::chrono::system_clock::now()").size(), 1u);
  EXPECT_TRUE(clock_reads_in("time::iso(now); clock.now(); steady_clock::now()").empty());
}

TEST(ClockRule, DomainApiAndWorkersNeverReadTheSystemClock) {
  std::vector<std::string> offenders;
  std::size_t scanned = 0;
  for (const char* folder : {"domain", "api", "workers"}) {
    // A moved tree must fail loudly rather than scan nothing and pass.
    ASSERT_TRUE(fs::is_directory(k_src / folder)) << (k_src / folder) << " not found";
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(k_src / folder)) {
      const fs::path& path = entry.path();
      if (!entry.is_regular_file() || (path.extension() != ".cpp" && path.extension() != ".hpp")) {
        continue;
      }
      ++scanned;
      std::ifstream in(path);
      std::ostringstream text;
      text << in.rdbuf();
      for (const std::string& read : clock_reads_in(text.str())) {
        offenders.push_back("src/" + fs::relative(path, k_src).generic_string() + " calls " +
                            read + " (take a time::Micros now, or the services' Clock)");
      }
    }
  }
  EXPECT_GT(scanned, 10u);
  std::string report;
  for (const std::string& offender : offenders) report += "\n  " + offender;
  EXPECT_TRUE(offenders.empty()) << "code that reads the system clock directly:" << report;
}
