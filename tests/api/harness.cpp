#include "harness.hpp"

#include "contract_check.hpp"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace harness {

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string run_capture(const std::string& command_line, int* exit_code) {
  std::string out;
  FILE* pipe = ::popen(command_line.c_str(), "r");
  if (!pipe) throw std::runtime_error("popen failed");
  std::array<char, 4096> buffer;
  std::size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  int status = ::pclose(pipe);
  if (exit_code) *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

namespace {

std::size_t write_body(char* data, std::size_t size, std::size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

std::size_t write_header(char* data, std::size_t size, std::size_t count, void* user) {
  std::string line(data, size * count);
  auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ')) value.erase(0, 1);
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n')) value.pop_back();
    (*static_cast<std::map<std::string, std::string>*>(user))[name] = value;
  }
  return size * count;
}

// This process's environment with `changes` applied ("NAME=value" sets, "NAME" unsets).
std::vector<std::string> environment_with(const std::vector<std::string>& changes) {
  std::vector<std::string> out;
  for (char** entry = environ; *entry; ++entry) out.emplace_back(*entry);
  for (const std::string& change : changes) {
    std::string name = change.substr(0, change.find('='));
    std::erase_if(out, [&](const std::string& entry) { return entry.rfind(name + "=", 0) == 0; });
    if (change.find('=') != std::string::npos) out.push_back(change);
  }
  return out;
}

// A new database on the test server: empty, or a copy of `template_name`.
std::string fresh_database_url(const std::string& template_name = "") {
  const char* base = std::getenv("TESORO_TEST_DATABASE_URL");
  static std::mt19937_64 random{std::random_device{}()};
  std::string name = "tesoro_test_" + std::to_string(random() % 1000000000ULL);
  std::string create = "CREATE DATABASE " + name;
  if (!template_name.empty()) create += " TEMPLATE " + template_name;
  int code = 0;
  run_capture("psql " + shell_quote(base) + " -qAtc " + shell_quote(create) + " 2>&1", &code);
  if (code != 0) throw std::runtime_error("cannot create test database " + name);
  std::string url = base;
  auto slash = url.rfind('/');
  auto question = url.find('?', slash);
  url = url.substr(0, slash + 1) + name + (question == std::string::npos ? "" : url.substr(question));
  // With several servers in the URL (scripts/postgres-ha), libpq tries a standby before the
  // primary and fails on the database until the standby has replayed its creation.
  for (int i = 0; i < 200; ++i) {
    run_capture("psql " + shell_quote(url) + " -qAtc 'SELECT 1' > /dev/null 2>&1", &code);
    if (code == 0) return url;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  throw std::runtime_error("cannot connect to the new test database " + name);
}

// A database `tesoro migrate` brought to the binary's schema, once per test process: each server's
// database is a copy of it, which `tesoro init` then finds migrated (copying it costs the
// PostgreSQL server about 0.27 s, creating an empty one 0.17 s and migrating it 0.45 s). Nothing
// stays connected to it: PostgreSQL copies only a template nobody is connected to.
const std::string& migrated_template() {
  static const std::string name = [] {
    std::string url = fresh_database_url();
    int code = 0;
    std::string out = run_capture(shell_quote(tesoro_bin()) + " migrate --database-url " +
                                      shell_quote(url) + " 2>&1",
                                  &code);
    if (code != 0) throw std::runtime_error("tesoro migrate failed: " + out);
    std::string path = url.substr(url.rfind('/') + 1);
    return path.substr(0, path.find('?'));
  }();
  return name;
}

// 32 random bytes in base64, what `openssl rand -base64 32` prints.
std::string random_card_key() {
  static constexpr char k_alphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::random_device device;
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (int i = 0; i < 32; ++i) {
    buffer = (buffer << 8) | (device() & 0xFF);
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += k_alphabet[(buffer >> bits) & 63];
    }
  }
  out += k_alphabet[(buffer << (6 - bits)) & 63];  // the last 2 bits, padded with zeros
  return out + "=";
}

// Before main (one thread, before any server starts): every process of the run inherits it.
[[maybe_unused]] const bool k_card_key_set = [] {
  const char* url = std::getenv("TESORO_TEST_DATABASE_URL");
  const char* given = std::getenv("TESORO_CARD_KEY");
  if (url && *url && !(given && *given)) ::setenv("TESORO_CARD_KEY", random_card_key().c_str(), 1);
  return true;
}();

}  // namespace

std::string card_key() {
  const char* key = std::getenv("TESORO_CARD_KEY");
  return is_postgres() && key ? key : "";
}

bool is_postgres() {
  const char* url = std::getenv("TESORO_TEST_DATABASE_URL");
  return url && *url;
}

std::vector<std::string> empty_store_flags(const std::string& data_dir) {
  if (is_postgres()) return {"--database-url", fresh_database_url()};
  return {"--data", data_dir};
}

std::string tesoro_bin() {
  const char* bin = std::getenv("TESORO_BIN");
  return bin ? bin : "./build/tesoro";
}

std::string text(const json::value& value, std::string_view key) {
  return std::string(value.at(key).as_string());
}

std::string account_holder_body(const std::string& external_id) {
  return R"({"address":{"city":"Bogota","country":"CO","line_1":"Calle 1 # 2-3","state":"DC","zip_code":"110111"},)"
         R"("person":{"country_code":"CO","document_number":"1020304050","document_type":"CC","first_name":"Ana","last_name":"Rojas","person_type":"natural"},)"
         R"("external_id":")" + external_id + R"("})";
}

std::string new_uuid() {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  static const char* k_hex = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) out += '-';
    out += k_hex[random() % 16];
  }
  return out;
}

