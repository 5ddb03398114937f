#pragma once
// How API keys and OAuth clients are shown (never their secrets): the console's lists and the
// operator's `keys list --json` and `clients list --json` print the same objects.
#include "api/json.hpp"
#include "domain/auth/credentials.hpp"

namespace tesoro::api {

json::array string_array(const std::vector<std::string>& texts);
// {"id", "key_prefix", "scopes", "environment", "inserted_at", "revoked_at"}
json::object key_summary_json(const auth::KeySummary& key);
// {"client_id", "scopes", "environment", "inserted_at", "revoked_at"}
json::object client_summary_json(const auth::ClientSummary& client);

}  // namespace tesoro::api
