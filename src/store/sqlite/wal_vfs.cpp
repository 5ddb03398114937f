#include "store/sqlite/wal_vfs.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>
#include <vector>

#include "core/limits.hpp"

namespace tesoro::store::wal_vfs {
namespace {

constexpr const char* k_name = "tesoro-wal";

std::atomic<long long> flush_count{0};
std::atomic<long long> gathered_count{0};

sqlite3_vfs* real_vfs = nullptr;
sqlite3_vfs vfs{};

// What SQLite allocates for a file of this VFS (vfs.szOsFile): this, then the default VFS's
// own file at `real`.
struct File {
  sqlite3_file base;  // first: SQLite sees a sqlite3_file*
  sqlite3_file* real;
  bool gathers;  // the file is a WAL
  sqlite3_int64 pending_offset;  // where `pending` goes in the file
  std::vector<char> pending;
};

File& of(sqlite3_file* file) { return *reinterpret_cast<File*>(file); }
sqlite3_file* real(sqlite3_file* file) { return of(file).real; }
const sqlite3_io_methods& real_methods(sqlite3_file* file) { return *real(file)->pMethods; }

// The most the default VFS writes in one call: its unixWrite keeps the amount's low 17 bits.
constexpr std::size_t k_default_vfs_write_bytes = 124 * 1024;

// Writes out what is gathered, in writes of at most k_default_vfs_write_bytes; on failure what
// is left stays gathered and the caller reports the error.
int flush(File& file) {
  std::size_t written = 0;
  int code = SQLITE_OK;
  while (written < file.pending.size()) {
    const std::size_t size = std::min(file.pending.size() - written, k_default_vfs_write_bytes);
    code = file.real->pMethods->xWrite(file.real, file.pending.data() + written,
                                       static_cast<int>(size),
                                       file.pending_offset + static_cast<sqlite3_int64>(written));
    if (code != SQLITE_OK) break;
    written += size;
    flush_count.fetch_add(1, std::memory_order_relaxed);
  }
  file.pending.erase(file.pending.begin(),
                     file.pending.begin() + static_cast<std::ptrdiff_t>(written));
  file.pending_offset += static_cast<sqlite3_int64>(written);
  return code;
}

int x_close(sqlite3_file* file) {
  File& self = of(file);
  int code = flush(self);
  const int closed = self.real->pMethods ? self.real->pMethods->xClose(self.real) : SQLITE_OK;
  self.~File();
  return code != SQLITE_OK ? code : closed;
}

int x_read(sqlite3_file* file, void* out, int amount, sqlite3_int64 offset) {
  if (int code = flush(of(file)); code != SQLITE_OK) return code;
  return real_methods(file).xRead(real(file), out, amount, offset);
}

int x_write(sqlite3_file* file, const void* data, int amount, sqlite3_int64 offset) {
  File& self = of(file);
  if (!self.gathers || amount <= 0) {
    return real_methods(file).xWrite(real(file), data, amount, offset);
  }
  const bool follows = !self.pending.empty() &&
                       offset == self.pending_offset +
                                     static_cast<sqlite3_int64>(self.pending.size());
  if (!follows ||
      self.pending.size() + static_cast<std::size_t>(amount) > limits::k_wal_gather_max_bytes) {
    if (int code = flush(self); code != SQLITE_OK) return code;
    self.pending_offset = offset;
  }
  try {
    const char* bytes = static_cast<const char*>(data);
    self.pending.insert(self.pending.end(), bytes, bytes + amount);
  } catch (const std::bad_alloc&) {
    // Nothing gathered this time: written through, as without this VFS.
    if (int code = flush(self); code != SQLITE_OK) return code;
    return real_methods(file).xWrite(real(file), data, amount, offset);
  }
  gathered_count.fetch_add(1, std::memory_order_relaxed);
  return SQLITE_OK;
}

int x_truncate(sqlite3_file* file, sqlite3_int64 size) {
  if (int code = flush(of(file)); code != SQLITE_OK) return code;
  return real_methods(file).xTruncate(real(file), size);
}

int x_sync(sqlite3_file* file, int flags) {
  if (int code = flush(of(file)); code != SQLITE_OK) return code;
  return real_methods(file).xSync(real(file), flags);
}

int x_file_size(sqlite3_file* file, sqlite3_int64* size) {
  if (int code = flush(of(file)); code != SQLITE_OK) return code;
  return real_methods(file).xFileSize(real(file), size);
}

int x_lock(sqlite3_file* file, int level) { return real_methods(file).xLock(real(file), level); }
int x_unlock(sqlite3_file* file, int level) {
  return real_methods(file).xUnlock(real(file), level);
}
int x_check_reserved_lock(sqlite3_file* file, int* out) {
  return real_methods(file).xCheckReservedLock(real(file), out);
}
int x_file_control(sqlite3_file* file, int op, void* arg) {
  // Some controls act on the file's contents (SQLITE_FCNTL_SIZE_HINT, CHUNK_SIZE, ...): the file
  // holds everything written before any of them.
  if (int code = flush(of(file)); code != SQLITE_OK) return code;
  return real_methods(file).xFileControl(real(file), op, arg);
}
int x_sector_size(sqlite3_file* file) { return real_methods(file).xSectorSize(real(file)); }
int x_device_characteristics(sqlite3_file* file) {
  return real_methods(file).xDeviceCharacteristics(real(file));
}
int x_shm_map(sqlite3_file* file, int region, int size, int extend, void volatile** out) {
  if (real_methods(file).iVersion < 2) return SQLITE_IOERR_SHMMAP;
  return real_methods(file).xShmMap(real(file), region, size, extend, out);
}
int x_shm_lock(sqlite3_file* file, int offset, int count, int flags) {
  if (real_methods(file).iVersion < 2) return SQLITE_IOERR_SHMLOCK;
  return real_methods(file).xShmLock(real(file), offset, count, flags);
}
void x_shm_barrier(sqlite3_file* file) {
  if (real_methods(file).iVersion >= 2) real_methods(file).xShmBarrier(real(file));
}
int x_shm_unmap(sqlite3_file* file, int delete_flag) {
  if (real_methods(file).iVersion < 2) return SQLITE_OK;
  return real_methods(file).xShmUnmap(real(file), delete_flag);
}
int x_fetch(sqlite3_file* file, sqlite3_int64 offset, int amount, void** out) {
  *out = nullptr;  // "no mapping": SQLite reads instead
  if (real_methods(file).iVersion < 3) return SQLITE_OK;
  if (int code = flush(of(file)); code != SQLITE_OK) return code;
  return real_methods(file).xFetch(real(file), offset, amount, out);
}
int x_unfetch(sqlite3_file* file, sqlite3_int64 offset, void* page) {
  if (real_methods(file).iVersion < 3) return SQLITE_OK;
  return real_methods(file).xUnfetch(real(file), offset, page);
}

const sqlite3_io_methods k_methods = {
    3,          x_close,          x_read,      x_write,       x_truncate,
    x_sync,     x_file_size,      x_lock,      x_unlock,      x_check_reserved_lock,
    x_file_control, x_sector_size, x_device_characteristics, x_shm_map, x_shm_lock,
    x_shm_barrier,  x_shm_unmap,   x_fetch,     x_unfetch};

constexpr std::size_t real_offset() {
  return (sizeof(File) + alignof(std::max_align_t) - 1) / alignof(std::max_align_t) *
         alignof(std::max_align_t);
}

int x_open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  auto* real_file = reinterpret_cast<sqlite3_file*>(reinterpret_cast<char*>(file) + real_offset());
  std::memset(real_file, 0, static_cast<std::size_t>(real_vfs->szOsFile));
  const int code = real_vfs->xOpen(real_vfs, name, real_file, flags, out_flags);
  if (code != SQLITE_OK || real_file->pMethods == nullptr) {
    // SQLite closes a file whose pMethods is set even when its open failed: close the default
    // VFS's half-open file now and leave ours unset.
    if (real_file->pMethods) real_file->pMethods->xClose(real_file);
    file->pMethods = nullptr;
    return code != SQLITE_OK ? code : SQLITE_CANTOPEN;
  }
  File* self = new (file) File{};
  self->base.pMethods = &k_methods;
  self->real = real_file;
  self->gathers = (flags & SQLITE_OPEN_WAL) != 0;
  return SQLITE_OK;
}

// The rest of the VFS is the default one's, called with its own pointer.
int x_delete(sqlite3_vfs*, const char* name, int sync_dir) {
  return real_vfs->xDelete(real_vfs, name, sync_dir);
}
int x_access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return real_vfs->xAccess(real_vfs, name, flags, out);
}
int x_full_pathname(sqlite3_vfs*, const char* name, int size, char* out) {
  return real_vfs->xFullPathname(real_vfs, name, size, out);
}
void* x_dl_open(sqlite3_vfs*, const char* name) { return real_vfs->xDlOpen(real_vfs, name); }
void x_dl_error(sqlite3_vfs*, int size, char* out) { real_vfs->xDlError(real_vfs, size, out); }
void (*x_dl_sym(sqlite3_vfs*, void* handle, const char* symbol))(void) {
  return real_vfs->xDlSym(real_vfs, handle, symbol);
}
void x_dl_close(sqlite3_vfs*, void* handle) { real_vfs->xDlClose(real_vfs, handle); }
int x_randomness(sqlite3_vfs*, int size, char* out) {
  return real_vfs->xRandomness(real_vfs, size, out);
}
int x_sleep(sqlite3_vfs*, int micros) { return real_vfs->xSleep(real_vfs, micros); }
int x_current_time(sqlite3_vfs*, double* out) { return real_vfs->xCurrentTime(real_vfs, out); }
int x_get_last_error(sqlite3_vfs*, int size, char* out) {
  return real_vfs->xGetLastError ? real_vfs->xGetLastError(real_vfs, size, out) : 0;
}
int x_current_time_int64(sqlite3_vfs*, sqlite3_int64* out) {
  if (real_vfs->iVersion >= 2 && real_vfs->xCurrentTimeInt64) {
    return real_vfs->xCurrentTimeInt64(real_vfs, out);
  }
  double days = 0;
  const int code = real_vfs->xCurrentTime(real_vfs, &days);
  *out = static_cast<sqlite3_int64>(days * 86400000.0);
  return code;
}

