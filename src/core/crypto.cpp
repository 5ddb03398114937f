#include "core/crypto.hpp"

#include "core/limits.hpp"
#include "core/random.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <pthread.h>

#include <atomic>
#include <algorithm>
#include <climits>
#include <cstring>
#include <mutex>
#include <memory>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace tesoro::crypto {
namespace {

std::string hex(const unsigned char* data, std::size_t size) {
  static constexpr char k_digits[] = "0123456789abcdef";
  std::string out(size * 2, '0');
  for (std::size_t i = 0; i < size; ++i) {
    out[2 * i] = k_digits[data[i] >> 4];
    out[2 * i + 1] = k_digits[data[i] & 0xF];
  }
  return out;
}

// Appends the base64 of `bytes` to `out`: the output is sized once and written in place.
void encode_into(std::string& out, std::string_view bytes, const char* alphabet, bool pad) {
  const std::size_t whole = bytes.size() / 3;
  const std::size_t rest = bytes.size() - whole * 3;
  const std::size_t tail = rest == 0 ? 0 : (pad ? 4 : rest + 1);
  const std::size_t from = out.size();
  out.resize(from + whole * 4 + tail);
  char* to = out.data() + from;
  const auto* in = reinterpret_cast<const unsigned char*>(bytes.data());
  for (std::size_t i = 0; i < whole; ++i, in += 3, to += 4) {
    const unsigned v = (unsigned{in[0]} << 16) | (unsigned{in[1]} << 8) | in[2];
    to[0] = alphabet[(v >> 18) & 63];
    to[1] = alphabet[(v >> 12) & 63];
    to[2] = alphabet[(v >> 6) & 63];
    to[3] = alphabet[v & 63];
  }
  if (rest == 0) return;
  const unsigned v = (unsigned{in[0]} << 16) | (rest == 2 ? unsigned{in[1]} << 8 : 0u);
  to[0] = alphabet[(v >> 18) & 63];
  to[1] = alphabet[(v >> 12) & 63];
  if (rest == 2) to[2] = alphabet[(v >> 6) & 63];
  if (pad) {
    if (rest == 1) to[2] = '=';
    to[3] = '=';
  }
}

std::string encode(std::string_view bytes, const char* alphabet, bool pad) {
  std::string out;
  encode_into(out, bytes, alphabet, pad);
  return out;
}

struct CipherContextFree {
  void operator()(EVP_CIPHER_CTX* context) const { EVP_CIPHER_CTX_free(context); }
};
using CipherContext = std::unique_ptr<EVP_CIPHER_CTX, CipherContextFree>;

const unsigned char* bytes_of(std::string_view text) {
  return reinterpret_cast<const unsigned char*>(text.data());
}

// A GCM context keyed and nonced for one message, with `aad` already fed; null on failure.
CipherContext gcm_context(bool encrypt, const std::string& key, std::string_view nonce,
                          std::string_view aad) {
  CipherContext context(EVP_CIPHER_CTX_new());
  if (!context) return nullptr;
  auto init = encrypt ? EVP_EncryptInit_ex : EVP_DecryptInit_ex;
  auto update = encrypt ? EVP_EncryptUpdate : EVP_DecryptUpdate;
  int ignored = 0;
  // Fetched from the provider once: EVP_aes_256_gcm() makes every init look the cipher up by
  // name again.
  static EVP_CIPHER* const gcm = EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr);
  bool ok = gcm != nullptr && init(context.get(), gcm, nullptr, nullptr, nullptr) == 1 &&
            EVP_CIPHER_CTX_ctrl(context.get(), EVP_CTRL_GCM_SET_IVLEN,
                                static_cast<int>(nonce.size()), nullptr) == 1 &&
            init(context.get(), nullptr, nullptr, bytes_of(key), bytes_of(nonce)) == 1 &&
            (aad.empty() || update(context.get(), nullptr, &ignored, bytes_of(aad),
                                   static_cast<int>(aad.size())) == 1);
  return ok ? std::move(context) : nullptr;
}

constexpr char k_base64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr char k_base64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

}  // namespace

std::string sha256_hex(std::string_view data) {
  const std::array<unsigned char, 32> digest = sha256(data);
  return hex(digest.data(), digest.size());
}

