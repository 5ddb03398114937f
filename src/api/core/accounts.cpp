// POST /v1/ledger/accounts, GET /v1/accounts, GET /v1/accounts/{id},
// POST /v1/sandbox/accounts/{id}/fund.
#include "api/context.hpp"
#include "api/ledger_json.hpp"
#include "api/lists.hpp"
#include "api/validation/readers.hpp"
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
  auto name = reader.string("name", Need::required, 200);
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

http::Response list(Context& context) {
  return paginated_list(
      context, "accounts",
      [&](store::Tx& tx, const Page& page) {
        return ledger::list_accounts(tx, context.tenant_id(), page.offset(), page.size);
      },
      account_text, ListRead::one_statement);
}

http::Response show(Context& context) {
  Problems problems;
  std::string id = check_path_id(context.param("id"), "acc", "an account", problems);
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto account = ledger::get_account(tx, context.tenant_id(), id, ledger::Surface::core);
    if (!account) return std::move(account).error();
    return json_text_response(200, account_text(account.value()));
  });
}

http::Response fund(Context& context) {
  return fund_account_response(context, "acc", "an account", ledger::Surface::core, account_text);
}

}  // namespace

void add_account_routes(Routes& routes) {
  routes.push_back({"POST", "/v1/ledger/accounts", AuthKind::core, "ledger", create});
  routes.push_back({"GET", "/v1/accounts", AuthKind::core, "ledger", list});
  routes.push_back({"GET", "/v1/accounts/{id}", AuthKind::core, "ledger", show});
  routes.push_back({"POST", "/v1/sandbox/accounts/{id}/fund", AuthKind::core, "ledger", fund, true});
}

}  // namespace tesoro::api
