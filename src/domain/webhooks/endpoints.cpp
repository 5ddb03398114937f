#include "domain/webhooks/endpoints.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <set>

#include "core/ids.hpp"
#include "core/limits.hpp"
#include "domain/events/events.hpp"
#include "domain/webhooks/dispatcher.hpp"
#include "domain/webhooks/secrets.hpp"
#include "store/pages.hpp"

namespace tesoro::webhooks {
namespace {

namespace json = boost::json;

constexpr const char* k_columns =
    "id, url, description, event_types, enabled, disabled_reason, start_position, inserted_at, "
    "updated_at, authorization_timeout_ms, authorization_fallback";

// The sealed secrets' columns, read after k_columns where both are wanted.
constexpr const char* k_secret_columns =
    "secret_sealed, previous_secret_sealed, previous_secret_expires_at_micros";
constexpr std::size_t k_endpoint_column_count = 11;  // of k_columns

// The secrets that sign at `real_now`, from k_secret_columns starting at column `first` of
// `row`: the current one, then the previous one while its overlap lasts. A secret that does not
// open (another card-number key) is left out.
std::vector<std::string> secrets_of(const crypto::Sealer& sealer, const std::string& tenant_id,
                                    const std::string& id, const store::Row& row,
                                    std::size_t first, time::Micros real_now) {
  std::vector<std::string> secrets;
  if (auto current = open_secret(sealer, tenant_id, id, row.text(first))) {
    secrets.push_back(std::move(*current));
  }
  if (!row.is_null(first + 1) && row.integer(first + 2) > real_now) {
    if (auto previous = open_secret(sealer, tenant_id, id, row.text(first + 1))) {
      secrets.push_back(std::move(*previous));
    }
  }
  return secrets;
}

}  // namespace

std::string encode_event_types(const std::vector<std::string>& event_types) {
  return json::serialize(json::array(event_types.begin(), event_types.end()));
}

namespace {

Endpoint from_row(const store::Row& row) {
  Endpoint endpoint;
  endpoint.id = row.text(0);
  endpoint.url = row.text(1);
  endpoint.description = row.optional_text(2);
  endpoint.event_types = decode_event_types(row.text(3));
  endpoint.enabled = row.integer(4) == 1;
  endpoint.disabled_reason = row.optional_text(5);
  endpoint.start_position = row.integer(6);
  endpoint.inserted_at = row.text(7);
  endpoint.updated_at = row.text(8);
  endpoint.authorization_timeout_ms = row.integer(9);
  endpoint.authorization_fallback = row.text(10);
  return endpoint;
}

std::optional<Endpoint> select_endpoint(store::Tx& tx, const std::string& tenant_id,
                                        const std::string& id, std::string_view lock) {
  auto row =
      tx.query_one(std::string("SELECT ") + k_columns +
                       " FROM webhook_endpoints WHERE tenant_id = ? AND id = ?" + std::string(lock),
                   {tenant_id, id});
  if (!row) return std::nullopt;
  return from_row(*row);
}

// The problems of several checks as one answer.
std::optional<Error> merged(std::optional<Error> first, std::optional<Error> second) {
  if (!first) return second;
  if (second) {
    first->errors.insert(first->errors.end(), second->errors.begin(), second->errors.end());
  }
  return first;
}

// The part of a type before its first dot: `collection` of `collection.paid`.
std::string_view prefix_of(std::string_view type) { return type.substr(0, type.find('.')); }

// `card_authorization.*` is a known pattern too, matching no event: the request it would seem
// to name needs its explicit listing.
bool is_known_pattern(std::string_view pattern) {
  if (!pattern.ends_with(".*")) return false;
  std::string_view prefix = pattern.substr(0, pattern.size() - 2);
  return prefix == prefix_of(k_authorization_request_type) ||
         std::any_of(event_types().begin(), event_types().end(),
                     [&](const std::string& type) { return prefix_of(type) == prefix; });
}

void save(store::Tx& tx, const std::string& tenant_id, const Endpoint& endpoint) {
  tx.exec(
      "UPDATE webhook_endpoints SET url = ?, description = ?, event_types = ?, enabled = ?, "
      "disabled_reason = ?, authorization_timeout_ms = ?, authorization_fallback = ?, "
      "updated_at = ? WHERE tenant_id = ? AND id = ?",
      {endpoint.url, store::optional_value(endpoint.description),
       encode_event_types(endpoint.event_types), std::int64_t{endpoint.enabled ? 1 : 0},
       store::optional_value(endpoint.disabled_reason), endpoint.authorization_timeout_ms,
       endpoint.authorization_fallback, endpoint.updated_at, tenant_id, endpoint.id});
}

}  // namespace

std::vector<std::string> decode_event_types(const std::string& text) {
  std::vector<std::string> types;
  const boost::json::value parsed = boost::json::parse(text);
  for (const boost::json::value& type : parsed.as_array()) {
    types.emplace_back(type.as_string());
  }
  return types;
}

const std::vector<std::string>& event_types() {
  // Every type an events::emit or events::emit_many of src/domain writes, grouped by resource.
  // A unit test checks the lists of states the collection and transfer modules export.
  static const std::vector<std::string> k_types = {
      "account.credited",
      "account.debited",
      "account_holder.created",
      "activation_link.created",
      "activation_link.used",
      "card.active",
      "card.blocked",
      "card.canceled",
      "card.pending_activation",
      "card.updated",
      "card_balance_operation.created",
      "card_transaction.authorization_approved",
      "card_transaction.authorization_declined",
      "card_transaction.authorization_expiry",
      "card_transaction.authorization_increment",
      "card_transaction.authorization_reversal",
      "card_transaction.capture",
      "card_transaction.refund",
      "cardholder.created",
      "cardholder.updated",
      "collection.created",
      "collection.ready",
      "collection.minimum_paid",
      "collection.paid",
      "collection.discarded",
      "collection.failed",
      "collection.attempt_successful",
      "collection.attempt_unsuccessful",
      "configuration_group.created",
      "configuration_group.updated",
      "outgoing_transfer.created",
      "outgoing_transfer.processing",
      "outgoing_transfer.target_resolved",
      "outgoing_transfer.held",
      "outgoing_transfer.sent_to_breb_provider",
      "outgoing_transfer.successful",
      "outgoing_transfer.failed",
      "payout.pending",
      "payout.processing",
      "payout.settled",
      "payout.failed",
      "spending_control.created",
      "spending_control.updated",
      "spending_control.deleted",
  };
  return k_types;
}

const std::vector<std::string>& authorization_fallbacks() {
  static const std::vector<std::string> k_fallbacks = {"decline", "approve"};
  return k_fallbacks;
}

std::optional<AuthorizationEndpoint> authorization_endpoint(store::Tx& tx,
                                                            const crypto::Sealer& sealer,
                                                            const std::string& tenant_id,
                                                            time::Micros real_now) {
  // A tenant has at most limits::k_webhook_endpoints_max endpoints: the scan is short. The
  // LIKE only narrows it; the listing is checked on the decoded list. Its pattern is written in
  // the statement: a bound LIKE pattern makes SQLite prepare the statement again on every run
  // (about 100,000 instructions, a third of an authorization's).
  static const std::string k_sql =
      std::string("SELECT ") + k_columns + ", " + k_secret_columns +
      " FROM webhook_endpoints WHERE tenant_id = ? AND enabled = 1 AND event_types LIKE '%\"" +
      std::string(k_authorization_request_type) +
      "\"%' ORDER BY inserted_at DESC, id DESC";
  for (const store::Row& row : tx.query(k_sql, {tenant_id})) {
    Endpoint endpoint = from_row(row);
    if (std::find(endpoint.event_types.begin(), endpoint.event_types.end(),
                  k_authorization_request_type) == endpoint.event_types.end()) {
      continue;
    }
    std::vector<std::string> secrets =
        secrets_of(sealer, tenant_id, endpoint.id, row, k_endpoint_column_count, real_now);
    return AuthorizationEndpoint{std::move(endpoint), std::move(secrets)};
  }
  return std::nullopt;
}

void refresh_authorization_endpoints(store::Tx& tx, const std::string& tenant_id) {
  static const std::string k_sql =
      "UPDATE tenants SET authorization_endpoints = (SELECT COUNT(*) FROM webhook_endpoints e "
      "WHERE e.tenant_id = ? AND e.enabled = 1 AND e.event_types LIKE '%\"" +
      std::string(k_authorization_request_type) + "\"%') WHERE id = ?";
  tx.exec(k_sql, {tenant_id, tenant_id});
}

std::optional<Error> check_event_types(const std::vector<std::string>& types,
                                       std::string_view path) {
  if (types.size() > limits::k_webhook_event_types_max) {
    return errors::validation(
        "must have at most " + std::to_string(limits::k_webhook_event_types_max) + " items",
        std::string(path));
  }
  std::optional<Error> problems;
  std::set<std::string_view> seen;
  for (std::size_t i = 0; i < types.size(); ++i) {
    const std::string& type = types[i];
    std::string item_path = std::string(path) + "." + std::to_string(i);
    const bool known =
        type == k_authorization_request_type ||
        std::find(event_types().begin(), event_types().end(), type) != event_types().end();
    std::optional<std::string> wrong;
    if (!known && !is_known_pattern(type)) {
      wrong =
          "must be an event type Tesoro emits (such as collection.paid), a pattern of one "
          "of their prefixes (such as collection.*) or card_authorization.request";
    } else if (!seen.insert(type).second) {
      wrong = "is listed twice";
    }
    if (wrong) problems = merged(std::move(problems), errors::validation(*wrong, item_path));
  }
  return problems;
}

json::object to_json(const Endpoint& endpoint, const std::optional<std::string>& secret) {
  auto optional = [](const std::optional<std::string>& text) {
    return text ? json::value(*text) : json::value(nullptr);
  };
  json::object out{
      {"id", endpoint.id},
      {"url", endpoint.url},
      {"description", optional(endpoint.description)},
      {"event_types", json::array(endpoint.event_types.begin(), endpoint.event_types.end())},
      {"enabled", endpoint.enabled},
      {"disabled_reason", optional(endpoint.disabled_reason)},
      {"authorization_timeout_ms", endpoint.authorization_timeout_ms},
      {"authorization_fallback", endpoint.authorization_fallback},
      {"inserted_at", endpoint.inserted_at},
      {"updated_at", endpoint.updated_at}};
  if (secret) out["secret"] = *secret;
  return out;
}

Result<Created> create_endpoint(store::Tx& tx, const crypto::Sealer& sealer,
                                const std::string& tenant_id, const NewEndpoint& input,
                                const Destinations& destinations, time::Micros now) {
  if (auto problems =
          merged(check_url(input.url, destinations), check_event_types(input.event_types))) {
    return std::move(*problems);
  }
  // The tenant's row, locked where the engine has row locks, so that two concurrent creates
  // cannot both see room for one more endpoint.
  tx.query_one("SELECT id FROM tenants WHERE id = ?" + std::string(tx.lock_rows()), {tenant_id});
  std::int64_t count =
      tx.query_one("SELECT COUNT(*) FROM webhook_endpoints WHERE tenant_id = ?", {tenant_id})
          ->integer(0);
  if (count >= limits::k_webhook_endpoints_max) {
    return errors::of(ErrorCode::webhook_endpoint_limit_reached, std::nullopt,
                      "a tenant may have at most " +
                          std::to_string(limits::k_webhook_endpoints_max) +
                          " webhook endpoints; delete one first");
  }
  Created created;
  Endpoint& endpoint = created.endpoint;
  endpoint.id = ids::generate("whe");
  endpoint.url = input.url;
  endpoint.description = input.description;
  endpoint.event_types = input.event_types;
  endpoint.enabled = input.enabled;
  if (!input.enabled) endpoint.disabled_reason = "disabled";
  endpoint.authorization_timeout_ms = input.authorization_timeout_ms;
  endpoint.authorization_fallback = input.authorization_fallback;
  // Events positioned so far happened before the endpoint existed: it receives the ones after.
  endpoint.start_position = events::last_position(tx);
  endpoint.inserted_at = endpoint.updated_at = time::iso(now);
  created.secret = new_secret();
  tx.exec(
      "INSERT INTO webhook_endpoints (tenant_id, id, url, description, event_types, enabled, "
      "disabled_reason, secret_sealed, start_position, authorization_timeout_ms, "
      "authorization_fallback, inserted_at, updated_at) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      {tenant_id, endpoint.id, endpoint.url, store::optional_value(endpoint.description),
       encode_event_types(endpoint.event_types), std::int64_t{endpoint.enabled ? 1 : 0},
       store::optional_value(endpoint.disabled_reason),
       seal_secret(sealer, tenant_id, endpoint.id, created.secret), endpoint.start_position,
       endpoint.authorization_timeout_ms, endpoint.authorization_fallback, endpoint.inserted_at,
       endpoint.updated_at});
  refresh_authorization_endpoints(tx, tenant_id);
  return created;
}

