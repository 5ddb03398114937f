// The layers of docs/ARCHITECTURE.md, enforced on the sources: which folders each folder may
// include (main -> app -> api | workers | http -> domain -> store -> core, never back up), and
// which folders may do I/O. Core, the domain, the API and the workers do none of their own: they
// reach the database through the store, the network through http/ (core/outbound_http.hpp's
// Transport, the API's client) and the log's output through its sink. And every limit is declared
// in core/limits.hpp. A review misses a stray include, an fwrite or a local limit; this scan does
// not.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path k_src = fs::path(TESORO_SOURCE_DIR) / "src";

// The folders each folder's files may include (its own among them).
const std::map<std::string, std::set<std::string>> k_may_include = {
    {"core", {"core"}},
    {"store", {"store", "core"}},
    {"domain", {"domain", "store", "core"}},
    {"http", {"http", "core"}},
    {"workers", {"workers", "domain", "store", "core"}},
    {"api", {"api", "http", "domain", "store", "core"}},
    {"app", {"app", "api", "workers", "http", "domain", "store", "core"}},
};

// The folders that do no I/O of their own.
const std::set<std::string> k_without_io = {"core", "domain", "api", "workers"};

// The text of a source without its comments (a line's `//` comment, and whole comment lines), so
// that a comment naming a call is not taken for one.
std::string code_of(const std::string& text) {
  std::istringstream in(text);
  std::string code;
  for (std::string line; std::getline(in, line);) {
    const std::size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line.compare(first, 2, "//") == 0) continue;
    const std::size_t trailing = line.find("  // ");
    code += (trailing == std::string::npos ? line : line.substr(0, trailing)) + "\n";
  }
  return code;
}

// Every match of `pattern` in `code`: its group `group` (0: the whole match).
std::vector<std::string> matches(const std::string& code, const std::regex& pattern,
                                 int group = 0) {
  std::vector<std::string> found;
  for (auto it = std::sregex_iterator(code.begin(), code.end(), pattern);
       it != std::sregex_iterator(); ++it) {
    found.push_back((*it)[group].str());
  }
  return found;
}

// The source folders a text includes ("core" for #include "core/log.hpp").
std::set<std::string> included_folders(const std::string& code) {
  static const std::regex k_include(R"re(#include\s+"([a-z_]+)/)re");
  std::set<std::string> folders;
  for (const std::string& folder : matches(code, k_include, 1)) {
    if (k_may_include.count(folder) != 0) folders.insert(folder);
  }
  return folders;
}

// The I/O a text does: the headers of sockets, files, the terminal and the database engines, and
// the calls that write, read or connect.
std::vector<std::string> io_in(const std::string& code) {
  static const std::vector<std::regex> k_io = {
      std::regex(R"re(#include\s*<(iostream|fstream|netdb\.h|sys/socket\.h|sys/epoll\.h|)re"
                 R"re(sqlite3\.h|libpq-fe\.h|boost/asio|boost/beast)[^>]*>)re"),
      std::regex(R"re(\b(fopen|fwrite|fputs|fprintf|printf|puts|perror|getaddrinfo|)re"
                 R"re(gethostbyname|epoll_\w+)\s*\()re"),
      std::regex(R"re(std::(cout|cerr|clog|ofstream|ifstream|fstream)\b)re"),
      std::regex(R"re(\bcurl_(easy|multi)_\w+)re"),
      std::regex(R"re(\b(sqlite3_\w+|PQ[a-z]\w*)\s*\()re"),
  };
  std::vector<std::string> found;
  for (const std::regex& pattern : k_io) {
    for (std::string& io : matches(code, pattern)) found.push_back(std::move(io));
  }
  return found;
}

struct Source {
  std::string folder;  // the top folder under src/
  std::string name;    // src/...
  std::string code;
};

std::vector<Source> sources() {
  std::vector<Source> found;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(k_src)) {
    const fs::path& path = entry.path();
    if (!entry.is_regular_file() || (path.extension() != ".cpp" && path.extension() != ".hpp")) {
      continue;
    }
    const fs::path relative = fs::relative(path, k_src);
    if (std::next(relative.begin()) == relative.end()) continue;  // main.cpp
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    found.push_back({relative.begin()->string(), "src/" + relative.generic_string(),
                     code_of(text.str())});
  }
  return found;
}

std::string report(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += "\n  " + line;
  return text;
}

}  // namespace

