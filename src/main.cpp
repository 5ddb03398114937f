// tesoro: parse the command line and call the command. Nothing else lives here.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <iostream>
#include <limits>
#include <sstream>

#include "app/commands.hpp"
#include "app/log_output.hpp"
#include "core/limits.hpp"
#include "domain/auth/credentials.hpp"
#include "core/money.hpp"
#include "store/store.hpp"

namespace {

// A rate of limits.hpp as the help text writes it: 25, not 25.000000.
std::string rate_text(double rate) {
  std::ostringstream out;
  out << rate;
  return out.str();
}

// The valid scopes, for the help of every --scopes option.
std::string core_scopes_help() {
  std::string groups;
  for (const std::string& group : tesoro::auth::core_groups()) {
    groups += (groups.empty() ? "" : ", ") + group;
  }
  return "comma-separated core scopes <group>:<read|write|admin> (a level includes the ones "
         "below it); groups: " + groups + ". Example: ledger:read,cards:write";
}

std::string participant_scopes_help() {
  return "comma-separated participant scopes: " +
         tesoro::auth::join_scopes(tesoro::auth::participant_scopes(), ',') +
         " (a scope includes its :readonly form)";
}

void add_store_flags(CLI::App* command, tesoro::app::StoreFlags& flags) {
  command->add_option("--data", flags.data_dir, "folder of the SQLite database")
      ->envname("TESORO_DATA");
  command->add_option("--database-url", flags.database_url, "postgres://... to use PostgreSQL")
      ->envname("TESORO_DATABASE_URL");
}

// One ISO 4217 code of the table in core/money.hpp (a typo must stop the server at start).
CLI::Validator known_currency() {
  return CLI::Validator(
      [](std::string& code) {
        if (tesoro::money::find_currency(code)) return std::string();
        std::string known;
        for (const auto& currency : tesoro::money::k_known_currencies) {
          known += (known.empty() ? "" : ", ") + std::string(currency.code);
        }
        return "unknown currency " + code + " (known: " + known + ")";
      },
      "ISO 4217");
}

// The command line of each command, filled in by parsing, read by its callback.
struct CommandLine {
  tesoro::app::StoreFlags flags;
  bool as_json = false;
  std::string name = "sandbox";
  std::string environment = "sandbox";
  std::string tenant_id, scopes, key_id, client_id, email;
  tesoro::app::OwnerFlags owner;
  int exit_code = 0;
};

// The console owner that init and tenant create make.
void add_owner_flags(tesoro::app::OwnerFlags& owner, CLI::App* command) {
  command->add_option("--owner-email", owner.email, "email of the tenant's console owner")
      ->default_str("owner+<tenant id in lower case>@tesoro.local");
  command
      ->add_option("--public-url", owner.public_url,
                   "where browsers reach the server: the base of the printed console_url")
      ->envname("TESORO_PUBLIC_URL");
}

// The operator's commands: init, migrate, tenant, keys, clients, users and verify.
void add_operator_commands(CLI::App& cli, CommandLine& line) {
  using namespace tesoro::app;
  auto* init = cli.add_subcommand("init", "create the database and a sandbox tenant");
  add_store_flags(init, line.flags);
  init->add_option("--name", line.name, "tenant name");
  add_owner_flags(line.owner, init);
  init->add_flag("--json", line.as_json, "print one JSON object");
  init->callback(
      [&line] { line.exit_code = command_init(line.flags, line.name, line.owner, line.as_json); });

  auto* migrate = cli.add_subcommand(
      "migrate", "create the schema or apply the migrations it lacks (no tenant: then run init)");
  add_store_flags(migrate, line.flags);
  migrate->callback([&line] { line.exit_code = command_migrate(line.flags); });

  auto* tenant = cli.add_subcommand("tenant", "manage tenants");
  tenant->require_subcommand(1);
  auto* tenant_create = tenant->add_subcommand("create", "create another tenant");
  add_store_flags(tenant_create, line.flags);
  tenant_create->add_option("--name", line.name, "tenant name")->required();
  tenant_create->add_option("--environment", line.environment, "sandbox or production")
      ->check(CLI::IsMember({"sandbox", "production"}));
  add_owner_flags(line.owner, tenant_create);
  tenant_create->add_flag("--json", line.as_json, "print one JSON object");
  tenant_create->callback([&line] {
    line.exit_code =
        command_tenant_create(line.flags, line.name, line.environment, line.owner, line.as_json);
  });
  auto* tenant_list = tenant->add_subcommand(
      "list", "list the tenants (exit 1 when the database is not initialised)");
  add_store_flags(tenant_list, line.flags);
  tenant_list->add_flag("--json", line.as_json, "print JSON");
  tenant_list->callback(
      [&line] { line.exit_code = command_tenant_list(line.flags, line.as_json); });

  auto* keys = cli.add_subcommand("keys", "manage core API keys");
  keys->require_subcommand(1);
  auto* keys_create = keys->add_subcommand("create", "create an API key");
  add_store_flags(keys_create, line.flags);
  keys_create->add_option("--tenant", line.tenant_id, "tenant id")->required();
  keys_create->add_option("--scopes", line.scopes, core_scopes_help())->required();
  keys_create->add_flag("--json", line.as_json, "print one JSON object");
  keys_create->callback([&line] {
    line.exit_code = command_keys_create(line.flags, line.tenant_id, line.scopes, line.as_json);
  });
  auto* keys_list = keys->add_subcommand("list", "list a tenant's API keys");
  add_store_flags(keys_list, line.flags);
  keys_list->add_option("--tenant", line.tenant_id, "tenant id")->required();
  keys_list->add_flag("--json", line.as_json, "print JSON");
  keys_list->callback(
      [&line] { line.exit_code = command_keys_list(line.flags, line.tenant_id, line.as_json); });
  auto* keys_revoke = keys->add_subcommand("revoke", "revoke an API key");
  add_store_flags(keys_revoke, line.flags);
  keys_revoke->add_option("--id", line.key_id, "key id")->required();
  keys_revoke->callback([&line] { line.exit_code = command_keys_revoke(line.flags, line.key_id); });

  auto* clients = cli.add_subcommand("clients", "manage OAuth clients of the participant API");
  clients->require_subcommand(1);
  auto* clients_create = clients->add_subcommand("create", "create an OAuth client");
  add_store_flags(clients_create, line.flags);
  clients_create->add_option("--tenant", line.tenant_id, "tenant id")->required();
  clients_create->add_option("--scopes", line.scopes, participant_scopes_help())->required();
  clients_create->add_flag("--json", line.as_json, "print one JSON object");
  clients_create->callback([&line] {
    line.exit_code = command_clients_create(line.flags, line.tenant_id, line.scopes, line.as_json);
  });
  auto* clients_list = clients->add_subcommand("list", "list a tenant's OAuth clients");
  add_store_flags(clients_list, line.flags);
  clients_list->add_option("--tenant", line.tenant_id, "tenant id")->required();
  clients_list->add_flag("--json", line.as_json, "print JSON");
  clients_list->callback(
      [&line] { line.exit_code = command_clients_list(line.flags, line.tenant_id, line.as_json); });
  auto* clients_revoke = clients->add_subcommand(
      "revoke", "revoke an OAuth client: its tokens answer 401 from the next request on");
  add_store_flags(clients_revoke, line.flags);
  clients_revoke->add_option("--id", line.client_id, "client id (cli_...)")->required();
  clients_revoke->callback(
      [&line] { line.exit_code = command_clients_revoke(line.flags, line.client_id); });

  auto* users = cli.add_subcommand("users", "manage the users of a tenant's console");
  users->require_subcommand(1);
  auto* users_create = users->add_subcommand(
      "create", "add a console user; prints a one-time password, shown only this once");
  add_store_flags(users_create, line.flags);
  users_create->add_option("--tenant", line.tenant_id, "tenant id")->required();
  users_create->add_option("--email", line.email, "the user's email (unique on the server)")
      ->required();
  users_create->add_flag("--json", line.as_json, "print one JSON object");
  users_create->callback([&line] {
    line.exit_code = command_users_create(line.flags, line.tenant_id, line.email, line.as_json);
  });
  auto* users_list = users->add_subcommand("list", "list a tenant's console users");
  add_store_flags(users_list, line.flags);
  users_list->add_option("--tenant", line.tenant_id, "tenant id")->required();
  users_list->add_flag("--json", line.as_json, "print JSON");
  users_list->callback(
      [&line] { line.exit_code = command_users_list(line.flags, line.tenant_id, line.as_json); });

  auto* verify = cli.add_subcommand("verify", "check every ledger invariant");
  add_store_flags(verify, line.flags);
  verify->callback([&line] { line.exit_code = command_verify(line.flags); });
}

// serve and its options.
void add_serve_command(CLI::App& cli, tesoro::app::Config& config, int& exit_code) {
  using namespace tesoro::app;
  auto* serve = cli.add_subcommand("serve", "serve the HTTP API");
  serve->add_option("--data", config.data_dir, "folder of the SQLite database")
      ->envname("TESORO_DATA");
  serve->add_option("--database-url", config.database_url, "postgres://... to use PostgreSQL")
      ->envname("TESORO_DATABASE_URL");
  serve->add_option("--listen", config.listen, "HOST:PORT")->envname("TESORO_LISTEN");
  serve->add_option("--public-url", config.public_url,
                    "where clients reach this server (the base of activation links' urls)")
      ->default_str("http://<the --listen address>")
      ->envname("TESORO_PUBLIC_URL");
  serve->add_option("--environment", config.environment, "sandbox or production")
      ->envname("TESORO_ENVIRONMENT")
      ->check(CLI::IsMember({"sandbox", "production"}));
  serve->add_option("--rate-limit", config.rate_per_second,
                    "requests per second per credential; 0 turns limiting off")
      ->default_str(rate_text(tesoro::limits::k_sandbox_rate_per_second) + " in sandbox, " +
                    rate_text(tesoro::limits::k_production_rate_per_second) + " in production")
      ->envname("TESORO_RATE_LIMIT")
      ->check(CLI::NonNegativeNumber);
  serve->add_option("--rate-burst", config.rate_burst, "bucket size per credential")
      ->default_str(rate_text(tesoro::limits::k_sandbox_rate_burst) + " in sandbox, " +
                    rate_text(tesoro::limits::k_production_rate_burst) +
                    " in production, or twice --rate-limit")
      ->envname("TESORO_RATE_BURST")
      ->check(CLI::PositiveNumber);
  serve->add_option("--auth-failure-limit", config.auth_failure_rate,
                    "failed authentications per second per client address, after the burst; 0 "
                    "turns this limit off (so does --rate-limit 0)")
      ->envname("TESORO_AUTH_FAILURE_LIMIT")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  serve->add_option("--auth-failure-burst", config.auth_failure_burst,
                    "failed authentications a client address may make at once")
      ->envname("TESORO_AUTH_FAILURE_BURST")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  serve->add_option("--workers", config.workers, "handler threads")
      ->envname("TESORO_WORKERS")
      ->check(CLI::Range(1, tesoro::limits::k_workers_max));
  serve->add_option("--io-threads", config.io_threads, "socket threads")
      ->envname("TESORO_IO_THREADS")
      ->check(CLI::Range(1, tesoro::limits::k_io_threads_max));
  serve->add_option("--commit-batch-max", config.commit_batch_max,
                    "SQLite write units per group commit (1 turns group commit off)")
      ->envname("TESORO_COMMIT_BATCH_MAX")
      ->check(CLI::Range(1, static_cast<int>(tesoro::limits::k_commit_batch_max)));
  serve->add_option("--log-level", config.log_level, "debug, info, warn or error")
      ->envname("TESORO_LOG_LEVEL");
  serve->add_option("--currencies", config.currencies, "ISO 4217 codes of the ledger, e.g. COP,USD")
      ->envname("TESORO_CURRENCIES")
      ->delimiter(',')
      ->check(known_currency())
      ->capture_default_str();
  serve->add_option("--card-currencies", config.card_currencies,
                    "ISO 4217 codes of the card endpoints")
      ->envname("TESORO_CARD_CURRENCIES")
      ->delimiter(',')
      ->check(known_currency())
      ->capture_default_str();
  serve->add_option("--transfer-max-amount", config.transfer_max_amount_minor,
                    "the most one outgoing transfer or payout may carry, in minor units "
                    "(default " +
                        tesoro::money::display(tesoro::limits::k_transfer_max_amount_minor_default,
                                               "COP") +
                        ")")
      ->envname("TESORO_TRANSFER_MAX_AMOUNT")
      ->check(CLI::Range(std::int64_t{1}, tesoro::limits::k_amount_max_minor))
      ->capture_default_str();
  serve->add_option("--webhook-allowed-hosts", config.webhook_allowed_hosts,
                    "hosts webhook endpoints may point at: names, *.example.com patterns, or * "
                    "for any public host (private addresses only when named exactly; loopback "
                    "only in the sandbox)")
      ->envname("TESORO_WEBHOOK_ALLOWED_HOSTS")
      ->delimiter(',')
      ->capture_default_str();
  // Hidden: for tests that kill a node (its leases end sooner) or hang a receiver.
  serve->add_option("--webhook-lease-seconds", config.webhook_lease_seconds)
      ->envname("TESORO_WEBHOOK_LEASE_SECONDS")
      ->check(CLI::Range(std::int64_t{1}, tesoro::limits::k_webhook_lease_seconds_max))
      ->group("");
  serve->add_option("--webhook-timeout-ms", config.webhook_timeout_ms)
      ->envname("TESORO_WEBHOOK_TIMEOUT_MS")
      ->check(CLI::Range(tesoro::limits::k_webhook_timeout_ms_min,
                         tesoro::limits::k_webhook_timeout_ms))
      ->group("");
  serve->footer(
      "Card-number key: card numbers are stored sealed with AES-256-GCM under one key, base64 of "
      "32 bytes. With SQLite it is DIR/card-number.key (mode 0600), which init writes and serve "
      "creates when missing; back it up with the database. With PostgreSQL, set TESORO_CARD_KEY "
      "(the same on every node; make one with `openssl rand -base64 32`): serve refuses to start "
      "without it. When set, TESORO_CARD_KEY also wins over the SQLite file. It is never a flag "
      "(a command line is visible to other users) and never logged.");
  serve->callback([&exit_code, &config] { exit_code = command_serve(config); });

}

}  // namespace

int main(int argc, char** argv) {
  tesoro::app::log_to_stderr();
  CLI::App cli{"Tesoro: ledger, cards, payouts and instant payments over HTTP"};
  cli.set_version_flag("--version", "tesoro " TESORO_VERSION);
  // --help shows every option's default value.
  cli.option_defaults()->always_capture_default();
  cli.require_subcommand(1);
  CommandLine line;
  add_operator_commands(cli, line);
  tesoro::app::Config config;
  add_serve_command(cli, config, line.exit_code);

  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return cli.exit(error);
  } catch (const tesoro::store::StoreError& error) {
    std::cerr << "tesoro: storage: " << error.what() << "\n";
    return 1;
  } catch (const std::exception& error) {
    std::cerr << "tesoro: " << error.what() << "\n";
    return 1;
  }
  return line.exit_code;
}
