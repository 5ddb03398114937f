#pragma once
// JSON shapes of ledger accounts shared by the core and participant surfaces.
#include <string>
#include <vector>

#include "api/context.hpp"
#include "api/json.hpp"
#include "api/validation/readers.hpp"
#include "domain/ledger/accounts.hpp"
#include "domain/ledger/statements.hpp"

namespace tesoro::api {

// Account of the core API (id, name, number, provider, state, type, balance, timestamps), as
// JSON text.
std::string account_text(const ledger::Account& account);
// Tenant account of the participant API, as JSON text.
std::string tenant_account_text(const ledger::Account& account);

// Sandbox funding of the account named by the path's {id} on either surface: validates the id
// and the body (`amount`, optional `description`) together, credits it from external funding,
// answers 201 with the account encoded by `encode`.
http::Response fund_account_response(Context& context, std::string_view prefix,
                                     std::string_view what, ledger::Surface surface,
                                     std::string (*encode)(const ledger::Account&));

// One posting of a statement, as JSON text: id, amount (positive), direction (credit raises the
// balance, debit lowers it), balance_after, description, reference {type, id},
// journal_entry_id, created_at.
std::string statement_entry_text(const ledger::StatementEntry& entry);

// GET .../accounts/{id}/entries on either surface: the path's id (with `prefix`), page_number,
// page_size, created_at[gte] and created_at[lte]; the account's postings newest first, as
// {"entries": [...], "pagination": {...}}, or as CSV when the request's Accept prefers text/csv.
http::Response entries_response(Context& context, std::string_view prefix, std::string_view what,
                                ledger::Surface surface);

}  // namespace tesoro::api
