#pragma once
// Ledger accounts: the core API's accounts (acc_), the participant API's tenant accounts
// (bbtacc_) and the hidden per-tenant system accounts, all in one table and one journal.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "core/time.hpp"
#include "domain/ledger/account_holders.hpp"
#include "store/store.hpp"

namespace tesoro::ledger {

// card: a card's prepaid balance (never listed as an account; shown on its card).
enum class Surface { core, participant, card };

struct Beneficiary {
  std::string document_number;
  std::string document_type;
  std::string full_name;
  std::string type;
};

struct Account {
  std::string id;
  Surface surface = Surface::core;
  std::string name;
  std::string number;
  std::string type;
  std::string currency;
  std::string state;
  std::optional<std::string> account_holder_id;
  std::optional<std::string> role;              // tenant accounts
  std::optional<Beneficiary> beneficiary;       // tenant accounts
  std::int64_t balance_minor = 0;
  std::int64_t held_minor = 0;  // what pending card authorizations hold of the balance
  std::string balance_updated_at;
  std::string inserted_at;
  std::string updated_at;
};

struct NewAccount {
  std::string name;
  std::string type;
  std::string currency;
  std::optional<std::string> account_holder_id;
};

struct NewTenantAccount {
  std::string type;
  std::string role;
  std::string currency;
  Beneficiary beneficiary;
};

struct TenantAccountFilter {
  std::optional<std::string> type;
  std::optional<std::string> number;
  std::optional<std::string> role;  // "all" means no filter
  std::optional<std::string> state;
};

// item_not_found when account_holder_id names no holder of this tenant.
Result<Account> open_account(store::Tx& tx, const std::string& tenant_id, const NewAccount& input,
                             time::Micros now);
Result<Account> open_tenant_account(store::Tx& tx, const std::string& tenant_id,
                                    const NewTenantAccount& input, time::Micros now);
// A card's prepaid account, in the card's currency.
Result<Account> open_card_account(store::Tx& tx, const std::string& tenant_id,
                                  const std::string& card_id, const std::string& currency,
                                  time::Micros now);
// item_not_found, or tenant_account_not_found on the participant surface, when absent.
Result<Account> get_account(store::Tx& tx, const std::string& tenant_id, const std::string& id,
                            Surface surface);
// An account of the core surface or a card's prepaid balance (what GET /v1/accounts/{id}
// answers), in one statement; item_not_found when neither.
Result<Account> get_core_or_card_account(store::Tx& tx, const std::string& tenant_id,
                                         const std::string& id);
// The tenant's accounts of `surface` with these ids, by id: those it has (a batch paying many
// collections reads their accounts in a few statements instead of one each).
std::map<std::string, Account> get_accounts(store::Tx& tx, const std::string& tenant_id,
                                            const std::vector<std::string>& ids, Surface surface);
// The tenant's core accounts, or those of one account holder.
Result<PageOf<Account>> list_accounts(store::Tx& tx, const std::string& tenant_id,
                                      const std::optional<std::string>& account_holder_id,
                                      std::int64_t offset, std::int64_t limit);
Result<std::vector<Account>> list_tenant_accounts(store::Tx& tx, const std::string& tenant_id,
                                                  const TenantAccountFilter& filter);
// Sandbox: credits the account from the tenant's external funding account.
Result<Account> fund_account(store::Tx& tx, const std::string& tenant_id, const std::string& id,
                             Surface surface, std::int64_t amount_minor,
                             const std::string& currency, const std::string& description,
                             time::Micros now);

}  // namespace tesoro::ledger