void register_once() {
  real_vfs = sqlite3_vfs_find(nullptr);
  if (real_vfs == nullptr) return;
  vfs.iVersion = 2;  // no xSetSystemCall: the default VFS's system calls are its own business
  vfs.szOsFile = static_cast<int>(real_offset()) + real_vfs->szOsFile;
  vfs.mxPathname = real_vfs->mxPathname;
  vfs.zName = k_name;
  vfs.xOpen = x_open;
  vfs.xDelete = x_delete;
  vfs.xAccess = x_access;
  vfs.xFullPathname = x_full_pathname;
  vfs.xDlOpen = x_dl_open;
  vfs.xDlError = x_dl_error;
  vfs.xDlSym = x_dl_sym;
  vfs.xDlClose = x_dl_close;
  vfs.xRandomness = x_randomness;
  vfs.xSleep = x_sleep;
  vfs.xCurrentTime = x_current_time;
  vfs.xGetLastError = x_get_last_error;
  vfs.xCurrentTimeInt64 = x_current_time_int64;
  if (sqlite3_vfs_register(&vfs, 0) != SQLITE_OK) real_vfs = nullptr;
}

}  // namespace

const char* name() {
  static std::once_flag once;
  std::call_once(once, register_once);
  if (real_vfs == nullptr) throw std::runtime_error("SQLite has no default VFS to wrap");
  return k_name;
}

Counts counts() {
  return {flush_count.load(std::memory_order_relaxed),
          gathered_count.load(std::memory_order_relaxed)};
}

}  // namespace tesoro::store::wal_vfs
