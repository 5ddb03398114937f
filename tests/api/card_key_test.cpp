// The card-number key as an operator meets it: the SQLite data folder's key file, and
// TESORO_CARD_KEY, which PostgreSQL needs and which wins everywhere when set.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness.hpp"

using harness::Server;
using harness::ServerOptions;

namespace {

// A valid key nobody else uses: base64 of "0123456789abcdef0123456789abcdef".
const std::string k_fixed_key = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";

std::vector<std::string> serve_args(const Server& server) {
  std::vector<std::string> args = {"serve", "--listen", "127.0.0.1:0"};
  for (const std::string& flag : server.store_flags()) args.push_back(flag);
  return args;
}

std::string key_file(const Server& server) { return server.store_flags().at(1) + "/card-number.key"; }

std::string read_text(const std::string& path) {
  std::ifstream file(path);
  std::stringstream out;
  out << file.rdbuf();
  return out.str();
}

// What `tesoro init` writes: base64 of 32 bytes (43 characters and one '='), a newline, and
// a file only its owner may read or write.
void expect_key_file(const std::string& path) {
  struct stat status {};
  ASSERT_EQ(::stat(path.c_str(), &status), 0) << path << " is missing";
  EXPECT_EQ(status.st_mode & 0777, 0600u) << path;
  std::string text = read_text(path);
  ASSERT_EQ(text.size(), 45u) << "base64 of 32 bytes and a newline";
  EXPECT_EQ(text.substr(43), "=\n");
  for (char c : text.substr(0, 43)) {
    EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/') << text;
  }
}

}  // namespace

TEST(CardKey, ServeHelpExplainsTheKey) {
  harness::CommandRun help = harness::run_tesoro({"serve", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  for (const char* expected : {"TESORO_CARD_KEY", "card-number.key", "openssl rand -base64 32"}) {
    EXPECT_NE(help.output.find(expected), std::string::npos) << expected << " in " << help.output;
  }
}

TEST(CardKey, InitWritesAKeyFileOnlyItsOwnerCanRead) {
  if (harness::is_postgres()) GTEST_SKIP() << "PostgreSQL takes the key from TESORO_CARD_KEY";
  Server server;
  expect_key_file(key_file(server));
  for (const auto& entry : std::filesystem::directory_iterator(server.store_flags().at(1))) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos)
        << "no temporary file left: " << entry.path();
  }
  EXPECT_NE(server.log_text().find(R"("card_key":"data folder")"), std::string::npos)
      << server.log_text();
}

TEST(CardKey, TenantCreateOnAFolderNeverInitialisedWritesTheKeyToo) {
  if (harness::is_postgres()) GTEST_SKIP() << "PostgreSQL takes the key from TESORO_CARD_KEY";
  char pattern[] = "/tmp/tesoro-key-XXXXXX";
  std::string parent = ::mkdtemp(pattern);
  harness::CommandRun created =
      harness::run_tesoro({"tenant", "create", "--name", "acme", "--data", parent + "/data"});
  EXPECT_EQ(created.exit_code, 0) << created.output;
  expect_key_file(parent + "/data/card-number.key");
  std::filesystem::remove_all(parent);
}

TEST(CardKey, ServeMakesTheKeyOfAFolderAnOlderVersionMadeAndNeverReplacesOne) {
  if (harness::is_postgres()) GTEST_SKIP() << "PostgreSQL takes the key from TESORO_CARD_KEY";
  Server server;
  std::string path = key_file(server);
  std::string first = read_text(path);
  server.stop();
  std::filesystem::remove(path);  // as a data folder of a version before cards
  server.start();
  expect_key_file(path);
  std::string made = read_text(path);
  EXPECT_NE(made, first) << "a fresh random key";
  EXPECT_NE(server.log_text().find("card_key.created"), std::string::npos) << server.log_text();
  server.stop();
  server.start();
  EXPECT_EQ(read_text(path), made) << "a restart keeps the key";
  EXPECT_EQ(server.log_text().find(made.substr(0, 43)), std::string::npos) << "never logged";
}

