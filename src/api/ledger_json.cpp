#include "api/ledger_json.hpp"

namespace tesoro::api {
namespace {

// available: what may be spent now (the balance less what is held by moving outgoing transfers
// and payouts); held: what they hold; current: the balance itself (available + held).
json::object balance_json(const ledger::Account& account) {
  return json::object{
      {"available", money_json(account.balance_minor - account.held_minor, account.currency)},
      {"held", money_json(account.held_minor, account.currency)},
      {"current", money_json(account.balance_minor, account.currency)},
      {"updated_at", account.balance_updated_at}};
}

}  // namespace

json::object account_json(const ledger::Account& account) {
  return json::object{{"id", account.id},
                      {"name", account.name},
                      {"number", account.number},
                      {"provider", "tesoro"},
                      {"state", account.state},
                      {"type", account.type},
                      {"currency", account.currency},
                      {"account_holder_id", optional_json(account.account_holder_id)},
                      {"balance", balance_json(account)},
                      {"inserted_at", account.inserted_at},
                      {"updated_at", account.updated_at}};
}

json::object tenant_account_json(const ledger::Account& account) {
  json::object beneficiary;
  if (account.beneficiary) {
    beneficiary = {{"document_number", account.beneficiary->document_number},
                   {"document_type", account.beneficiary->document_type},
                   {"full_name", account.beneficiary->full_name},
                   {"type", account.beneficiary->type}};
  }
  return json::object{{"id", account.id},
                      {"number", account.number},
                      {"currency_code", account.currency},
                      {"type", account.type},
                      {"role", optional_json(account.role)},
                      {"state", account.state},
                      {"beneficiary", std::move(beneficiary)},
                      {"balance", balance_json(account)},
                      {"inserted_at", account.inserted_at},
                      {"updated_at", account.updated_at}};
}

namespace {

struct FundingRequest {
  Money amount;
  std::string description;
};

// `problems` may already hold problems of the path, so that one answer lists them all.
Result<FundingRequest> decode_funding(std::string_view body,
                                      const std::vector<std::string>& currencies,
                                      Problems& problems) {
  auto parsed = parse_object(body);
  if (!parsed) {
    problems.add(parsed.error());
    return problems.to_error();
  }
  ObjectReader reader(parsed.value(), "", problems);
  FundingRequest request;
  auto amount = read_money(reader, "amount", Need::required, currencies, problems);
  if (amount) request.amount = *amount;
  request.description = reader.string("description", Need::optional, 500).value_or("sandbox funding");
  reader.reject_unknown();
  if (!problems.empty()) return problems.to_error();
  return request;
}

}  // namespace

http::Response fund_account_response(Context& context, std::string_view prefix,
                                     std::string_view what, ledger::Surface surface,
                                     json::object (*encode)(const ledger::Account&)) {
  Problems problems;
  std::string id = check_path_id(context.param("id"), prefix, what, problems);
  auto request =
      decode_funding(context.request.body, context.services.settings.currencies, problems);
  if (!request) return context.error(request.error());
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto account = ledger::fund_account(tx, context.tenant_id(), id, surface,
                                        request->amount.amount_minor, request->amount.currency,
                                        request->description, context.now());
    if (!account) return std::move(account).error();
    return json_response(201, encode(account.value()));
  });
}

}  // namespace tesoro::api
