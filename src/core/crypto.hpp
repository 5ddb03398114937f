#pragma once
// Thin wrappers over OpenSSL: hashing, HMAC, randomness. Secrets are stored only as sha256 hashes;
// they are 256-bit random values, so a fast hash is enough (no dictionary to attack).
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace tesoro::crypto {

std::string sha256_hex(std::string_view data);
// The raw 32 bytes of SHA-256.
std::array<unsigned char, 32> sha256(std::string_view data);
std::string hmac_sha256_hex(std::string_view key, std::string_view data);
// The raw 32 bytes of HMAC-SHA256 (webhook signatures are its base64).
std::string hmac_sha256(std::string_view key, std::string_view data);
// `count` bytes from the cryptographic random source (or the source a test put in place:
// core/random.hpp).
std::string random_bytes(std::size_t count);
// `count` bytes from the same source, drawn through a per-thread pool that RAND_bytes refills in
// blocks: one RAND_bytes call per record id cost more than the rest of the id. For values that
// are public once made (ids), not for secrets, which take random_bytes and never sit in a pool.
// A forked child discards the pool it inherited (it would repeat the parent's next values).
void pooled_random_bytes(unsigned char* out, std::size_t count);
// `count` characters of `alphabet` (2 to 256 of them), each uniform, from the cryptographic
// random source: a card number's digits, an account number, a generated key.
std::string random_string(std::string_view alphabet, std::size_t count);
// random_string's sampling, on given bytes: appends to `out`, until it has `count` characters, a
// character of `alphabet` for each byte below the largest multiple of the alphabet's size that
// fits in 256 (so that `byte % size` favours no character); the bytes above are dropped.
void append_uniform(std::string& out, std::string_view bytes, std::string_view alphabet,
                    std::size_t count);
// `bytes` random bytes, base64url without padding.
std::string random_token(std::size_t bytes);
// Whether `text` has the shape random_token(bytes) gives: what cannot be one of our secrets is
// refused without a database read.
bool is_random_token(std::string_view text, std::size_t bytes);
std::string base64url(std::string_view bytes);
std::string base64(std::string_view bytes);
void append_base64(std::string& out, std::string_view bytes);  // base64(bytes), appended
std::string base64_decode(std::string_view text, bool& ok);
bool constant_time_equal(std::string_view a, std::string_view b);
// scrypt (RFC 7914) through OpenSSL's EVP_KDF "SCRYPT": `length` bytes derived from `password`
// and `salt` with cost N = 2^log2_n, block size r and parallelism p. nullopt when OpenSSL
// refuses the parameters, among them a computation that would need more than
// `max_memory_bytes`.
std::optional<std::string> scrypt(std::string_view password, std::string_view salt, int log2_n,
                                  std::uint32_t r, std::uint32_t p,
                                  std::uint64_t max_memory_bytes, std::size_t length);

// AES-256-GCM sealing of small secrets kept in the database (card numbers). A sealed text is
// base64 of nonce (12 random bytes) | ciphertext | tag (16 bytes). The associated data is
// authenticated but not stored: a sealed text opens only with the same `aad` it was sealed with,
// so binding it to its row (tenant and record id) stops it from being moved to another row.
// Thread-safe: the methods are const and make their own cipher context. Never logs.
class Sealer {
 public:
  static constexpr std::size_t k_key_size = 32;
  static constexpr std::size_t k_nonce_size = 12;
  static constexpr std::size_t k_tag_size = 16;

  // Throws std::invalid_argument unless `key` is exactly 32 bytes (raw, not base64).
  explicit Sealer(std::string_view key);
  ~Sealer();  // wipes the key
  Sealer(Sealer&& other) noexcept;
  Sealer& operator=(Sealer&& other) noexcept;
  Sealer(const Sealer&) = delete;
  Sealer& operator=(const Sealer&) = delete;

  // A fresh random nonce each call: sealing one text twice gives two different results.
  std::string seal(std::string_view plain, std::string_view aad) const;
  // nullopt when `sealed` is not base64, too short, or was altered in any byte, or when `aad`
  // (or the key) differs from the sealing one.
  std::optional<std::string> open(std::string_view sealed, std::string_view aad) const;
  // open(), remembering what it opened: for a secret used on every request (a webhook
  // endpoint's signing secret, opened for each authorization put to the tenant), whose AES-GCM
  // pass would otherwise be paid each time. Only what opened is remembered, keyed by the sealed
  // text and `aad`, so a changed secret (a new sealed text) is opened afresh. Holds at most
  // limits::k_sealer_remembered_texts; when full it forgets (and wipes) them all.
  std::optional<std::string> open_remembered(std::string_view sealed, std::string_view aad) const;
  // A keyed one-way fingerprint of `plain` (hex HMAC-SHA256 under a key derived from this one):
  // equal texts have equal fingerprints, so a unique index can refuse a duplicate card number
  // without the number being stored in clear or guessable from its (small) space.
  std::string fingerprint(std::string_view plain) const;

 private:
  struct Remembered;  // open_remembered's texts, behind a mutex
  std::string key_;
  std::unique_ptr<Remembered> remembered_;
};

}  // namespace tesoro::crypto
