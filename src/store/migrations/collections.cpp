// Receiving money on the participant API: the network key directory, collections, their QR
// codes, payment attempts and the incoming transfers that successful attempts create.
#include "store/migrations/migrations.hpp"

namespace tesoro::store {

std::vector<Migration> collection_migrations() {
  return {
      {13,
       "collections",
       {
           // The sandbox network's key directory: every key of every tenant, global by nature
           // (a payer names a key, not a tenant), so a key is unique across the whole
           // directory. owner_id: the collection that owns it. state: active | inactive.
           "CREATE TABLE network_keys (key_type TEXT NOT NULL, key_value TEXT NOT NULL, "
           "tenant_id TEXT NOT NULL, owner_id TEXT NOT NULL, state TEXT NOT NULL, "
           "inserted_at TEXT NOT NULL, updated_at TEXT NOT NULL, "
           "PRIMARY KEY (key_type, key_value))",
           "CREATE INDEX network_keys_by_owner ON network_keys (tenant_id, owner_id, inserted_at)",
           // Amount limits and paid_amount in minor units of `currency`. metadata: a JSON
           // object of strings. expires_at_micros: tenant time of expires_at (NULL: never).
           "CREATE TABLE collections (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
           "external_id TEXT NOT NULL, tenant_account_id TEXT NOT NULL, "
           "usage_mode TEXT NOT NULL, currency TEXT NOT NULL, "
           "minimum_attempt_amount BIGINT NOT NULL, maximum_attempt_amount BIGINT NOT NULL, "
           "total_minimum_amount BIGINT NOT NULL, total_maximum_amount BIGINT NOT NULL, "
           "paid_amount BIGINT NOT NULL, successful_attempts BIGINT NOT NULL, "
           "state TEXT NOT NULL, state_reason TEXT, enabled INTEGER NOT NULL, "
           "expires_at TEXT, expires_at_micros BIGINT, nickname TEXT, reference TEXT, "
           "metadata TEXT NOT NULL, inserted_at TEXT NOT NULL, updated_at TEXT NOT NULL, "
           "PRIMARY KEY (tenant_id, id), UNIQUE (tenant_id, external_id))",
           "CREATE INDEX collections_by_time ON collections (tenant_id, inserted_at, id)",
           "CREATE INDEX collections_expiring ON collections (expires_at_micros) "
           "WHERE expires_at_micros IS NOT NULL AND state IN ('created', 'ready', 'minimum_paid')",
           // amount: NULL when the payer types it (static codes). payment_id: the 90 GUI and
           // the transaction id of the payload, unique per tenant (attempts name it).
           "CREATE TABLE qr_codes (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
           "collection_id TEXT NOT NULL, usage_mode TEXT NOT NULL, amount BIGINT, "
           "currency TEXT NOT NULL, canceled INTEGER NOT NULL, emvco TEXT NOT NULL, "
           "error_correction_level TEXT NOT NULL, image_width BIGINT NOT NULL, "
           "expires_at TEXT, expires_at_micros BIGINT, failed_attempts BIGINT NOT NULL, "
           "successful_attempts BIGINT NOT NULL, key_type TEXT NOT NULL, "
           "key_value TEXT NOT NULL, payment_id TEXT NOT NULL, inserted_at TEXT NOT NULL, "
           "updated_at TEXT NOT NULL, PRIMARY KEY (tenant_id, id), "
           "UNIQUE (tenant_id, payment_id))",
           "CREATE INDEX qr_codes_by_collection ON qr_codes "
           "(tenant_id, collection_id, inserted_at, id)",
           // state: pending (a requested sandbox error not yet applied) | successful |
           // rejected | failed; state_reason says why for the last two. requested_error: the
           // sandbox `error` of the request. payer: JSON object. transfer_id: the incoming
           // transfer of a successful attempt.
           "CREATE TABLE collection_attempts (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
           "collection_id TEXT NOT NULL, qr_code_id TEXT, payment_id TEXT, "
           "amount BIGINT NOT NULL, currency TEXT NOT NULL, key_type TEXT NOT NULL, "
           "key_value TEXT NOT NULL, state TEXT NOT NULL, state_reason TEXT, "
           "requested_error TEXT, payer TEXT NOT NULL, transfer_id TEXT, "
           "inserted_at TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (tenant_id, id))",
           "CREATE INDEX collection_attempts_by_time ON collection_attempts "
           "(tenant_id, inserted_at, id)",
           "CREATE INDEX collection_attempts_by_collection ON collection_attempts "
           "(tenant_id, collection_id, inserted_at, id)",
           "CREATE INDEX collection_attempts_pending ON collection_attempts (tenant_id, id) "
           "WHERE state = 'pending'",
           // Money received: one per successful attempt, credited to the collection's tenant
           // account by journal entry entry_id.
           "CREATE TABLE incoming_transfers (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
           "collection_id TEXT NOT NULL, attempt_id TEXT NOT NULL, "
           "tenant_account_id TEXT NOT NULL, amount BIGINT NOT NULL, currency TEXT NOT NULL, "
           "end_to_end_id TEXT NOT NULL, payer TEXT NOT NULL, entry_id TEXT NOT NULL, "
           "inserted_at TEXT NOT NULL, PRIMARY KEY (tenant_id, id), "
           "UNIQUE (tenant_id, attempt_id))",
       }},
      {17,
       "qr_codes_unindexed_by_collection",
       {
           // No statement reads QR codes by collection (they are found by payment_id and by
           // id), and a QR code's insert paid for this index: an entry of about 110 bytes in a
           // page of its collection's, so a group commit of QR codes of many collections wrote
           // a page of this index for each of them to the WAL (bench/RESULTS.md, issue 9).
           "DROP INDEX qr_codes_by_collection",
       }},
      {30,
       "qr_codes_indexed_by_collection_again",
       {
           // GET /api/v1/collections/{collection_id}/qr lists a collection's codes, newest
           // first: the index migration 17 dropped serves it again (its cost on a code's insert
           // is measured by bench/run's QR row).
           "CREATE INDEX qr_codes_by_collection ON qr_codes "
           "(tenant_id, collection_id, inserted_at, id)",
       }},
  };
}

}  // namespace tesoro::store