json::value Reply::json() const {
  boost::system::error_code ec;
  json::value value = json::parse(body, ec);
  EXPECT_FALSE(ec) << "body is not JSON: " << body;
  return value;
}

std::string Reply::header(const std::string& name) const {
  auto found = headers.find(name);
  return found == headers.end() ? std::string() : found->second;
}

std::string Reply::error_code() const {
  boost::system::error_code ec;
  json::value value = json::parse(body, ec);
  if (ec || !value.is_object()) return "";
  const json::value* errors = value.as_object().if_contains("errors");
  if (!errors || !errors->is_array() || errors->as_array().empty()) return "";
  return std::string(errors->as_array()[0].as_object().at("error_code").as_string());
}

CommandRun run_tesoro(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  std::string line = "timeout 20 env";
  for (const std::string& part : env) line += " " + shell_quote(part);
  line += " " + shell_quote(tesoro_bin());
  for (const std::string& arg : args) line += " " + shell_quote(arg);
  line += " 2>&1";
  CommandRun run;
  FILE* pipe = ::popen(line.c_str(), "r");
  std::array<char, 4096> buffer;
  std::size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    run.output.append(buffer.data(), n);
  }
  int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

std::string Reply::error_path() const {
  json::value value = json();
  const json::value& path = value.at("errors").at(0).at("path");
  return path.is_string() ? std::string(path.as_string()) : "";
}

std::set<std::string> Reply::error_paths() const {
  std::set<std::string> paths;
  json::value value = json();
  for (const json::value& item : value.at("errors").as_array()) {
    if (item.at("path").is_string()) paths.insert(std::string(item.at("path").as_string()));
  }
  return paths;
}

Server::Server(ServerOptions options) : options_(std::move(options)) {
  char pattern[] = "/tmp/tesoro-test-XXXXXX";
  data_dir_ = ::mkdtemp(pattern);
  if (is_postgres()) database_url_ = fresh_database_url(migrated_template());
  int code = 0;
  std::string out = command({"init", "--json"}, &code);
  if (code != 0) throw std::runtime_error("tesoro init failed: " + out + commands_log());
  credentials_ = json::parse(out).as_object();
  start();
}

Server::~Server() {
  stop();
  check_ledger();
  std::string cleanup = "rm -rf " + shell_quote(data_dir_);
  int ignored = std::system(cleanup.c_str());
  (void)ignored;
}

namespace {
std::atomic<bool> shared_started{false};
}  // namespace

Server& Server::shared() {
  static Server server;
  shared_started = true;
  return server;
}

void Server::check_ledger() {
  if (ledger_checked_) return;
  ledger_checked_ = true;
  int code = 0;
  std::string out = command({"verify"}, &code);
  EXPECT_EQ(code, 0) << "tesoro verify found broken ledger invariants:\n" << out;
}

namespace {
// Verifies the shared server's ledger at the end of the run, while failures can still count.
class LedgerCheck : public ::testing::Environment {
 public:
  void TearDown() override {
    if (shared_started) Server::shared().check_ledger();  // not started just to be checked
  }
};
const auto* const k_ledger_check = ::testing::AddGlobalTestEnvironment(new LedgerCheck);
}  // namespace

std::vector<std::string> Server::store_flags() const {
  if (!database_url_.empty()) return {"--database-url", database_url_};
  return {"--data", data_dir_};
}

