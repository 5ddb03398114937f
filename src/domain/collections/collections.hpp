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
#include <optional>
#include <string>
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

// The newest active key of a collection (the QR default), nullopt when it has none.
std::optional<Key> default_key(const Collection& collection);

// 404 collection_not_found when absent or another tenant's.
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

// A successful payment of `amount` to a collection locked by lock_collection (the caller has
// checked payable(), the attempt amount bounds and remaining()): raises paid_amount and
// successful_attempts, moves the state (minimum_paid, paid) with its events, sets the keys
// inactive when it becomes paid, and updates `collection` in place. 422 balance_overflow on
// overflow (a bug of the caller: it checked remaining()).
Status record_payment(store::Tx& tx, const std::string& tenant_id, Collection& collection,
                      std::int64_t amount, time::Micros now);

// The collection as the API and its events show it: the fields it was created with (the four
// limits and paid_amount as Money), id, state, state_reason, enabled, keys, timestamps.
boost::json::object to_json(const Collection& collection);

}  // namespace tesoro::collections