namespace {

// SHA-256 over pieces, with the algorithm fetched from OpenSSL's provider once per process and a
// context per thread: OpenSSL 3's one-shot SHA256() and HMAC() fetch the algorithm by name on
// every call, which cost about 30,000 instructions each (callgrind), more than the hashing.
class Sha256 {
 public:
  Sha256() {
    static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    thread_local const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(
        EVP_MD_CTX_new(), &EVP_MD_CTX_free);
    context_ = context.get();
    if (md == nullptr || context_ == nullptr || EVP_DigestInit_ex2(context_, md, nullptr) != 1) {
      throw std::runtime_error("SHA-256 is not available");
    }
  }
  Sha256& add(const void* data, std::size_t size) {
    EVP_DigestUpdate(context_, data, size);
    return *this;
  }
  std::array<unsigned char, 32> digest() {
    std::array<unsigned char, 32> out{};
    EVP_DigestFinal_ex(context_, out.data(), nullptr);
    return out;
  }

 private:
  EVP_MD_CTX* context_ = nullptr;
};

}  // namespace

std::array<unsigned char, 32> sha256(std::string_view data) {
  static_assert(SHA256_DIGEST_LENGTH == 32);
  return Sha256().add(data.data(), data.size()).digest();
}

// HMAC-SHA256 as RFC 2104 builds it on the hash (a key longer than the 64-byte block is hashed
// first); checked against OpenSSL's HMAC() and RFC 4231's vectors in tests/unit/core_test.cpp.
std::string hmac_sha256(std::string_view key, std::string_view data) {
  constexpr std::size_t k_block = 64;
  std::array<unsigned char, k_block> padded{};
  if (key.size() > k_block) {
    const std::array<unsigned char, 32> hashed = sha256(key);
    std::copy(hashed.begin(), hashed.end(), padded.begin());
  } else {
    std::memcpy(padded.data(), key.data(), key.size());
  }
  std::array<unsigned char, k_block> inner_pad{};
  std::array<unsigned char, k_block> outer_pad{};
  for (std::size_t i = 0; i < k_block; ++i) {
    inner_pad[i] = static_cast<unsigned char>(padded[i] ^ 0x36);
    outer_pad[i] = static_cast<unsigned char>(padded[i] ^ 0x5c);
  }
  const std::array<unsigned char, 32> inner =
      Sha256().add(inner_pad.data(), k_block).add(data.data(), data.size()).digest();
  const std::array<unsigned char, 32> outer =
      Sha256().add(outer_pad.data(), k_block).add(inner.data(), inner.size()).digest();
  OPENSSL_cleanse(padded.data(), padded.size());
  OPENSSL_cleanse(inner_pad.data(), inner_pad.size());
  OPENSSL_cleanse(outer_pad.data(), outer_pad.size());
  return std::string(reinterpret_cast<const char*>(outer.data()), outer.size());
}

std::string hmac_sha256_hex(std::string_view key, std::string_view data) {
  std::string raw = hmac_sha256(key, data);
  return hex(reinterpret_cast<const unsigned char*>(raw.data()), raw.size());
}

std::string random_bytes(std::size_t count) {
  std::string raw(count, '\0');
  if (random::Source* source = random::replacement()) {
    source->fill(reinterpret_cast<unsigned char*>(raw.data()), count, /*secret=*/true);
    return raw;
  }
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(count)) != 1) {
    throw std::runtime_error("RAND_bytes failed");  // no entropy: nothing safe to do
  }
  return raw;
}

void append_uniform(std::string& out, std::string_view bytes, std::string_view alphabet,
                    std::size_t count) {
  const std::size_t size = alphabet.size();
  const std::size_t kept_below = 256 - 256 % size;
  for (char c : bytes) {
    if (out.size() >= count) return;
    const auto byte = static_cast<unsigned char>(c);
    if (byte < kept_below) out += alphabet[byte % size];
  }
}

std::string random_string(std::string_view alphabet, std::size_t count) {
  if (alphabet.size() < 2 || alphabet.size() > 256) {
    throw std::invalid_argument("random_string: an alphabet of 2 to 256 characters");
  }
  std::string out;
  out.reserve(count);
  // Enough bytes for every character in most draws; the few dropped are drawn again.
  while (out.size() < count) append_uniform(out, random_bytes(count - out.size() + 8), alphabet, count);
  return out;
}

namespace {

// Bumped in a forked child: every pool made before the fork is then stale.
std::atomic<unsigned> g_fork_generation{0};

void on_fork_child() { g_fork_generation.fetch_add(1, std::memory_order_relaxed); }

struct RandomPool {
  static constexpr std::size_t k_size = 4096;
  unsigned char bytes[k_size];
  std::size_t used = k_size;  // empty until the first draw
  unsigned generation = 0;

