#include "core/check.hpp"

#include <cstdlib>
#include <string>

#include "core/log.hpp"

namespace tesoro::check {

void failed(std::string_view condition, std::string_view file, int line,
            std::string_view context) {
  log::write(log::Level::error, "invariant.failed",
             {{"condition", condition},
              {"where", std::string(file) + ":" + std::to_string(line)},
              {"context", context}});
  std::abort();
}

}  // namespace tesoro::check
