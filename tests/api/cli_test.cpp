// The operator commands as an operator runs them: exit codes, output, and their effect on a
// running server.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <filesystem>

#include "harness.hpp"

using harness::Reply;
using harness::CommandRun;
using harness::Server;
using harness::run_tesoro;
namespace json = boost::json;

namespace {

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// Tables in the PostgreSQL database's schema; "" when the query fails.
std::string postgres_table_count(const std::string& url) {
  std::string line = "psql " + harness::shell_quote(url) + " -qAtc " +
                     harness::shell_quote("SELECT COUNT(*) FROM information_schema.tables "
                           "WHERE table_schema = current_schema()") + " 2>/dev/null";
  std::string out;
  FILE* pipe = ::popen(line.c_str(), "r");
  std::array<char, 256> buffer;
  std::size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  ::pclose(pipe);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

json::value parse(const std::string& text) {
  boost::system::error_code ec;
  json::value value = json::parse(text, ec);
  EXPECT_FALSE(ec) << "not JSON: " << text;
  return value;
}

}  // namespace

TEST(Cli, CommandsRefuseADatabaseNeverInitialised) {
  char pattern[] = "/tmp/tesoro-cli-XXXXXX";
  std::string parent = ::mkdtemp(pattern);
  std::string data_dir = parent + "/data";  // does not exist
  std::vector<std::string> store = harness::empty_store_flags(data_dir);
  const std::vector<std::vector<std::string>> commands = {
      {"serve", "--listen", "127.0.0.1:0"},
      {"keys", "create", "--tenant", "ten_x", "--scopes", "ledger:read"},
      {"keys", "list", "--tenant", "ten_x"},
      {"keys", "revoke", "--id", "key_x"},
      {"clients", "create", "--tenant", "ten_x", "--scopes", "webhooks"},
      {"clients", "list", "--tenant", "ten_x"},
      {"clients", "revoke", "--id", "cli_x"},
      {"users", "create", "--tenant", "ten_x", "--email", "a@b.co"},
      {"users", "list", "--tenant", "ten_x"},
      {"tenant", "list"},
      {"verify"},
  };
  for (const auto& command : commands) {
    CommandRun run = run_tesoro(with(command, store));
    EXPECT_EQ(run.exit_code, 1) << command[0] << ": " << run.output;
    EXPECT_NE(run.output.find("not initialised"), std::string::npos) << run.output;
    if (!harness::is_postgres()) {
      EXPECT_NE(run.output.find(data_dir), std::string::npos) << "names the folder: " << run.output;
    }
  }
  // Nothing was created: no folder, no file, no table.
  EXPECT_FALSE(std::filesystem::exists(data_dir));
  if (harness::is_postgres()) {
    EXPECT_EQ(postgres_table_count(store[1]), "0");
  }
  // init still works there, and then so do the others.
  EXPECT_EQ(run_tesoro(with({"init"}, store)).exit_code, 0);
  EXPECT_EQ(run_tesoro(with({"tenant", "list"}, store)).exit_code, 0);
  std::filesystem::remove_all(parent);
}

// Runs one SQL statement on the database of `store` (empty_store_flags' flags): psql on
// PostgreSQL, Python's sqlite3 on the SQLite folder's tesoro.db. Returns the exit status.
int run_sql(const std::vector<std::string>& store, const std::string& sql) {
  std::string line =
      store[0] == "--database-url"
          ? "psql " + harness::shell_quote(store[1]) + " -qAtc " + harness::shell_quote(sql)
          : "python3 -c " + harness::shell_quote("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
                                                 "c.execute(sys.argv[2]); c.commit()") +
                " " + harness::shell_quote(store[1] + "/tesoro.db") + " " +
                harness::shell_quote(sql);
  return std::system((line + " >/dev/null 2>&1").c_str());
}

// `tesoro migrate`: the schema and nothing else, again and again; init still has to make the
// tenant; a schema newer than the binary is refused, as every migrating command refuses it.
TEST(Cli, MigrateMakesTheSchemaAndNothingElse) {
  char pattern[] = "/tmp/tesoro-cli-XXXXXX";
  std::string parent = ::mkdtemp(pattern);
  std::vector<std::string> store = harness::empty_store_flags(parent + "/data");
  CommandRun first = run_tesoro(with({"migrate"}, store));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  ASSERT_EQ(first.output.rfind("schema at version ", 0), 0u) << first.output;
  const int version = std::stoi(first.output.substr(std::string("schema at version ").size()));
  EXPECT_GT(version, 0);
  CommandRun again = run_tesoro(with({"migrate"}, store));
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(again.output, first.output);
  if (harness::is_postgres()) {
    EXPECT_NE(postgres_table_count(store[1]), "0");
  }

  // No tenant: the server and the tenant's commands still ask for init.
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"serve", "--listen", "127.0.0.1:0"},
        std::vector<std::string>{"tenant", "list"}}) {
    CommandRun run = run_tesoro(with(command, store));
    EXPECT_EQ(run.exit_code, 1) << command[0] << ": " << run.output;
    EXPECT_NE(run.output.find("not initialised"), std::string::npos) << run.output;
  }
  CommandRun init = run_tesoro(with({"init", "--json"}, store));
  ASSERT_EQ(init.exit_code, 0) << init.output;
  CommandRun tenants = run_tesoro(with({"tenant", "list", "--json"}, store));
  EXPECT_EQ(tenants.exit_code, 0) << tenants.output;
  EXPECT_NE(tenants.output.find(harness::text(parse(init.output), "tenant_id")), std::string::npos)
      << tenants.output;

  // A schema a newer binary wrote.
  ASSERT_EQ(run_sql(store, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (" +
                               std::to_string(version + 1) + ", 'from the future', '2099-01-01T00:00:00Z')"),
            0);
  CommandRun newer = run_tesoro(with({"migrate"}, store));
  EXPECT_EQ(newer.exit_code, 1) << newer.output;
  EXPECT_NE(newer.output.find("schema is version " + std::to_string(version + 1) +
                              ", newer than this binary's " + std::to_string(version)),
            std::string::npos)
      << newer.output;
  std::filesystem::remove_all(parent);
}

