#pragma once
// What RFC 9112 asks of a request head that Beast's parser leaves to the server. Beast-free, so
// that unit tests and the fuzz targets call it as the server does.
#include <optional>
#include <string_view>

namespace tesoro::http {

struct RequestHead {
  unsigned version = 11;            // 10 or 11
  int host_fields = 0;              // how many Host fields
  int transfer_encoding_fields = 0;  // how many Transfer-Encoding fields
  std::string_view transfer_encoding;  // the first one's value
  int content_length_fields = 0;     // how many Content-Length fields
};

// Why the request must be refused with 400 (and its connection closed), or nullopt:
// - an HTTP/1.1 request without exactly one Host field (section 3.2);
// - a Transfer-Encoding other than exactly `chunked` (section 6.3: a request whose final coding
//   is not chunked has no knowable length; any other coding, a list, or several fields would let
//   the server and a proxy in front of it read the body differently: request smuggling), a
//   Transfer-Encoding together with a Content-Length (section 6.3 allows refusing it, and a
//   proxy that reads the other one is how smuggling starts), or any Transfer-Encoding on
//   HTTP/1.0 (section 6.1).
std::optional<std::string_view> head_problem(const RequestHead& head);

}  // namespace tesoro::http
