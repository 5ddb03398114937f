#pragma once
// Black-box harness: starts the real `tesoro` binary on a free port with a fresh data directory
// (or a fresh PostgreSQL database when TESORO_TEST_DATABASE_URL is set) and talks to it over HTTP
// with libcurl. Nothing here knows the server's internals.
#include <boost/json.hpp>
#include <map>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace harness {

namespace json = boost::json;

struct Reply {
  long status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // names lower-cased
  json::value json() const;                     // parsed body; fails the test when not JSON
  std::string header(const std::string& name) const;
  // The envelope's first error_code, or "" when the body is not an envelope.
  std::string error_code() const;
  // The envelope's first item's path, or "" when it has none (fails the test when not JSON).
  std::string error_path() const;
  // The paths of every item of the envelope (items without one left out).
  std::set<std::string> error_paths() const;
};

struct Request {
  std::string method = "GET";
  std::string path;
  std::string body;
  std::vector<std::string> headers;  // "Name: value"
};

struct ServerOptions {
  std::vector<std::string> extra_args;  // more `tesoro serve` flags
  bool rate_limited = false;            // default: --rate-limit 0
  // Environment changes for the `tesoro serve` processes: "NAME=value" sets, "NAME" unsets.
  std::vector<std::string> environment;
  // Servers run 16 handler threads (--workers 16) unless extra_args names --workers, or this
  // asks for the engine's default (no --workers at all).
  bool engine_default_workers = false;
};

class Server {
 public:
  explicit Server(ServerOptions options = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The server shared by tests that need no special flags.
  static Server& shared();

  Reply send(const Request& request) const;
  Reply send_to(int port, const Request& request) const;
  // Another `tesoro serve` on the same database: a second node. Returns its port; stopped with
  // the server.
  int start_extra_node();
  Reply get(const std::string& path, const std::vector<std::string>& headers = {}) const;
  Reply post(const std::string& path, const std::string& body,
             const std::vector<std::string>& headers = {}) const;
  // Sends raw bytes on a new TCP connection and returns what came back before close/timeout.
  std::string raw(const std::string& bytes, int timeout_ms = 3000) const;

  // Runs a tesoro command against this server's database; returns stdout, sets exit code.
  std::string command(const std::vector<std::string>& args, int* exit_code = nullptr) const;
  // Runs `tesoro verify` on this server's database and fails the current test on a violation.
  // Every server checks its ledger when it is destroyed; the shared one at the end of the run.
  void check_ledger();
  // Sends SIGTERM and waits; returns the exit status. SIGKILL when `kill_hard`.
  int stop(bool kill_hard = false);
  void start();  // starts (again) on the same data
  // Stops the server and starts it again on the same data with other flags or environment.
  void restart_with(ServerOptions options);

  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  int pid() const { return pid_; }  // the `tesoro serve` process
  const json::object& credentials() const { return credentials_; }
  std::string api_key() const;
  std::string bearer_core() const { return "Authorization: Bearer " + api_key(); }
  // A fresh OAuth access token for the init client (all participant scopes).
  std::string access_token(const std::string& scope = "") const;
  std::string store_args() const;  // "--data D" or "--database-url U"
  std::vector<std::string> store_flags() const;
  // Runs one SQL statement on the server's database (sqlite3 or psql) and returns what it
  // printed: for tests that must put a row in a state no request can (a session whose time is
  // up) without waiting. Fails the test when the statement fails.
  std::string sql(const std::string& statement) const;
  std::string log_text() const;  // the server's stderr so far
  std::string commands_log() const;  // the stderr of every command() so far

 private:
  ServerOptions options_;
  std::string data_dir_;
  std::string database_url_;
  // Starts `tesoro serve` on a port of the kernel's choosing (set in *port) and waits until it
  // is healthy; returns the pid.
  int spawn(int* port);
  int port_ = 0;
  int pid_ = -1;
  std::vector<int> extra_pids_;
  bool ledger_checked_ = false;
  json::object credentials_;
};

std::string tesoro_bin();

// Runs a shell command line; returns its stdout and sets its exit code.
std::string run_capture(const std::string& command_line, int* exit_code = nullptr);

// `text` in single quotes for sh.
std::string shell_quote(const std::string& text);

struct CommandRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};
// Runs the tesoro binary with `args` outside any server, under `env` (arguments of env(1) such
// as "-u NAME" or "NAME=value"). A command still running after 20 s (a serve that started after
// all) is stopped by timeout(1), exit 124, instead of hanging the test.
CommandRun run_tesoro(const std::vector<std::string>& args,
                      const std::vector<std::string>& env = {});
// The string at `key` of a JSON object (fails the test when absent or not a string).
std::string text(const json::value& value, std::string_view key);
// A valid POST /v1/ledger/account_holders body with this external_id.
std::string account_holder_body(const std::string& external_id);
std::string new_uuid();
bool is_postgres();
// The card-number key (TESORO_CARD_KEY, base64 of 32 bytes) every process this run starts
// inherits on PostgreSQL, where serve refuses to start without one: one random key per run,
// unless the run was given one. Empty on SQLite (the data folder's key file is used).
std::string card_key();
// Store flags for a database nobody initialised: `--data <data_dir>` on SQLite, or
// `--database-url` of a new empty PostgreSQL database.
std::vector<std::string> empty_store_flags(const std::string& data_dir);

// A valid body broken one way, for the no-5xx tests: cut short, a byte replaced, NUL bytes or
// invalid UTF-8 inserted, a value swapped for another type, or nested deeper.
// Everything the server's database holds, as bytes (the SQLite folder's files, or a PostgreSQL
// data dump): for checking that a secret is not stored in clear anywhere.
std::string stored_bytes(const Server& server);

std::string mutate_body(const std::string& body, std::mt19937& random);

}  // namespace harness
