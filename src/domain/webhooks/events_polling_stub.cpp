// TEMPORARY (branch wh-events): stand-ins for what branch wh-endpoints defines, so that the
// events list builds and runs before that branch is merged. Deleted by the merge.
#include "domain/webhooks/endpoints.hpp"

namespace tesoro::webhooks {

const std::vector<std::string>& event_types() {
  static const std::vector<std::string> k_types = {
      "account_holder.created", "account.credited", "account.debited",
      "cardholder.created", "cardholder.updated", "configuration_group.created",
      "configuration_group.updated", "spending_control.created", "spending_control.updated",
      "spending_control.deleted", "card.active", "card.pending_activation", "card.blocked",
      "card.canceled", "card.updated", "card_balance_operation.created",
      "activation_link.created", "activation_link.used",
      "card_transaction.authorization_approved", "card_transaction.authorization_declined",
      "card_transaction.authorization_increment", "card_transaction.authorization_reversal",
      "card_transaction.authorization_expiry", "card_transaction.capture",
      "card_transaction.refund", "collection.created", "collection.ready",
      "collection.minimum_paid", "collection.paid", "collection.discarded", "collection.failed",
      "collection.attempt_successful", "collection.attempt_unsuccessful",
      "outgoing_transfer.created", "outgoing_transfer.processing",
      "outgoing_transfer.target_resolved", "outgoing_transfer.held",
      "outgoing_transfer.sent_to_breb_provider", "outgoing_transfer.successful",
      "outgoing_transfer.failed", "payout.pending", "payout.processing", "payout.settled",
      "payout.failed"};
  return k_types;
}

Result<Endpoint> get_endpoint(store::Tx& tx, const std::string& tenant_id, const std::string& id) {
  if (!tx.query_one("SELECT id FROM webhook_endpoints WHERE tenant_id = ? AND id = ?",
                    {tenant_id, id})) {
    return errors::item_not_found("webhook endpoint");
  }
  Endpoint endpoint;
  endpoint.id = id;
  return endpoint;
}

}  // namespace tesoro::webhooks
