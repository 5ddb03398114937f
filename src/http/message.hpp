#pragma once
// HTTP request and response as the rest of the server sees them: plain values, no Beast types.
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tesoro::http {

using Headers = std::vector<std::pair<std::string, std::string>>;

class Later;  // http/later.hpp

struct Request {
  std::string method;  // upper case, as sent
  std::string target;  // path and query as sent
  Headers headers;     // names lower-cased
  std::string body;
  std::string remote_address;

  // The target without its query.
  std::string_view path() const {
    const std::string_view all(target);
    return all.substr(0, all.find('?'));
  }

  // First value of a header (name in lower case), or nullptr.
  const std::string* header(std::string_view name) const {
    for (const auto& [key, value] : headers) {
      if (key == name) return &value;
    }
    return nullptr;
  }
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  Headers headers;
  // Set when the answer comes later (http/later.hpp): the rest of this Response is then unused.
  std::shared_ptr<Later> later;

  void set_header(std::string name, std::string value) {
    headers.emplace_back(std::move(name), std::move(value));
  }
};

}  // namespace tesoro::http
