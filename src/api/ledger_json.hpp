#pragma once
// JSON shapes of ledger accounts shared by the core and participant surfaces.
#include <string>
#include <vector>

#include "api/json.hpp"
#include "api/validation.hpp"
#include "domain/ledger/accounts.hpp"

namespace tesoro::api {

const std::vector<std::string>& ledger_currencies();
// Account of the core API: id, name, number, provider, state, type, balance, timestamps.
json::object account_json(const ledger::Account& account);
// Tenant account of the participant API.
json::object tenant_account_json(const ledger::Account& account);

struct FundingRequest {
  Money amount;
  std::string description;
};
// Sandbox funding body: `amount` (Money), optional `description`. `problems` may already hold
// problems of the path, so that one answer lists them all.
Result<FundingRequest> decode_funding(std::string_view body, Problems& problems);

}  // namespace tesoro::api
