#pragma once
// The operator commands (tesoro init, tenant, keys, clients, users, verify, serve). Each returns
// the process exit code and prints to stdout; errors go to stderr. Every command but init and tenant
// create refuses a database that was never initialised (exit 1), creating nothing.
#include <string>
#include <vector>

#include "app/config.hpp"

namespace tesoro::app {

struct StoreFlags {
  std::string data_dir = "./data";
  std::string database_url;
};

// What init and tenant create make besides the tenant: its console owner. An empty email is
// console::default_owner_email; the console url printed is public_url + "/console/".
struct OwnerFlags {
  std::string email;
  std::string public_url = "http://127.0.0.1:8080";
};

int command_init(const StoreFlags& flags, const std::string& name, const OwnerFlags& owner,
                 bool json);
// Creates the schema or applies the migrations it lacks, and nothing else (no tenant: `init`
// still has to run on a new database before `serve` starts on it). Prints the version reached.
int command_migrate(const StoreFlags& flags);
int command_tenant_create(const StoreFlags& flags, const std::string& name,
                          const std::string& environment, const OwnerFlags& owner, bool json);
// A console user of the tenant with a one-time password, printed once.
int command_users_create(const StoreFlags& flags, const std::string& tenant_id,
                         const std::string& email, bool json);
int command_users_list(const StoreFlags& flags, const std::string& tenant_id, bool json);
int command_keys_create(const StoreFlags& flags, const std::string& tenant_id,
                        const std::string& scopes, bool json);
int command_keys_list(const StoreFlags& flags, const std::string& tenant_id, bool json);
int command_keys_revoke(const StoreFlags& flags, const std::string& key_id);
int command_clients_create(const StoreFlags& flags, const std::string& tenant_id,
                           const std::string& scopes, bool json);
int command_clients_list(const StoreFlags& flags, const std::string& tenant_id, bool json);
int command_clients_revoke(const StoreFlags& flags, const std::string& client_id);
int command_tenant_list(const StoreFlags& flags, bool json);
// Recomputes every balance from the postings and checks every entry; exit 2 naming violations.
int command_verify(const StoreFlags& flags);
int command_serve(const Config& config);

}  // namespace tesoro::app
