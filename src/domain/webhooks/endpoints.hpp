#pragma once
// Webhook endpoints (whe_): where a tenant wants its events POSTed. Both API surfaces manage the
// same endpoints of a tenant (/v1/webhook_endpoints with the core scope group `webhooks`,
// /api/v1/webhook_endpoints with the participant scope `webhooks`).
//
// Destinations. A tenant must not be able to point Tesoro at the operator's internal services,
// so a URL is checked twice:
// - when registered (check_url): absolute http(s) URL without user info or fragment, at most
//   limits::k_webhook_url_max_bytes; `https` required in production (http allowed in the
//   sandbox); its host must match the operator's allow-list (Destinations::allowed_hosts:
//   exact host names, `*.example.com` suffix patterns, or `*` for any host); a loopback host
//   (localhost, 127.0.0.0/8, ::1) only in the sandbox; an IP literal in a private, link-local,
//   multicast or unspecified range is refused unless the allow-list names it exactly;
// - when delivered (check_address, by the dispatcher on every address the host resolves to,
//   which it then pins for the connection so that DNS cannot change its answer in between):
//   the same address rules, so a public name resolving to 10.0.0.1 is refused too.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/crypto.hpp"
#include "core/result.hpp"
#include "core/time.hpp"
#include "store/store.hpp"

namespace tesoro::webhooks {

struct Destinations {
  bool sandbox = true;
  std::vector<std::string> allowed_hosts = {"*"};  // --webhook-allowed-hosts
};

// 400 validation_error at `path` when the URL may not be registered.
std::optional<Error> check_url(std::string_view url, const Destinations& destinations,
                               std::string_view path = "url");
// Whether the dispatcher may connect to `address` (an IPv4 or IPv6 literal) resolved for `host`.
bool check_address(std::string_view host, std::string_view address,
                   const Destinations& destinations);

struct Endpoint {
  std::string id;  // whe_
  std::string url;
  std::optional<std::string> description;
  std::vector<std::string> event_types;  // empty: every type
  bool enabled = true;
  std::optional<std::string> disabled_reason;  // gone (answered 410) | disabled (PATCH)
  std::int64_t start_position = 0;
  std::string inserted_at;
  std::string updated_at;
};

// The endpoint as the API shows it; `secret` (whsec_...) only on create and rotate_secret.
std::string endpoint_text(const Endpoint& endpoint, const std::optional<std::string>& secret);

struct NewEndpoint {
  std::string url;
  std::optional<std::string> description;
  std::vector<std::string> event_types;  // each a known event type (or a `prefix.*` pattern)
  bool enabled = true;
};

struct Created {
  Endpoint endpoint;
  std::string secret;  // shown once
};

Result<Created> create_endpoint(store::Tx& tx, const crypto::Sealer& sealer,
                                const std::string& tenant_id, const NewEndpoint& input,
                                const Destinations& destinations, time::Micros now);
// 404 item_not_found for unknown ids and other tenants' endpoints.
Result<Endpoint> get_endpoint(store::Tx& tx, const std::string& tenant_id, const std::string& id);

// PATCH: fields present are changed. Enabling clears disabled_reason; disabling sets `disabled`.
struct EndpointPatch {
  std::optional<std::string> url;
  std::optional<std::optional<std::string>> description;
  std::optional<std::vector<std::string>> event_types;
  std::optional<bool> enabled;
};
Result<Endpoint> update_endpoint(store::Tx& tx, const std::string& tenant_id,
                                 const std::string& id, const EndpointPatch& patch,
                                 const Destinations& destinations, time::Micros now);
// Deletes the endpoint; its pending deliveries become failed. 404 item_not_found.
Result<void> delete_endpoint(store::Tx& tx, const std::string& tenant_id, const std::string& id,
                             time::Micros now);
// A new secret; the previous one keeps signing for limits::k_webhook_secret_overlap_seconds of
// real time. Returns the endpoint and the new secret (shown once).
Result<Created> rotate_secret(store::Tx& tx, const crypto::Sealer& sealer,
                              const std::string& tenant_id, const std::string& id,
                              time::Micros now, time::Micros real_now);

// The secrets that sign a delivery made at `real_now`: the current one first, then the previous
// one while its overlap lasts.
std::vector<std::string> signing_secrets(store::Tx& tx, const crypto::Sealer& sealer,
                                         const std::string& tenant_id, const std::string& id,
                                         time::Micros real_now);

// Whether an endpoint subscribed to `event_types` receives events of `type` (empty list: all;
// `collection.*` matches every collection event).
bool subscribed(const std::vector<std::string>& event_types, std::string_view type);

// Every event type Tesoro emits (the catalogue of docs/webhooks.md), for validating
// event_types and the events list's `type` filter.
const std::vector<std::string>& event_types();

}  // namespace tesoro::webhooks