Result<Endpoint> get_endpoint(store::Tx& tx, const std::string& tenant_id, const std::string& id) {
  auto endpoint = select_endpoint(tx, tenant_id, id, "");
  if (!endpoint) return errors::item_not_found("webhook endpoint");
  return std::move(*endpoint);
}

Result<PageOf<Endpoint>> list_endpoints(store::Tx& tx, const std::string& tenant_id,
                                        std::int64_t offset, std::int64_t limit) {
  return store::query_page<Endpoint>(tx, k_columns, " FROM webhook_endpoints WHERE tenant_id = ?", {tenant_id}, "inserted_at DESC, id DESC", offset, limit,
                                 from_row);
}

Result<Endpoint> update_endpoint(store::Tx& tx, const std::string& tenant_id, const std::string& id,
                                 const EndpointPatch& patch, const Destinations& destinations,
                                 time::Micros now) {
  std::optional<Error> problems;
  if (patch.url) problems = check_url(*patch.url, destinations);
  if (patch.event_types)
    problems = merged(std::move(problems), check_event_types(*patch.event_types));
  if (problems) return std::move(*problems);
  auto found = select_endpoint(tx, tenant_id, id, tx.lock_rows());
  if (!found) return errors::item_not_found("webhook endpoint");
  Endpoint endpoint = std::move(*found);
  if (patch.url) endpoint.url = *patch.url;
  if (patch.description) endpoint.description = *patch.description;
  if (patch.event_types) endpoint.event_types = *patch.event_types;
  if (patch.authorization_timeout_ms) {
    endpoint.authorization_timeout_ms = *patch.authorization_timeout_ms;
  }
  if (patch.authorization_fallback) endpoint.authorization_fallback = *patch.authorization_fallback;
  if (patch.enabled && *patch.enabled != endpoint.enabled) {
    endpoint.enabled = *patch.enabled;
    // Enabling resumes deliveries, those a 410 left pending included: wake the dispatcher.
    endpoint.disabled_reason =
        endpoint.enabled ? std::nullopt : std::optional<std::string>("disabled");
    if (endpoint.enabled) tx.notify(std::string(k_deliveries_topic));
  }
  endpoint.updated_at = time::iso(now);
  save(tx, tenant_id, endpoint);
  refresh_authorization_endpoints(tx, tenant_id);
  return endpoint;
}

