#pragma once
// The journal: every movement of money is one entry of postings that sum to zero per currency,
// written in one transaction with the balance updates and the events. Customer accounts may not
// go below zero (422 insufficient_funds); system accounts (external funding, network
// settlement, card network) may.
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "core/time.hpp"
#include "store/store.hpp"

namespace tesoro::ledger {

struct Posting {
  std::string account_id;
  std::int64_t amount_minor = 0;  // positive: credit (balance grows); negative: debit
  std::string currency;
};

struct EntryResult {
  std::string entry_id;
  std::vector<std::int64_t> balances_after;  // one per posting, in order
};

// Outcomes in precedence order: unbalanced (a bug in the caller: 500), unknown account (404
// item_not_found), currency_mismatch (422), balance_overflow (422), insufficient_funds (422).
Result<EntryResult> post_entry(store::Tx& tx, const std::string& tenant_id,
                               const std::string& kind, const std::string& description,
                               const std::vector<Posting>& postings, time::Micros now);

enum class SystemRole { external_funding, network_settlement, card_network };
const char* to_string(SystemRole role);
// The tenant's system account for a role and currency, created on first use.
std::string system_account(store::Tx& tx, const std::string& tenant_id, SystemRole role,
                           const std::string& currency, time::Micros now);

// Every ledger invariant, checked from the postings up. Empty when all hold.
std::vector<std::string> verify(store::Tx& tx);

}  // namespace tesoro::ledger
