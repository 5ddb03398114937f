#pragma once
// Signing secrets and signatures of webhook deliveries, as the Standard Webhooks specification
// (v1) has them, so that any of its verifier libraries accepts our deliveries unchanged:
// - a secret is `whsec_` followed by the base64 of 32 random bytes; the HMAC key is those bytes;
// - `webhook-signature` is `v1,<base64 of HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`,
//   one such value per valid secret, space-separated (during a rotation, old and new both sign).
// Secrets are stored sealed with the server's data key (crypto::Sealer), never in clear.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/crypto.hpp"
#include "core/limits.hpp"

namespace tesoro::webhooks {

inline constexpr std::string_view k_secret_prefix = "whsec_";

// A new secret: whsec_ + base64(32 random bytes).
std::string new_secret();

// The HMAC key of a secret (the decoded bytes after whsec_); nullopt when it is not one.
std::optional<std::string> secret_key(std::string_view secret);

// Sealing for storage, bound to the endpoint's row (aad tenant_id:endpoint_id).
std::string seal_secret(const crypto::Sealer& sealer, std::string_view tenant_id,
                        std::string_view endpoint_id, std::string_view secret);
std::optional<std::string> open_secret(const crypto::Sealer& sealer, std::string_view tenant_id,
                                       std::string_view endpoint_id, std::string_view sealed);

// The `webhook-signature` header value: "v1,<sig>" for each secret, in the order given,
// separated by single spaces. Secrets that are not whsec_ secrets are skipped.
std::string signature_header(const std::vector<std::string>& secrets, std::string_view message_id,
                             long long timestamp_seconds, std::string_view body);

}  // namespace tesoro::webhooks
