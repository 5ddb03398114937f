#pragma once
// The journal: every movement of money is one entry of postings that sum to zero per currency,
// written in one transaction with the balance updates and the events. Customer and tenant
// accounts may not go below zero (insufficient_funds); system accounts (external funding,
// network settlement, card network) may.
//
// Locking. A write unit may post many entries (a batch of 1000 transfers, a hold and its fee).
// It first locks every customer and tenant account it will touch, once, in one global order
// ((tenant_id, id)), and only then posts: two units lock their common accounts in the same
// order, so they queue instead of deadlocking. State and balance are read under the lock.
// System accounts are never locked nor rewritten: they keep no stored balance (theirs is the sum
// of their postings, which `tesoro verify` checks), so concurrent fundings and transfers of one
// tenant do not serialise on them; a posting to one only inserts its row.
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "core/time.hpp"
#include "store/store.hpp"

namespace tesoro::ledger {

struct AccountKey {
  std::string tenant_id;
  std::string id;
  auto operator<=>(const AccountKey&) const = default;
};

struct Posting {
  std::string account_id;
  std::int64_t amount_minor = 0;  // positive: credit (balance grows); negative: debit
  std::string currency;
};

// What caused an entry, for a reader of a statement to fetch: a card transaction, a card balance
// operation, an outgoing transfer, a payout, a collection attempt; a sandbox funding, which is
// no object of its own, is named by its entry (an empty id: the entry's).
struct Reference {
  std::string type;
  std::string id;
};

struct EntryResult {
  std::string entry_id;
  // One per posting, in order: the account's balance after it (0 for a system account, whose
  // balance is not stored).
  std::vector<std::int64_t> balances_after;
  // One per posting: its place in its account's history (1 for the first; 0 for a system
  // account's), and its instant when that is not the journal's now (an account's postings are
  // dated in the order they are applied: one never before the one before it).
  std::vector<std::int64_t> positions;
  std::vector<std::string> posted_at;
};

// The ledger work of one write unit.
class Journal {
 public:
  Journal(store::Tx& tx, time::Micros now) : tx_(tx), now_(now), at_(time::iso(now)) {}

  // Locks the customer and tenant accounts among `accounts` in the global order and loads them;
  // notes which are system accounts (not locked). item_not_found for an unknown account.
  // May be called again only with accounts that sort after every account already locked (the
  // global order would break otherwise: an internal error).
  Status lock(std::vector<AccountKey> accounts);

  // Posts one balanced entry of `tenant_id` against locked accounts. Outcomes in precedence
  // order: unbalanced, or an account not locked first (bugs in the caller: internal errors);
  // item_not_found; account_invalid_state (a debit from an account that is not active, a
  // credit to a closed one); currency_mismatch, balance_overflow, insufficient_funds.
  // Nothing is written when it fails.
  Result<EntryResult> post(const std::string& tenant_id, const std::string& kind,
                           const std::string& description, const std::vector<Posting>& postings,
                           const Reference& reference);

  // Many entries of one kind at once (the network processor's settlements): the checks of
  // post() for each, in order (each sees the ones before it), but the entries, postings and
  // events written a few hundred per statement and each account's balance once. All or nothing:
  // when one entry fails, nothing of any is written (its error is returned).
  struct NewEntry {
    std::string description;
    std::vector<Posting> postings;
    Reference reference;
  };
  Result<std::vector<EntryResult>> post_all(const std::string& tenant_id, const std::string& kind,
                                            const std::vector<NewEntry>& entries);

  // Holds (two-phase payments: card authorizations). A hold keeps part of a locked account's
  // balance from being spent without moving it: the account's available balance (balance - held)
  // drops, its balance does not; a debit may only take what is available. No posting is written:
  // the payment's own record says what it holds, and `tesoro verify` checks that they agree.
  // hold: account_invalid_state unless active; currency_mismatch, insufficient_funds.
  Status hold(const std::string& tenant_id, const std::string& account_id,
              std::int64_t amount_minor, const std::string& currency);
  // Gives back held money (a capture, a reversal, an expiry). More than is held is a bug: an
  // internal error.
  Status release(const std::string& tenant_id, const std::string& account_id,
                 std::int64_t amount_minor);
  // Balance, held amount, currency and state of a locked account (nullopt when it is not
  // locked): what a unit that checks many payments against one account before holding their
  // sum once (a batch of transfers) reads.
  struct Balance {
    std::int64_t balance = 0;
    std::int64_t held = 0;
    std::string currency;
    std::string state;
    std::int64_t available() const { return balance - held; }
  };
  std::optional<Balance> balance_of(const std::string& tenant_id,
                                    const std::string& account_id) const;

 private:
  struct Locked {
    std::string currency;
    std::string state;
    std::int64_t balance;
    std::int64_t held;
    std::int64_t postings_count;  // its last posting's position
    std::string last_posted_at;   // and its instant ("" before the first)
  };
  struct Checked;
  Result<Checked> check(const std::string& tenant_id, const std::vector<Posting>& postings);
  void store_held(const std::string& tenant_id, const std::string& account_id,
                  std::int64_t held);
  void write(const std::string& tenant_id, const std::string& kind,
             const std::vector<NewEntry>& entries, const std::vector<EntryResult>& results);
  void store_balance(const AccountKey& key);

  store::Tx& tx_;
  time::Micros now_;
  std::string at_;  // now_ as stored
  std::map<AccountKey, Locked> locked_;
  std::map<AccountKey, std::string> system_;  // system account -> its currency
};

// One entry on its own: locks its accounts, then posts it.
Result<EntryResult> post_entry(store::Tx& tx, const std::string& tenant_id,
                               const std::string& kind, const std::string& description,
                               const std::vector<Posting>& postings, const Reference& reference,
                               time::Micros now);

// currency_mismatch at amount.currency, naming the account's currency.
Error currency_mismatch(const std::string& account_currency);

enum class SystemRole { external_funding, network_settlement, card_network };
const char* to_string(SystemRole role);
// The tenant's system account for a role and currency, created on first use.
std::string system_account(store::Tx& tx, const std::string& tenant_id, SystemRole role,
                           const std::string& currency, time::Micros now);

// Every ledger invariant, checked from the postings up. Empty when all hold.
std::vector<std::string> verify(store::Tx& tx);

}  // namespace tesoro::ledger
