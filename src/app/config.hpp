#pragma once
// Server configuration: flags with environment-variable equivalents (see main.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include "core/limits.hpp"

namespace tesoro::app {

struct Config {
  std::string data_dir = "./data";
  std::string database_url;  // postgres://... selects the PostgreSQL engine
  std::string listen = "127.0.0.1:8080";
  // Where clients reach the server (a proxy's https://... address in production): the base of
  // the activation links' urls. Empty: http://<the address it listens on>.
  std::string public_url;
  std::string environment = "sandbox";  // sandbox | production, fixed at start
  double rate_per_second = -1;          // -1: the environment's default; 0: no limiting
  double rate_burst = -1;
  // Failed authentications per client address (app::AuthFailureGuard); 0: not limited. Off with
  // every other limit when rate_per_second is 0.
  double auth_failure_rate = limits::k_auth_failure_rate_per_second;
  double auth_failure_burst = limits::k_auth_failure_burst;
  int workers = 0;  // 0: by engine (limits::k_workers_default_sqlite, or the PostgreSQL pool)
  int io_threads = limits::k_io_threads_default;
  int commit_batch_max = static_cast<int>(limits::k_commit_batch_max);  // 1: no group commit
  std::string log_level = "info";
  // ISO 4217 codes accepted on ledger endpoints and on card endpoints (checked against
  // money::k_known_currencies when the flags are parsed).
  std::vector<std::string> currencies = {"COP"};
  std::vector<std::string> card_currencies = {"COP", "USD"};
  // The most one outgoing transfer or payout may carry, in minor units.
  std::int64_t transfer_max_amount_minor = limits::k_transfer_max_amount_minor_default;
  // Hosts webhook endpoints may point at: names, `*.example.com` patterns, or `*` for any
  // public host (domain/webhooks/endpoints.hpp has the whole rule).
  std::vector<std::string> webhook_allowed_hosts = {"*"};
  // Test knobs (hidden flags): how long a node holds a webhook endpoint it delivers to, and the
  // timeout of one delivery attempt. 0: limits::k_webhook_lease_seconds and
  // limits::k_webhook_timeout_ms.
  std::int64_t webhook_lease_seconds = 0;
  std::int64_t webhook_timeout_ms = 0;

  bool is_sandbox() const { return environment == "sandbox"; }
};

}  // namespace tesoro::app