TEST(Cli, TenantListShowsEveryTenant) {
  Server server;
  int code = 0;
  json::object other = parse(server.command({"tenant", "create", "--name", "acme",
                                             "--environment", "production", "--json"}, &code))
                           .as_object();
  ASSERT_EQ(code, 0);
  json::value listed = parse(server.command({"tenant", "list", "--json"}, &code));
  ASSERT_EQ(code, 0);
  ASSERT_TRUE(listed.is_array());
  ASSERT_EQ(listed.as_array().size(), 2u);
  const json::object& first = listed.as_array()[0].as_object();
  EXPECT_EQ(first.at("id"), server.credentials().at("tenant_id"));
  EXPECT_EQ(first.at("name"), "sandbox");
  EXPECT_EQ(first.at("environment"), "sandbox");
  EXPECT_FALSE(first.at("inserted_at").as_string().empty());
  const json::object& second = listed.as_array()[1].as_object();
  EXPECT_EQ(second.at("id"), other.at("tenant_id"));
  EXPECT_EQ(second.at("name"), "acme");
  EXPECT_EQ(second.at("environment"), "production");
  std::string text = server.command({"tenant", "list"}, &code);
  EXPECT_EQ(code, 0);
  EXPECT_NE(text.find(std::string(other.at("tenant_id").as_string())), std::string::npos);
}

