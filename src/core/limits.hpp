#pragma once
// Every limit of the server, in one place, with the relations between them checked at compile time.
#include <array>
#include <cstddef>
#include <cstdint>

namespace tesoro::limits {

// HTTP
inline constexpr std::size_t k_body_max_bytes = 1024 * 1024;  // 413 above this
inline constexpr std::size_t k_header_max_bytes = 16 * 1024;  // whole header block
// A body is read from the socket through a buffer of up to this size. Beast reads at most the
// buffer's free space at a time (512 bytes at least), and a body read through the few hundred
// bytes left after its header took a socket read, a timer re-armed and a reactor round for each
// of them (about 150 for a batch of 1000 transfers). Given back after the request.
inline constexpr std::size_t k_body_read_buffer_bytes = 64 * 1024;
// One deadline per request, from the wait for its first byte to its last: it bounds both idle
// keep-alive connections and slow clients.
inline constexpr int k_read_timeout_ms = 10'000;
// How long a connection the server ends (Connection: close) goes on reading, and dropping, what
// the client still sends, so that its answer is not lost to a reset (http::Server).
inline constexpr int k_linger_ms = 2'000;
inline constexpr int k_write_timeout_ms = 10'000;
inline constexpr int k_connections_max = 4096;
inline constexpr int k_shutdown_grace_ms = 15'000;  // in-flight requests get this long on SIGTERM
inline constexpr std::size_t k_json_depth_max = 32;
inline constexpr int k_io_threads_default = 2;  // threads owning the sockets (--io-threads)
inline constexpr int k_io_threads_max = 64;     // the most --io-threads takes
// After a failed accept (out of file descriptors or the like) the server waits this long before
// accepting again, rather than spin.
inline constexpr int k_accept_retry_pause_ms = 50;
// On SIGTERM, how often the server looks whether its in-flight requests have all been answered.
inline constexpr int k_shutdown_drain_poll_ms = 20;

// Workers and storage
// Handler threads when --workers is not given. SQLite: handlers wait on the group commit, and
// the more wait at once the larger the groups. PostgreSQL: one per pooled connection, since a
// handler without a connection only waits for one, and more handlers than connections answer
// fewer authenticated reads per second.
inline constexpr int k_workers_default_sqlite = 64;
inline constexpr int k_postgres_pool_size = 16;  // connections per node
// SQLite: batches (api::RouteSpec::bulk: up to k_batch_items_max items a request) are handled
// on threads of their own, which run k_sqlite_behind_writer_nice nice levels below the store's
// writer, as the background workers do. Every write goes through the one writer, so a batch that
// waits for a core behind the threads preparing the next ones holds up all of them. The other
// handlers keep the process's priority (behind the writer, small durable writes lose to a
// client on the same machine); the checkpointer runs behind it too. A thread may lower its own
// priority without privileges, not raise it. Measured in docs/scaling.md.
// Two such threads per core: one preparing a batch while another waits for the writer. More
// only spread the batches over more threads, each finding its memory and its allocator's cache
// colder when its turn comes (docs/scaling.md).
inline constexpr int k_bulk_workers_per_core_sqlite = 2;
inline constexpr int k_sqlite_behind_writer_nice = 10;
inline constexpr int k_workers_max = 1024;  // the most --workers takes
// A handler thread that has waited this long for a request gives its allocator's cache back
// (http::WorkerPool, docs/scaling.md "The allocator"): long enough that a thread of a steady load
// never does, short enough that a burst's threads have done so before the next load comes.
inline constexpr int k_worker_idle_ms = 1000;
inline constexpr std::size_t k_write_queue_max = 10'000;  // units waiting for the writer
inline constexpr std::size_t k_commit_batch_max = 256;    // units per group commit
inline constexpr int k_read_connections_max = 64;
// SQLite's WAL writes gathered into one (store/sqlite/wal_vfs): bytes past which they are written
// out before the next write is taken, so a group that dirties more pages than this (a cache
// spill, a huge unit) costs a write per this many bytes.
inline constexpr std::size_t k_wal_gather_max_bytes = 8 * 1024 * 1024;
// Rows per statement of a many-row write (store/bulk.hpp), largest first: every count splits
// into these, so a statement's text is one of a few (the engines cache prepared statements by
// text) and its parameters stay far below SQLite's 32,766 and PostgreSQL's 65,535 (at 40
// columns: 10,000).
inline constexpr std::array<std::size_t, 4> k_bulk_rows = {250, 50, 10, 1};
// A migration that writes rows for a whole table (the ledger's posting positions, in
// store/migrations/ledger.cpp) writes them once it has gathered this many (rows of one account
// are not split).
inline constexpr std::size_t k_migration_rows_per_flush = 10'000;
// PostgreSQL: COPY's data goes to libpq in pieces of this size.
inline constexpr std::size_t k_postgres_copy_chunk_bytes = 256 * 1024;
inline constexpr int k_busy_timeout_ms = 5'000;
// PostgreSQL: a write unit that meets a serialization failure or a deadlock runs again, at most
// this many times; a unit waits at most this long for a connection of the pool.
inline constexpr int k_pg_unit_retries_max = 5;
inline constexpr int k_pg_pool_wait_ms = 5'000;
// Before its next run, a retried unit sleeps this many milliseconds times its attempt's number.
inline constexpr int k_pg_unit_retry_backoff_ms = 2;
// PostgreSQL: what each connection is opened with (the operator's URL wins where it says
// otherwise). A vanished server is an error within seconds instead of a hang: the connection
// attempt, TCP keepalives (idle time, interval, probes) and unacknowledged data are bounded; a
// statement that runs longer than its timeout is cancelled (the database is overloaded).
inline constexpr int k_pg_connect_timeout_seconds = 5;
inline constexpr int k_pg_keepalives_idle_seconds = 10;
inline constexpr int k_pg_keepalives_interval_seconds = 5;
inline constexpr int k_pg_keepalives_count = 3;
inline constexpr int k_pg_tcp_user_timeout_ms = 15'000;
inline constexpr int k_pg_statement_timeout_ms = 30'000;
// PostgreSQL: how long a COMMIT may wait for the synchronous standbys to acknowledge it before
// the node gives up on it (docs/operations.md, "High availability on PostgreSQL"): a standby on
// the same network answers in milliseconds; a primary cut off from its standby would wait
// forever. The wait is then cancelled and the write answered 503 with Retry-After.
inline constexpr int k_pg_commit_ack_wait_ms = 1'000;
// Once that wait is cancelled, the node waits for COMMIT's answer in polls of this length.
inline constexpr int k_pg_commit_cancelled_poll_ms = 1'000;
// Tx::append_rows on PostgreSQL: up to this many rows go in one INSERT sent with the unit's next
// statement (Tx::exec_later); more in one COPY, a round trip of its own that costs the backend
// less per row once there are many.
inline constexpr std::size_t k_pg_deferred_insert_rows = 16;
// After such a commit, for this long, each write first checks (one query on its connection) that
// the standbys are connected, and is refused at once (503) when they are not: only the first
// write after the loss waits out k_pg_commit_ack_wait_ms.
inline constexpr int k_pg_standbys_suspect_ms = 5'000;
// Retry-After on every 503: a failover takes seconds, a full write queue less.
inline constexpr int k_unavailable_retry_after_seconds = 1;
inline constexpr int k_checkpoint_interval_ms = 200;  // SQLite WAL copied to the database file
// SQLite's page size for a new database (an existing one keeps its own). 8 KiB rather than the
// default 4: batches of outgoing transfers (rows of about 1 KB and their events) are accepted
// faster, while units that dirty scattered pages (card authorizations, QR codes) are not slowed;
// 16 KiB would cost small durable writes a quarter of their rate (docs/scaling.md).
inline constexpr int k_sqlite_page_size_bytes = 8192;
// SQLite's page cache of the writer's connection, in KiB (64 MiB): random identifiers spread
// inserts over many index pages, which it keeps in memory rather than re-reading them from the
// OS cache on every commit.
inline constexpr int k_sqlite_writer_cache_kib = 65'536;
inline constexpr std::int64_t k_wal_restart_frames = 4096;  // 32 MiB of 8 KiB pages
// How long a RESTART checkpoint waits for readers to leave an outgrown WAL (writes wait too).
inline constexpr int k_wal_restart_wait_ms = 10;
// The writer restarts the WAL itself, between two commits, once it holds this many times the
// restart size (store/sqlite: the checkpointer's RESTART rarely finds the write lock free).
inline constexpr std::int64_t k_wal_writer_restart_factor = 2;
// The size the WAL file is cut back to when it starts over after outgrowing it.
inline constexpr std::int64_t k_wal_size_limit_bytes = 64LL * 1024 * 1024;

// Sandbox clock
inline constexpr std::int64_t k_clock_advance_max_seconds = 31'536'000;  // one year per advance
inline constexpr std::int64_t k_clock_offset_max_seconds = 100LL * 365 * 86'400;

// Background work
inline constexpr int k_worker_poll_ms = 250;          // a worker looks for due work this often
inline constexpr int k_jobs_claimed_per_pass = 20;     // by one job worker
inline constexpr std::int64_t k_job_lease_seconds = 30;  // real time: a crashed worker's jobs
inline constexpr int k_job_attempts_max = 8;           // then the job is kept as failed
// A failed job's first retry waits this long, each next one twice as long, up to the maximum.
inline constexpr std::int64_t k_job_backoff_first_seconds = 1;
inline constexpr std::int64_t k_job_backoff_max_seconds = 3600;
// A worker giving way to requests (workers::PeriodicWorker::yield_while) looks this often
// whether they still write.
inline constexpr int k_give_way_poll_ms = 1;
inline constexpr std::int64_t k_sweep_chunk_rows = 500;  // rows one sweeper unit deletes
inline constexpr std::int64_t k_event_sequence_batch_max = 1000;  // events positioned per unit
// How long the event sequencer and the webhook fan-out, woken by a commit, wait for more before
// their pass (workers::PeriodicWorker::gather): an event reaches GET /v1/events and its
// deliveries up to this much later, in far fewer units at a few hundred events a second.
inline constexpr int k_event_gather_ms = 20;
// Card authorizations whose hold ran out, expired per unit; and how often the expiry worker
// looks when no clock advance wakes it (real time: a hold lasts days).
inline constexpr std::int64_t k_authorization_expiry_chunk_rows = 100;
inline constexpr int k_authorization_expiry_interval_ms = 1000;
// Collections whose expires_at passed, failed per unit; and how often the expiry worker looks
// when no clock advance wakes it (real time).
inline constexpr std::int64_t k_collection_expiry_chunk_rows = 100;
inline constexpr int k_collection_expiry_interval_ms = 1000;
// Activation links of physical cards: how long one lasts (tenant time) and the random bytes of
// its token (the secret in its url, 256 bits).
inline constexpr std::int64_t k_activation_link_ttl_seconds = 72 * 3600;
inline constexpr std::size_t k_activation_token_bytes = 32;
// How long a card authorization's hold lasts before it expires (tenant time).
inline constexpr std::int64_t k_authorization_hold_seconds = 7 * 24 * 3600;

// QR codes of collections and sandbox attempts (the contract's limits). A dynamic code's
// expiry, at most 72 days, and the image's side in pixels.
inline constexpr std::int64_t k_qr_expiration_max_seconds = 6'220'800;
inline constexpr std::int64_t k_qr_image_width_min = 400;
inline constexpr std::int64_t k_qr_image_width_max = 2048;
inline constexpr std::int64_t k_qr_image_width_default = 400;
inline constexpr std::size_t k_payment_id_max_chars = 36;
// QR images: a guard on memory for qr_image::png (one 1-bit row of this width is 2 KiB); the
// API's own image_width range is far below it.
inline constexpr int k_qr_image_width_max_pixels = 16'384;

// The largest amount in minor units that the API accepts or answers, and the largest balance an
// account may reach: 2^53 - 1, the largest integer a JSON client that reads numbers as IEEE
// doubles (JavaScript) reads exactly. Far above any real balance (COP 90 trillion).
inline constexpr std::int64_t k_amount_max_minor = (std::int64_t{1} << 53) - 1;

// Outgoing transfers and payouts on the sandbox network. The default maximum of one transfer
// (COP 11,552,000.00, the Bre-B limit reported for 2025; `--transfer-max-amount` changes it),
// the tenant-clock delay between two steps of a transfer's flow, how long a resolved target may
// be named by a transfer, and the processor's chunk and poll interval (real time).
inline constexpr std::int64_t k_transfer_max_amount_minor_default = 1'155'200'000;
inline constexpr std::int64_t k_transfer_step_seconds = 1;
inline constexpr std::int64_t k_target_ttl_seconds = 15 * 60;
inline constexpr std::int64_t k_transfer_processor_chunk_rows = 1000;
// The processor's chunk while requests write too on SQLite's one writer (other units ran since
// its last pass): the writer runs units in turn, so a smaller pass lets batches wait less behind
// it (docs/scaling.md); alone, a pass takes the whole chunk.
inline constexpr std::int64_t k_transfer_processor_shared_chunk_rows = 250;
inline constexpr int k_transfer_processor_interval_ms = 250;
// While requests that may write are being handled, the processor waits up to this many times
// the length of its last pass before the next (workers::PeriodicWorker::yield_factor): at most a
// quarter of its thread's time while batches keep coming, full speed once they stop
// (docs/scaling.md).
inline constexpr int k_transfer_processor_yield_factor = 3;

// Identifiers and keys
inline constexpr std::size_t k_id_chars_after_prefix = 22;  // 6 of time, 16 random (ids.hpp)
inline constexpr std::size_t k_idempotency_key_max_chars = 255;
inline constexpr std::int64_t k_idempotency_retention_seconds = 24 * 3600;
inline constexpr int k_idempotency_sweep_interval_ms = 60'000;

// OAuth
inline constexpr std::int64_t k_access_token_ttl_seconds = 3600;
inline constexpr std::int64_t k_refresh_token_ttl_seconds = 30 * 24 * 3600;
// A bearer credential longer than this is refused unread (ours are at most 57 bytes).
inline constexpr std::size_t k_credential_max_bytes = 200;
// An Authorization scheme other than Bearer is quoted in the refusal up to this many bytes.
inline constexpr std::size_t k_refused_scheme_shown_bytes = 16;
// Credentials whose principals a node keeps (app/credential_cache.hpp; PostgreSQL only). An
// entry is a principal of a few hundred bytes; a full cache is emptied.
inline constexpr std::size_t k_credential_cache_entries = 10'000;

// Rate limits (per credential, token bucket)
inline constexpr double k_sandbox_rate_per_second = 25;
inline constexpr double k_sandbox_rate_burst = 50;
inline constexpr double k_production_rate_per_second = 100;
inline constexpr double k_production_rate_burst = 200;
inline constexpr std::size_t k_rate_buckets_max = 100'000;
// Failed authentications per client address (app::AuthFailureGuard): a bucket of 20 failures
// refilled at one a second. Once it is empty the address's requests are refused (429) before
// their credential is looked up, except with a credential that authenticated from that address
// within the last k_auth_known_good_seconds (at most k_auth_known_good_per_address of them).
inline constexpr double k_auth_failure_rate_per_second = 1;
inline constexpr double k_auth_failure_burst = 20;
inline constexpr std::int64_t k_auth_known_good_seconds = 600;
inline constexpr std::size_t k_auth_known_good_per_address = 8;

// Lists
inline constexpr std::int64_t k_page_size_min = 10;
inline constexpr std::int64_t k_page_size_max = 500;
inline constexpr std::int64_t k_page_size_default = 10;
inline constexpr std::int64_t k_metadata_keys_max = 50;
inline constexpr std::size_t k_metadata_key_max_chars = 100;
inline constexpr std::size_t k_metadata_value_max_chars = 500;
inline constexpr std::size_t k_string_max_chars = 1024;  // any free-text field unless told
// A query parameter read as an integer has at most this many digits (any such number fits in an
// int64).
inline constexpr std::size_t k_query_integer_max_digits = 18;
// Fields that several endpoints share (each field's own limit where it has one).
// Account holders, collections, transfers, payouts.
inline constexpr std::size_t k_external_id_max_chars = 255;
inline constexpr std::size_t k_email_max_chars = 254;  // RFC 5321; account holders, console users
inline constexpr std::size_t k_key_value_max_chars = k_email_max_chars;  // a Bre-B key
// A name: of a person (cardholders, account holders' persons, payers of sandbox attempts), of a
// merchant (simulated card transactions), of a configuration group or a control.
inline constexpr std::size_t k_name_max_chars = 100;
inline constexpr std::size_t k_nickname_max_chars = 100;     // collections, cards
// Transfers, webhook endpoints, sandbox fundings.
inline constexpr std::size_t k_description_max_chars = 500;
inline constexpr std::size_t k_account_name_max_chars = 200;  // ledger accounts
// An account holder's address: its lines (line_1, line_2, extra), city, state and zip code.
inline constexpr std::size_t k_address_line_max_chars = 200;
inline constexpr std::size_t k_address_city_max_chars = 100;
inline constexpr std::size_t k_address_state_max_chars = 100;
inline constexpr std::size_t k_zip_code_max_chars = 20;
inline constexpr std::size_t k_document_number_max_chars = 30;  // a person's identity document
// An id field longer than this is refused for its length (ids have at most 30 characters: a
// prefix of up to 7, '_' and k_id_chars_after_prefix); a shorter one not an id is told the form.
inline constexpr std::size_t k_id_field_max_chars = 64;
inline constexpr std::size_t k_date_time_field_max_chars = 64;  // an ISO 8601 date-time in a body
// A cardholder's birthdate is not before January 1 of this year.
inline constexpr int k_birthdate_min_year = 1900;
// Bre-B keys (collections::normalize_key): an email key's length, an alphanumeric key's
// characters after its '@', and the digits of an identification key and of a merchant code.
inline constexpr std::size_t k_email_key_max_chars = 100;
inline constexpr std::size_t k_alphanumeric_key_min_chars = 3;
inline constexpr std::size_t k_alphanumeric_key_max_chars = 20;
inline constexpr std::size_t k_identification_key_min_digits = 5;
inline constexpr std::size_t k_identification_key_max_digits = 15;
inline constexpr std::size_t k_merchant_code_key_min_digits = 4;
inline constexpr std::size_t k_merchant_code_key_max_digits = 20;
inline constexpr std::size_t k_balance_operation_description_max_chars = 255;  // a card's prepaid
inline constexpr std::size_t k_balance_operation_entity_id_max_chars = 255;    // the same, its entity_id
inline constexpr std::size_t k_collection_reference_max_chars = 255;
inline constexpr std::size_t k_problems_listed_max = 100;  // errors[] items in one answer
// Items of one batch (POST /api/v1/collections, POST /api/v1/outgoing_transfers).
inline constexpr std::size_t k_batch_items_max = 1000;
// The largest `after` of the events lists: k_query_integer_max_digits digits, what the query
// reader reads (positions start at 1 and grow by one per event).
inline constexpr std::int64_t k_event_position_max = 999'999'999'999'999'999;

// Spending controls: what a rule may hold.
inline constexpr std::size_t k_rule_values_max = 500;  // MCCs or merchant ids of a rule
inline constexpr std::size_t k_merchant_id_max_chars = 15;
inline constexpr std::size_t k_merchant_name_pattern_max_chars = 200;  // an allow_pattern
// What matching a merchant name against a pattern may cost (PCRE2 match and depth limits, the
// heap in KiB). A pattern that backtracks catastrophically hits them within about a
// millisecond; the rule then refuses (fails closed) instead of holding a worker.
inline constexpr std::uint32_t k_pattern_match_limit = 100'000;
inline constexpr std::uint32_t k_pattern_depth_limit = 10'000;
inline constexpr std::uint32_t k_pattern_heap_limit_kib = 8'192;

// Secrets Tesoro issues (client secrets, tokens, webhook signing secrets): 256 random bits.
inline constexpr std::size_t k_secret_bytes = 32;
// Tries at a random card or account number before giving up: a clash among 10^9 or more numbers
// is rare, eight in a row never.
inline constexpr int k_random_number_attempts = 8;
// A collection's generated key: '@' and this many characters of [A-Z0-9] (36^10, about 3.7e15
// keys; a clash is rarer than a number's, and retried as often).
inline constexpr std::size_t k_generated_key_chars = 10;
// A card's expiry: this many years after its issue month.
inline constexpr int k_card_validity_years = 4;
// How often an authorization or increment goes back to ask the tenant's endpoint when its
// checks, which declined in the read, pass in the write (each round needs the money to come
// between the two); after the last, a 503, never an approval the endpoint was not asked about.
inline constexpr int k_authorization_ask_rounds = 3;
// Opened secrets a Sealer keeps (crypto::Sealer::open_remembered): the signing secrets of the
// endpoints that decide authorizations, current and previous, for 20 endpoints of 200 tenants.
inline constexpr std::size_t k_sealer_remembered_texts = 8000;

// Webhooks (domain/webhooks).
inline constexpr std::size_t k_webhook_url_max_bytes = 2048;
inline constexpr std::int64_t k_webhook_endpoints_max = 20;       // per tenant
inline constexpr std::size_t k_webhook_event_types_max = 100;     // event_types of one endpoint
// After a rotation the previous secret keeps signing this long (real time), so receivers can
// roll their configuration without missing a delivery.
inline constexpr std::int64_t k_webhook_secret_overlap_seconds = 24 * 3600;
inline constexpr std::int64_t k_webhook_timeout_ms = 15000;  // one delivery attempt, end to end
// A node's hold on an endpoint it delivers to (real time). Longer than an attempt's timeout, so
// a live node never loses it mid-attempt; a dead node's endpoints wait at most this long.
inline constexpr std::int64_t k_webhook_lease_seconds = 60;
// What the hidden --webhook-lease-seconds and --webhook-timeout-ms (for tests that kill a node or
// hang a receiver) may set: the lease at most, the timeout at least (at most the default above).
inline constexpr std::int64_t k_webhook_lease_seconds_max = 3600;
inline constexpr std::int64_t k_webhook_timeout_ms_min = 100;
inline constexpr std::int64_t k_webhook_response_body_max_bytes = 1024;  // kept in the log's error
inline constexpr std::int64_t k_webhook_fanout_batch_max = 500;  // events per fan-out unit
// The delay before attempts 2..8 of a delivery (decisions.md): 5 s, 5 min, 30 min, 2 h, 5 h,
// 10 h, 10 h, on the tenant clock in the sandbox. An endpoint's Retry-After is honoured up to the
// longest of them.
inline constexpr std::array<std::int64_t, 7> k_webhook_retry_delay_seconds = {
    5, 300, 1800, 7200, 18000, 36000, 36000};
inline constexpr std::int64_t k_webhook_retry_after_max_seconds = 36000;
// The dispatcher writes its attempts in units of at most this many (and whenever nothing is in
// flight), and a pass in flight looks at the server's stopping this often.
inline constexpr std::size_t k_webhook_attempts_per_unit = 32;
// A dispatcher pass leases at most this many endpoints (delivered to concurrently) and sends at
// most this many due deliveries to each.
inline constexpr int k_webhook_endpoints_per_pass = 16;
inline constexpr int k_webhook_deliveries_per_endpoint = 50;
inline constexpr int k_webhook_dispatch_poll_ms = 100;
// Authorization decisioning by the tenant (domain/cards/authorization_decisions.hpp): what an
// endpoint's authorization_timeout_ms may be, the decision answer's size and reason, and how
// many requests one node keeps in flight (on one thread, curl multi); more wait their turn
// within their own timeout.
inline constexpr std::int64_t k_authorization_timeout_ms_min = 100;
inline constexpr std::int64_t k_authorization_timeout_ms_max = 10000;
inline constexpr std::int64_t k_authorization_timeout_ms_default = 2000;
inline constexpr std::size_t k_authorization_reason_max_chars = 200;
inline constexpr std::size_t k_authorization_answer_max_bytes = 4096;
inline constexpr std::size_t k_authorization_requests_in_flight_max = 4096;
// The thread of those requests (http::AsyncClient) waits for the network at most this long while
// requests wait for a slot (their timeouts are checked between two waits), and at most this long
// otherwise (a new request wakes it).
inline constexpr int k_async_client_queued_poll_ms = 10;
inline constexpr int k_async_client_idle_poll_ms = 1'000;

// The console (docs/console.md). Passwords are hashed with scrypt (memory-hard): N = 2^15,
// r = 8, p = 1 takes 128 * r * N = 32 MiB and tens of milliseconds per hash, twice the memory
// of the parameters scrypt's author gives for interactive logins (OWASP's 2^17 would take
// 128 MiB per concurrent sign-in, too much for a small server). Each hash records its own
// parameters, so raising these later leaves older hashes verifiable.
inline constexpr int k_console_scrypt_log2_n = 15;
inline constexpr int k_console_scrypt_r = 8;
inline constexpr int k_console_scrypt_p = 1;
inline constexpr std::size_t k_console_salt_bytes = 16;
inline constexpr std::size_t k_console_hash_bytes = 32;
// A stored hash longer than this is refused unverified (ours have k_console_hash_bytes).
inline constexpr std::size_t k_console_stored_hash_max_bytes = 64;
// What a stored hash may ask for when verified (a hash with larger parameters is refused, so a
// tampered row cannot make sign-in allocate without bound): 256 MiB, and N at most 2^20.
inline constexpr std::uint64_t k_console_scrypt_max_memory_bytes = 256ULL * 1024 * 1024;
inline constexpr int k_console_scrypt_log2_n_max = 20;
inline constexpr std::size_t k_console_password_bytes = 18;  // 144 bits, 24 characters
inline constexpr std::size_t k_console_password_max_chars = 256;  // longer input: refused unread
inline constexpr std::size_t k_console_session_token_bytes = 32;
inline constexpr std::int64_t k_console_session_ttl_seconds = 12 * 3600;
// Sign-in rate limit (console::sign_in): after this many failures for one email from one
// address, or from one address for any email, within the window (real time), each further
// attempt from that address waits 2^(failures - max) seconds after the newest failure, at most
// the window; 429 meanwhile.
inline constexpr std::int64_t k_console_failures_per_email_max = 5;
inline constexpr std::int64_t k_console_failures_per_address_max = 20;
inline constexpr std::int64_t k_console_failure_window_seconds = 15 * 60;
// Revoked and expired sessions are deleted this long after they ended (real time).
inline constexpr std::int64_t k_console_session_retention_seconds = 24 * 3600;

static_assert(k_header_max_bytes < k_body_max_bytes);
static_assert(k_io_threads_default <= k_io_threads_max);
static_assert(k_workers_default_sqlite <= k_workers_max && k_postgres_pool_size <= k_workers_max);
static_assert(k_bulk_rows.back() == 1, "every count of rows splits into the statements' sizes");
static_assert(k_job_backoff_first_seconds <= k_job_backoff_max_seconds);
static_assert(k_email_key_max_chars <= k_key_value_max_chars &&
              1 + k_alphanumeric_key_max_chars <= k_key_value_max_chars &&
              k_identification_key_max_digits <= k_key_value_max_chars &&
              k_merchant_code_key_max_digits <= k_key_value_max_chars,
              "every valid Bre-B key is one the key readers take");
static_assert(k_alphanumeric_key_min_chars <= k_generated_key_chars &&
                  k_generated_key_chars <= k_alphanumeric_key_max_chars,
              "a generated key is a valid alphanumeric key");
static_assert(k_webhook_lease_seconds <= k_webhook_lease_seconds_max);
static_assert(k_webhook_timeout_ms_min <= k_webhook_timeout_ms);
static_assert(k_console_hash_bytes <= k_console_stored_hash_max_bytes,
              "the hashes we make must be ones we verify");
static_assert(k_read_timeout_ms < k_shutdown_grace_ms, "a slow read must end before shutdown gives up");
static_assert(k_linger_ms < k_shutdown_grace_ms, "a lingering close must end before shutdown gives up");
static_assert(k_commit_batch_max <= k_write_queue_max);
static_assert(k_page_size_min <= k_page_size_default && k_page_size_default <= k_page_size_max);
static_assert(k_sandbox_rate_burst >= k_sandbox_rate_per_second);
static_assert(k_production_rate_burst >= k_production_rate_per_second);
static_assert(k_refresh_token_ttl_seconds > k_access_token_ttl_seconds);
static_assert(k_clock_advance_max_seconds <= k_clock_offset_max_seconds);
static_assert(k_activation_link_ttl_seconds <= k_clock_advance_max_seconds,
              "a sandbox clock advance must be able to expire an activation link");
static_assert(k_batch_items_max * 256 < k_body_max_bytes,
              "a full batch of items of a few hundred bytes must fit in one body");
static_assert(k_activation_token_bytes >= 32, "an activation token is a 256-bit secret");
static_assert(k_qr_expiration_max_seconds <= k_clock_advance_max_seconds,
              "a sandbox clock advance must be able to expire any QR code");
static_assert(k_qr_image_width_min <= k_qr_image_width_default &&
              k_qr_image_width_default <= k_qr_image_width_max);
static_assert(k_qr_image_width_max <= k_qr_image_width_max_pixels,
              "every image_width the API takes must be one qr_image::png makes");
static_assert(k_webhook_retry_after_max_seconds == k_webhook_retry_delay_seconds.back(),
              "a Retry-After is honoured up to the longest delay of the schedule");
static_assert(k_worker_poll_ms < k_job_lease_seconds * 1000, "a live worker renews nothing: "
              "its lease must outlast many polls");
static_assert(k_console_scrypt_log2_n <= k_console_scrypt_log2_n_max);
static_assert((128ULL * k_console_scrypt_r << k_console_scrypt_log2_n) * k_console_scrypt_p <
                  k_console_scrypt_max_memory_bytes,
              "the hashes we make must be ones we verify");
static_assert(k_console_password_bytes >= 16, "a one-time password carries at least 128 bits");
static_assert(k_console_failures_per_email_max < k_console_failures_per_address_max);
static_assert(k_webhook_lease_seconds * 1000 > 2 * k_webhook_timeout_ms,
              "a delivering node must not lose its endpoint's lease during an attempt");

}  // namespace tesoro::limits
