// Sending money on the participant and core APIs: targets resolved on the sandbox network,
// outgoing transfer batches and their transfers, and payouts (whose network leg is an outgoing
// transfer moved by the same processor).
#include "store/migrations/migrations.hpp"

namespace tesoro::store {

std::vector<Migration> transfer_migrations() {
  return {
      {14,
       "transfers",
       {
           // A resolution of a key on the network (POST /api/v1/targets/resolve): the request
           // (resolution_request_id, format, value, the optional amount) and the Target it
           // found. target: the Target's JSON as the API shows it (creditor data already
           // masked: nothing unmasked is stored). key_type/key_value: the normalised key, which
           // a transfer naming this target pays. expires_at_micros: tenant time after which a
           // transfer may no longer name it.
           "CREATE TABLE targets (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
           "resolution_request_id TEXT NOT NULL, format TEXT NOT NULL, value TEXT NOT NULL, "
           "key_type TEXT NOT NULL, key_value TEXT NOT NULL, amount BIGINT, currency TEXT, "
           "payment_id TEXT NOT NULL, target TEXT NOT NULL, expires_at TEXT NOT NULL, "
           "expires_at_micros BIGINT NOT NULL, inserted_at TEXT NOT NULL, "
           "PRIMARY KEY (tenant_id, id))",
           // A batch as POST /api/v1/outgoing_transfers made it. state: created, then completed
           // once every accepted transfer is successful or failed. The counts say how many items
           // went to each list of the response.
           "CREATE TABLE outgoing_transfer_batches (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
           "tenant_account_id TEXT NOT NULL, description TEXT, state TEXT NOT NULL, "
           "accepted_count BIGINT NOT NULL, duplicated_count BIGINT NOT NULL, "
           "rejected_count BIGINT NOT NULL, inserted_at TEXT NOT NULL, "
           "updated_at TEXT NOT NULL, PRIMARY KEY (tenant_id, id))",
           // One transfer to the network. batch_id: its batch (NULL for a payout's leg);
           // payout_id: the payout it carries (NULL for the participant API's transfers, which
           // alone are listed there). external_id: unique per tenant among the participant
           // API's transfers (a payout's leg has none). tenant_account_id: the source account
           // (a tenant account, or a core account for a payout). held: what the transfer still
           // holds of its source account (its amount from acceptance to settlement or failure,
           // then 0). sandbox_failure: the failure the sandbox network will answer with
           // (from the description's tx_* trigger or the key), NULL when it will settle.
           // target: the Target without the fields above (network::stored_target: a JSON
           // array; rows written before it hold the whole Target JSON, shown the same).
           // query, expected_creditor, metadata, timemarks: JSON. next_step_at_micros:
           // tenant time of the processor's next step; NULL once successful or failed.
           // creditor_tenant_id / creditor_collection_id: the collection of this Tesoro the key
           // belonged to at resolution (delivered as a payment attempt on it). attempt_id: that
           // attempt; entry_id: the settlement's journal entry.
           "CREATE TABLE outgoing_transfers (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
           "batch_id TEXT, payout_id TEXT, external_id TEXT, tenant_account_id TEXT NOT NULL, "
           "amount BIGINT NOT NULL, currency TEXT NOT NULL, description TEXT, "
           "end_to_end_id TEXT NOT NULL, payment_id TEXT NOT NULL, payer_name TEXT NOT NULL, "
           "resolution_request_id TEXT NOT NULL, target_id TEXT NOT NULL, "
           "key_type TEXT NOT NULL, key_value TEXT NOT NULL, target TEXT NOT NULL, query TEXT, "
           "expected_creditor TEXT, metadata TEXT NOT NULL, state TEXT NOT NULL, "
           "state_reason TEXT, sandbox_failure TEXT, timemarks TEXT NOT NULL, "
           "held BIGINT NOT NULL, next_step_at_micros BIGINT, creditor_tenant_id TEXT, "
           "creditor_collection_id TEXT, attempt_id TEXT, entry_id TEXT, "
           "inserted_at TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (tenant_id, id), "
           "UNIQUE (tenant_id, external_id))",
           "CREATE INDEX outgoing_transfers_by_time ON outgoing_transfers "
           "(tenant_id, inserted_at, id)",
           "CREATE INDEX outgoing_transfers_by_batch ON outgoing_transfers "
           "(tenant_id, batch_id, inserted_at, id) WHERE batch_id IS NOT NULL",
           // What the processor reads: the transfers still moving, by due time.
           "CREATE INDEX outgoing_transfers_moving ON outgoing_transfers (next_step_at_micros) "
           "WHERE next_step_at_micros IS NOT NULL",
           // POST /v1/core/payouts. external_id unique per tenant (a second create answers the
           // first payout). target: JSON (key_type, key_value and the resolved Target). state:
           // pending | processing | settled | failed, following its transfer (transfer_id).
           "CREATE TABLE payouts (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
           "external_id TEXT NOT NULL, account_id TEXT NOT NULL, method TEXT NOT NULL, "
           "amount BIGINT NOT NULL, currency TEXT NOT NULL, description TEXT, "
           "target TEXT NOT NULL, metadata TEXT NOT NULL, state TEXT NOT NULL, "
           "state_reason TEXT, transfer_id TEXT NOT NULL, inserted_at TEXT NOT NULL, "
           "updated_at TEXT NOT NULL, PRIMARY KEY (tenant_id, id), "
           "UNIQUE (tenant_id, external_id))",
       }},
      // A batch's transfers are found through the time index instead: they all have the batch's
      // inserted_at (transfers::list_transfers; the processor's end of a batch too, until
      // migration 21), which left this index, the largest of the table's (110-byte keys), a
      // fifth of what a batch wrote besides the rows themselves.
      {18, "outgoing_transfers_without_batch_index",
       {"DROP INDEX outgoing_transfers_by_batch"}},
      // How many of a batch's transfers still move: the processor counts down as they end and
      // completes the batch at 0, instead of looking for one still moving among the batch's
      // rows (on PostgreSQL a version per step of each in the time index until vacuum: 84 ms a
      // batch under load). `tesoro verify` checks it against the transfers.
      {21, "outgoing_transfer_batches_moving_count",
       {"ALTER TABLE outgoing_transfer_batches ADD COLUMN moving_count BIGINT NOT NULL DEFAULT 0",
        "UPDATE outgoing_transfer_batches SET moving_count = (SELECT COUNT(*) FROM "
        "outgoing_transfers t WHERE t.tenant_id = outgoing_transfer_batches.tenant_id "
        "AND t.batch_id = outgoing_transfer_batches.id "
        "AND t.inserted_at = outgoing_transfer_batches.inserted_at "
        "AND t.next_step_at_micros IS NOT NULL)"}},
      // On SQLite a transfer accepted in a batch keeps its outgoing_transfer.created event in
      // its own row: created_position is the event's position (the one writer gives it as it
      // writes the row), and the view all_events shows the events' rows and these events
      // together, each created event with the id evt_<the transfer id's 22 characters>, its
      // data a reference to the transfer (rendered when read, as the other events of
      // transfers). Every reader of events reads the view on SQLite (events::table). A
      // batch's thousand events were a fifth of what the one writer did for it: a row and
      // three index entries each, against two index entries here. NULL on PostgreSQL, whose
      // events go through the outbox and the sequencer, and for every transfer written before.
      {23,
       "outgoing_transfers_created_events",
       {"ALTER TABLE outgoing_transfers ADD COLUMN created_position BIGINT",
        sqlite_only("CREATE UNIQUE INDEX outgoing_transfers_created ON outgoing_transfers "
                    "(created_position) WHERE created_position IS NOT NULL"),
        sqlite_only("CREATE INDEX outgoing_transfers_created_by_tenant ON outgoing_transfers "
                    "(tenant_id, created_position) WHERE created_position IS NOT NULL"),
        // The computed columns are cast to TEXT, the affinity of the events' columns: SQLite
        // flattens a view of a UNION ALL into the query (each arm through its own index, an
        // ordered read merging both) only when the arms' columns have the same affinity.
        sqlite_only("CREATE VIEW all_events AS "
                    "SELECT tenant_id, id, type, data, inserted_at, position FROM events "
                    "UNION ALL SELECT tenant_id, CAST('evt_' || substr(id, 6) AS TEXT), "
                    "CAST('outgoing_transfer.created' AS TEXT), "
                    "CAST('@outgoing_transfer:' || id AS TEXT), inserted_at, created_position "
                    "FROM outgoing_transfers WHERE created_position IS NOT NULL")}},
      // On SQLite created_position becomes the table's rowid (INTEGER PRIMARY KEY), so the
      // events' view reads the transfers' part by rowid instead of through an index of its own:
      // one B-tree fewer for each row a batch writes (its key (tenant_id, id) stays unique). A
      // rowid cannot be NULL: the rows that keep no created event (payout legs, and transfers
      // written before migration 23) have negative ones, each its own, and only a positive
      // created_position is an event's position. The table is rebuilt (the view first dropped,
      // SQLite's RENAME checking the views of the schema), its indexes and the view made again;
      // its columns are written out as migrations 14 and 23 left them (a migration's text is
      // never shared with another's, so that none changes after it ran).
      // PostgreSQL unchanged: the column stays NULL there.
      {24,
       "outgoing_transfers_created_position_rowid",
       {sqlite_only("DROP VIEW all_events"),
        sqlite_only(
            "CREATE TABLE outgoing_transfers_new (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
            "batch_id TEXT, payout_id TEXT, external_id TEXT, tenant_account_id TEXT NOT NULL, "
            "amount BIGINT NOT NULL, currency TEXT NOT NULL, description TEXT, "
            "end_to_end_id TEXT NOT NULL, payment_id TEXT NOT NULL, payer_name TEXT NOT NULL, "
            "resolution_request_id TEXT NOT NULL, target_id TEXT NOT NULL, "
            "key_type TEXT NOT NULL, key_value TEXT NOT NULL, target TEXT NOT NULL, query TEXT, "
            "expected_creditor TEXT, metadata TEXT NOT NULL, state TEXT NOT NULL, "
            "state_reason TEXT, sandbox_failure TEXT, timemarks TEXT NOT NULL, "
            "held BIGINT NOT NULL, next_step_at_micros BIGINT, creditor_tenant_id TEXT, "
            "creditor_collection_id TEXT, attempt_id TEXT, entry_id TEXT, "
            "inserted_at TEXT NOT NULL, updated_at TEXT NOT NULL, "
            "created_position INTEGER PRIMARY KEY, UNIQUE (tenant_id, id), "
            "UNIQUE (tenant_id, external_id))"),
        sqlite_only("INSERT INTO outgoing_transfers_new SELECT tenant_id, id, batch_id, "
                    "payout_id, external_id, tenant_account_id, amount, currency, description, "
                    "end_to_end_id, payment_id, payer_name, resolution_request_id, target_id, "
                    "key_type, key_value, target, query, expected_creditor, metadata, state, "
                    "state_reason, sandbox_failure, timemarks, held, next_step_at_micros, "
                    "creditor_tenant_id, creditor_collection_id, attempt_id, entry_id, "
                    "inserted_at, updated_at, COALESCE(created_position, "
                    "-ROW_NUMBER() OVER (PARTITION BY created_position IS NULL ORDER BY rowid)) "
                    "FROM outgoing_transfers"),
        sqlite_only("DROP TABLE outgoing_transfers"),
        sqlite_only("ALTER TABLE outgoing_transfers_new RENAME TO outgoing_transfers"),
        sqlite_only("CREATE INDEX outgoing_transfers_by_time ON outgoing_transfers "
                    "(tenant_id, inserted_at, id)"),
        sqlite_only("CREATE INDEX outgoing_transfers_moving ON outgoing_transfers "
                    "(next_step_at_micros) WHERE next_step_at_micros IS NOT NULL"),
        sqlite_only("CREATE INDEX outgoing_transfers_created_by_tenant ON outgoing_transfers "
                    "(tenant_id, created_position) WHERE created_position > 0"),
        sqlite_only("CREATE VIEW all_events AS "
                    "SELECT tenant_id, id, type, data, inserted_at, position FROM events "
                    "UNION ALL SELECT tenant_id, CAST('evt_' || substr(id, 6) AS TEXT), "
                    "CAST('outgoing_transfer.created' AS TEXT), "
                    "CAST('@outgoing_transfer:' || id AS TEXT), inserted_at, created_position "
                    "FROM outgoing_transfers WHERE created_position > 0")}},
      // On SQLite a transfer's id is unique on its own (the unique index was on the tenant and
      // the id): ids carry 96 random bits, and every lookup by id also names the tenant, which
      // the row then checks. The index's keys lose the 26 characters of the tenant id, which
      // every one of them repeated: the engine did about 5% fewer instructions for a batch's
      // rows (docs/scaling.md). The table is rebuilt as in migration 24 (the view dropped and
      // made again, the columns written out). PostgreSQL unchanged: its key stays
      // (tenant_id, id), the tenant leading every index there.
      {25,
       "outgoing_transfers_id_unique_alone",
       {sqlite_only("DROP VIEW all_events"),
        sqlite_only(
            "CREATE TABLE outgoing_transfers_new (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
            "batch_id TEXT, payout_id TEXT, external_id TEXT, tenant_account_id TEXT NOT NULL, "
            "amount BIGINT NOT NULL, currency TEXT NOT NULL, description TEXT, "
            "end_to_end_id TEXT NOT NULL, payment_id TEXT NOT NULL, payer_name TEXT NOT NULL, "
            "resolution_request_id TEXT NOT NULL, target_id TEXT NOT NULL, "
            "key_type TEXT NOT NULL, key_value TEXT NOT NULL, target TEXT NOT NULL, query TEXT, "
            "expected_creditor TEXT, metadata TEXT NOT NULL, state TEXT NOT NULL, "
            "state_reason TEXT, sandbox_failure TEXT, timemarks TEXT NOT NULL, "
            "held BIGINT NOT NULL, next_step_at_micros BIGINT, creditor_tenant_id TEXT, "
            "creditor_collection_id TEXT, attempt_id TEXT, entry_id TEXT, "
            "inserted_at TEXT NOT NULL, updated_at TEXT NOT NULL, "
            "created_position INTEGER PRIMARY KEY, UNIQUE (id), "
            "UNIQUE (tenant_id, external_id))"),
        sqlite_only("INSERT INTO outgoing_transfers_new (tenant_id, id, batch_id, payout_id, "
                    "external_id, tenant_account_id, amount, currency, description, "
                    "end_to_end_id, payment_id, payer_name, resolution_request_id, target_id, "
                    "key_type, key_value, target, query, expected_creditor, metadata, state, "
                    "state_reason, sandbox_failure, timemarks, held, next_step_at_micros, "
                    "creditor_tenant_id, creditor_collection_id, attempt_id, entry_id, "
                    "inserted_at, updated_at, created_position) "
                    "SELECT tenant_id, id, batch_id, payout_id, external_id, tenant_account_id, "
                    "amount, currency, description, end_to_end_id, payment_id, payer_name, "
                    "resolution_request_id, target_id, key_type, key_value, target, query, "
                    "expected_creditor, metadata, state, state_reason, sandbox_failure, "
                    "timemarks, held, next_step_at_micros, creditor_tenant_id, "
                    "creditor_collection_id, attempt_id, entry_id, inserted_at, updated_at, "
                    "created_position FROM outgoing_transfers"),
        sqlite_only("DROP TABLE outgoing_transfers"),
        sqlite_only("ALTER TABLE outgoing_transfers_new RENAME TO outgoing_transfers"),
        sqlite_only("CREATE INDEX outgoing_transfers_by_time ON outgoing_transfers "
                    "(tenant_id, inserted_at, id)"),
        sqlite_only("CREATE INDEX outgoing_transfers_moving ON outgoing_transfers "
                    "(next_step_at_micros) WHERE next_step_at_micros IS NOT NULL"),
        sqlite_only("CREATE INDEX outgoing_transfers_created_by_tenant ON outgoing_transfers "
                    "(tenant_id, created_position) WHERE created_position > 0"),
        sqlite_only("CREATE VIEW all_events AS "
                    "SELECT tenant_id, id, type, data, inserted_at, position FROM events "
                    "UNION ALL SELECT tenant_id, CAST('evt_' || substr(id, 6) AS TEXT), "
                    "CAST('outgoing_transfer.created' AS TEXT), "
                    "CAST('@outgoing_transfer:' || id AS TEXT), inserted_at, created_position "
                    "FROM outgoing_transfers WHERE created_position > 0")}},
  };
}

}  // namespace tesoro::store