TEST(Cli, RevokedClientsTokensStopOnEveryNode) {
  Server server;
  int other_node = server.start_extra_node();
  std::string tenant(server.credentials().at("tenant_id").as_string());
  int code = 0;
  json::object client = parse(server.command({"clients", "create", "--tenant", tenant, "--scopes",
                                              "tenant_accounts:readonly", "--json"}, &code))
                            .as_object();
  ASSERT_EQ(code, 0);
  std::string client_id(client.at("client_id").as_string());
  std::string secret(client.at("client_secret").as_string());
  Reply token = server.post("/api/v1/oauth/token",
                            json::serialize(json::object{{"grant_type", "client_credentials"},
                                                         {"client_id", client_id},
                                                         {"client_secret", secret}}));
  ASSERT_EQ(token.status, 200) << token.body;
  std::string bearer = "Authorization: Bearer " + std::string(token.json().at("access_token").as_string());
  harness::Request list{"GET", "/api/v1/tenant/accounts", "", {bearer}};
  EXPECT_EQ(server.send(list).status, 200);
  EXPECT_EQ(server.send_to(other_node, list).status, 200);

  std::string listed_text = server.command({"clients", "list", "--tenant", tenant, "--json"}, &code);
  ASSERT_EQ(code, 0);
  EXPECT_EQ(listed_text.find(secret), std::string::npos) << "never the secret";
  EXPECT_EQ(listed_text.find("cs_"), std::string::npos) << "never a secret";
  json::array listed = parse(listed_text).as_array();
  ASSERT_EQ(listed.size(), 2u);  // init's client and this one
  const json::object& mine = listed[1].as_object();
  EXPECT_EQ(mine.at("client_id").as_string(), client_id);
  EXPECT_EQ(mine.at("scopes"), json::array({"tenant_accounts:readonly"}));
  EXPECT_EQ(mine.at("environment"), "sandbox");
  EXPECT_TRUE(mine.at("revoked_at").is_null());

  server.command({"clients", "revoke", "--id", client_id}, &code);
  ASSERT_EQ(code, 0);
  EXPECT_EQ(server.send(list).status, 401);
  EXPECT_EQ(server.send_to(other_node, list).status, 401);
  Reply refreshed = server.post(
      "/api/v1/oauth/token", json::serialize(json::object{{"grant_type", "refresh_token"},
                                                          {"refresh_token", token.json().at("refresh_token")}}));
  EXPECT_EQ(refreshed.status, 400) << refreshed.body;
  EXPECT_EQ(refreshed.json().at("error"), "invalid_grant");
  Reply again = server.post("/api/v1/oauth/token",
                            json::serialize(json::object{{"grant_type", "client_credentials"},
                                                         {"client_id", client_id},
                                                         {"client_secret", secret}}));
  EXPECT_EQ(again.status, 401);
  json::array after = parse(server.command({"clients", "list", "--tenant", tenant, "--json"}, &code))
                          .as_array();
  EXPECT_TRUE(after[1].at("revoked_at").is_string());
  EXPECT_TRUE(after[0].at("revoked_at").is_null()) << "other clients untouched";
  // Unknown ids are an error, not a silent success.
  server.command({"clients", "revoke", "--id", "cli_unknown"}, &code);
  EXPECT_EQ(code, 1);
}

// The console owner of init and tenant create, and `users create` / `users list`.
namespace {

harness::Reply console_sign_in(const Server& server, const std::string& email,
                               const std::string& password) {
  return server.post("/console/api/session",
                     json::serialize(json::object{{"email", email}, {"password", password}}));
}

}  // namespace

TEST(Cli, InitAndTenantCreatePrintTheConsoleOwnerOnce) {
  Server server;
  const json::object& made = server.credentials();
  std::string tenant(made.at("tenant_id").as_string());
  std::string lower = tenant;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  EXPECT_EQ(made.at("console_url"), "http://127.0.0.1:8080/console/");
  EXPECT_EQ(made.at("owner_email"), json::value("owner+" + lower + "@tesoro.local"));
  std::string password(made.at("owner_password").as_string());
  EXPECT_GE(password.size(), 24u);
  EXPECT_EQ(console_sign_in(server, std::string(made.at("owner_email").as_string()), password)
                .status,
            201);
  EXPECT_EQ(harness::stored_bytes(server).find(password), std::string::npos);

  int code = 0;
  json::object other =
      parse(server.command({"tenant", "create", "--name", "acme", "--owner-email",
                            "Ana@Example.com", "--public-url", "https://console.example.com/base/",
                            "--json"},
                           &code))
          .as_object();
  ASSERT_EQ(code, 0) << server.commands_log();
  EXPECT_EQ(other.at("console_url"), "https://console.example.com/base/console/");
  EXPECT_EQ(other.at("owner_email"), "ana@example.com");
  std::string other_password(other.at("owner_password").as_string());
  EXPECT_NE(other_password, password);
  harness::Reply session = console_sign_in(server, "ana@example.com", other_password);
  ASSERT_EQ(session.status, 201) << session.body;
  EXPECT_EQ(session.json().at("tenant").at("id"), other.at("tenant_id"));

  // The text form prints the same fields.
  std::string text = server.command({"tenant", "create", "--name", "t"}, &code);
  EXPECT_EQ(code, 0);
  for (const char* field : {"console_url: ", "owner_email: owner+ten_", "owner_password: "}) {
    EXPECT_NE(text.find(field), std::string::npos) << field << " in " << text;
  }
  // An email already taken (in any case), a malformed one, a bad url: exit 1, no tenant made.
  std::size_t tenants =
      parse(server.command({"tenant", "list", "--json"}, &code)).as_array().size();
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--owner-email", "ANA@example.com"},
        std::vector<std::string>{"--owner-email", "not-an-email"},
        std::vector<std::string>{"--public-url", "ftp://x"}}) {
    std::vector<std::string> args = {"tenant", "create", "--name", "refused", "--json"};
    args.insert(args.end(), flags.begin(), flags.end());
    std::string out = server.command(args, &code);
    EXPECT_EQ(code, 1) << flags[1] << ": " << out;
    EXPECT_TRUE(out.empty());
  }
  EXPECT_NE(server.commands_log().find("already exists"), std::string::npos);
  EXPECT_EQ(parse(server.command({"tenant", "list", "--json"}, &code)).as_array().size(), tenants);
}

