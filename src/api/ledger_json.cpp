#include "api/ledger_json.hpp"

namespace tesoro::api {
namespace {

// Account JSON is written as text: a page of ten accounts built as Boost.JSON values cost about
// two thirds of the instructions of GET /v1/accounts (callgrind, docs/scaling.md).
// available: what may be spent now (the balance less what is held by moving outgoing transfers
// and payouts); held: what they hold; current: the balance itself (available + held).
void balance_text(json_text::Writer& out, const ledger::Account& account) {
  out.begin_object().key("available");
  money_text(out, account.balance_minor - account.held_minor, account.currency);
  out.key("held");
  money_text(out, account.held_minor, account.currency);
  out.key("current");
  money_text(out, account.balance_minor, account.currency);
  out.key("updated_at").string(account.balance_updated_at).end_object();
}

}  // namespace

std::string account_text(const ledger::Account& account) {
  json_text::Writer out(512);
  out.begin_object().key("id").string(account.id).key("name").string(account.name);
  out.key("number").string(account.number).key("provider").string("tesoro");
  out.key("state").string(account.state).key("type").string(account.type);
  out.key("currency").string(account.currency).key("account_holder_id");
  optional_text(out, account.account_holder_id);
  out.key("balance");
  balance_text(out, account);
  out.key("inserted_at").string(account.inserted_at);
  out.key("updated_at").string(account.updated_at).end_object();
  return out.take();
}

std::string tenant_account_text(const ledger::Account& account) {
  json_text::Writer out(512);
  out.begin_object().key("id").string(account.id).key("number").string(account.number);
  out.key("currency_code").string(account.currency).key("type").string(account.type);
  out.key("role");
  optional_text(out, account.role);
  out.key("state").string(account.state).key("beneficiary").begin_object();
  if (account.beneficiary) {
    out.key("document_number").string(account.beneficiary->document_number);
    out.key("document_type").string(account.beneficiary->document_type);
    out.key("full_name").string(account.beneficiary->full_name);
    out.key("type").string(account.beneficiary->type);
  }
  out.end_object().key("balance");
  balance_text(out, account);
  out.key("inserted_at").string(account.inserted_at);
  out.key("updated_at").string(account.updated_at).end_object();
  return out.take();
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
                                     std::string (*encode)(const ledger::Account&)) {
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
    return json_text_response(201, encode(account.value()));
  });
}

}  // namespace tesoro::api
