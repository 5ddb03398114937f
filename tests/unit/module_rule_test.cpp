// Domain modules depend one way: no module includes, directly or through others, a module that
// includes it (docs/ARCHITECTURE.md). A cycle makes two modules one, to read and to change; where
// one module must reach another that depends on it, the other registers a callback (as payouts
// does with transfers::register_leg_follower, and transfers with events::register_renderer).
// This scan of the sources keeps it so.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path k_domain = fs::path(TESORO_SOURCE_DIR) / "src" / "domain";

using Graph = std::map<std::string, std::set<std::string>>;  // module -> modules it includes

// The module of a path under src/domain: its folder, or the file's stem for a file directly in
// src/domain (there is none today; one would be a module of its own).
std::string module_of(const fs::path& relative) {
  auto first = relative.begin();
  return std::next(first) == relative.end() ? relative.stem().string() : first->string();
}

Graph module_graph() {
  Graph graph;
  static const std::regex k_include(R"re(#include\s+"domain/([^"]+)")re");
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(k_domain)) {
    const fs::path& path = entry.path();
    if (!entry.is_regular_file() || (path.extension() != ".cpp" && path.extension() != ".hpp")) {
      continue;
    }
    const std::string from = module_of(fs::relative(path, k_domain));
    graph[from];
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
      std::smatch match;
      if (!std::regex_search(line, match, k_include)) continue;
      const std::string to = module_of(fs::path(match[1].str()));
      if (to != from) graph[from].insert(to);
    }
  }
  return graph;
}

// Every cycle's path ("a -> b -> a"), each found once from the first module of the graph's order
// that is on it.
std::vector<std::string> cycles(const Graph& graph) {
  std::vector<std::string> found;
  std::map<std::string, int> state;  // 0 unvisited, 1 on the current path, 2 done
  std::vector<std::string> path;
  std::function<void(const std::string&)> visit = [&](const std::string& module) {
    state[module] = 1;
    path.push_back(module);
    auto next = graph.find(module);
    if (next != graph.end()) {
      for (const std::string& to : next->second) {
        if (state[to] == 1) {
          std::string cycle;
          for (auto at = std::find(path.begin(), path.end(), to); at != path.end(); ++at) {
            cycle += *at + " -> ";
          }
          found.push_back(cycle + to);
        } else if (state[to] == 0) {
          visit(to);
        }
      }
    }
    path.pop_back();
    state[module] = 2;
  };
  for (const auto& [module, ignored] : graph) {
    if (state[module] == 0) visit(module);
  }
  return found;
}

}  // namespace

TEST(ModuleRule, TheScanFindsACycle) {
  EXPECT_EQ(cycles({{"a", {"b"}}, {"b", {"c"}}, {"c", {"a"}}}),
            std::vector<std::string>{"a -> b -> c -> a"});
  EXPECT_TRUE(cycles({{"a", {"b", "c"}}, {"b", {"c"}}, {"c", {}}}).empty());
  EXPECT_EQ(module_of("events/polling.cpp"), "events");
  EXPECT_EQ(module_of("top_level.hpp"), "top_level");
}

TEST(ModuleRule, DomainModulesDependOneWay) {
  // A moved tree must fail loudly rather than scan nothing and pass.
  ASSERT_TRUE(fs::is_directory(k_domain)) << k_domain << " not found";
  const Graph graph = module_graph();
  EXPECT_GT(graph.size(), 10u);
  EXPECT_TRUE(graph.at("payouts").count("transfers")) << "the scan reads includes";
  std::string report;
  for (const std::string& cycle : cycles(graph)) report += "\n  " + cycle;
  EXPECT_TRUE(report.empty()) << "domain modules that include each other:" << report;
}
