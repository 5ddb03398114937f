-- The PostgreSQL engine reference for outgoing transfers (bench/run, after pgbench): the rows a
-- batch of 1000 transfers writes, in three schemas, each measured by pgbench with
-- transfer_rows_pg.pgbench (search_path set to the schema through PGOPTIONS):
--   transfers             the outgoing_transfers table and indexes of migrations 14 and 18;
--   transfers_and_events  the same, and each transfer's outgoing_transfer.created event (in
--                         the outbox where migration 22 has PostgreSQL write it);
--   transfer_floor        the least a row per transfer and a row per event can be: of a
--                         transfer what its API must find it by and show, with its primary key
--                         and the external id's uniqueness only; of its event a row without any
--                         index (no list order, no filters, no processor index, no positions).
-- Each schema has its own sequence of batches, which makes the ids (that lead with it, so that
-- indexes grow at their end as with Tesoro's time-led ids).
CREATE SCHEMA transfers;
CREATE SCHEMA transfers_and_events;
CREATE SCHEMA transfer_floor;

CREATE TABLE transfers.outgoing_transfers (tenant_id TEXT NOT NULL, id TEXT NOT NULL,
  batch_id TEXT, payout_id TEXT, external_id TEXT, tenant_account_id TEXT NOT NULL,
  amount BIGINT NOT NULL, currency TEXT NOT NULL, description TEXT,
  end_to_end_id TEXT NOT NULL, payment_id TEXT NOT NULL, payer_name TEXT NOT NULL,
  resolution_request_id TEXT NOT NULL, target_id TEXT NOT NULL, key_type TEXT NOT NULL,
  key_value TEXT NOT NULL, target TEXT NOT NULL, query TEXT, expected_creditor TEXT,
  metadata TEXT NOT NULL, state TEXT NOT NULL, state_reason TEXT, sandbox_failure TEXT,
  timemarks TEXT NOT NULL, held BIGINT NOT NULL, next_step_at_micros BIGINT,
  creditor_tenant_id TEXT, creditor_collection_id TEXT, attempt_id TEXT, entry_id TEXT,
  inserted_at TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, external_id));
CREATE INDEX ON transfers.outgoing_transfers (tenant_id, inserted_at, id);
CREATE INDEX ON transfers.outgoing_transfers (next_step_at_micros)
  WHERE next_step_at_micros IS NOT NULL;
CREATE SEQUENCE transfers.batches;
-- Events are not written in this schema: an empty table for the script's second INSERT, which
-- the script skips here (with_events=0).
CREATE TABLE transfers.events (tenant_id TEXT, id TEXT, type TEXT, data TEXT, inserted_at TEXT);

CREATE TABLE transfers_and_events.outgoing_transfers
  (LIKE transfers.outgoing_transfers INCLUDING ALL);
CREATE SEQUENCE transfers_and_events.batches;
-- Where a batch writes its events on PostgreSQL: the outbox as migration 22 made it (named
-- `events` here for the script); the sequencer moves them into the events' table later.
CREATE TABLE transfers_and_events.events (emitted_seq BIGSERIAL PRIMARY KEY,
  tenant_id TEXT NOT NULL, id TEXT NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL,
  inserted_at TEXT NOT NULL);

CREATE TABLE transfer_floor.outgoing_transfers (tenant_id TEXT NOT NULL, id TEXT NOT NULL,
  batch_id TEXT NOT NULL, external_id TEXT NOT NULL, amount BIGINT NOT NULL,
  key_value TEXT NOT NULL, state TEXT NOT NULL, PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, external_id));
CREATE SEQUENCE transfer_floor.batches;
CREATE TABLE transfer_floor.events (tenant_id TEXT NOT NULL, id TEXT NOT NULL,
  type TEXT NOT NULL, data TEXT NOT NULL, inserted_at TEXT NOT NULL);
