#pragma once
// Webhook endpoints (whe_): where a tenant wants its events POSTed. Both API surfaces manage the
// same endpoints of a tenant (/v1/webhook_endpoints with the core scope group `webhooks`,
// /api/v1/webhook_endpoints with the participant scope `webhooks`).
//
// Where an endpoint may point: webhooks/destinations.hpp.
//
// Endpoint management emits no events: events describe the tenant's money and cards, and an
// endpoint receiving news of itself would only add noise.
#include <boost/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/crypto.hpp"
#include "core/limits.hpp"
#include "core/page.hpp"
#include "core/result.hpp"
#include "core/time.hpp"
#include "domain/webhooks/destinations.hpp"
#include "store/store.hpp"

namespace tesoro::webhooks {

// What an endpoint subscribed to card_authorization.request is waited for, and what a timeout
// or an error decides (decisions.md, "Authorization decisioning by the tenant").
inline constexpr std::string_view k_authorization_request_type = "card_authorization.request";
const std::vector<std::string>& authorization_fallbacks();  // decline (the default), approve

struct Endpoint {
  std::string id;  // whe_
  std::string url;
  std::optional<std::string> description;
  // Empty: every event type. card_authorization.request is not an event: only an endpoint
  // that lists it by name is asked to decide authorizations.
  std::vector<std::string> event_types;
  bool enabled = true;
  std::int64_t authorization_timeout_ms = limits::k_authorization_timeout_ms_default;
  std::string authorization_fallback = "decline";
  std::optional<std::string> disabled_reason;  // gone (answered 410) | disabled (by the tenant)
  std::int64_t start_position = 0;
  std::string inserted_at;
  std::string updated_at;
};

// The endpoint as the API shows it; `secret` (whsec_...) only on create and rotate_secret.
boost::json::object to_json(const Endpoint& endpoint,
                            const std::optional<std::string>& secret = std::nullopt);

struct NewEndpoint {
  std::string url;
  std::optional<std::string> description;
  // Each a known event type, a `prefix.*` pattern of one, or card_authorization.request.
  std::vector<std::string> event_types;
  bool enabled = true;
  // Checked by the caller: limits::k_authorization_timeout_ms_min..max, one of
  // authorization_fallbacks().
  std::int64_t authorization_timeout_ms = limits::k_authorization_timeout_ms_default;
  std::string authorization_fallback = "decline";
};

struct Created {
  Endpoint endpoint;
  std::string secret;  // shown once
};

// validation_error at `event_types.N` for a type that is neither one of event_types(),
// card_authorization.request, nor `<prefix>.*` of one of their prefixes, or listed twice; at
// `event_types` for more than limits::k_webhook_event_types_max. Every problem is listed.
std::optional<Error> check_event_types(const std::vector<std::string>& event_types,
                                       std::string_view path = "event_types");

// Checks url (check_url) and event_types (check_event_types);
// webhook_endpoint_limit_reached when the tenant has limits::k_webhook_endpoints_max already.
// The secret is stored sealed; start_position is the last positioned event at creation.
Result<Created> create_endpoint(store::Tx& tx, const crypto::Sealer& sealer,
                                const std::string& tenant_id, const NewEndpoint& input,
                                const Destinations& destinations, time::Micros now);
// item_not_found for unknown ids and other tenants' endpoints.
Result<Endpoint> get_endpoint(store::Tx& tx, const std::string& tenant_id, const std::string& id);
// The tenant's endpoints, newest inserted_at first.
Result<PageOf<Endpoint>> list_endpoints(store::Tx& tx, const std::string& tenant_id,
                                        std::int64_t offset, std::int64_t limit);

// PATCH: fields present are changed (and checked as on create). Enabling clears
// disabled_reason; disabling an enabled endpoint sets `disabled`.
struct EndpointPatch {
  std::optional<std::string> url;
  std::optional<std::optional<std::string>> description;
  std::optional<std::vector<std::string>> event_types;
  std::optional<bool> enabled;
  std::optional<std::int64_t> authorization_timeout_ms;
  std::optional<std::string> authorization_fallback;
};
Result<Endpoint> update_endpoint(store::Tx& tx, const std::string& tenant_id,
                                 const std::string& id, const EndpointPatch& patch,
                                 const Destinations& destinations, time::Micros now);
// Deletes the endpoint; its pending deliveries become failed. item_not_found.
Status delete_endpoint(store::Tx& tx, const std::string& tenant_id, const std::string& id,
                       time::Micros now);
// A new secret; the one it replaces keeps signing for limits::k_webhook_secret_overlap_seconds
// of real time (a second rotation within that window ends the older one at once: at most two
// secrets sign). Returns the endpoint and the new secret (shown once). item_not_found.
Result<Created> rotate_secret(store::Tx& tx, const crypto::Sealer& sealer,
                              const std::string& tenant_id, const std::string& id,
                              time::Micros now, time::Micros real_now);

// The secrets that sign a delivery made at `real_now`: the current one first, then the previous
// one while its overlap lasts.
std::vector<std::string> signing_secrets(store::Tx& tx, const crypto::Sealer& sealer,
                                         const std::string& tenant_id, const std::string& id,
                                         time::Micros real_now);

// The endpoint that decides the tenant's card authorizations: the newest enabled one whose
// event_types names card_authorization.request (a pattern or an empty list never does), with
// the secrets that sign a request made at `real_now` (as signing_secrets()), in one statement.
struct AuthorizationEndpoint {
  Endpoint endpoint;
  std::vector<std::string> secrets;
};
std::optional<AuthorizationEndpoint> authorization_endpoint(store::Tx& tx,
                                                            const crypto::Sealer& sealer,
                                                            const std::string& tenant_id,
                                                            time::Micros real_now);

// Counts again the tenant's enabled endpoints that list card_authorization.request into
// tenants.authorization_endpoints, which authentication reads (auth::Principal): run by every
// change that can enable or list one, in its transaction.
void refresh_authorization_endpoints(store::Tx& tx, const std::string& tenant_id);

// The event_types column (a JSON array of strings, written only by this module) from a list.
std::string encode_event_types(const std::vector<std::string>& event_types);
// The event_types column (a JSON array of strings, written only by this module) as a list.
std::vector<std::string> decode_event_types(const std::string& text);

// Every event type Tesoro emits (the catalogue of docs/webhooks.md), for validating
// event_types and the events list's `type` filter.
const std::vector<std::string>& event_types();

}  // namespace tesoro::webhooks
