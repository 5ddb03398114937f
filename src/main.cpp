// tesoro: parse the command line and call the command. Nothing else lives here.
#include <CLI/CLI.hpp>

#include <iostream>

#include "app/commands.hpp"
#include "core/limits.hpp"
#include "core/money.hpp"
#include "store/store.hpp"

namespace {

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

}  // namespace

int main(int argc, char** argv) {
  using namespace tesoro::app;
  CLI::App cli{"Tesoro: ledger, cards, payouts and instant payments over HTTP"};
  cli.require_subcommand(1);
  StoreFlags flags;
  bool as_json = false;
  std::string name = "sandbox";
  std::string environment = "sandbox";
  std::string tenant_id, scopes, key_id;
  int exit_code = 0;

  auto* init = cli.add_subcommand("init", "create the database and a sandbox tenant");
  add_store_flags(init, flags);
  init->add_option("--name", name, "tenant name");
  init->add_flag("--json", as_json, "print one JSON object");
  init->callback([&] { exit_code = command_init(flags, name, as_json); });

  auto* tenant = cli.add_subcommand("tenant", "manage tenants");
  tenant->require_subcommand(1);
  auto* tenant_create = tenant->add_subcommand("create", "create another tenant");
  add_store_flags(tenant_create, flags);
  tenant_create->add_option("--name", name, "tenant name")->required();
  tenant_create->add_option("--environment", environment, "sandbox or production")
      ->check(CLI::IsMember({"sandbox", "production"}));
  tenant_create->add_flag("--json", as_json, "print one JSON object");
  tenant_create->callback(
      [&] { exit_code = command_tenant_create(flags, name, environment, as_json); });

  auto* keys = cli.add_subcommand("keys", "manage core API keys");
  keys->require_subcommand(1);
  auto* keys_create = keys->add_subcommand("create", "create an API key");
  add_store_flags(keys_create, flags);
  keys_create->add_option("--tenant", tenant_id, "tenant id")->required();
  keys_create->add_option("--scopes", scopes, "e.g. ledger:read,cards:write")->required();
  keys_create->add_flag("--json", as_json, "print one JSON object");
  keys_create->callback([&] { exit_code = command_keys_create(flags, tenant_id, scopes, as_json); });
  auto* keys_list = keys->add_subcommand("list", "list a tenant's API keys");
  add_store_flags(keys_list, flags);
  keys_list->add_option("--tenant", tenant_id, "tenant id")->required();
  keys_list->add_flag("--json", as_json, "print JSON");
  keys_list->callback([&] { exit_code = command_keys_list(flags, tenant_id, as_json); });
  auto* keys_revoke = keys->add_subcommand("revoke", "revoke an API key");
  add_store_flags(keys_revoke, flags);
  keys_revoke->add_option("--id", key_id, "key id")->required();
  keys_revoke->callback([&] { exit_code = command_keys_revoke(flags, key_id); });

  auto* clients = cli.add_subcommand("clients", "manage OAuth clients of the participant API");
  clients->require_subcommand(1);
  auto* clients_create = clients->add_subcommand("create", "create an OAuth client");
  add_store_flags(clients_create, flags);
  clients_create->add_option("--tenant", tenant_id, "tenant id")->required();
  clients_create->add_option("--scopes", scopes, "e.g. collections,tenant_accounts:readonly")
      ->required();
  clients_create->add_flag("--json", as_json, "print one JSON object");
  clients_create->callback(
      [&] { exit_code = command_clients_create(flags, tenant_id, scopes, as_json); });

  auto* verify = cli.add_subcommand("verify", "check every ledger invariant");
  add_store_flags(verify, flags);
  verify->callback([&] { exit_code = command_verify(flags); });

  Config config;
  auto* serve = cli.add_subcommand("serve", "serve the HTTP API");
  serve->add_option("--data", config.data_dir, "folder of the SQLite database")
      ->envname("TESORO_DATA");
  serve->add_option("--database-url", config.database_url, "postgres://... to use PostgreSQL")
      ->envname("TESORO_DATABASE_URL");
  serve->add_option("--listen", config.listen, "HOST:PORT")->envname("TESORO_LISTEN");
  serve->add_option("--environment", config.environment, "sandbox or production")
      ->envname("TESORO_ENVIRONMENT")
      ->check(CLI::IsMember({"sandbox", "production"}));
  serve->add_option("--rate-limit", config.rate_per_second,
                    "requests per second per credential; 0 turns limiting off")
      ->envname("TESORO_RATE_LIMIT")
      ->check(CLI::NonNegativeNumber);
  serve->add_option("--rate-burst", config.rate_burst, "bucket size per credential")
      ->envname("TESORO_RATE_BURST")
      ->check(CLI::PositiveNumber);
  serve->add_option("--workers", config.workers, "handler threads")
      ->envname("TESORO_WORKERS")
      ->check(CLI::Range(1, 1024));
  serve->add_option("--io-threads", config.io_threads, "socket threads")
      ->envname("TESORO_IO_THREADS")
      ->check(CLI::Range(1, 64));
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
  serve->callback([&] { exit_code = command_serve(config); });

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
  return exit_code;
}
