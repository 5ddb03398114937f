// POST /v1/core/payouts, GET /v1/core/payouts/{id},
// GET /v1/core/payouts/find_successful_by?external_id=.
#include "api/context.hpp"
#include "api/validation/fields.hpp"
#include "api/validation/readers.hpp"
#include "core/limits.hpp"
#include "domain/collections/collections.hpp"
#include "domain/payouts/payouts.hpp"
#include "domain/transfers/outgoing_transfers.hpp"

namespace tesoro::api {
namespace {


const std::vector<std::string> k_methods = {std::string(payouts::k_method_breb)};

// target: {key_type, key_value}, the value valid for its type.
void read_target(ObjectReader& reader, payouts::NewPayout& input, Problems& problems) {
  const json::object* target = reader.object("target", Need::required);
  if (!target) return;
  ObjectReader fields(*target, reader.path("target"), problems);
  auto type = fields.one_of("key_type", Need::required, collections::key_types());
  auto value = fields.string("key_value", Need::required, limits::k_key_value_max_chars);
  fields.reject_unknown();
  if (!type || !value) return;
  auto normalized = collections::normalize_key(*type, *value);
  if (!normalized) {
    problems.invalid(fields.path("key_value"), normalized.error().errors.front().message);
    return;
  }
  input.key_type = *type;
  input.key_value = std::move(normalized).value();
}

Result<payouts::NewPayout> decode(std::string_view body, const Settings& settings) {
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  Problems problems;
  ObjectReader reader(parsed.value(), "", problems);
  payouts::NewPayout input;
  input.account_id = reader.id("account_id", Need::required, "acc").value_or("");
  input.external_id =
      required_text(reader, "external_id", limits::k_external_id_max_chars, problems);
  input.method = reader.one_of("method", Need::required, k_methods).value_or("");
  if (auto amount = read_money(reader, "amount", Need::required, settings.currencies, problems)) {
    input.amount_minor = amount->amount_minor;
    input.currency = amount->currency;
  }
  read_target(reader, input, problems);
  input.description = reader.string("description", Need::optional);
  input.metadata = read_metadata(reader, "metadata", problems).value_or(ledger::Metadata{});
  reader.reject_unknown();
  if (!problems.empty()) return problems.to_error();
  input.max_amount_minor = settings.transfer_max_amount_minor;
  return input;
}

// The payout with its network leg, as the API shows it.
Result<std::string> payout_text(store::Tx& tx, const std::string& tenant_id,
                                const payouts::Payout& payout) {
  auto leg = transfers::get_any_transfer(tx, tenant_id, payout.transfer_id);
  if (!leg) return std::move(leg).error();
  return payouts::payout_text(payout, leg.value());
}

http::Response create(Context& context) {
  auto input = decode(context.request.body, context.services.settings);
  if (!input) return context.error(input.error());
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto outcome = payouts::create_payout(tx, context.tenant_id(), input.value(), context.now());
    if (!outcome) return std::move(outcome).error();
    auto text = payout_text(tx, context.tenant_id(), outcome->payout);
    if (!text) return std::move(text).error();
    // An external_id the tenant already used: the existing payout, nothing created.
    return json_text_response(outcome->created ? 201 : 200, std::move(text).value());
  });
}

http::Response show(Context& context) {
  Problems problems;
  std::string id = check_path_id(context.param("id"), "cpout", "a payout", problems);
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto payout = payouts::get_payout(tx, context.tenant_id(), id);
    if (!payout) return std::move(payout).error();
    auto text = payout_text(tx, context.tenant_id(), payout.value());
    if (!text) return std::move(text).error();
    return json_text_response(200, std::move(text).value());
  });
}

http::Response find_successful(Context& context) {
  Problems problems;
  QueryReader query(context.query, problems);
  auto external_id = query.string("external_id");
  if (!external_id && problems.empty()) problems.missing("external_id");
  query.reject_unknown();
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto payout = payouts::find_successful_by(tx, context.tenant_id(), *external_id);
    if (!payout) return std::move(payout).error();
    auto text = payout_text(tx, context.tenant_id(), payout.value());
    if (!text) return std::move(text).error();
    return json_text_response(200, std::move(text).value());
  });
}

}  // namespace

void add_payout_routes(Routes& routes) {
  routes.push_back({"POST", "/v1/core/payouts", AuthKind::core, "payouts", create});
  routes.push_back({"GET", "/v1/core/payouts/find_successful_by", AuthKind::core, "payouts",
                    find_successful});
  routes.push_back({"GET", "/v1/core/payouts/{id}", AuthKind::core, "payouts", show});
}

}  // namespace tesoro::api
