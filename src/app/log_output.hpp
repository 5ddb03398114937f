#pragma once
// Where the log's lines go (core/log.hpp hands each to a sink and does no I/O itself).

namespace tesoro::app {

// Installs the sink that writes each line to stderr, whole and at once (lines from several
// threads never interleave), flushed so that a crash loses none already written.
void log_to_stderr();

}  // namespace tesoro::app
