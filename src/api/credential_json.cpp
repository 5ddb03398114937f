#include "api/credential_json.hpp"

namespace tesoro::api {

json::array string_array(const std::vector<std::string>& texts) {
  json::array out;
  for (const std::string& text : texts) out.emplace_back(text);
  return out;
}

json::object key_summary_json(const auth::KeySummary& key) {
  return {{"id", key.id},
          {"key_prefix", key.key_prefix},
          {"scopes", string_array(key.scopes)},
          {"environment", key.environment},
          {"inserted_at", key.inserted_at},
          {"revoked_at", optional_json(key.revoked_at)}};
}

json::object client_summary_json(const auth::ClientSummary& client) {
  return {{"client_id", client.client_id},
          {"scopes", string_array(client.scopes)},
          {"environment", client.environment},
          {"inserted_at", client.inserted_at},
          {"revoked_at", optional_json(client.revoked_at)}};
}

}  // namespace tesoro::api