std::string Server::store_args() const {
  std::string out;
  for (const std::string& flag : store_flags()) out += " " + shell_quote(flag);
  return out;
}

std::string Server::command(const std::vector<std::string>& args, int* exit_code) const {
  std::string line = shell_quote(tesoro_bin());
  for (const std::string& arg : args) line += " " + shell_quote(arg);
  // Store flags go after the subcommand path (init / keys create / ...).
  line += store_args() + " 2>>" + shell_quote(data_dir_ + "/commands.log");
  return run_capture(line, exit_code);
}

void Server::start() {
  port_ = 0;
  pid_ = spawn(&port_);
}

void Server::restart_with(ServerOptions options) {
  stop();
  options_ = std::move(options);
  start();
}

int Server::start_extra_node() {
  int port = 0;
  extra_pids_.push_back(spawn(&port));
  return port;
}

namespace {

// The port of the first "server.listening" line of the log at `path` after `offset`; 0 while
// there is none.
int listening_port(const std::string& path, std::streamoff offset) {
  std::ifstream file(path);
  file.seekg(offset);
  static constexpr std::string_view k_address = "\"address\":\"http://127.0.0.1:";
  for (std::string line; std::getline(file, line);) {
    if (line.find("\"event\":\"server.listening\"") == std::string::npos) continue;
    const std::size_t at = line.find(k_address);
    if (at == std::string::npos) continue;
    return std::atoi(line.c_str() + at + k_address.size());
  }
  return 0;
}

}  // namespace

int Server::spawn(int* port) {
  // Port 0: the server binds a port of the kernel's choosing and logs it, so no other process
  // (another suite running beside this one) can take it between a choice and the bind.
  std::vector<std::string> args = {tesoro_bin(), "serve", "--listen", "127.0.0.1:0",
                                   "--log-level", "info"};
  const bool workers_given = std::find(options_.extra_args.begin(), options_.extra_args.end(),
                                       "--workers") != options_.extra_args.end();
  if (!workers_given && !options_.engine_default_workers) {
    args.push_back("--workers");
    args.push_back("16");
  }
  for (const std::string& flag : store_flags()) args.push_back(flag);
  if (!options_.rate_limited) {
    args.push_back("--rate-limit");
    args.push_back("0");
  }
  for (const std::string& arg : options_.extra_args) args.push_back(arg);
  std::string log_path = data_dir_ + "/server.log";
  std::error_code no_log_yet;
  const auto log_offset =
      static_cast<std::streamoff>(std::filesystem::file_size(log_path, no_log_yet));
  // Everything execve needs is built before fork: the child only opens, dups and execs.
  std::vector<std::string> environment = environment_with(options_.environment);
  std::vector<char*> envp;
  for (std::string& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a crashed test binary leaves no server behind
    int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    ::dup2(fd, 2);
    ::dup2(fd, 1);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  for (int attempt = 0; attempt < 200; ++attempt) {
    if (*port == 0) *port = listening_port(log_path, no_log_yet ? 0 : log_offset);
    if (*port != 0 && send_to(*port, {"GET", "/healthz", "", {}}).status == 200) return pid;
    int wstatus = 0;
    if (::waitpid(pid, &wstatus, WNOHANG) == pid) {
      throw std::runtime_error("tesoro serve exited at start: " + log_text());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  throw std::runtime_error("tesoro serve did not become healthy: " + log_text());
}

int Server::stop(bool kill_hard) {
  for (int pid : extra_pids_) {
    ::kill(pid, SIGTERM);
    ::waitpid(pid, nullptr, 0);
  }
  extra_pids_.clear();
  if (pid_ <= 0) return -1;
  ::kill(pid_, kill_hard ? SIGKILL : SIGTERM);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string Server::sql(const std::string& statement) const {
  std::string line =
      database_url_.empty()
          ? "sqlite3 -batch -cmd '.timeout 5000' " + shell_quote(data_dir_ + "/tesoro.db") + " " +
                shell_quote(statement)
          : "psql " + shell_quote(database_url_) + " -qAtc " + shell_quote(statement);
  int code = 0;
  std::string out = run_capture(line + " 2>&1", &code);
  EXPECT_EQ(code, 0) << statement << ": " << out;
  return out;
}

std::string Server::commands_log() const {
  std::ifstream file(data_dir_ + "/commands.log");
  std::stringstream out;
  out << file.rdbuf();
  return out.str();
}

std::string Server::log_text() const {
  std::ifstream file(data_dir_ + "/server.log");
  std::stringstream out;
  out << file.rdbuf();
  return out.str();
}

std::string Server::api_key() const {
  return std::string(credentials_.at("api_key").as_string());
}

std::string Server::access_token(const std::string& scope) const {
  json::object body{{"grant_type", "client_credentials"},
                    {"client_id", credentials_.at("client_id")},
                    {"client_secret", credentials_.at("client_secret")}};
  if (!scope.empty()) body["scope"] = scope;
  Reply reply = post("/api/v1/oauth/token", json::serialize(body));
  if (reply.status != 200) throw std::runtime_error("token request failed: " + reply.body);
  return std::string(reply.json().at("access_token").as_string());
}

Reply Server::send(const Request& request) const { return send_to(port_, request); }

Reply Server::send_to(int port, const Request& request) const {
  Reply reply;
  CURL* curl = curl_easy_init();
  std::string url = "http://127.0.0.1:" + std::to_string(port) + request.path;
  curl_slist* headers = nullptr;
  bool has_content_type = false;
  for (const std::string& header : request.headers) {
    headers = curl_slist_append(headers, header.c_str());
    if (header.rfind("Content-Type", 0) == 0) has_content_type = true;
  }
  if (!request.body.empty() && !has_content_type) {
    headers = curl_slist_append(headers, "Content-Type: application/json");
  }
  headers = curl_slist_append(headers, "Expect:");
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  if (!request.body.empty() || request.method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(request.body.size()));
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, write_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &reply.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, write_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &reply.headers);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, request.path == "/healthz" ? 1000L : 20000L);
  CURLcode result = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply.status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (result != CURLE_OK) {
    reply.status = -static_cast<long>(result);
    return reply;
  }
  if (std::string violation = contract_violation(request, reply); !violation.empty()) {
    ADD_FAILURE() << "the answer breaks openapi/tesoro.yaml: " << violation << "\n  request: "
                  << request.method << " " << request.path << "\n  answer: " << reply.status << " "
                  << reply.body.substr(0, 400);
  }
  return reply;
}

Reply Server::get(const std::string& path, const std::vector<std::string>& headers) const {
  return send({"GET", path, "", headers});
}

Reply Server::post(const std::string& path, const std::string& body,
                   const std::vector<std::string>& headers) const {
  return send({"POST", path, body, headers});
}

std::string Server::raw(const std::string& bytes, int timeout_ms) const {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port_));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return "";
  }
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  std::string out;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                    deadline - std::chrono::steady_clock::now())
                                    .count());
    if (::poll(&p, 1, std::max(left, 1)) <= 0) break;
    char buffer[4096];
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  for (const std::string& violation : raw_contract_violations(bytes, out)) {
    ADD_FAILURE() << "an answer on a raw connection breaks openapi/tesoro.yaml: " << violation;
  }
  return out;
}

