// A request's bytes as the HTTP layer reads them (src/http/server.cpp): Beast's parser with the
// server's limits (16 KiB of head, 1 MiB of body), then the checks of RFC 9112 the server adds
// (http::head_problem: Host, Transfer-Encoding).
#include <boost/asio/buffer.hpp>
#include <boost/beast/http.hpp>

#include "core/limits.hpp"
#include "fuzz.hpp"
#include "http/request_head.hpp"

using namespace tesoro;
namespace bhttp = boost::beast::http;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  bhttp::request_parser<bhttp::string_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(limits::k_header_max_bytes));
  parser.body_limit(limits::k_body_max_bytes);
  parser.eager(true);
  boost::beast::error_code ec;
  std::size_t used = parser.put(boost::asio::buffer(data, size), ec);
  FUZZ_CHECK(used <= size);
  if (!parser.is_header_done()) return 0;
  const auto& header = parser.get();
  http::RequestHead head{header.version(), static_cast<int>(header.count(bhttp::field::host)),
                         static_cast<int>(header.count(bhttp::field::transfer_encoding)),
                         header[bhttp::field::transfer_encoding],
                         static_cast<int>(header.count(bhttp::field::content_length))};
  auto problem = http::head_problem(head);
  // A head the server accepts has one Host (HTTP/1.1) and at most a plain chunked coding.
  if (!problem) {
    FUZZ_CHECK(head.version < 11 || head.host_fields == 1);
    FUZZ_CHECK(head.transfer_encoding_fields <= 1);
    FUZZ_CHECK(head.transfer_encoding_fields == 0 || head.content_length_fields == 0);
  }
  return 0;
}
