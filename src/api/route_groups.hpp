#pragma once
// Every endpoint group of the server. A new group is one `add_<group>_routes` in its own file
// under src/api/ (CMake finds it) and one line in route_groups.cpp.
#include <span>

#include "api/context.hpp"

namespace tesoro::api {

// In registration order; the app adds every group's routes to its router.
std::span<const AddRoutes> route_groups();

}  // namespace tesoro::api
