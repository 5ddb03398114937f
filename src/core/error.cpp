#include "core/error.hpp"

#include "core/limits.hpp"
#include "core/money.hpp"

namespace tesoro {

const std::string& Error::first_code() const {
  static const std::string empty;
  return errors.empty() ? empty : errors.front().error_code;
}

namespace {

using enum ErrorCode;
// payload_too_large's message below says the limit in words.
static_assert(limits::k_body_max_bytes == 1024 * 1024, "payload_too_large says 1 MiB");
constexpr ErrorKind k_catalog[] = {
    {validation_error, "validation_error", "the value is not valid", "malformed request"},
    {missing_field, "missing_field", "field is required", "missing field"},
    {route_not_found, "route_not_found", "no route matches this path", ""},
    {method_not_allowed, "method_not_allowed", "this path does not accept this method", ""},
    {payload_too_large, "payload_too_large", "request body is larger than 1 MiB", ""},
    {headers_too_large, "headers_too_large", "request headers are larger than allowed", ""},
    {expired_token, "expired_token",
     "token expired, inactive or nonexistent", "authorization header missing or invalid"},
    {missing_authorization_header, "missing_authorization_header",
     "the Authorization header is missing", ""},
    {invalid_credentials, "invalid_credentials", "wrong email or password", ""},
    {not_authorized, "not_authorized", "the credential has no access to this resource", ""},
    {item_not_found, "item_not_found", "item not found", ""},
    {tenant_account_not_found, "tenant_account_not_found", "tenant account not found", ""},
    {rate_limit_exceeded, "rate_limit_exceeded",
     "too many requests; retry after the indicated time", ""},
    {internal_error, "internal_error", "unexpected error", ""},
    {service_is_unavailable, "service_is_unavailable", "service unavailable; try again later", ""},
    {idempotency_key_reused, "idempotency_key_reused",
     "this idempotency key was used with a different request", ""},
    {idempotency_key_in_use, "idempotency_key_in_use",
     "a request with this idempotency key is still running", ""},
    {external_id_already_exists, "external_id_already_exists",
     "a record with this external_id already exists", ""},
    {currency_mismatch, "currency_mismatch",
     "the amount's currency is not the account's currency", ""},
    {balance_overflow, "balance_overflow", "the balance would overflow", ""},
    {insufficient_funds, "insufficient_funds", "the account's available balance is too low", ""},
    {account_invalid_state, "account_invalid_state",
     "the account's state does not allow this operation", ""},
    {clock_limit_reached, "clock_limit_reached",
     "the sandbox clock may not run further ahead of real time", ""},
    {card_invalid_state, "card_invalid_state",
     "the card's state does not allow this operation", ""},
    {card_transaction_invalid_state, "card_transaction_invalid_state",
     "the card transaction's state does not allow this operation", ""},
    {amount_exceeds_authorization, "amount_exceeds_authorization",
     "the amount is larger than what the card transaction has open", ""},
    {spending_limit_exceeded, "spending_limit_exceeded",
     "the amount would exceed a spending limit of the card", ""},
    {authorization_declined, "authorization_declined",
     "the tenant's authorization endpoint did not approve the increment", ""},
    {spending_control_in_use, "spending_control_in_use",
     "the spending control is still assigned to a card or a configuration group", ""},
    {invalid_client, "invalid_client", "client authentication failed", ""},
    {invalid_request, "invalid_request", "the token request is malformed", ""},
    {invalid_grant, "invalid_grant", "refresh token is invalid, expired or revoked", ""},
    {invalid_scope, "invalid_scope", "the requested scope is not valid for this client", ""},
    {unsupported_grant_type, "unsupported_grant_type",
     "grant_type must be client_credentials or refresh_token", ""},
    {collection_not_found, "collection_not_found", "collection not found", ""},
    {collection_invalid_state, "collection_invalid_state",
     "the collection's state does not allow this operation", ""},
    {qr_type_not_allowed, "qr_type_not_allowed",
     "a static QR code cannot be made for a fixed-value single-use collection", ""},
    {key_not_found, "key_not_found", "the key is unknown, inactive or of no collection", ""},
    {unknown, "unknown", "unknown error", ""},
    {amount_out_of_range, "amount_out_of_range", "the amount is outside the allowed range", ""},
    {amount_exceeds_max_limit, "amount_exceeds_max_limit",
     "the amount exceeds the maximum allowed", ""},
    {target_not_found, "target_not_found", "target not found", ""},
    {invalid_state, "invalid_state", "the record is not in its successful state", ""},
    {key_already_exists, "key_already_exists",
     "the key is already registered in the network directory", ""},
    {tenant_account_inactive, "tenant_account_inactive",
     "the collection's tenant account is not active", ""},
    {amount_not_provided, "amount_not_provided",
     "the transfer has no amount and its target has none", ""},
    {target_amount_mismatch, "target_amount_mismatch",
     "the amount differs from the target's transaction amount", ""},
    {target_expired, "target_expired",
     "the target's resolution has expired: resolve the key again", ""},
    {webhook_endpoint_limit_reached, "webhook_endpoint_limit_reached",
     "the tenant has as many webhook endpoints as allowed; delete one first", ""},
};

// The table is indexed by the enum: each row must sit at its code's position.
static_assert(one_row_per_code_in_order(k_catalog),
              "k_catalog rows must follow ErrorCode's order");

}  // namespace

std::span<const ErrorKind> error_catalog() { return k_catalog; }

const ErrorKind& error_kind(ErrorCode code) { return k_catalog[static_cast<std::size_t>(code)]; }

namespace errors {

Error of(ErrorCode code, std::optional<std::string> path, std::optional<std::string> message) {
  const ErrorKind& kind = error_kind(code);
  Error error;
  error.code = code;
  std::string item_message = message ? std::move(*message) : std::string(kind.message);
  error.message = kind.summary.empty() ? item_message : std::string(kind.summary);
  error.errors.push_back(
      ErrorItem{std::string(kind.name), std::move(item_message), std::move(path), {}});
  return error;
}

Error make(std::string code, std::string message, std::optional<std::string> path) {
  Error error;
  error.message = message;
  error.errors.push_back(ErrorItem{std::move(code), std::move(message), std::move(path), {}});
  return error;
}

Error validation(std::string message, std::optional<std::string> path) {
  return of(ErrorCode::validation_error, std::move(path), std::move(message));
}

Error missing_field(std::string path) { return of(ErrorCode::missing_field, std::move(path)); }

Error amount_exceeds_max_limit(std::int64_t amount_minor, std::int64_t max_minor,
                               std::string_view currency, std::string path) {
  return of(ErrorCode::amount_exceeds_max_limit, std::move(path),
            "the amount " + money::display(amount_minor, currency) + " exceeds the maximum of " +
                money::display(max_minor, currency) + " per transfer");
}

Error item_not_found(std::string what) {
  return of(ErrorCode::item_not_found, std::nullopt, what + " not found");
}

Error rate_limited(long retry_after_seconds) {
  Error error = of(ErrorCode::rate_limit_exceeded);
  error.retry_after_seconds = retry_after_seconds;
  return error;
}

Error route_not_found() { return of(ErrorCode::route_not_found); }
Error method_not_allowed() { return of(ErrorCode::method_not_allowed); }
Error payload_too_large() { return of(ErrorCode::payload_too_large); }
Error headers_too_large() { return of(ErrorCode::headers_too_large); }
Error internal() { return of(ErrorCode::internal_error); }
Error unavailable() {
  Error error = of(ErrorCode::service_is_unavailable);
  error.retry_after_seconds = limits::k_unavailable_retry_after_seconds;
  return error;
}
Error idempotency_key_reused() {
  return of(ErrorCode::idempotency_key_reused, "x-idempotency-key");
}
Error idempotency_key_in_use() {
  return of(ErrorCode::idempotency_key_in_use, "x-idempotency-key");
}

}  // namespace errors
}  // namespace tesoro
