#pragma once
// Stored responses of idempotent requests, kept per tenant for 24 hours. The record is written
// in the same transaction as the effect it belongs to, so a replay can never see an effect
// without its response, or a response without its effect. What it keeps is an HTTP answer
// (status, content type, body) that api/ gives it: a mechanism of the write unit, not a rule of
// the domain, so it lives with the store (its SQL may not be in api/).
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/time.hpp"
#include "store/store.hpp"

namespace tesoro::idempotency {

struct StoredResponse {
  int status = 0;
  std::string content_type;
  std::string body;
};

struct Found {
  bool same_request = false;  // false: the key was used for a different request
  StoredResponse response;
};

// x-idempotency-key: a UUID (8-4-4-4-12 hex), at most 255 characters.
bool is_valid_key(std::string_view key);
// Fingerprint of what makes two requests "the same": method, target and body.
std::string fingerprint(std::string_view method, std::string_view target, std::string_view body);

std::optional<Found> find(store::Tx& tx, std::string_view tenant_id, std::string_view key,
                          std::string_view request_hash, time::Micros now);
// The same in a write unit, for the answer of a replay, which acknowledges the write: the record
// is rewritten unchanged, so that the unit's commit waits, as a write's does, until the
// synchronous standbys hold it (PostgreSQL shows a commit to other sessions before they have
// it; a retry after a 503 may find a commit only this primary has, which a failover takes back).
std::optional<Found> find_for_replay(store::Tx& tx, std::string_view tenant_id,
                                     std::string_view key, std::string_view request_hash,
                                     time::Micros now);
// False when a record for the key already exists (another request won the race).
bool record(store::Tx& tx, std::string_view tenant_id, std::string_view key,
            std::string_view request_hash, const StoredResponse& response, time::Micros now);
// Whether a response to this error is kept: requests rejected before execution and 5xx are not.
bool is_storable(int status, std::string_view first_error_code);
// Deletes at most `limit` expired records (a chunk: a sweep must never hold the SQLite writer
// for long); the caller runs it again while it returns `limit`.
std::int64_t sweep_expired(store::Tx& tx, time::Micros now, std::int64_t limit);

}  // namespace tesoro::idempotency
