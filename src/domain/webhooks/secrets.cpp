#include "domain/webhooks/secrets.hpp"

namespace tesoro::webhooks {

namespace {

std::string aad_for(std::string_view tenant_id, std::string_view endpoint_id) {
  std::string aad(tenant_id);
  aad += ':';
  aad += endpoint_id;
  return aad;
}

}  // namespace

std::string new_secret() {
  return std::string(k_secret_prefix) +
         crypto::base64(crypto::random_bytes(limits::k_secret_bytes));
}

std::optional<std::string> secret_key(std::string_view secret) {
  if (!secret.starts_with(k_secret_prefix)) return std::nullopt;
  bool ok = false;
  std::string key = crypto::base64_decode(secret.substr(k_secret_prefix.size()), ok);
  if (!ok || key.empty()) return std::nullopt;
  return key;
}

std::string seal_secret(const crypto::Sealer& sealer, std::string_view tenant_id,
                        std::string_view endpoint_id, std::string_view secret) {
  return sealer.seal(secret, aad_for(tenant_id, endpoint_id));
}

std::optional<std::string> open_secret(const crypto::Sealer& sealer, std::string_view tenant_id,
                                       std::string_view endpoint_id, std::string_view sealed) {
  // Opened for every delivery and every authorization put to the endpoint.
  return sealer.open_remembered(sealed, aad_for(tenant_id, endpoint_id));
}

std::string signature_header(const std::vector<std::string>& secrets, std::string_view message_id,
                             long long timestamp_seconds, std::string_view body) {
  std::string signed_content;
  signed_content.reserve(message_id.size() + body.size() + 24);
  signed_content += message_id;
  signed_content += '.';
  signed_content += std::to_string(timestamp_seconds);
  signed_content += '.';
  signed_content += body;
  std::string header;
  for (const std::string& secret : secrets) {
    std::optional<std::string> key = secret_key(secret);
    if (!key) continue;
    if (!header.empty()) header += ' ';
    header += "v1,";
    header += crypto::base64(crypto::hmac_sha256(*key, signed_content));
  }
  return header;
}

}  // namespace tesoro::webhooks
