#include "app/commands.hpp"

#include <boost/json.hpp>
#ifndef TESORO_WITHOUT_TCMALLOC
#include <gperftools/malloc_extension.h>
#endif
#include <openssl/crypto.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <thread>

#include "api/credential_json.hpp"
#include "app/app.hpp"
#include "app/card_key.hpp"
#include "core/clock.hpp"
#include "core/limits.hpp"
#include "core/log.hpp"
#include "core/metrics.hpp"
#include "core/thread_priority.hpp"
#include "domain/auth/credentials.hpp"
#include "domain/cards/card_transactions.hpp"
#include "domain/cards/configuration_groups.hpp"
#include "domain/collections/attempts.hpp"
#include "domain/collections/collections.hpp"
#include "domain/console/users.hpp"
#include "domain/ledger/accounts.hpp"
#include "domain/ledger/journal.hpp"
#include "domain/transfers/outgoing_transfers.hpp"
#include "domain/transfers/processor.hpp"
#include "http/server.hpp"
#include "store/store.hpp"

namespace tesoro::app {
namespace {

namespace json = boost::json;

// The commands' one source of real time: the domain functions they call take `now` from here,
// never reading the clock themselves (core/clock.hpp).
const time::SystemClock k_clock;

// For init and tenant create, the two commands that may start from nothing. A SQLite data folder
// gets its card-number key here, before any tenant exists: a folder init succeeded on has one.
std::unique_ptr<store::Store> open_migrated(const StoreFlags& flags) {
  store::Options options;
  options.data_dir = flags.data_dir;
  options.database_url = flags.database_url;
  auto store = store::open(options);
  store::migrate(*store);
  if (flags.database_url.empty()) ensure_card_key_file(flags.data_dir);
  return store;
}

int fail(const std::string& message) {
  std::cerr << "tesoro: " << message << "\n";
  return 1;
}

// --public-url: http(s)://host[:port][/path], printable, no query nor fragment (paths are added
// to it).
bool valid_public_url(std::string_view url) {
  std::string_view rest;
  if (url.starts_with("http://")) rest = url.substr(7);
  else if (url.starts_with("https://")) rest = url.substr(8);
  else return false;
  if (rest.empty() || rest.front() == '/') return false;
  for (char c : rest) {
    if (c <= 0x20 || c >= 0x7f || c == '?' || c == '#' || c == '"' || c == '\\') return false;
  }
  return true;
}

// Thrown when a command other than init and tenant create points at a database that was never
// initialised; main prints it and exits 1.
struct NotInitialised : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Opens a database `tesoro init` has set up, and migrates it unless read_only. Refuses (throws
// NotInitialised) anything else without creating a file or a table: a mistyped --data must not
// leave an empty database behind that a later command would take for a real one.
std::unique_ptr<store::Store> open_initialised(const StoreFlags& flags, bool read_only = false,
                                               int commit_batch_max = 0) {
  bool sqlite = flags.database_url.empty();
  std::string where = sqlite ? flags.data_dir : "the PostgreSQL database";
  std::string init_hint = sqlite ? "run `tesoro init --data " + flags.data_dir + "` first"
                                 : "run `tesoro init --database-url ...` first";
  // Opening SQLite creates the file, so its absence is checked before.
  if (sqlite && !std::filesystem::exists(flags.data_dir + "/tesoro.db")) {
    throw NotInitialised(where + " is not initialised (it has no tesoro.db): " + init_hint);
  }
  store::Options options;
  options.data_dir = flags.data_dir;
  options.database_url = flags.database_url;
  if (commit_batch_max > 0) options.commit_batch_max = static_cast<std::size_t>(commit_batch_max);
  auto store = store::open(options);
  if (!store::is_initialised(*store)) {
    throw NotInitialised(where + " is not initialised (no Tesoro tables or no tenant): " +
                         init_hint);
  }
  if (!read_only) store::migrate(*store);  // an upgrade's new migrations
  return store;
}

int fail(const Error& error) {
  return fail(error.errors.empty() ? error.message : error.errors.front().message);
}

// The console url of --public-url: its origin and path, then /console/.
std::string console_url(std::string public_url) {
  while (public_url.ends_with('/')) public_url.pop_back();
  return public_url + "/console/";
}

// A tenant with everything needed to call both surfaces at once, and its console owner (whose
// password hash `owner_password` was made before the unit). Everything it creates carries the
// one `now`.
Result<json::object> create_tenant_with_credentials(store::Tx& tx, const std::string& name,
                                                    const std::string& environment,
                                                    const OwnerFlags& owner_flags,
                                                    const console::NewPassword& owner_password,
                                                    time::Micros now) {
  auto tenant_id = auth::create_tenant(tx, name, environment, now);
  if (!tenant_id) return std::move(tenant_id).error();
  auto key = auth::create_api_key(tx, *tenant_id, auth::all_core_admin_scopes(), now);
  if (!key) return std::move(key).error();
  auto client = auth::create_client(tx, *tenant_id, auth::participant_scopes(), now);
  if (!client) return std::move(client).error();
  // One ledger account on the core API, one receptor and one originator on the participant API.
  auto account = ledger::open_account(tx, *tenant_id, {"Operating account", "savings_account", "COP", {}}, now);
  if (!account) return std::move(account).error();
  // Cards without a configuration_group_id join the tenant's default group.
  cards::default_configuration_group(tx, *tenant_id, now);
  json::array tenant_account_ids;
  for (const char* role : {"receptor", "originator"}) {
    ledger::NewTenantAccount input{"savings_account", role, "COP",
                                   {"900123456", "NIT", name, "legal"}};
    auto tenant_account = ledger::open_tenant_account(tx, *tenant_id, input, now);
    if (!tenant_account) return std::move(tenant_account).error();
    tenant_account_ids.emplace_back(tenant_account->id);
  }
  std::string owner_email = owner_flags.email.empty() ? console::default_owner_email(*tenant_id)
                                                      : owner_flags.email;
  auto owner = console::create_user(tx, *tenant_id, owner_email, owner_password.hash, now);
  if (!owner) return std::move(owner).error();
  json::object out;
  out["tenant_id"] = *tenant_id;
  out["environment"] = environment;
  out["api_key"] = key->api_key;
  out["api_key_id"] = key->id;
  out["client_id"] = client->client_id;
  out["client_secret"] = client->client_secret;
  out["account_id"] = account->id;
  out["tenant_account_ids"] = std::move(tenant_account_ids);
  out["console_url"] = console_url(owner_flags.public_url);
  out["owner_email"] = owner->email;
  out["owner_password"] = owner_password.plain;
  return out;
}

void print_object(const json::object& object, bool as_json) {
  if (as_json) {
    std::cout << json::serialize(object) << "\n";
    return;
  }
  for (const auto& entry : object) {
    std::cout << entry.key() << ": "
              << (entry.value().is_string() ? std::string(entry.value().get_string())
                                            : json::serialize(entry.value()))
              << "\n";
  }
}

// A list command's output: one JSON array of to_json(item), or one line of to_line(item) each.
template <class T, class ToJson, class ToLine>
int print_list(const std::vector<T>& items, bool as_json, ToJson to_json, ToLine to_line) {
  if (as_json) {
    json::array out;
    for (const T& item : items) out.push_back(to_json(item));
    std::cout << json::serialize(out) << "\n";
  } else {
    for (const T& item : items) std::cout << to_line(item) << "\n";
  }
  return 0;
}

int create_and_print(const StoreFlags& flags, const std::string& name,
                     const std::string& environment, const OwnerFlags& owner, bool as_json,
                     bool only_when_empty) {
  if (!valid_public_url(owner.public_url)) {
    return fail("--public-url wants http://HOST[:PORT][/PATH] or https://..., without query");
  }
  if (!owner.email.empty()) {
    if (auto refused = console::check_email(owner.email)) {
      return fail("--owner-email: " + refused->errors.front().message);
    }
  }
  auto store = open_migrated(flags);
  // Hashed before the write unit: scrypt takes tens of milliseconds.
  const console::NewPassword owner_password = console::make_password();
  auto created = store->write<json::object>([&](store::Tx& tx) -> Result<json::object> {
    // Checked inside the write unit so that two concurrent inits cannot both succeed.
    if (only_when_empty && auth::has_tenants_locked(tx)) {
      return errors::make("already_initialised", "already initialised");
    }
    return create_tenant_with_credentials(tx, name, environment, owner, owner_password,
                                          k_clock.now());
  });
  if (!created) {
    if (created.error().first_code() == "already_initialised") {
      std::string where = flags.database_url.empty() ? flags.data_dir : "the database";
      return fail(where + " is already initialised; nothing changed "
                          "(use `tesoro tenant create` for another tenant)");
    }
    return fail(created.error());
  }
  print_object(created.value(), as_json);
  return 0;
}

}  // namespace

int command_init(const StoreFlags& flags, const std::string& name, const OwnerFlags& owner,
                 bool json) {
  return create_and_print(flags, name, "sandbox", owner, json, true);
}

int command_tenant_create(const StoreFlags& flags, const std::string& name,
                          const std::string& environment, const OwnerFlags& owner, bool json) {
  return create_and_print(flags, name, environment, owner, json, false);
}

int command_users_create(const StoreFlags& flags, const std::string& tenant_id,
                         const std::string& email, bool as_json) {
  auto store = open_initialised(flags);
  const console::NewPassword password = console::make_password();  // before the unit: slow
  auto user = store->write<console::User>([&](store::Tx& tx) {
    return console::create_user(tx, tenant_id, email, password.hash, k_clock.now());
  });
  if (!user) return fail(user.error());
  print_object({{"id", user->id},
                {"email", user->email},
                {"tenant_id", user->tenant_id},
                {"password", password.plain}},
               as_json);
  return 0;
}

int command_users_list(const StoreFlags& flags, const std::string& tenant_id, bool as_json) {
  auto store = open_initialised(flags);
  auto users = store->read<std::vector<console::User>>(
      [&](store::Tx& tx) { return console::list_users(tx, tenant_id); });
  if (!users) return fail(users.error());
  return print_list(
      users.value(), as_json,
      [](const console::User& user) {
        return json::object{{"id", user.id},
                            {"email", user.email},
                            {"tenant_id", user.tenant_id},
                            {"inserted_at", user.inserted_at}};
      },
      [](const console::User& user) {
        return user.id + "  " + user.email + "  " + user.inserted_at;
      });
}

int command_keys_create(const StoreFlags& flags, const std::string& tenant_id,
                        const std::string& scopes, bool as_json) {
  auto store = open_initialised(flags);
  auto key = store->write<auth::CreatedKey>([&](store::Tx& tx) {
    return auth::create_api_key(tx, tenant_id, auth::split_scopes(scopes, ','), k_clock.now());
  });
  if (!key) return fail(key.error());
  print_object(
      {{"id", key->id}, {"api_key", key->api_key}, {"scopes", api::string_array(key->scopes)}},
      as_json);
  return 0;
}

int command_keys_list(const StoreFlags& flags, const std::string& tenant_id, bool as_json) {
  auto store = open_initialised(flags);
  auto keys = store->read<std::vector<auth::KeySummary>>(
      [&](store::Tx& tx) { return auth::list_api_keys(tx, tenant_id); });
  if (!keys) return fail(keys.error());
  return print_list(keys.value(), as_json, api::key_summary_json, [](const auth::KeySummary& key) {
    return key.id + "  " + key.key_prefix + "...  " + auth::join_scopes(key.scopes, ',') + "  " +
           (key.revoked_at ? "revoked " + *key.revoked_at : "active");
  });
}

int command_keys_revoke(const StoreFlags& flags, const std::string& key_id) {
  auto store = open_initialised(flags);
  auto revoked = store->write<auth::KeySummary>(
      [&](store::Tx& tx) { return auth::revoke_api_key(tx, key_id, k_clock.now()); });
  if (!revoked) return fail(revoked.error());
  std::cout << "revoked " << key_id << "\n";
  return 0;
}

int command_clients_create(const StoreFlags& flags, const std::string& tenant_id,
                           const std::string& scopes, bool as_json) {
  auto store = open_initialised(flags);
  auto client = store->write<auth::CreatedClient>([&](store::Tx& tx) {
    return auth::create_client(tx, tenant_id, auth::split_scopes(scopes, ','), k_clock.now());
  });
  if (!client) return fail(client.error());
  print_object({{"client_id", client->client_id},
                {"client_secret", client->client_secret},
                {"scopes", api::string_array(client->scopes)}},
               as_json);
  return 0;
}

int command_clients_list(const StoreFlags& flags, const std::string& tenant_id, bool as_json) {
  auto store = open_initialised(flags);
  auto clients = store->read<std::vector<auth::ClientSummary>>(
      [&](store::Tx& tx) { return auth::list_clients(tx, tenant_id); });
  if (!clients) return fail(clients.error());
  return print_list(clients.value(), as_json, api::client_summary_json,
                    [](const auth::ClientSummary& client) {
                      return client.client_id + "  " + auth::join_scopes(client.scopes, ',') +
                             "  " + client.environment + "  " + client.inserted_at + "  " +
                             (client.revoked_at ? "revoked " + *client.revoked_at : "active");
                    });
}

int command_clients_revoke(const StoreFlags& flags, const std::string& client_id) {
  auto store = open_initialised(flags);
  auto revoked = store->write<auth::ClientSummary>(
      [&](store::Tx& tx) { return auth::revoke_client(tx, client_id, k_clock.now()); });
  if (!revoked) return fail(revoked.error());
  std::cout << "revoked " << client_id << "\n";
  return 0;
}

int command_tenant_list(const StoreFlags& flags, bool as_json) {
  auto store = open_initialised(flags, /*read_only=*/true);
  auto tenants = store->read<std::vector<auth::TenantSummary>>(
      [](store::Tx& tx) -> Result<std::vector<auth::TenantSummary>> {
        return auth::list_tenants(tx);
      });
  if (!tenants) return fail(tenants.error());
  return print_list(
      tenants.value(), as_json,
      [](const auth::TenantSummary& tenant) {
        return json::object{{"id", tenant.id},
                            {"name", tenant.name},
                            {"environment", tenant.environment},
                            {"inserted_at", tenant.inserted_at}};
      },
      [](const auth::TenantSummary& tenant) {
        return tenant.id + "  " + tenant.name + "  " + tenant.environment + "  " +
               tenant.inserted_at;
      });
}

int command_migrate(const StoreFlags& flags) {
  store::Options options;
  options.data_dir = flags.data_dir;
  options.database_url = flags.database_url;
  const int version = store::migrate(*store::open(options));
  std::cout << "schema at version " << version << "\n";
  return 0;
}

int command_verify(const StoreFlags& flags) {
  // Read-only: no migration, no file created; a replica or a wrong path is fine to point at.
  auto store = open_initialised(flags, /*read_only=*/true);
  auto violations = store->read<std::vector<std::string>>(
      [](store::Tx& tx) -> Result<std::vector<std::string>> {
        std::vector<std::string> violations = ledger::verify(tx);
        for (std::string& violation : cards::verify(tx)) violations.push_back(std::move(violation));
        for (std::string& violation : collections::verify(tx)) {
          violations.push_back(std::move(violation));
        }
        for (std::string& violation : collections::verify_attempts(tx)) {
          violations.push_back(std::move(violation));
        }
        for (std::string& violation : transfers::verify(tx)) {
          violations.push_back(std::move(violation));
        }
        return violations;
      });
  if (!violations) return fail(violations.error());
  for (const std::string& violation : violations.value()) std::cout << "violation: " << violation << "\n";
  if (!violations->empty()) {
    std::cerr << "tesoro: " << violations->size() << " ledger invariant(s) broken\n";
    return 2;
  }
  std::cout << "ledger ok: every entry balances, every balance equals its postings, every "
               "account's postings chain their running balances in order to it, every "
               "card hold equals what its authorizations hold, every collection's "
               "paid_amount equals its incoming transfers and agrees with its state, every "
               "successful collection attempt has its incoming transfer, and every account "
               "holds what its moving outgoing transfers hold, each successful transfer with "
               "its settlement entry\n";
  return 0;
}

int command_serve(const Config& config) {
  log::Level level;
  if (!log::parse_level(config.log_level, level)) return fail("unknown log level " + config.log_level);
  log::set_level(level);
  if (config.environment != "sandbox" && config.environment != "production") {
    return fail("environment must be sandbox or production");
  }
  auto colon = config.listen.rfind(':');
  if (colon == std::string::npos) return fail("--listen wants HOST:PORT");
  http::ServerOptions options;
  options.host = config.listen.substr(0, colon);
  try {
    int port = std::stoi(config.listen.substr(colon + 1));
    if (port < 0 || port > 65535) return fail("port out of range");
    options.port = static_cast<unsigned short>(port);
  } catch (const std::exception&) {
    return fail("--listen wants HOST:PORT");
  }
  if (!config.public_url.empty() && !valid_public_url(config.public_url)) {
    return fail("--public-url wants http://HOST[:PORT][/PATH] or https://..., without query");
  }
  bool sqlite = config.database_url.empty();
  const int workers = config.workers > 0 ? config.workers
                      : sqlite           ? limits::k_workers_default_sqlite
                                         : limits::k_postgres_pool_size;
  options.workers = std::clamp(workers, 1, limits::k_workers_max);
  metrics::set_handler_threads(options.workers);
  options.io_threads = std::max(1, config.io_threads);

  // A missing or malformed TESORO_CARD_KEY stops serve before it touches the database; the data
  // folder's key file is read (or made) once the folder is known to be initialised.
  std::optional<std::string> environment_key = card_key_from_environment(!sqlite);
  auto store = open_initialised({config.data_dir, config.database_url}, /*read_only=*/false,
                                config.commit_batch_max);
  std::string key = environment_key ? *environment_key : card_key_from_file(config.data_dir);
  crypto::Sealer card_numbers(key);
  OPENSSL_cleanse(key.data(), key.size());
  if (environment_key) OPENSSL_cleanse(environment_key->data(), environment_key->size());
  App app(config, std::move(store), std::move(card_numbers));
  // On SQLite batches and the background workers run behind the store's writer, which every
  // write waits for (limits::k_sqlite_behind_writer_nice).
  std::function<void()> behind_the_writer;
  if (sqlite) {
    options.bulk_workers = limits::k_bulk_workers_per_core_sqlite *
                           std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    metrics::set_batch_threads(options.bulk_workers);
    behind_the_writer = [] {
      thread_priority::lower_this_thread(limits::k_sqlite_behind_writer_nice);
    };
  }
  http::Handlers handlers;
  handlers.handle = [&app](http::Request& request) { return app.handle(request); };
  handlers.handle_inline = [&app](http::Request& request) { return app.handle_inline(request); };
  handlers.render_error = [&app](const Error& error, const http::Request& request) {
    return app.render_transport_error(error, request);
  };
  handlers.is_bulk = [&app](const http::Request& request) { return app.is_bulk(request); };
  handlers.bulk_worker_started = behind_the_writer;
  // An idle thread's tcmalloc cache goes back to the shared lists, and with it its share of the
  // budget all threads' caches divide (32 MiB by default): otherwise every thread a burst ever
  // woke keeps at least 512 KiB of it, and the threads busy later cannot grow theirs.
#ifndef TESORO_WITHOUT_TCMALLOC
  handlers.worker_idle = [] { MallocExtension::instance()->MarkThreadIdle(); };
#endif
  handlers.on_listening = [&](unsigned short port) {
    // Workers start once the address is ours: a server that cannot listen does no work.
    app.listening_on(options.host, port);
    app.start_background(behind_the_writer);
    log::write(log::Level::warn, "server.listening",
               {{"address", "http://" + options.host + ":" + std::to_string(port)},
                {"environment", config.environment},
                {"engine", config.database_url.empty() ? "sqlite" : "postgres"},
                {"card_key", environment_key ? k_card_key_variable : "data folder"}});
  };
  std::signal(SIGPIPE, SIG_IGN);
  http::Server server(options, handlers);
  server.run();
  app.stop_background();
  return 0;
}

}  // namespace tesoro::app
