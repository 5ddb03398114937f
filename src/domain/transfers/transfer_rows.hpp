#pragma once
// Inside the transfers module: the outgoing_transfers row and what acceptance and the processor
// share (the flow's steps, timemarks).
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "domain/transfers/outgoing_transfers.hpp"
#include "store/bulk.hpp"
#include "store/store.hpp"

namespace tesoro::transfers::rows {

// The columns from_row reads, in its order.
extern const char* const k_columns;

Transfer from_row(const store::Row& row);

// Inserts the transfers in few statements. Returns, for each, whether it was inserted: false
// when the tenant already had its external_id (another unit committed it meanwhile). With
// `first_created_position` (events::row_positions), the rows keep their
// outgoing_transfer.created events, the i-th at that position + i (a row not
// inserted leaves its position unused). Without, on SQLite, they take negative
// created_positions of their own (the column is the rowid there); on
// PostgreSQL it stays NULL.
std::vector<bool> insert(store::Tx& tx, const std::string& tenant_id,
                         const std::vector<const Transfer*>& transfers,
                         std::optional<std::int64_t> first_created_position = std::nullopt);
// The same for the rows `which` of `packed`, which pack made where the transfers were prepared
// (a batch's thousand rows, bound on the one SQLite writer from one buffer: store::PackedRows).
std::vector<bool> insert(store::Tx& tx, const std::string& tenant_id,
                         const store::PackedRows& packed, const std::vector<std::size_t>& which,
                         std::optional<std::int64_t> first_created_position = std::nullopt);

// Rows for insert: room for `count` transfers'; pack appends one transfer's row.
store::PackedRows packed_rows(std::size_t count);
void pack(store::PackedRows& rows, const Transfer& transfer);
// The id of the transfer packed at `row`.
std::string_view packed_id(const store::PackedRows& rows, std::size_t row);

// Writes what the processor changes (state, state_reason, sandbox_failure, timemarks, held,
// next_step_at_micros, creditor, attempt_id, entry_id, updated_at) of the tenant's transfers,
// a few hundred per statement.
void save_progress(store::Tx& tx, const std::string& tenant_id,
                   const std::vector<const Transfer*>& transfers);

// The transfers of the tenant with these ids (any order; unknown ids are left out). `lock`
// takes their rows (FOR UPDATE on PostgreSQL).
std::vector<Transfer> by_ids(store::Tx& tx, const std::string& tenant_id,
                             const std::vector<std::string>& ids, bool lock);

// The same rows locked (FOR UPDATE on PostgreSQL), read for their version only: each one's
// (id, updated_at); updated_at changes with every step another node makes.
std::vector<std::pair<std::string, std::string>> lock_versions(
    store::Tx& tx, const std::string& tenant_id, const std::vector<std::string>& ids);

// The state after `state` in the flow (created -> processing -> target_resolved -> held ->
// sent_to_breb_provider -> successful); "" after a final state.
std::string_view next_state(std::string_view state);
bool is_final(std::string_view state);
// Whether a transfer in `state` has target_resolved still ahead in the flow (its key is resolved
// again on the way there).
bool before_target_resolved(std::string_view state);

// The events of transfers keep a reference to the transfer's row as their data (events.hpp;
// what they show: as_of): events::reference(k_event_kind, transfer id).
inline constexpr std::string_view k_event_kind = "outgoing_transfer";
std::string event_reference(const Transfer& transfer);

// timemarks with `mark` set to `at` (ISO 8601 without zone).
std::string with_timemark(const std::string& timemarks_json, std::string_view mark,
                          time::Micros at);

// timemarks without the marks set after `at` (ISO 8601, the tenant's time), in the same text
// with_timemark wrote when they were set.
std::string timemarks_until(const std::string& timemarks_json, std::string_view at);

}  // namespace tesoro::transfers::rows
