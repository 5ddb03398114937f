#include "app/card_key.hpp"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/log.hpp"

namespace tesoro::app {
namespace {

const std::string k_how_to_make = "make one with `openssl rand -base64 32`";

std::string key_path(const std::string& data_dir) {
  return data_dir + "/" + k_card_key_file_name;
}

std::string system_error(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

// Writes all of `text` to `fd` and flushes it to disk.
bool write_durably(int fd, const std::string& text) {
  std::size_t written = 0;
  while (written < text.size()) {
    ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<std::size_t>(n);
  }
  return ::fsync(fd) == 0;
}

// The new entry survives a crash only once its folder is flushed too.
void sync_folder(const std::string& data_dir) {
  int fd = ::open(data_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

std::optional<std::string> decode_card_key(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  bool ok = false;
  std::string key = crypto::base64_decode(text, ok);
  if (!ok || key.size() != crypto::Sealer::k_key_size) {
    OPENSSL_cleanse(key.data(), key.size());
    return std::nullopt;
  }
  return key;
}

std::optional<std::string> card_key_from_environment(bool required) {
  const char* text = std::getenv(k_card_key_variable);
  if (!text || !*text) {
    if (!required) return std::nullopt;
    throw CardKeyError(std::string(k_card_key_variable) +
                       " must be set when serving from PostgreSQL: it is the card-number key, "
                       "base64 of 32 random bytes (" + k_how_to_make +
                       ", keep it with the database's secrets, and give every node the same one)");
  }
  std::optional<std::string> key = decode_card_key(text);
  if (!key) {
    throw CardKeyError(std::string(k_card_key_variable) +
                       " is not a valid card-number key: it must be base64 of exactly 32 bytes (" +
                       k_how_to_make + ")");
  }
  return key;
}

bool ensure_card_key_file(const std::string& data_dir) {
  std::string path = key_path(data_dir);
  struct stat existing {};
  if (::stat(path.c_str(), &existing) == 0) return false;
  std::string temporary = path + ".tmp-" + crypto::random_token(9);
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw CardKeyError(system_error("cannot create " + temporary));
  std::string raw = crypto::random_bytes(crypto::Sealer::k_key_size);
  std::string text = crypto::base64(raw) + "\n";
  bool written = ::fchmod(fd, 0600) == 0 && write_durably(fd, text);
  OPENSSL_cleanse(raw.data(), raw.size());
  OPENSSL_cleanse(text.data(), text.size());
  ::close(fd);
  // link() never replaces: when another process linked its key first, that one stays.
  bool linked = written && (::link(temporary.c_str(), path.c_str()) == 0 || errno == EEXIST);
  std::string failure = linked ? "" : system_error("cannot write " + path);
  ::unlink(temporary.c_str());
  if (!linked) throw CardKeyError(failure);
  sync_folder(data_dir);
  return true;
}

std::string card_key_from_file(const std::string& data_dir) {
  if (ensure_card_key_file(data_dir)) {
    log::write(log::Level::warn, "card_key.created",
               {{"path", key_path(data_dir)},
                {"note", "a new card-number key; back it up with the database"}});
  }
  std::string path = key_path(data_dir);
  struct stat status {};
  if (::stat(path.c_str(), &status) == 0 && (status.st_mode & 077) != 0) {
    log::write(log::Level::warn, "card_key.permissions",
               {{"path", path}, {"note", "readable by others than its owner; chmod 600 it"}});
  }
  std::ifstream file(path);
  if (!file.is_open()) throw CardKeyError(system_error("cannot read " + path));
  std::stringstream text;
  text << file.rdbuf();
  std::string content = text.str();
  std::optional<std::string> key = decode_card_key(content);
  OPENSSL_cleanse(content.data(), content.size());
  if (!key) {
    throw CardKeyError(path + " is not a valid card-number key (base64 of exactly 32 bytes): "
                       "restore it from the backup of this data folder, since without it the "
                       "stored card numbers cannot be read");
  }
  return *key;
}

}  // namespace tesoro::app
