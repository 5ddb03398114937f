#include "api/error_status.hpp"

#include <cstddef>
#include <iterator>

namespace tesoro::api {

namespace {

struct CodeStatus {
  ErrorCode code;
  int status;  // 4xx or 5xx, as the contract (or docs/ where it is silent) gives it
};

using enum ErrorCode;
constexpr CodeStatus k_statuses[] = {
    {validation_error, 400},
    {missing_field, 422},
    {route_not_found, 404},
    {method_not_allowed, 405},
    {payload_too_large, 413},
    {headers_too_large, 431},
    {expired_token, 401},
    {missing_authorization_header, 401},
    {invalid_credentials, 401},
    {not_authorized, 403},
    {item_not_found, 404},
    {tenant_account_not_found, 404},
    {rate_limit_exceeded, 429},
    {internal_error, 500},
    {service_is_unavailable, 503},
    {idempotency_key_reused, 409},
    {idempotency_key_in_use, 409},
    {external_id_already_exists, 409},
    {currency_mismatch, 422},
    {balance_overflow, 422},
    {insufficient_funds, 422},
    {account_invalid_state, 409},
    {clock_limit_reached, 422},
    {card_invalid_state, 409},
    {card_transaction_invalid_state, 409},
    {amount_exceeds_authorization, 422},
    {spending_limit_exceeded, 422},
    {authorization_declined, 422},
    {spending_control_in_use, 409},
    {invalid_client, 401},
    {invalid_request, 400},
    {invalid_grant, 400},
    {invalid_scope, 400},
    {unsupported_grant_type, 400},
    {collection_not_found, 404},
    {collection_invalid_state, 409},
    {qr_type_not_allowed, 400},
    {key_not_found, 400},
    {unknown, 400},
    {amount_out_of_range, 422},
    {amount_exceeds_max_limit, 422},
    {target_not_found, 404},
    {invalid_state, 409},
    {key_already_exists, 409},
    {tenant_account_inactive, 400},
    {amount_not_provided, 422},
    {target_amount_mismatch, 422},
    {target_expired, 422},
    {webhook_endpoint_limit_reached, 422},
};

// Indexed by the enum, like the catalog: each row at its code's position, every code present.
static_assert(one_row_per_code_in_order(k_statuses),
              "k_statuses rows must follow ErrorCode's order");

}  // namespace

int http_status(ErrorCode code) { return k_statuses[static_cast<std::size_t>(code)].status; }

int http_status(const Error& error) { return error.code ? http_status(*error.code) : 500; }

}  // namespace tesoro::api
