#pragma once
// The one source of randomness, beside time::Clock. Every id, secret, token, salt, card number,
// account number and generated key is drawn through crypto::random_bytes (secrets) or
// crypto::pooled_random_bytes (values public once made), and both draw from here: the
// cryptographic source (OpenSSL's RAND_bytes), unless a test replaced it to make its draws
// known. Nothing in the server replaces it.
#include <cstddef>

namespace tesoro::random {

class Source {
 public:
  virtual ~Source() = default;
  // `count` bytes into `out`. `secret`: they make a secret (never drawn from a pool).
  virtual void fill(unsigned char* out, std::size_t count, bool secret) = 0;
};

// The source a test put in place, or nullptr: the cryptographic one.
Source* replacement();

// For tests: `source` is drawn from, on every thread, until this is destroyed (then the previous
// replacement, or the cryptographic source, again). Made and destroyed while no other thread
// draws.
class Replaced {
 public:
  explicit Replaced(Source& source);
  ~Replaced();
  Replaced(const Replaced&) = delete;
  Replaced& operator=(const Replaced&) = delete;

 private:
  Source* previous_;
};

}  // namespace tesoro::random
