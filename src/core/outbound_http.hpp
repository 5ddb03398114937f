#pragma once
// Outgoing HTTP requests as values, and the seam through which code that does no I/O sends them.
//
// The domain builds requests (a webhook delivery, a card authorization's question to the tenant)
// and reads responses, but never touches a socket or the resolver: it is handed a Transport,
// which resolves host names and runs requests. The server's Transport is libcurl and the system
// resolver (http/client.hpp); a test may hand in its own, which answers as the test says.
//
// Safety of destinations is the caller's rule, the transport's means: the caller resolves the
// host (Transport::resolve), keeps the addresses it allows, and hands them in as
// `pinned_addresses`; the request then connects to those addresses only, so DNS cannot answer
// differently between the check and the connection. Redirects are never followed, proxies from
// the environment are never used, and only http and https are spoken.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/limits.hpp"
#include "core/time.hpp"

namespace tesoro::outbound_http {

struct UrlParts {
  std::string scheme;  // http | https
  std::string host;    // without the brackets of an IPv6 literal
  int port = 0;        // the scheme's default when the URL has none
  bool ip_literal = false;
};
// nullopt when `url` is not an absolute http(s) URL with a host. Read by libcurl's URL parser
// (no I/O): the host checked is the host the server's transport connects to.
std::optional<UrlParts> parse_url(std::string_view url);

// Every address a host resolves to (numeric IPv4 or IPv6 text, without brackets), or why none.
struct Resolved {
  std::vector<std::string> addresses;
  std::string error;  // when `addresses` is empty
};

struct Request {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;                  // POSTed
  // Where the URL's host may connect (from Transport::resolve, filtered by the caller); empty
  // for an IP-literal host, which is connected to as is.
  std::vector<std::string> pinned_addresses;
  std::int64_t timeout_ms = limits::k_webhook_timeout_ms;  // the whole exchange
  // Of the response body kept; the rest is read and dropped.
  std::size_t body_max_bytes = limits::k_webhook_response_body_max_bytes;
};

struct Response {
  std::optional<int> status;         // nullopt: no response (error says why)
  std::optional<std::string> error;  // transport failure: timeout, refused, reset ...
  bool timed_out = false;
  std::string body;                  // at most body_max_bytes, as received
  std::optional<std::string> retry_after;  // the Retry-After header, when given
  std::int64_t latency_ms = 0;             // request sent to response read
};

// Requests in flight on the calling thread. Slots are the caller's numbers (0..slots-1): each
// slot runs one request at a time and keeps its connection for the next one.
class Requests {
 public:
  virtual ~Requests() = default;
  // Starts `request` on `slot`, which must be idle.
  virtual void start(std::size_t slot, const Request& request) = 0;
  // Drives the requests for at most `wait_ms` and returns those that finished, by slot.
  virtual std::vector<std::pair<std::size_t, Response>> poll(int wait_ms) = 0;
  // How many requests are in flight.
  virtual std::size_t running() const = 0;
  // Drops every request in flight (their slots become idle, nothing is reported).
  virtual void abandon_all() = 0;
};

// The seam: name resolution and requests. Its functions may be called from any thread.
class Transport {
 public:
  virtual ~Transport() = default;
  // Every address `host` resolves to; blocks for as long as the resolver takes.
  virtual Resolved resolve(const std::string& host, int port) const = 0;
  // `slots` requests at a time, driven by the caller's thread.
  virtual std::unique_ptr<Requests> open(std::size_t slots) const = 0;
};

// The delay a Retry-After value asks for, from `real_now`: delta seconds ("120") or an HTTP
// date ("Wed, 21 Oct 2026 07:28:00 GMT", and the obsolete RFC 850 and asctime forms). A date in
// the past is 0. nullopt when the value is neither.
std::optional<time::Micros> parse_retry_after(std::string_view value, time::Micros real_now);

// libcurl's process-wide setup, done once whichever of its users comes first (curl_global_init
// is not safe to race with other threads' first curl calls).
void curl_global_once();

// Response text fit for a log: at most `max_bytes`, cut on a character boundary, with control
// characters and bytes that are not UTF-8 replaced by U+FFFD (tabs and line breaks kept).
std::string printable_text(std::string_view bytes, std::size_t max_bytes);

}  // namespace tesoro::outbound_http
