#include "contract_check.hpp"

#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>
#include <string_view>

#include "harness.hpp"

extern char** environ;

namespace harness {

namespace {

// The checker process and the two ends of its pipes; null streams when it could not start.
class Checker {
 public:
  Checker() {
    const std::string source = TESORO_SOURCE_DIR;
    const std::string script = source + "/tests/contract/serve.js";
    const std::string description = source + "/openapi/tesoro.yaml";
    int to_child[2];
    int from_child[2];
    if (::pipe(to_child) != 0 || ::pipe(from_child) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
    for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) {
      posix_spawn_file_actions_addclose(&actions, fd);
    }
    const char* argv[] = {"node", script.c_str(), description.c_str(), nullptr};
    pid_t pid = 0;
    int spawned = ::posix_spawnp(&pid, "node", &actions, nullptr, const_cast<char**>(argv), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(to_child[0]);
    ::close(from_child[1]);
    if (spawned != 0) {
      ::close(to_child[1]);
      ::close(from_child[0]);
      return;
    }
    // The checker ends when its stdin closes, at the latest when this process exits.
    ::signal(SIGPIPE, SIG_IGN);
    to_ = ::fdopen(to_child[1], "w");
    from_ = ::fdopen(from_child[0], "r");
  }

  std::string check(const std::string& line) {
    std::lock_guard lock(mutex_);
    if (!to_ || !from_) return "the contract checker (node tests/contract/serve.js) did not start";
    if (std::fputs(line.c_str(), to_) < 0 || std::fputc('\n', to_) == EOF || std::fflush(to_) != 0) {
      return "the contract checker stopped (is tests/contract/node_modules installed? "
             "scripts/install-deps installs it)";
    }
    std::string answer;
    int c;
    while ((c = std::fgetc(from_)) != EOF && c != '\n') answer += static_cast<char>(c);
    if (c == EOF) return "the contract checker stopped without answering";
    boost::system::error_code error;
    boost::json::value verdict = boost::json::parse(answer, error);
    if (error || !verdict.is_string()) return "the contract checker answered: " + answer;
    return std::string(verdict.get_string());
  }

 private:
  std::mutex mutex_;
  std::FILE* to_ = nullptr;
  std::FILE* from_ = nullptr;
};

// One HTTP/1.x message read from the front of `bytes` (a request when `request_line`, else an
// answer to a request of `method`); false when it is not there whole.
struct Message {
  std::string start_line;
  std::map<std::string, std::string> headers;  // lower-cased names
  std::string body;
};

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// A request's body may be cut short (a client that stalls): then it is what was sent.
bool read_message(std::string_view& bytes, bool no_body, Message& out, bool short_body = false) {
  const std::size_t end = bytes.find("\r\n\r\n");
  if (end == std::string_view::npos) return false;
  std::string_view head = bytes.substr(0, end);
  std::size_t line_end = head.find("\r\n");
  out.start_line = std::string(head.substr(0, line_end));
  while (line_end != std::string_view::npos) {
    const std::size_t next = head.find("\r\n", line_end + 2);
    std::string_view line = head.substr(line_end + 2, next == std::string_view::npos
                                                          ? std::string_view::npos
                                                          : next - line_end - 2);
    const std::size_t colon = line.find(':');
    if (colon != std::string_view::npos) {
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      out.headers[lower(std::string(line.substr(0, colon)))] = std::string(value);
    }
    line_end = next;
  }
  const auto coding = out.headers.find("transfer-encoding");
  if (!no_body && coding != out.headers.end() && lower(coding->second) == "chunked") {
    // Chunks up to the last (size 0) and its empty trailer.
    std::string_view rest = bytes.substr(end + 4);
    for (;;) {
      const std::size_t line = rest.find("\r\n");
      if (line == std::string_view::npos) return false;
      const std::size_t size = std::strtoull(std::string(rest.substr(0, line)).c_str(), nullptr, 16);
      if (rest.size() < line + 2 + size + 2) return false;
      out.body += rest.substr(line + 2, size);
      rest.remove_prefix(line + 2 + size + 2);
      if (size == 0) break;
    }
    bytes = rest;
    return true;
  }
  std::size_t length = 0;
  if (const auto declared = out.headers.find("content-length");
      !no_body && declared != out.headers.end()) {
    length = std::strtoull(declared->second.c_str(), nullptr, 10);
  }
  if (short_body) length = std::min(length, bytes.size() - end - 4);
  if (bytes.size() < end + 4 + length) return false;
  out.body = std::string(bytes.substr(end + 4, length));
  bytes.remove_prefix(end + 4 + length);
  return true;
}

std::string check(const Request& request, const Reply& reply, bool raw) {
  static Checker checker;
  boost::json::object headers;
  for (const auto& [name, value] : reply.headers) headers[name] = value;
  boost::json::object exchange{{"method", request.method}, {"path", request.path},
                               {"status", reply.status}, {"headers", std::move(headers)},
                               {"body", reply.body}, {"raw", raw}};
  return checker.check(boost::json::serialize(exchange));
}

}  // namespace

std::vector<std::string> raw_contract_violations(const std::string& sent,
                                                 const std::string& received) {
  std::vector<std::string> violations;
  std::string_view requests = sent;
  std::string_view answers = received;
  Message answer;
  while (!answers.empty()) {
    Request request;
    Message asked;
    if (read_message(requests, false, asked, true)) {
      std::istringstream line(asked.start_line);
      std::string version;
      line >> request.method >> request.path >> version;
      if (!version.starts_with("HTTP/1.")) request = Request{"", "", "", {}};
    }
    // Interim 100 Continue answers come before the final one.
    do {
      if (!read_message(answers, request.method == "HEAD", answer)) return violations;
    } while (answer.start_line.find(" 100 ") != std::string::npos);
    Reply reply;
    reply.status = std::strtol(answer.start_line.c_str() + answer.start_line.find(' '), nullptr, 10);
    reply.headers = answer.headers;
    reply.body = answer.body;
    if (std::string violation = check(request, reply, true); !violation.empty()) {
      violations.push_back(violation);
    }
  }
  return violations;
}

std::string contract_violation(const Request& request, const Reply& reply) {
  return check(request, reply, false);
}

}  // namespace harness