TEST(CardKey, ServeRefusesAMalformedKeyFile) {
  if (harness::is_postgres()) GTEST_SKIP() << "PostgreSQL takes the key from TESORO_CARD_KEY";
  Server server;
  std::string path = key_file(server);
  std::string good = read_text(path);
  server.stop();
  for (const std::string& bad : {std::string("not a key\n"), std::string(),
                                std::string(42, 'A') + "==\n"}) {  // the last: 31 bytes
    { std::ofstream(path, std::ios::trunc) << bad; }
    harness::CommandRun serve = harness::run_tesoro(serve_args(server), {"-u", "TESORO_CARD_KEY"});
    EXPECT_EQ(serve.exit_code, 1) << serve.output;
    EXPECT_NE(serve.output.find(path), std::string::npos) << "names the file: " << serve.output;
    EXPECT_NE(serve.output.find("32 bytes"), std::string::npos) << serve.output;
    EXPECT_EQ(read_text(path), bad) << "a bad key is reported, never replaced";
  }
  { std::ofstream(path, std::ios::trunc) << good; }
  server.start();
}

TEST(CardKey, PostgresServeWithoutTheVariableExitsNamingIt) {
  if (!harness::is_postgres()) GTEST_SKIP() << "SQLite has the data folder's key file";
  Server& server = Server::shared();
  harness::CommandRun serve = harness::run_tesoro(serve_args(server), {"-u", "TESORO_CARD_KEY"});
  EXPECT_EQ(serve.exit_code, 1) << serve.output;
  EXPECT_NE(serve.output.find("TESORO_CARD_KEY must be set"), std::string::npos) << serve.output;
  EXPECT_NE(serve.output.find("openssl rand -base64 32"), std::string::npos) << serve.output;
  // An empty value is no key either.
  harness::CommandRun empty = harness::run_tesoro(serve_args(server), {"TESORO_CARD_KEY="});
  EXPECT_EQ(empty.exit_code, 1) << empty.output;
  EXPECT_NE(empty.output.find("TESORO_CARD_KEY must be set"), std::string::npos) << empty.output;
}

TEST(CardKey, AMalformedVariableStopsServeOnEitherEngine) {
  Server& server = Server::shared();
  const std::vector<std::string> bad_keys = {
      "not-a-key!", "c2hvcnQ=",             // not base64; base64 of 5 bytes
      std::string(42, 'A') + "==",          // base64 of 31 bytes
      k_fixed_key + "AAAA"};                // base64 of 35 bytes
  for (const std::string& bad : bad_keys) {
    harness::CommandRun serve = harness::run_tesoro(serve_args(server), {"TESORO_CARD_KEY=" + bad});
    EXPECT_EQ(serve.exit_code, 1) << bad << ": " << serve.output;
    EXPECT_NE(serve.output.find("TESORO_CARD_KEY is not a valid card-number key"), std::string::npos)
        << serve.output;
    EXPECT_NE(serve.output.find("openssl rand -base64 32"), std::string::npos) << serve.output;
    EXPECT_EQ(serve.output.find(bad), std::string::npos) << "never echoes the value";
  }
}

TEST(CardKey, TheVariableWinsAndIsNeverLogged) {
  Server server(ServerOptions{{}, false, {"TESORO_CARD_KEY=" + k_fixed_key}});
  EXPECT_EQ(server.get("/healthz").status, 200);
  std::string log = server.log_text();
  EXPECT_NE(log.find(R"("card_key":"TESORO_CARD_KEY")"), std::string::npos) << log;
  EXPECT_EQ(log.find(k_fixed_key), std::string::npos) << "never logged";
  EXPECT_EQ(log.find(k_fixed_key.substr(0, 20)), std::string::npos) << "not even part of it";
}
