#pragma once
// The one error value of Tesoro. Every failure the API can report is an Error; api/ renders it
// into the contract's envelope (code, message, id, errors[]) with the status of its code.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tesoro {

struct ErrorItem {
  std::string error_code;
  std::string message;
  std::optional<std::string> path;
  std::optional<std::string> url;
};

// Every error_code the server emits (and those the contract reserves for modules to come). The
// catalog below gives each its name and default message; the enum makes a misspelt code a
// compile error. (Its HTTP status is api/'s: api/error_status.hpp.)
enum class ErrorCode {
  validation_error,
  missing_field,
  route_not_found,
  method_not_allowed,
  payload_too_large,
  headers_too_large,
  expired_token,
  missing_authorization_header,
  invalid_credentials,  // the console's sign-in: a wrong email or password
  not_authorized,
  item_not_found,
  tenant_account_not_found,
  rate_limit_exceeded,
  internal_error,
  service_is_unavailable,
  idempotency_key_reused,
  idempotency_key_in_use,
  external_id_already_exists,
  currency_mismatch,
  balance_overflow,
  insufficient_funds,
  account_invalid_state,
  clock_limit_reached,
  // Cards and spending controls.
  card_invalid_state,
  card_transaction_invalid_state,
  amount_exceeds_authorization,
  spending_limit_exceeded,
  authorization_declined,
  spending_control_in_use,
  // OAuth token endpoint (RFC 6749 section 5.2).
  invalid_client,
  invalid_request,
  invalid_grant,
  invalid_scope,
  unsupported_grant_type,
  // Collections, QR codes, transfers and targets.
  collection_not_found,
  collection_invalid_state,
  qr_type_not_allowed,
  key_not_found,
  unknown,
  amount_out_of_range,
  amount_exceeds_max_limit,
  target_not_found,
  invalid_state,
  key_already_exists,
  // Sandbox collection attempts.
  tenant_account_inactive,
  // Outgoing transfers and payouts (batch items carry them as error_code).
  amount_not_provided,
  target_amount_mismatch,
  target_expired,
  // Webhooks.
  webhook_endpoint_limit_reached,
};
// How many codes there are: the last one's position plus one.
constexpr std::size_t k_error_code_count =
    static_cast<std::size_t>(ErrorCode::webhook_endpoint_limit_reached) + 1;

// Whether a table indexed by code (rows with a `code` member: the catalog, api/'s statuses) has
// one row per code, in ErrorCode's order; each such table static_asserts it.
template <typename Rows>
constexpr bool one_row_per_code_in_order(const Rows& rows) {
  std::size_t position = 0;
  for (const auto& row : rows) {
    if (static_cast<std::size_t>(row.code) != position++) return false;
  }
  return position == k_error_code_count;
}

// A refused credential: what the caller is to present instead. Bearer tokens follow RFC 6750
// (section 3.1: no error when the request carried no bearer credential at all), the token
// endpoint's client credentials RFC 7617. api/ says it as WWW-Authenticate.
struct Challenge {
  enum class Scheme { bearer, basic };
  // A bearer challenge's error (RFC 6750 section 3.1): none when no bearer credential was sent.
  enum class TokenError { none, invalid_token, insufficient_scope };
  Scheme scheme = Scheme::bearer;
  TokenError token_error = TokenError::none;
  std::string scope;  // insufficient_scope: the scope the route needs
};

// What refused a request or an operation, as the domain says it: a code of the catalog above
// and its items. api/ answers it over HTTP (api/error_status.hpp gives each code its status).
struct Error {
  // The catalog's code; none for an error outside it (a command-line refusal, a worker's own
  // outcome), which never reaches a client and would be answered as internal_error.
  std::optional<ErrorCode> code;
  std::string message;  // the envelope's summary
  std::vector<ErrorItem> errors;
  // An error of the OAuth token endpoint (RFC 6749 section 5.2): the envelope also carries the
  // code as `error` and the item's message as `error_description`.
  bool oauth = false;
  std::optional<Challenge> challenge;
  // When trying again can succeed (a rate limit, a service unavailable for now): api/ says it
  // as Retry-After.
  std::optional<long> retry_after_seconds;
  // Fields for the error's log line only, never sent to the client: why a credential failed,
  // which credential (its public id or prefix, never the secret).
  std::vector<std::pair<std::string, std::string>> log_fields;

  const std::string& first_code() const;
};

struct ErrorKind {
  ErrorCode code;
  std::string_view name;     // the envelope's error_code
  std::string_view message;  // the item's default message
  // The envelope's fixed summary; empty: the item's message.
  std::string_view summary;
};

// The whole catalog, in enum order (for tests: ErrorCatalog holds it to the description).
std::span<const ErrorKind> error_catalog();
const ErrorKind& error_kind(ErrorCode code);

namespace errors {
// An error of the catalog: its code, its default message unless `message` is given.
Error of(ErrorCode code, std::optional<std::string> path = std::nullopt,
         std::optional<std::string> message = std::nullopt);
// An error outside the catalog: only for values that never reach a client (a worker's internal
// outcome, a command-line refusal). Everything the API answers comes from of().
Error make(std::string code, std::string message, std::optional<std::string> path = std::nullopt);
// Catalog errors with something of their own (a path, a header, a message built from an argument)
// or many callers.
Error validation(std::string message, std::optional<std::string> path);
Error missing_field(std::string path);
Error route_not_found();
Error method_not_allowed();
Error payload_too_large();
Error headers_too_large();
Error item_not_found(std::string what = "item");
// amount_exceeds_max_limit at `path`, naming the amount and the maximum (outgoing transfers
// and payouts: "the amount COP 12,000,000.00 exceeds the maximum of COP 11,552,000.00 per
// transfer").
Error amount_exceeds_max_limit(std::int64_t amount_minor, std::int64_t max_minor,
                               std::string_view currency, std::string path);
Error rate_limited(long retry_after_seconds);
Error internal();
Error unavailable();
Error idempotency_key_reused();  // path x-idempotency-key
Error idempotency_key_in_use();  // path x-idempotency-key
}  // namespace errors


}  // namespace tesoro
