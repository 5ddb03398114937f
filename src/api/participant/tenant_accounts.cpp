// GET /api/v1/tenant/accounts (a bare array), GET /api/v1/tenant/accounts/{id}/entries,
// POST /api/v1/sandbox/tenant/accounts/{id}/fund.
#include "api/context.hpp"
#include "api/ledger_json.hpp"
#include "api/validation/readers.hpp"
#include "domain/ledger/accounts.hpp"

namespace tesoro::api {
namespace {

const std::vector<std::string> k_types = {"savings_account", "checking_account",
                                          "low_amount_deposit", "inclusive_amount_deposit",
                                          "regular_deposit"};

http::Response list(Context& context) {
  Problems problems;
  QueryReader query(context.query, problems);
  ledger::TenantAccountFilter filter;
  filter.type = query.one_of("type", k_types);
  filter.number = query.string("number");
  filter.role = query.one_of("role", {"receptor", "originator", "all"});
  filter.state = query.one_of("state", {"active", "inactive"});
  query.reject_unknown();
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto accounts = ledger::list_tenant_accounts(tx, context.tenant_id(), filter);
    if (!accounts) return std::move(accounts).error();
    json_text::Writer out(512 * (accounts->size() + 1));
    out.begin_array();
    for (const auto& account : accounts.value()) out.raw(tenant_account_text(account));
    out.end_array();
    return json_text_response(200, out.take());
  });
}

http::Response entries(Context& context) {
  return entries_response(context, "bbtacc", "a tenant account", ledger::Surface::participant);
}

http::Response fund(Context& context) {
  return fund_account_response(context, "bbtacc", "a tenant account", ledger::Surface::participant,
                               tenant_account_text);
}

}  // namespace

void add_tenant_account_routes(Routes& routes) {
  routes.push_back({"GET", "/api/v1/tenant/accounts", AuthKind::participant,
                    "tenant_accounts:readonly", list});
  routes.push_back({"GET", "/api/v1/tenant/accounts/{id}/entries", AuthKind::participant,
                    "tenant_accounts:readonly", entries});
  // Funding writes to tenant accounts: the full tenant_accounts scope (its :readonly form
  // allows only the GETs).
  routes.push_back({"POST", "/api/v1/sandbox/tenant/accounts/{id}/fund", AuthKind::participant,
                    "tenant_accounts", fund, true});
}

}  // namespace tesoro::api
