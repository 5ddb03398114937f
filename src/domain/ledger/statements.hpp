#pragma once
// Account statements: the postings of one customer or tenant account, newest first, each with
// the balance it left, and the account's balance as of an instant. Every posting to such an
// account stores its running balance and its place in the account's history (the journal writes
// them under the account's lock), and an account's postings are dated in the order they were
// applied, so one index by account and instant serves all three reads, at a cost that does not
// grow with the account's history (a page past the first costs its offset, as every list's does).
#include <cstdint>
#include <optional>
#include <string>

#include "core/page.hpp"
#include "core/result.hpp"
#include "core/time.hpp"
#include "domain/ledger/accounts.hpp"
#include "store/store.hpp"

namespace tesoro::ledger {

struct StatementEntry {
  std::string id;  // pst_: the entry's id and the posting's place in it
  std::int64_t amount_minor = 0;  // positive: credit (the balance grew); negative: debit
  std::string currency;
  std::int64_t balance_after_minor = 0;
  std::string description;
  std::string reference_type;
  std::string reference_id;
  std::string journal_entry_id;
  std::string created_at;
};

struct StatementFilter {
  std::optional<time::Micros> created_from;  // created_at[gte]
  std::optional<time::Micros> created_to;    // created_at[lte]
};

// The account's postings that match, newest first: one statement (a page with no rows takes a few
// more, each its own snapshot on PostgreSQL, as store::query_page's count does). `surface` core
// also finds a card's prepaid balance (whose postings are the card's captures, refunds and balance
// operations); item_not_found as get_account when the tenant has no such account.
Result<PageOf<StatementEntry>> list_entries(store::Tx& tx, const std::string& tenant_id,
                                            const std::string& account_id, Surface surface,
                                            const StatementFilter& filter, std::int64_t offset,
                                            std::int64_t limit);

// The account as it stood at `as_of`: its balance then (the running balance of its last posting
// at or before that instant, 0 before the first), dated by that posting. Holds are not postings:
// nothing was held then, as far as the ledger's history says (held 0, available the balance).
Account as_of(Account account, store::Tx& tx, const std::string& tenant_id, time::Micros as_of);

}  // namespace tesoro::ledger