Status delete_endpoint(store::Tx& tx, const std::string& tenant_id, const std::string& id,
                       time::Micros now) {
  std::int64_t deleted =
      tx.exec("DELETE FROM webhook_endpoints WHERE tenant_id = ? AND id = ?", {tenant_id, id});
  if (deleted == 0) return errors::item_not_found("webhook endpoint");
  refresh_authorization_endpoints(tx, tenant_id);
  // Nothing will deliver them any more: they end, and the log keeps what was attempted.
  tx.exec(
      "UPDATE webhook_deliveries SET state = 'failed', next_attempt_at_micros = NULL, "
      "updated_at = ? WHERE tenant_id = ? AND endpoint_id = ? AND state = 'pending'",
      {time::iso(now), tenant_id, id});
  return ok_status();
}

Result<Created> rotate_secret(store::Tx& tx, const crypto::Sealer& sealer,
                              const std::string& tenant_id, const std::string& id, time::Micros now,
                              time::Micros real_now) {
  auto found = select_endpoint(tx, tenant_id, id, tx.lock_rows());
  if (!found) return errors::item_not_found("webhook endpoint");
  Created created{std::move(*found), new_secret()};
  created.endpoint.updated_at = time::iso(now);
  // The sealed current secret becomes the previous one as it is: its seal is bound to this
  // endpoint, not to the column.
  tx.exec(
      "UPDATE webhook_endpoints SET previous_secret_sealed = secret_sealed, "
      "previous_secret_expires_at_micros = ?, secret_sealed = ?, updated_at = ? "
      "WHERE tenant_id = ? AND id = ?",
      {real_now + limits::k_webhook_secret_overlap_seconds * time::k_micros_per_second,
       seal_secret(sealer, tenant_id, id, created.secret), created.endpoint.updated_at, tenant_id,
       id});
  return created;
}

std::vector<std::string> signing_secrets(store::Tx& tx, const crypto::Sealer& sealer,
                                         const std::string& tenant_id, const std::string& id,
                                         time::Micros real_now) {
  auto row = tx.query_one(std::string("SELECT ") + k_secret_columns +
                              " FROM webhook_endpoints WHERE tenant_id = ? AND id = ?",
                          {tenant_id, id});
  if (!row) return {};
  return secrets_of(sealer, tenant_id, id, *row, 0, real_now);
}

}  // namespace tesoro::webhooks
