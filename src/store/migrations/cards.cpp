// Card issuing: cardholders, configuration groups, spending controls, cards with their prepaid
// balance operations and card transactions (two-phase authorizations), activation links; and the
// ledger's held amounts that authorizations use.
#include "store/migrations/migrations.hpp"

namespace tesoro::store {

std::vector<Migration> card_migrations() {
  return {
      {10,
       "cardholders_and_spending_controls",
       {
           // address and document are JSON text: read and written whole.
           "CREATE TABLE cardholders (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
           "first_name TEXT NOT NULL, middle_name TEXT, last_name TEXT NOT NULL, "
           "second_last_name TEXT, birthdate TEXT, nationality TEXT, email TEXT, "
           "phone_number TEXT, address TEXT, document TEXT, inserted_at TEXT NOT NULL, "
           "updated_at TEXT NOT NULL, PRIMARY KEY (tenant_id, id))",
           "CREATE INDEX cardholders_by_time ON cardholders (tenant_id, inserted_at, id)",
           // is_default: 1 for the tenant's default group (exactly one), else 0.
           "CREATE TABLE configuration_groups (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
           "name TEXT NOT NULL, spending_control_id TEXT, is_default INTEGER NOT NULL, "
           "inserted_at TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (tenant_id, id))",
           "CREATE INDEX configuration_groups_by_time ON configuration_groups "
           "(tenant_id, inserted_at, id)",
           "CREATE UNIQUE INDEX configuration_groups_one_default ON configuration_groups "
           "(tenant_id) WHERE is_default = 1",
           // rules: a JSON array, at most one rule per type; an authorization reads it whole.
           "CREATE TABLE spending_controls (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
           "name TEXT NOT NULL, currency_code TEXT NOT NULL, rules TEXT NOT NULL, "
           "inserted_at TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (tenant_id, id))",
           "CREATE INDEX spending_controls_by_time ON spending_controls "
           "(tenant_id, inserted_at, id)",
       }},
      {11,
       "cards",
       {
           // prepaid_account_id: the card's own ledger account (surface 'card'); pan: the card
           // number sealed with AES-256-GCM (never in clear); spending_control_id: the card's
           // own control (its card_target).
           "CREATE TABLE cards (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
           "account_id TEXT NOT NULL, prepaid_account_id TEXT NOT NULL, cardholder_id TEXT, "
           "configuration_group_id TEXT NOT NULL, spending_control_id TEXT, nickname TEXT, "
           "state TEXT NOT NULL, type TEXT NOT NULL, currency TEXT NOT NULL, "
           "last_four TEXT NOT NULL, pan TEXT NOT NULL, expiration_month INTEGER NOT NULL, "
           "expiration_year INTEGER NOT NULL, initial_balance BIGINT, "
           "inserted_at TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (tenant_id, id))",
           "CREATE INDEX cards_by_time ON cards (tenant_id, inserted_at, id)",
           "CREATE TABLE card_balance_operations (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
           "card_id TEXT NOT NULL, operation TEXT NOT NULL, amount BIGINT NOT NULL, "
           "currency TEXT NOT NULL, description TEXT NOT NULL, entity_id TEXT NOT NULL, "
           "entry_id TEXT NOT NULL, performed_at TEXT NOT NULL, PRIMARY KEY (tenant_id, id), "
           "UNIQUE (tenant_id, card_id, entity_id))",
           "CREATE INDEX card_balance_operations_by_card ON card_balance_operations "
           "(tenant_id, card_id, performed_at, id)",
           // One row per authorization, approved or declined. amount: authorized (with
           // increments); held: still held on the prepaid account; captured, reversed,
           // released (the rest of a partial capture), expired and refunded: what each step
           // moved. history: the steps, a JSON array. expires_at_micros: tenant time at which
           // a pending hold expires.
           "CREATE TABLE card_transactions (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
           "card_id TEXT NOT NULL, type TEXT NOT NULL, state TEXT NOT NULL, "
           "currency TEXT NOT NULL, amount BIGINT NOT NULL, held BIGINT NOT NULL, "
           "captured BIGINT NOT NULL, reversed BIGINT NOT NULL, released BIGINT NOT NULL, "
           "expired BIGINT NOT NULL, refunded BIGINT NOT NULL, channel TEXT NOT NULL, "
           "merchant TEXT NOT NULL, decline_reason TEXT, iso8583_code TEXT NOT NULL, "
           "declined_by TEXT, history TEXT NOT NULL, authorized_at_micros BIGINT NOT NULL, "
           "expires_at_micros BIGINT, inserted_at TEXT NOT NULL, updated_at TEXT NOT NULL, "
           "PRIMARY KEY (tenant_id, id))",
           "CREATE INDEX card_transactions_by_card ON card_transactions "
           "(tenant_id, card_id, authorized_at_micros, id)",
           "CREATE INDEX card_transactions_pending ON card_transactions (expires_at_micros) "
           "WHERE state = 'pending'",
           // token_hash: sha256 of the secret in the link's url (global: the url names no
           // tenant).
           "CREATE TABLE activation_links (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
           "card_id TEXT NOT NULL, token_hash TEXT NOT NULL, state TEXT NOT NULL, "
           "expires_at_micros BIGINT NOT NULL, used_at TEXT, inserted_at TEXT NOT NULL, "
           "updated_at TEXT NOT NULL, PRIMARY KEY (tenant_id, id))",
           "CREATE UNIQUE INDEX activation_links_by_token ON activation_links (token_hash)",
           "CREATE INDEX activation_links_by_time ON activation_links "
           "(tenant_id, inserted_at, id)",
           // What authorizations hold on an account: its available balance is balance - held.
           "ALTER TABLE ledger_accounts ADD COLUMN held BIGINT NOT NULL DEFAULT 0",
       }},
      {12,
       "card_number_fingerprints",
       {
           // A keyed fingerprint of the card number: no two cards of the whole server share
           // a number (global: numbers are global on card networks).
           "ALTER TABLE cards ADD COLUMN pan_fingerprint TEXT",
           "CREATE UNIQUE INDEX cards_by_pan_fingerprint ON cards (pan_fingerprint)",
       }},
      // Who decided an authorization (domain/cards/authorization_decisions.hpp): a JSON object
      // {"by", "webhook_endpoint_id", "reason", "duration_ms"}. NULL on the rows written
      // before: Tesoro decided them, and the API shows that. decline_reason_detail: the
      // reason the tenant's endpoint gave for a decline.
      {27,
       "card_transaction_decisions",
       {
           "ALTER TABLE card_transactions ADD COLUMN decision TEXT",
           "ALTER TABLE card_transactions ADD COLUMN decline_reason_detail TEXT",
       }},
  };
}

}  // namespace tesoro::store
