#pragma once
// The operator commands (tesoro init, tenant, keys, clients, verify, serve). Each returns the
// process exit code and prints to stdout; errors go to stderr. Every command but init and tenant
// create refuses a database that was never initialised (exit 1), creating nothing.
#include <string>
#include <vector>

#include "app/config.hpp"

namespace tesoro::app {

struct StoreFlags {
  std::string data_dir = "./data";
  std::string database_url;
};

int command_init(const StoreFlags& flags, const std::string& name, bool json);
int command_tenant_create(const StoreFlags& flags, const std::string& name,
                          const std::string& environment, bool json);
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
