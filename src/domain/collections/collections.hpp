#pragma once
// Collections (participant API): a request for money to a tenant account, paid by attempts on
// the sandbox network through the collection's keys in the network directory.
//
// States: created -> ready (its key is registered in the directory: in the same transaction as
// the creation, so a new collection shows `ready`), ready -> minimum_paid (paid_amount reached
// total_minimum_amount) -> paid (reached total_maximum_amount, or one success of a single-use
// collection); ready | minimum_paid -> discarded (DELETE) or failed (state_reason `expired`,
// moved by the collections worker once expires_at passes on the tenant clock). paid, discarded
// and failed are terminal; every change of state emits `collection.<state>`. A collection that
// leaves the payable states (ready, minimum_paid) has its keys set inactive.
//
// Schema: store/migrations/collections.cpp (tables network_keys, collections, qr_codes,
// collection_attempts, incoming_transfers).
#include <boost/json.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/page.hpp"
#include "core/result.hpp"
#include "core/time.hpp"
#include "domain/ledger/account_holders.hpp"  // ledger::Metadata
#include "store/store.hpp"

namespace tesoro::collections {

// Key types of the network directory, as the API names them.
inline const std::vector<std::string>& key_types() {
  static const std::vector<std::string> types = {"identification", "cellphone", "email",
                                                 "alphanumeric", "merchant_code"};
  return types;
}

struct Key {
  std::string type;   // one of key_types()
  std::string value;  // normalised (normalize_key)
  std::string state;  // active | inactive
  std::string inserted_at;
};

// The value of a key as the directory stores and compares it (e.g. emails in lower case), or
// an error message saying what a valid value of that type looks like.
Result<std::string> normalize_key(const std::string& type, const std::string& value);

struct Collection {
  std::string id;  // bbcol_
  std::string external_id;
  std::string tenant_account_id;
  std::string usage_mode;  // single_use | multiple_use
  std::string currency;
  std::int64_t minimum_attempt_amount = 0;
  std::int64_t maximum_attempt_amount = 0;
  std::int64_t total_minimum_amount = 0;
  std::int64_t total_maximum_amount = 0;
  std::int64_t paid_amount = 0;
  std::int64_t successful_attempts = 0;
  std::string state;
  std::optional<std::string> state_reason;
  bool enabled = true;
  std::optional<std::string> expires_at;
  std::optional<std::int64_t> expires_at_micros;
  std::optional<std::string> nickname;
  std::optional<std::string> reference;
  ledger::Metadata metadata;
  std::vector<Key> keys;  // newest first
  std::string inserted_at;
  std::string updated_at;