TEST(Cli, UsersCreatePrintsAOneTimePasswordAndListShowsNone) {
  Server server;
  std::string tenant(server.credentials().at("tenant_id").as_string());
  int code = 0;
  json::object user = parse(server.command({"users", "create", "--tenant", tenant, "--email",
                                            "Bo@Example.com", "--json"},
                                           &code))
                          .as_object();
  ASSERT_EQ(code, 0) << server.commands_log();
  EXPECT_TRUE(user.at("id").as_string().starts_with("cusr_"));
  EXPECT_EQ(user.at("email"), "bo@example.com");
  EXPECT_EQ(user.at("tenant_id"), json::value(tenant));
  std::string password(user.at("password").as_string());
  harness::Reply session = console_sign_in(server, "bo@example.com", password);
  ASSERT_EQ(session.status, 201) << session.body;
  EXPECT_EQ(session.json().at("user").at("id"), user.at("id"));

  std::string listed_text = server.command({"users", "list", "--tenant", tenant, "--json"}, &code);
  ASSERT_EQ(code, 0);
  EXPECT_EQ(listed_text.find(password), std::string::npos);
  EXPECT_EQ(listed_text.find(std::string(server.credentials().at("owner_password").as_string())),
            std::string::npos);
  json::array listed = parse(listed_text).as_array();
  ASSERT_EQ(listed.size(), 2u);  // the owner, then this user
  EXPECT_EQ(listed[0].at("email"), server.credentials().at("owner_email"));
  EXPECT_EQ(listed[1].at("email"), "bo@example.com");
  EXPECT_FALSE(listed[1].as_object().contains("password"));
  EXPECT_FALSE(listed[1].at("inserted_at").as_string().empty());
  std::string text = server.command({"users", "list", "--tenant", tenant}, &code);
  EXPECT_NE(text.find("bo@example.com"), std::string::npos);
  // Refusals: the same email, an unknown tenant, a malformed email.
  server.command({"users", "create", "--tenant", tenant, "--email", "bo@EXAMPLE.com"}, &code);
  EXPECT_EQ(code, 1);
  server.command({"users", "create", "--tenant", "ten_AAAAAAAAAAAAAAAAAAAAAA", "--email",
                  "cy@example.com"},
                 &code);
  EXPECT_EQ(code, 1);
  server.command({"users", "create", "--tenant", tenant, "--email", "cy"}, &code);
  EXPECT_EQ(code, 1);
  EXPECT_EQ(parse(server.command({"users", "list", "--tenant", tenant, "--json"}, &code))
                .as_array()
                .size(),
            2u);
}

TEST(Cli, VersionAndHelp) {
  CommandRun version = run_tesoro({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.output.rfind("tesoro ", 0), 0u) << version.output;
  EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(version.output.at(7)))) << version.output;

  CommandRun keys = run_tesoro({"keys", "create", "--help"});
  EXPECT_EQ(keys.exit_code, 0);
  for (const char* expected : {"read|write|admin", "ledger", "cards", "spending_controls",
                               "payouts", "webhooks", "./data"}) {
    EXPECT_NE(keys.output.find(expected), std::string::npos) << expected << " in " << keys.output;
  }
  CommandRun clients = run_tesoro({"clients", "create", "--help"});
  for (const char* expected : {"collections:readonly", "outgoing_transfers", "target_resolutions",
                               "tenant_accounts:readonly", "webhooks"}) {
    EXPECT_NE(clients.output.find(expected), std::string::npos) << expected << " in " << clients.output;
  }
  CommandRun users = run_tesoro({"users", "create", "--help"});
  for (const char* expected : {"one-time password", "--email", "--tenant"}) {
    EXPECT_NE(users.output.find(expected), std::string::npos) << expected << " in " << users.output;
  }
  CommandRun init = run_tesoro({"init", "--help"});
  for (const char* expected : {"--owner-email", "--public-url", "owner+<tenant id"}) {
    EXPECT_NE(init.output.find(expected), std::string::npos) << expected << " in " << init.output;
  }
  CommandRun serve = run_tesoro({"serve", "--help"});
  for (const char* expected : {"127.0.0.1:8080", "sandbox", "info", "25 in sandbox"}) {
    EXPECT_NE(serve.output.find(expected), std::string::npos) << expected << " in " << serve.output;
  }
}
