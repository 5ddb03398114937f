#include "api/route_groups.hpp"

namespace tesoro::api {

// Defined in the endpoint group's own file.
void add_operations_routes(Routes& routes);
void add_oauth_routes(Routes& routes);
void add_account_holder_routes(Routes& routes);
void add_account_routes(Routes& routes);
void add_tenant_account_routes(Routes& routes);
void add_sandbox_clock_routes(Routes& routes);
void add_cardholder_routes(Routes& routes);
void add_configuration_group_routes(Routes& routes);
void add_spending_control_routes(Routes& routes);
void add_card_routes(Routes& routes);
void add_card_transaction_routes(Routes& routes);
void add_activation_link_routes(Routes& routes);
void add_activation_page_routes(Routes& routes);
void add_collection_routes(Routes& routes);
void add_qr_code_routes(Routes& routes);
void add_collection_attempt_routes(Routes& routes);
void add_target_routes(Routes& routes);
void add_outgoing_transfer_routes(Routes& routes);
void add_payout_routes(Routes& routes);
void add_event_routes(Routes& routes);
void add_webhook_endpoint_routes(Routes& routes);
void add_webhook_delivery_routes(Routes& routes);
void add_console_session_routes(Routes& routes);
void add_console_credential_routes(Routes& routes);

std::span<const AddRoutes> route_groups() {
  static constexpr AddRoutes k_groups[] = {
      add_operations_routes,
      add_oauth_routes,
      add_account_holder_routes,
      add_account_routes,
      add_tenant_account_routes,
      add_sandbox_clock_routes,
      add_cardholder_routes,
      add_configuration_group_routes,
      add_spending_control_routes,
      add_card_routes,
      add_card_transaction_routes,
      add_activation_link_routes,
      add_activation_page_routes,
      add_collection_routes,
      add_qr_code_routes,
      add_collection_attempt_routes,
      add_target_routes,
      add_outgoing_transfer_routes,
      add_payout_routes,
      add_event_routes,
      add_webhook_endpoint_routes,
      add_webhook_delivery_routes,
      add_console_session_routes,
      add_console_credential_routes,
  };
  return k_groups;
}

}  // namespace tesoro::api