  // Fixed-value: minimum_attempt_amount == maximum_attempt_amount.
  bool fixed_value() const { return minimum_attempt_amount == maximum_attempt_amount; }
  // ready or minimum_paid, and enabled: QR codes may be made and attempts may pay.
  bool payable() const;
  // total_maximum_amount - paid_amount.
  std::int64_t remaining() const { return total_maximum_amount - paid_amount; }
};

// payable(), and its expires_at (if any) still ahead of `now` (the tenant's time): the expiry
// worker moves an expired collection to failed within a second or so, and a payment or a QR
// code in between must not slip through.
bool payable_at(const Collection& collection, time::Micros now);

// The newest active key of a collection (the QR default), nullopt when it has none.
std::optional<Key> default_key(const Collection& collection);

// collection_not_found when absent or another tenant's.
Result<Collection> get_collection(store::Tx& tx, const std::string& tenant_id,
                                  const std::string& id);
// The same, with the collection's row locked until the unit ends (FOR UPDATE on PostgreSQL):
// what a payment or a state change reads first.
Result<Collection> lock_collection(store::Tx& tx, const std::string& tenant_id,
                                   const std::string& id);

// A key of the directory and what owns it. nullopt when no such key is registered.
struct DirectoryEntry {
  std::string tenant_id;
  std::string collection_id;
  std::string state;  // active | inactive
};
std::optional<DirectoryEntry> find_key(store::Tx& tx, const std::string& type,
                                       const std::string& normalized_value);
// A key of the directory as (type, normalised value).
using KeyName = std::pair<std::string, std::string>;
// The registered ones among many keys, by key, read in one statement per key type and chunk of
// values (store::for_each_chunk): what a batch of transfers resolves its thousand keys with,
// instead of a lookup per key. Keys not registered are absent.
std::map<KeyName, DirectoryEntry> find_keys(store::Tx& tx, const std::vector<KeyName>& keys);

// The tenant account of each of the tenant's collections with these ids, by collection id:
// those it has (what a transfer to a collection's key pays, read for many keys at once).
std::map<std::string, std::string> collection_accounts(store::Tx& tx, const std::string& tenant_id,
                                                       const std::vector<std::string>& ids);

// A successful payment of `amount` to a collection locked by lock_collection (the caller has
// checked payable(), the attempt amount bounds and remaining()): raises paid_amount and
// successful_attempts, moves the state (minimum_paid, paid) with its events, sets the keys
// inactive when it becomes paid, and updates `collection` in place. balance_overflow on
// overflow (a bug of the caller: it checked remaining()).
Status record_payment(store::Tx& tx, const std::string& tenant_id, Collection& collection,
                      std::int64_t amount, time::Micros now);

// The collection as the API and its events show it: the fields it was created with (the four
// limits and paid_amount as Money), id, state, state_reason, enabled, keys, timestamps.
boost::json::object to_json(const Collection& collection);

// ---- What the API does with collections (create, list, update, discard, expire, verify) ----

// The states a collection may be listed by, and those that end it.
const std::vector<std::string>& states();
bool is_terminal(const std::string& state);

// A key the tenant chose for a new collection: type of key_types(), value as given (normalised
// by create_collection).
struct KeyRequest {
  std::string type;
  std::string value;
};

struct NewCollection {
  std::string external_id;
  std::string tenant_account_id;
  std::string usage_mode;  // single_use | multiple_use
  std::string currency;    // the one currency of the four limits (the API checks they agree)
  std::int64_t minimum_attempt_amount = 0;
  std::int64_t maximum_attempt_amount = 0;
  std::int64_t total_minimum_amount = 0;
  std::int64_t total_maximum_amount = 0;
  std::optional<time::Micros> expires_at_micros;  // in the future on the tenant clock
  std::optional<std::string> nickname;
  std::optional<std::string> reference;
  ledger::Metadata metadata;
  std::optional<KeyRequest> key;  // absent: an alphanumeric @... key is generated
};

struct CreateOutcome {
  Collection collection;
  bool created = false;  // false: the tenant already had one with this external_id (duplicated)
};

// One item of a batch. Outcomes in precedence order, with paths relative to the item: the
// tenant's collection with this external_id (created = false, nothing written);
// validation_error (limits that contradict each other, an expiry not in the future, a key
// value that is not valid for its type); tenant_account_not_found (at tenant_account_id:
// unknown, another tenant's, not a receptor, or not active); currency_mismatch (at
// minimum_attempt_amount.currency); key_already_exists (at key.value). A created
// collection is `ready`, its key registered, with the events collection.created and
// collection.ready. Its writes run in a savepoint of their own: a rejected item leaves nothing
// behind, and the caller's unit may go on with the next item.
Result<CreateOutcome> create_collection(store::Tx& tx, const std::string& tenant_id,
                                        const NewCollection& input, time::Micros now);

struct CollectionFilter {
  std::optional<std::string> state;  // one of states()
  std::optional<std::string> external_id;
};
// Newest first (inserted_at, then id).
Result<PageOf<Collection>> list_collections(store::Tx& tx, const std::string& tenant_id,
                                            const CollectionFilter& filter, std::int64_t offset,
                                            std::int64_t limit);

// A PATCH: nullopt leaves a field; an inner nullopt clears it (nickname, expires_at). Limits
// come with their currency, which must be the collection's.
struct LimitChange {
  std::int64_t amount = 0;
  std::string currency;
};
struct CollectionChanges {
  std::optional<std::optional<std::string>> nickname;
  std::optional<bool> enabled;
  std::optional<std::optional<time::Micros>> expires_at_micros;
  std::optional<LimitChange> minimum_attempt_amount;
  std::optional<LimitChange> maximum_attempt_amount;
  std::optional<LimitChange> total_minimum_amount;
  std::optional<LimitChange> total_maximum_amount;
};
// Outcomes in precedence order: collection_not_found; collection_invalid_state (paid,
// discarded, failed); currency_mismatch (at <limit>.currency); validation_error (limits
// that contradict each other once merged, an expiry not in the future); amount_out_of_range
// (total_maximum_amount below paid_amount). The state follows the new limits (ready,
// minimum_paid or paid, each change with its event); enabled=false sets the keys inactive and
// enabled=true active again.
Result<Collection> update_collection(store::Tx& tx, const std::string& tenant_id,
                                     const std::string& id, const CollectionChanges& changes,
                                     time::Micros now);

// DELETE: -> discarded, keys inactive, event collection.discarded. collection_not_found;
// collection_invalid_state on a terminal state.
Result<Collection> discard_collection(store::Tx& tx, const std::string& tenant_id,
                                      const std::string& id, time::Micros now);

// The collection with this external_id when it is paid. item_not_found when the tenant has
// none with it; invalid_state when it is not (yet) paid.
Result<Collection> find_successful_by(store::Tx& tx, const std::string& tenant_id,
                                      const std::string& external_id);

// Moves at most `limit` collections whose expires_at passed on their tenant's clock to failed
// (state_reason expired), keys inactive, with collection.failed. Returns how many it moved; the
// caller runs it again while it returns `limit`.
std::int64_t expire_due(store::Tx& tx, time::Micros real_now, std::int64_t limit);

// Invariants for `tesoro verify`: paid_amount between 0 and total_maximum_amount and equal to
// the sum of the collection's incoming transfers; the state agrees with paid_amount. One
// message per violation.
std::vector<std::string> verify(store::Tx& tx);

}  // namespace tesoro::collections
