#pragma once
// Targets (participant API): a key resolved on the sandbox network, with its creditor masked,
// valid for limits::k_target_ttl_seconds on the tenant's clock. POST /api/v1/targets/resolve
// records the resolution request and its Target (table targets, one row for both); a transfer
// may then name the target by id instead of repeating its query.
//
// Target JSON (what the API shows and the row keeps): id (bbtgt_), resolution_request_id
// (bbtgr_), resolution_type (the query format: plain_key), key_type, key_value,
// participant_nit, spbvi, payment_id (the network payment id the transfer will carry:
// `CO.COM.CRB.TRXID` + a 19-character network transaction id), transaction_amount (Money or
// null), creditor {document_number (masked), document_type, full_name (masked), type},
// creditor_account {currency_code, number (masked), type}, expires_at, inserted_at.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json_writer.hpp"
#include "core/result.hpp"
#include "core/time.hpp"
#include "domain/network/directory.hpp"
#include "store/store.hpp"

namespace tesoro::network {

// The query formats a resolution accepts.
inline constexpr std::string_view k_format_plain_key = "plain_key";
// The same as a list, for the readers that check a body's `format` against it.
const std::vector<std::string>& query_formats();

struct TargetRequest {
  std::string format;  // plain_key
  std::string value;
  std::optional<std::int64_t> amount_minor;
  std::string currency;  // with amount_minor
};

struct Target {
  std::string id;                     // bbtgt_
  std::string resolution_request_id;  // bbtgr_
  std::string key_type;
  std::string key_value;
  std::optional<std::int64_t> amount_minor;
  std::optional<std::string> currency;
  std::string payment_id;
  time::Micros expires_at_micros = 0;
  std::string json;  // the Target as shown (masked)
  Resolution resolution;  // unmasked; empty when the target was read back from its row
};

// A new network payment id (what a target, a transfer and a payout carry): the EMVCo tag 90 GUI
// of the network (`CO.COM.CRB.TRXID`) followed by a fresh network transaction id.
std::string new_payment_id();

// The Target JSON of a resolution (masked), with these ids, amount and times.
std::string target_json(const Resolution& resolution, const std::string& id,
                        const std::string& resolution_request_id, const std::string& format,
                        const std::string& payment_id, std::optional<std::int64_t> amount_minor,
                        const std::string& currency, time::Micros expires_at, time::Micros now);

// What a transfer's row keeps of its Target (column target). The row has five of the Target's
// fields in columns of its own (id, resolution_request_id, key_type, key_value, payment_id); the
// others are kept as a JSON array of their values in the Target's order: resolution_type,
// participant_nit, spbvi, transaction_amount (null or [amount, currency]), the creditor's
// document_number, document_type, full_name and type, the creditor account's currency_code,
// number and type, expires_at, inserted_at. About 200 characters where the Target has 590: a
// third of the row, which a batch of a thousand transfers writes a thousand times on SQLite's
// one writer. Rows written before this form keep the whole Target (a JSON object), and
// write_target shows both alike.
std::string stored_target(const Resolution& resolution, const std::string& format,
                          std::optional<std::int64_t> amount_minor, const std::string& currency,
                          time::Micros expires_at, time::Micros now);
// The stored form of a whole Target's JSON (a target named by id: targets keep the whole JSON);
// a JSON of another layout (a field missing or of another kind, or one more) is kept whole.
std::string stored_target(std::string_view target_json);

// The row's own fields of its Target.
struct TargetIds {
  std::string_view id;
  std::string_view resolution_request_id;
  std::string_view key_type;
  std::string_view key_value;
  std::string_view payment_id;
};
// What a stored Target (the array form) shows around the row's own fields, as JSON members:
// resolution_type; participant_nit and spbvi; transaction_amount to the end.
struct ShownRuns {
  std::string resolution_type;
  std::string participant;
  std::string rest;
};
// The runs of each stored Target shown, made once: a batch's transfers to one key share their
// stored Target, and showing it meant parsing it again for each.
class ShownTargets {
 public:
  // nullptr for a stored whole Target (a JSON object), which is shown as is.
  const ShownRuns* runs(std::string_view stored);

 private:
  std::map<std::string, std::optional<ShownRuns>, std::less<>> runs_;
};
// The Target as the API shows it, from what a row stored (either form) and its own fields;
// `shown` (optional) keeps the runs of the stored forms it showed for the next call.
void write_target(json_text::Writer& out, std::string_view stored, const TargetIds& ids,
                  ShownTargets* shown = nullptr);
std::string shown_target(std::string_view stored, const TargetIds& ids);

// Resolves and records (201). target_not_found (at `value`); validation_error for a
// format other than plain_key (at `format`).
Result<Target> resolve_target(store::Tx& tx, const std::string& tenant_id,
                              const TargetRequest& request, time::Micros now);

// A recorded target of the tenant, expired or not (GET /api/v1/targets/{id}: a target stays
// readable after it can no longer be named). target_not_found at `path` when unknown or
// another tenant's.
Result<Target> read_target(store::Tx& tx, const std::string& tenant_id, const std::string& id,
                           const std::string& path);
// Many of the tenant's targets by id, expired or not, read in one statement per 250 ids (a
// batch naming a thousand targets). Ids not found are absent.
std::map<std::string, Target> read_targets(store::Tx& tx, const std::string& tenant_id,
                                           const std::vector<std::string>& ids);
// Whether a target read may still be named by a transfer: ok, or target_expired at `path`
// once its expires_at passed on the tenant clock (`now`).
Status unexpired(const Target& target, time::Micros now, const std::string& path);

}  // namespace tesoro::network