TEST(LayerRule, TheScanRecognisesIncludesAndIo) {
  EXPECT_EQ(included_folders("#include \"core/log.hpp\"\n#include <string>\n#include \"x.hpp\"\n"),
            std::set<std::string>{"core"});
  EXPECT_EQ(io_in("std::fwrite(p, 1, n, stderr);").size(), 1u);
  EXPECT_EQ(io_in("#include <curl/curl.h>\ncurl_multi_perform(m, &n);").size(), 1u);
  EXPECT_EQ(io_in("#include <sys/socket.h>\n::getaddrinfo(h, p, &x, &y);").size(), 2u);
  EXPECT_EQ(io_in("std::cerr << x; sqlite3_step(s); PQexec(c, q);").size(), 3u);
  EXPECT_TRUE(io_in("std::snprintf(b, n, f); transport.resolve(h, p); log::write(l, e, f);")
                  .empty());
  EXPECT_TRUE(io_in(code_of("// fwrite( in a comment\nint x;  // and printf( here\n")).empty());
}

TEST(LayerRule, FoldersIncludeOnlyTheLayersBelowThem) {
  // A moved tree must fail loudly rather than scan nothing and pass.
  ASSERT_TRUE(fs::is_directory(k_src)) << k_src << " not found";
  const std::vector<Source> all = sources();
  EXPECT_GT(all.size(), 100u);
  std::vector<std::string> offenders;
  std::set<std::string> folders_seen;
  for (const Source& source : all) {
    folders_seen.insert(source.folder);
    auto allowed = k_may_include.find(source.folder);
    if (allowed == k_may_include.end()) {
      offenders.push_back(source.name + " is in a folder the layers do not name");
      continue;
    }
    for (const std::string& folder : included_folders(source.code)) {
      if (allowed->second.count(folder) == 0) {
        offenders.push_back(source.name + " includes " + folder + "/");
      }
    }
  }
  EXPECT_EQ(folders_seen.size(), k_may_include.size()) << "every layer has sources";
  EXPECT_TRUE(offenders.empty()) << "includes against the layers:" << report(offenders);
}

namespace {

// A limit's declaration: a constant named as a bound (max, min, limit, default, timeout, ttl, a
// duration in seconds or milliseconds, a poll, a count of characters, digits or rows) given a
// number, by `=`, by braces or as the first of a list.
std::vector<std::string> limits_in(const std::string& code) {
  static const std::regex k_limit(
      R"re(constexpr\s+[\w:<>, ]+?\s+(k_\w*(_max|_min|_limit|_default|_timeout|_ttl|_seconds|)re"
      R"re(_ms|_poll|_chars|_digits|_rows)\w*)\s*(=\s*\{?|\{)\s*[0-9])re");
  return matches(code, k_limit, 1);
}

}  // namespace

TEST(LimitRule, TheScanRecognisesALimit) {
  EXPECT_EQ(limits_in("inline constexpr std::size_t k_rule_values_max = 500;"),
            std::vector<std::string>{"k_rule_values_max"});
  EXPECT_EQ(limits_in("constexpr std::int64_t k_hold_seconds = 7 * 24;").size(), 1u);
  EXPECT_EQ(limits_in("static constexpr int k_retry_ms_default = 5;").size(), 1u);
  EXPECT_EQ(limits_in("constexpr std::chrono::milliseconds k_give_way_poll{1};").size(), 1u);
  EXPECT_EQ(limits_in("inline constexpr std::array<std::size_t, 4> k_bulk_rows = {250, 1};"),
            std::vector<std::string>{"k_bulk_rows"});
  EXPECT_TRUE(limits_in("constexpr std::size_t k_insert_width = 33;").empty());
  EXPECT_TRUE(limits_in("constexpr std::int64_t k_cap = limits::k_thing_max;").empty());
}

// Every limit of the server is in core/limits.hpp, once: the other folders name it from there.
// (A format's own sizes stay with the format in core/: EMVCo's field lengths, an id's layout, a
// cipher's key.)
TEST(LimitRule, LimitsAreDeclaredInCoreLimitsOnly) {
  std::vector<std::string> offenders;
  std::size_t scanned = 0;
  for (const Source& source : sources()) {
    if (source.folder == "core") continue;
    ++scanned;
    for (const std::string& limit : limits_in(source.code)) {
      offenders.push_back(source.name + " declares " + limit);
    }
  }
  EXPECT_GT(scanned, 100u);
  EXPECT_TRUE(offenders.empty()) << "limits outside src/core/limits.hpp:" << report(offenders);
}

TEST(LayerRule, CoreDomainApiAndWorkersDoNoIoOfTheirOwn) {
  std::vector<std::string> offenders;
  std::size_t scanned = 0;
  for (const Source& source : sources()) {
    if (k_without_io.count(source.folder) == 0) continue;
    ++scanned;
    for (const std::string& io : io_in(source.code)) offenders.push_back(source.name + ": " + io);
  }
  EXPECT_GT(scanned, 100u);
  EXPECT_TRUE(offenders.empty()) << "I/O outside store/, http/ and app/:" << report(offenders);
}
