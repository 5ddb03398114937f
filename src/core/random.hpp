#pragma once
// The one source of randomness, beside time::Clock. Every id, secret, token, salt, card number,
// account number and generated key is drawn through crypto::random_bytes (secrets) or
// crypto::pooled_random_bytes (values public once made), and both draw from here: the
// cryptographic source (OpenSSL's RAND_bytes), unless a test replaced it to make its draws
// known. Nothing in the server replaces it. An id's leading characters carry the instant it was
// made (core/ids.hpp): that instant is the source's too, so a test that replaces it knows every
// character of the ids made meanwhile.
#include <chrono>
#include <cstddef>

namespace tesoro::random {

class Source {
 public:
  virtual ~Source() = default;
  // `count` bytes into `out`. `secret`: they make a secret (never drawn from a pool).
  virtual void fill(unsigned char* out, std::size_t count, bool secret) = 0;
  // The instant the ids made now carry: the system's real time, unless a test fixes it.
  virtual std::chrono::system_clock::time_point id_time() {
    return std::chrono::system_clock::now();
  }
};

// The source a test put in place, or nullptr: the cryptographic one.
Source* replacement();
// The instant an id made now carries (Source::id_time of the replacement, else real time).
std::chrono::system_clock::time_point id_time();

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