  ~RandomPool() { OPENSSL_cleanse(bytes, k_size); }

  void refill(unsigned current_generation) {
    if (RAND_bytes(bytes, static_cast<int>(k_size)) != 1) {
      throw std::runtime_error("RAND_bytes failed");  // no entropy: nothing safe to do
    }
    used = 0;
    generation = current_generation;
  }
};

}  // namespace

void pooled_random_bytes(unsigned char* out, std::size_t count) {
  if (random::Source* source = random::replacement()) {
    source->fill(out, count, /*secret=*/false);
    return;
  }
  static std::once_flag registered;
  std::call_once(registered, [] { pthread_atfork(nullptr, nullptr, on_fork_child); });
  thread_local RandomPool pool;
  const unsigned generation = g_fork_generation.load(std::memory_order_relaxed);
  if (pool.generation != generation) pool.used = RandomPool::k_size;
  while (count > 0) {
    if (pool.used == RandomPool::k_size) pool.refill(generation);
    const std::size_t take = std::min(count, RandomPool::k_size - pool.used);
    std::memcpy(out, pool.bytes + pool.used, take);
    OPENSSL_cleanse(pool.bytes + pool.used, take);  // a drawn byte is never handed out twice
    pool.used += take;
    out += take;
    count -= take;
  }
}

std::string random_token(std::size_t bytes) { return base64url(random_bytes(bytes)); }

bool is_random_token(std::string_view text, std::size_t bytes) {
  if (text.size() != (bytes * 4 + 2) / 3) return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_';
  });
}

std::string base64url(std::string_view bytes) { return encode(bytes, k_base64url, false); }
std::string base64(std::string_view bytes) { return encode(bytes, k_base64, true); }
void append_base64(std::string& out, std::string_view bytes) {
  encode_into(out, bytes, k_base64, true);
}

std::string base64_decode(std::string_view text, bool& ok) {
  ok = false;
  std::string clean(text);
  while (!clean.empty() && clean.back() == '=') clean.pop_back();
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (char c : clean) {
    int v;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '+' || c == '-') v = 62;
    else if (c == '/' || c == '_') v = 63;
    else return {};
    buffer = (buffer << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xFF);
    }
  }
  ok = true;
  return out;
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::optional<std::string> scrypt(std::string_view password, std::string_view salt, int log2_n,
                                  std::uint32_t r, std::uint32_t p,
                                  std::uint64_t max_memory_bytes, std::size_t length) {
  if (log2_n < 1 || log2_n > 62 || length == 0) return std::nullopt;
  struct KdfFree {
    void operator()(EVP_KDF_CTX* context) const { EVP_KDF_CTX_free(context); }
  };
  EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "SCRYPT", nullptr);
  if (!kdf) return std::nullopt;
  std::unique_ptr<EVP_KDF_CTX, KdfFree> context(EVP_KDF_CTX_new(kdf));
  EVP_KDF_free(kdf);  // the context holds its own reference
  if (!context) return std::nullopt;
  std::uint64_t n = std::uint64_t{1} << log2_n;
  // OSSL_PARAM wants non-const pointers; OpenSSL only reads these.
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_PASSWORD,
                                        const_cast<char*>(password.data()), password.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, const_cast<char*>(salt.data()),
                                        salt.size()),
      OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_SCRYPT_N, &n),
      OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_R, &r),
      OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_P, &p),
      OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_SCRYPT_MAXMEM, &max_memory_bytes),
      OSSL_PARAM_construct_end()};
  std::string out(length, '\0');
  if (EVP_KDF_derive(context.get(), reinterpret_cast<unsigned char*>(out.data()), length,
                     params) != 1) {
    return std::nullopt;
  }
  return out;
}

struct Sealer::Remembered {
  std::mutex mutex;
  std::unordered_map<std::string, std::string> opened;  // aad size:aad sealed -> plain

  void forget() {
    for (auto& [sealed, plain] : opened) OPENSSL_cleanse(plain.data(), plain.size());
    opened.clear();
  }
  ~Remembered() { forget(); }
};

Sealer::Sealer(std::string_view key) : key_(key), remembered_(std::make_unique<Remembered>()) {
  if (key_.size() != k_key_size) {
    OPENSSL_cleanse(key_.data(), key_.size());
    throw std::invalid_argument("an AES-256-GCM key is 32 bytes");
  }
}

Sealer::~Sealer() { OPENSSL_cleanse(key_.data(), key_.size()); }

