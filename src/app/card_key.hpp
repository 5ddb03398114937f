#pragma once
// The card-number key: the AES-256-GCM key card numbers are sealed with (crypto::Sealer). With
// SQLite it lives in the data folder (`card-number.key`, base64 of 32 bytes, mode 0600), made by
// `init` (or by `serve` on a folder an older version made); with PostgreSQL, whose nodes share no
// folder, it comes from TESORO_CARD_KEY. TESORO_CARD_KEY, when set, wins on SQLite too. Losing the
// key loses the stored card numbers: it is backed up with the database, and never logged.
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/crypto.hpp"

namespace tesoro::app {

inline constexpr const char* k_card_key_variable = "TESORO_CARD_KEY";
inline constexpr const char* k_card_key_file_name = "card-number.key";

// Why serve cannot have a key; main prints what() and exits 1.
struct CardKeyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The raw 32 bytes of base64 `text` (surrounding whitespace ignored); nullopt when it is not
// base64 of exactly 32 bytes.
std::optional<std::string> decode_card_key(std::string_view text);

// The key in TESORO_CARD_KEY, or nullopt when it is unset or empty. Throws CardKeyError when it is
// malformed, or when it is unset and `required` (PostgreSQL).
std::optional<std::string> card_key_from_environment(bool required);

// Writes <data_dir>/card-number.key with a new random key unless the file exists; true when it
// wrote one. Atomic: the key is written to a temporary file of mode 0600, flushed, then linked
// into place, so nobody ever reads half a key and of two callers at once one key wins and both
// use it. Throws CardKeyError when the folder cannot be written.
bool ensure_card_key_file(const std::string& data_dir);

// The key in <data_dir>/card-number.key, creating the file when it is missing. Throws
// CardKeyError when it cannot be read or is not base64 of 32 bytes.
std::string card_key_from_file(const std::string& data_dir);

}  // namespace tesoro::app
