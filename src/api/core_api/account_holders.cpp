// POST /v1/ledger/account_holders, GET /v1/ledger/account_holders[/{id}].
#include "api/context.hpp"
#include "api/lists.hpp"
#include "api/validation/fields.hpp"
#include "core/limits.hpp"
#include "domain/ledger/account_holders.hpp"

namespace tesoro::api {
namespace {

json::object account_holder_json(const ledger::AccountHolder& holder) {
  const auto& f = holder.fields;
  return json::object{{"id", holder.id},
                      {"address", address_json(f.address)},
                      {"email", optional_json(f.email)},
                      {"external_id", optional_json(f.external_id)},
                      {"metadata", metadata_json(f.metadata)},
                      {"person", person_json(f.person)},
                      {"phone_number", optional_json(f.phone_number)},
                      {"state", holder.state},
                      {"state_reason", optional_json(holder.state_reason)},
                      {"state_reason_detail", optional_json(holder.state_reason_detail)},
                      {"type", holder.type},
                      {"inserted_at", holder.inserted_at},
                      {"updated_at", holder.updated_at}};
}

Result<ledger::NewAccountHolder> decode_new_account_holder(std::string_view body) {
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  Problems problems;
  ObjectReader reader(parsed.value(), "", problems);
  ledger::NewAccountHolder input;
  if (auto address = read_address(reader, "address", Need::required, problems)) {
    input.address = std::move(*address);
  }
  if (auto person = read_person(reader, "person", Need::required, problems)) {
    input.person = std::move(*person);
  }
  // A required key whose value may be null (the contract: "string or null, required key").
  if (!reader.present("external_id")) problems.missing(reader.path("external_id"));
  auto external_id = reader.patch_string("external_id", limits::k_external_id_max_chars);
  if (external_id.has_value() && external_id.value().empty()) {
    problems.invalid(reader.path("external_id"), "must not be empty (send null for none)");
  } else if (external_id.has_value()) {
    input.external_id = external_id.value();
  }
  input.email = read_email(reader, "email", Need::optional, problems);
  input.phone_number = read_phone_number(reader, "phone_number", Need::optional, problems);
  input.metadata = read_metadata(reader, "metadata", problems);
  reader.reject_unknown();
  if (!problems.empty()) return problems.to_error();
  return input;
}

http::Response create(Context& context) {
  auto input = decode_new_account_holder(context.request.body);
  if (!input) return context.error(input.error());
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto holder = ledger::create_account_holder(tx, context.tenant_id(), input.value(),
                                                context.now());
    if (!holder) return std::move(holder).error();
    return json_response(201, account_holder_json(holder.value()));
  });
}

http::Response show(Context& context) {
  Problems problems;
  std::string id = check_path_id(context.param("id"), "acch", "an account holder", problems);
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto holder = ledger::get_account_holder(tx, context.tenant_id(), id);
    if (!holder) return std::move(holder).error();
    return json_response(200, account_holder_json(holder.value()));
  });
}

http::Response list(Context& context) {
  return paginated_list(
      context, "account_holders",
      [&](store::Tx& tx, const Page& page) {
        return ledger::list_account_holders(tx, context.tenant_id(), page.offset(), page.size);
      },
      account_holder_json, ListRead::one_statement);
}

}  // namespace

void add_account_holder_routes(Routes& routes) {
  routes.push_back({"POST", "/v1/ledger/account_holders", AuthKind::core, "ledger", create});
  routes.push_back({"GET", "/v1/ledger/account_holders", AuthKind::core, "ledger", list});
  routes.push_back({"GET", "/v1/ledger/account_holders/{id}", AuthKind::core, "ledger", show});
}

}  // namespace tesoro::api
