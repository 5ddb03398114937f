#pragma once
// Reading docs/webhooks.md from the source tree (TESORO_SOURCE_DIR), for the tests that keep it
// true: its catalogue table (unit tests: the same as webhooks::event_types(); API tests: holds
// every type the server emits) and its code blocks (the OpenSSL recipe, run as printed).
#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace webhooks_document {

inline std::vector<std::string> lines() {
  std::ifstream file(std::string(TESORO_SOURCE_DIR) + "/docs/webhooks.md");
  EXPECT_TRUE(file.good()) << "docs/webhooks.md";
  std::vector<std::string> out;
  for (std::string line; std::getline(file, line);) out.push_back(line);
  return out;
}

// The first backticked word of each row of the table under "## Event types".
inline std::set<std::string> event_types() {
  std::set<std::string> types;
  bool in_catalogue = false;
  for (const std::string& line : lines()) {
    if (line.starts_with("## ")) in_catalogue = line == "## Event types";
    if (!in_catalogue || !line.starts_with("| `")) continue;
    const std::size_t end = line.find('`', 3);
    if (end != std::string::npos) types.insert(line.substr(3, end - 3));
  }
  return types;
}

// The code blocks fenced ```<language> in the section under `heading` (a whole heading line).
inline std::vector<std::string> code(const std::string& heading, const std::string& language) {
  std::vector<std::string> blocks;
  bool in_section = false;
  std::optional<std::string> block;
  for (const std::string& line : lines()) {
    if (block) {
      if (line == "```") {
        blocks.push_back(*block);
        block.reset();
      } else {
        *block += line + "\n";
      }
      continue;
    }
    if (line.starts_with("#")) in_section = line == heading;
    if (in_section && line == "```" + language) block = "";
  }
  return blocks;
}

}  // namespace webhooks_document