Sealer::Sealer(Sealer&& other) noexcept
    : key_(std::move(other.key_)), remembered_(std::move(other.remembered_)) {
  other.key_.clear();
}

Sealer& Sealer::operator=(Sealer&& other) noexcept {
  if (this != &other) {
    OPENSSL_cleanse(key_.data(), key_.size());
    key_ = std::move(other.key_);
    remembered_ = std::move(other.remembered_);
    other.key_.clear();
  }
  return *this;
}

std::string Sealer::seal(std::string_view plain, std::string_view aad) const {
  if (key_.size() != k_key_size) throw std::logic_error("Sealer used after it was moved from");
  if (plain.size() > INT_MAX / 2 || aad.size() > INT_MAX / 2) {
    throw std::invalid_argument("text too long to seal");
  }
  std::string out = random_bytes(k_nonce_size);
  CipherContext context = gcm_context(true, key_, out, aad);
  if (!context) throw std::runtime_error("AES-256-GCM setup failed");
  out.resize(k_nonce_size + plain.size() + k_tag_size);
  auto* cipher = reinterpret_cast<unsigned char*>(out.data() + k_nonce_size);
  int written = 0, final_written = 0;
  if ((!plain.empty() && EVP_EncryptUpdate(context.get(), cipher, &written, bytes_of(plain),
                                           static_cast<int>(plain.size())) != 1) ||
      EVP_EncryptFinal_ex(context.get(), cipher + written, &final_written) != 1 ||
      EVP_CIPHER_CTX_ctrl(context.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(k_tag_size),
                          cipher + plain.size()) != 1) {
    throw std::runtime_error("AES-256-GCM sealing failed");
  }
  return base64(out);
}

std::string Sealer::fingerprint(std::string_view plain) const {
  // A key of its own for HMAC (never the AES key itself), derived from the sealing key.
  static constexpr std::string_view k_label = "tesoro card number fingerprint";
  std::string raw_key = hmac_sha256(key_, k_label);
  std::string out = hmac_sha256_hex(raw_key, plain);
  OPENSSL_cleanse(raw_key.data(), raw_key.size());
  return out;
}

std::optional<std::string> Sealer::open(std::string_view sealed, std::string_view aad) const {
  if (key_.size() != k_key_size || sealed.size() > INT_MAX / 2 || aad.size() > INT_MAX / 2) {
    return std::nullopt;
  }
  bool decoded = false;
  std::string raw = base64_decode(sealed, decoded);
  if (!decoded || raw.size() < k_nonce_size + k_tag_size) return std::nullopt;
  std::string_view nonce(raw.data(), k_nonce_size);
  std::string_view cipher(raw.data() + k_nonce_size, raw.size() - k_nonce_size - k_tag_size);
  std::string tag = raw.substr(raw.size() - k_tag_size);
  CipherContext context = gcm_context(false, key_, nonce, aad);
  if (!context) return std::nullopt;
  std::string plain(cipher.size(), '\0');
  auto* out = reinterpret_cast<unsigned char*>(plain.data());
  int written = 0, final_written = 0;
  bool ok = (cipher.empty() || EVP_DecryptUpdate(context.get(), out, &written, bytes_of(cipher),
                                                 static_cast<int>(cipher.size())) == 1) &&
            EVP_CIPHER_CTX_ctrl(context.get(), EVP_CTRL_GCM_SET_TAG,
                                static_cast<int>(k_tag_size), tag.data()) == 1 &&
            EVP_DecryptFinal_ex(context.get(), out + written, &final_written) == 1;
  if (!ok) {
    // Nothing of an unauthenticated text leaves this function.
    OPENSSL_cleanse(plain.data(), plain.size());
    return std::nullopt;
  }
  return plain;
}

std::optional<std::string> Sealer::open_remembered(std::string_view sealed,
                                                   std::string_view aad) const {
  if (!remembered_) return open(sealed, aad);  // moved from: open() refuses without its key
  std::string name = std::to_string(aad.size());
  name += ':';
  name += aad;
  name += sealed;
  {
    std::lock_guard lock(remembered_->mutex);
    if (auto found = remembered_->opened.find(name); found != remembered_->opened.end()) {
      return found->second;
    }
  }
  std::optional<std::string> plain = open(sealed, aad);
  if (!plain) return plain;
  std::lock_guard lock(remembered_->mutex);
  if (remembered_->opened.size() >= limits::k_sealer_remembered_texts) remembered_->forget();
  remembered_->opened.emplace(std::move(name), *plain);
  return plain;
}

}  // namespace tesoro::crypto