std::string mutate_body(const std::string& body, std::mt19937& random) {
  std::string out = body;
  switch (random() % 6) {
    case 0: out.resize(random() % (out.size() + 1)); break;                 // truncated
    case 1: out[random() % out.size()] = static_cast<char>(random() % 256); break;  // any byte
    case 2: out.insert(random() % out.size(), std::string(1 + random() % 3, '\0')); break;
    case 3: {  // a value replaced by another type
      static const char* k_values[] = {"null", "true", "-1", "1e400", "[]", "{}", "\"\"",
                                       "18446744073709551616", "0.5", "\"\\u0000\""};
      auto colon = out.find(':', random() % out.size());
      if (colon != std::string::npos) {
        auto end = out.find_first_of(",}", colon);
        if (end != std::string::npos) out.replace(colon + 1, end - colon - 1, k_values[random() % 10]);
      }
      break;
    }
    case 4: out = std::string(random() % 64, '{') + out; break;             // deeper nesting
    case 5: out.insert(random() % out.size(), "\xc3\x28\xff"); break;       // invalid UTF-8
  }
  return out;
}

std::string stored_bytes(const Server& server) {
  std::vector<std::string> flags = server.store_flags();
  if (flags.at(0) == "--database-url") {
    int code = 0;
    std::string dump = run_capture("pg_dump --data-only " + shell_quote(flags.at(1)), &code);
    EXPECT_EQ(code, 0);
    return dump;
  }
  std::string everything;
  for (const auto& entry : std::filesystem::directory_iterator(flags.at(1))) {
    if (!entry.is_regular_file()) continue;
    std::ifstream file(entry.path(), std::ios::binary);
    everything.append(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  }
  return everything;
}

}  // namespace harness
