#pragma once
// A SQLite VFS over the system's default one that gathers a connection's writes to its WAL file
// and hands them to the kernel in few writes (of up to 124 KiB: the default VFS keeps only the
// low 17 bits of a write's size) when SQLite next needs them there: at the commit's sync, before
// any read, size, truncation, file control or close of that file. SQLite writes each frame of a
// commit as two writes (its 24-byte header, then the page), so a group of 160 pages of 8 KiB was
// 320 system calls on the one writer thread; now it is 11.
//
// Nothing else changes: every other file, and every other method (locks, the WAL index in shared
// memory), is the default VFS's. SQLite publishes a commit to other connections (the WAL index)
// only after the sync, which writes out what was gathered first, so no reader can see a frame
// that is not in the file. That holds because every connection Tesoro opens syncs its commits
// (`synchronous=FULL`); at NORMAL a commit would be published with its frames still gathered.
#include <string>

namespace tesoro::store::wal_vfs {

// Registers the VFS (once; later calls return the same) and returns its name, for
// sqlite3_open_v2. Throws std::runtime_error if SQLite has no default VFS to wrap.
const char* name();

// System calls that wrote gathered WAL frames, and writes gathered, since the process started
// (tests, benchmarks).
struct Counts {
  long long flushes = 0;
  long long writes_gathered = 0;
};
Counts counts();

}  // namespace tesoro::store::wal_vfs
