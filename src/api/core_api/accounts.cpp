// POST /v1/ledger/accounts, GET /v1/accounts, GET /v1/accounts/{id} (with as_of),
// GET /v1/accounts/{id}/entries, POST /v1/sandbox/accounts/{id}/fund.
#include "api/context.hpp"
#include "api/ledger_json.hpp"
#include "api/lists.hpp"
#include "api/validation/readers.hpp"
#include "core/limits.hpp"
#include "domain/ledger/accounts.hpp"

namespace tesoro::api {
namespace {

const std::vector<std::string> k_account_types = {"savings_account", "checking_account"};

Result<ledger::NewAccount> decode_new_account(std::string_view body,
                                              const std::vector<std::string>& currencies) {
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  Problems problems;
  ObjectReader reader(parsed.value(), "", problems);
  ledger::NewAccount input;
  auto name = reader.string("name", Need::required, limits::k_account_name_max_chars);
  if (name && name->empty()) problems.invalid("name", "must not be empty");
  input.name = name.value_or("");
  input.type = reader.one_of("type", Need::required, k_account_types).value_or("");
  input.currency = reader.one_of("currency", Need::required, currencies).value_or("");
  input.account_holder_id = reader.id("account_holder_id", Need::optional, "acch");
  reader.reject_unknown();
  if (!problems.empty()) return problems.to_error();
  return input;
}

http::Response create(Context& context) {
  auto input = decode_new_account(context.request.body, context.services.settings.currencies);
  if (!input) return context.error(input.error());
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto account = ledger::open_account(tx, context.tenant_id(), input.value(), context.now());
    if (!account) return std::move(account).error();
    return json_text_response(201, account_text(account.value()));
  });
}

// ?account_holder_id=acch_...: the accounts of one holder (an unknown holder has none).
http::Response list(Context& context) {
  Problems problems;
  QueryReader query(context.query, problems);
  Page page = read_page(query);
  std::optional<std::string> holder = query.string("account_holder_id");
  if (holder) check_path_id(*holder, "acch", "an account holder", problems, "account_holder_id");
  query.reject_unknown();
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read_single([&](store::Tx& tx) -> Result<http::Response> {
    auto found = ledger::list_accounts(tx, context.tenant_id(), holder, page.offset(), page.size);
    if (!found) return std::move(found).error();
    return paginated_text("accounts", page, found.value(), account_text);
  });
}

// ?as_of=<instant>: the account with its balance as it stood then (tenant clock; not after now).
// A card's prepaid balance is an account too (its id is the card's prepaid_account_id).
http::Response show(Context& context) {
  Problems problems;
  std::string id = check_path_id(context.param("id"), "acc", "an account", problems);
  QueryReader query(context.query, problems);
  std::optional<time::Micros> as_of = query.timestamp("as_of");
  const time::Micros now = context.now();
  if (as_of && *as_of > now) {
    problems.invalid("as_of", "must not be after the tenant's clock (" + time::iso(now) + ")");
  }
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto account = ledger::get_core_or_card_account(tx, context.tenant_id(), id);
    if (!account) return std::move(account).error();
    if (as_of) return json_text_response(200, account_text(ledger::as_of(
                                                  std::move(account).value(), tx,
                                                  context.tenant_id(), *as_of)));
    return json_text_response(200, account_text(account.value()));
  });
}

http::Response entries(Context& context) {
  return entries_response(context, "acc", "an account", ledger::Surface::core);
}

http::Response fund(Context& context) {
  return fund_account_response(context, "acc", "an account", ledger::Surface::core, account_text);
}

}  // namespace

void add_account_routes(Routes& routes) {
  routes.push_back({"POST", "/v1/ledger/accounts", AuthKind::core, "ledger", create});
  routes.push_back({"GET", "/v1/accounts", AuthKind::core, "ledger", list});
  routes.push_back({"GET", "/v1/accounts/{id}", AuthKind::core, "ledger", show});
  routes.push_back({"GET", "/v1/accounts/{id}/entries", AuthKind::core, "ledger", entries});
  routes.push_back({"POST", "/v1/sandbox/accounts/{id}/fund", AuthKind::core, "ledger", fund, true});
}

}  // namespace tesoro::api
