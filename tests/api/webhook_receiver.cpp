#include "webhook_receiver.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace harness {
namespace {

constexpr int k_poll_ms = 50;  // how often blocked threads look at `stopping_`

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string trim(const std::string& text) {
  std::size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  std::size_t last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

const char* reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 204: return "No Content";
    case 410: return "Gone";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}

bool send_all(int fd, const std::string& bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

std::string ReceivedRequest::header(const std::string& name) const {
  auto found = headers.find(lower(name));
  return found == headers.end() ? "" : found->second;
}

WebhookReceiver::WebhookReceiver() {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  int yes = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listen_fd_, 64) != 0) {
    throw std::runtime_error("webhook receiver: cannot listen on 127.0.0.1");
  }
  socklen_t length = sizeof address;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

WebhookReceiver::~WebhookReceiver() {
  stopping_ = true;
  changed_.notify_all();
  acceptor_.join();
  for (std::thread& connection : connections_) connection.join();
  ::close(listen_fd_);
}

std::string WebhookReceiver::url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + path;
}

void WebhookReceiver::script(const std::vector<Answer>& answers) {
  std::lock_guard lock(mutex_);
  script_.insert(script_.end(), answers.begin(), answers.end());
}

void WebhookReceiver::set_default(const Answer& answer) {
  std::lock_guard lock(mutex_);
  default_answer_ = answer;
}

void WebhookReceiver::release_hung() {
  {
    std::lock_guard lock(mutex_);
    ++release_generation_;
  }
  changed_.notify_all();
}

std::vector<ReceivedRequest> WebhookReceiver::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

std::size_t WebhookReceiver::count() const {
  std::lock_guard lock(mutex_);
  return requests_.size();
}

bool WebhookReceiver::wait_for(std::size_t n, int timeout_ms) const {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                           [&] { return requests_.size() >= n; });
}

bool WebhookReceiver::stays_at(std::size_t n, int ms) const {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return requests_.size() > n; });
  return requests_.size() == n;
}

Answer WebhookReceiver::next_answer() {
  if (script_.empty()) return default_answer_;
  Answer answer = script_.front();
  script_.pop_front();
  return answer;
}

void WebhookReceiver::accept_loop() {
  while (!stopping_) {
    pollfd waiting{listen_fd_, POLLIN, 0};
    if (::poll(&waiting, 1, k_poll_ms) <= 0) continue;
    int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    std::lock_guard lock(mutex_);
    connections_.emplace_back([this, fd] { serve(fd); });
  }
}

// Requests of one keep-alive connection, until the peer closes it or the receiver stops.
void WebhookReceiver::serve(int fd) {
  std::string buffer;
  auto read_more = [&]() -> bool {
    while (!stopping_) {
      pollfd waiting{fd, POLLIN, 0};
      int ready = ::poll(&waiting, 1, k_poll_ms);
      if (ready == 0) continue;
      char chunk[8192];
      ssize_t n = ready > 0 ? ::recv(fd, chunk, sizeof chunk, 0) : -1;
      if (n <= 0) return false;
      buffer.append(chunk, static_cast<std::size_t>(n));
      return true;
    }
    return false;
  };
  while (true) {
    std::size_t head_end;
    while ((head_end = buffer.find("\r\n\r\n")) == std::string::npos) {
      if (!read_more()) return static_cast<void>(::close(fd));
    }
    ReceivedRequest request;
    request.at = std::chrono::steady_clock::now();
    std::string head = buffer.substr(0, head_end);
    std::size_t line_end = head.find("\r\n");
    std::string request_line = head.substr(0, line_end);
    std::size_t space = request_line.find(' ');
    request.method = request_line.substr(0, space);
    request.target = request_line.substr(space + 1, request_line.rfind(' ') - space - 1);
    std::size_t at = line_end == std::string::npos ? head.size() : line_end + 2;
    while (at < head.size()) {
      std::size_t next = head.find("\r\n", at);
      if (next == std::string::npos) next = head.size();
      std::string line = head.substr(at, next - at);
      std::size_t colon = line.find(':');
      if (colon != std::string::npos) {
        request.headers[lower(line.substr(0, colon))] = trim(line.substr(colon + 1));
      }
      at = next + 2;
    }
    std::size_t length = 0;
    if (auto found = request.headers.find("content-length"); found != request.headers.end()) {
      length = std::stoul(found->second);
    }
    buffer.erase(0, head_end + 4);
    while (buffer.size() < length) {
      if (!read_more()) return static_cast<void>(::close(fd));
    }
    request.body = buffer.substr(0, length);
    buffer.erase(0, length);

    Answer answer;
    std::uint64_t generation = 0;
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(request);
      answer = next_answer();
      generation = release_generation_;
    }
    changed_.notify_all();
    if (answer.hang) {
      std::unique_lock lock(mutex_);
      while (!stopping_ && release_generation_ == generation) {
        changed_.wait_for(lock, std::chrono::milliseconds(k_poll_ms));
      }
      lock.unlock();
      ::close(fd);
      return;
    }
    if (answer.delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(answer.delay_ms));
    std::string response = "HTTP/1.1 " + std::to_string(answer.status) + " " +
                           reason(answer.status) + "\r\nContent-Length: " +
                           std::to_string(answer.body.size()) + "\r\n";
    if (answer.retry_after) response += "Retry-After: " + *answer.retry_after + "\r\n";
    response += "Content-Type: text/plain\r\n\r\n" + answer.body;
    if (!send_all(fd, response)) return static_cast<void>(::close(fd));
  }
}

// --- Standard Webhooks, with nothing of the server's code --------------------------------------

std::string base64_encode(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::string base64_decode(const std::string& text) {
  std::string out(3 * text.size() / 4 + 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()),
                          static_cast<int>(text.size()));
  if (n < 0) return "";
  std::size_t padding = 0;
  for (auto it = text.rbegin(); it != text.rend() && *it == '='; ++it) ++padding;
  out.resize(static_cast<std::size_t>(n) - padding);
  return out;
}

static std::string hmac_sha256(const std::string& key, const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest, &length);
  return std::string(reinterpret_cast<char*>(digest), length);
}

// The signature the specification computes: the key is the base64 after `whsec_`, the signed
// content "<webhook-id>.<webhook-timestamp>.<body>", one "v1,<base64>" per secret.
bool signed_with(const std::string& secret, const harness::ReceivedRequest& request) {
  EXPECT_EQ(secret.rfind("whsec_", 0), 0u) << secret;
  const std::string key = base64_decode(secret.substr(6));
  EXPECT_EQ(key.size(), 32u);
  const std::string expected =
      "v1," + base64_encode(hmac_sha256(key, request.header("webhook-id") + "." +
                                                 request.header("webhook-timestamp") + "." +
                                                 request.body));
  std::string header = request.header("webhook-signature");
  std::size_t start = 0;
  while (start <= header.size()) {
    std::size_t space = header.find(' ', start);
    if (space == std::string::npos) space = header.size();
    if (header.substr(start, space - start) == expected) return true;
    start = space + 1;
  }
  return false;
}

}  // namespace harness
