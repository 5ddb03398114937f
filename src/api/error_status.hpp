#pragma once
// The HTTP status each error code of the catalog (core/error.hpp) is answered with: the domain
// names what went wrong, api/ says it over HTTP.
#include "core/error.hpp"

namespace tesoro::api {

int http_status(ErrorCode code);
// The status of the error's code; 500 for an error outside the catalog (which no handler
// returns: errors::make is for command-line and worker outcomes).
int http_status(const Error& error);

}  // namespace tesoro::api
