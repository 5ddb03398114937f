#pragma once
// The console's files (console/ at the repo root), compiled into the binary by
// cmake/embed_console.cmake: nothing is read from disk or fetched at run time.
#include <span>
#include <string_view>

namespace tesoro::api {

struct ConsoleAsset {
  std::string_view path;     // relative to console/: "index.html", "js/app.js"
  std::string_view content;  // the file's bytes
};

// Every file, sorted by path. Defined in the generated console_assets.cpp.
std::span<const ConsoleAsset> console_assets();

}  // namespace tesoro::api
