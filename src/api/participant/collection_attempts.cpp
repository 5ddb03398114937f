// POST /api/v1/sandbox/collections/attempts (a simulated payment, 202), GET
// /api/v1/collections/attempts, GET /api/v1/collections/{collection_id}/attempts and GET
// /api/v1/collections/{collection_id}/attempts/{id}.
#include "api/context.hpp"
#include "api/lists.hpp"
#include "api/validation/fields.hpp"
#include "api/validation/readers.hpp"
#include "core/json_writer.hpp"
#include "core/limits.hpp"
#include "domain/collections/attempts.hpp"
#include "domain/collections/collections.hpp"

namespace tesoro::api {
namespace {

collections::Payer read_payer(ObjectReader& parent, Problems& problems) {
  const json::object* object = parent.object("payer", Need::optional);
  if (!object) return collections::random_payer();
  ObjectReader reader(*object, parent.path("payer"), problems);
  collections::Payer payer;
  payer.name = required_text(reader, "name", limits::k_name_max_chars, problems);
  payer.document_type = required_document_type(reader, "document_type");
  payer.document_number = required_document_number(reader, "document_number", problems);
  reader.reject_unknown();
  return payer;
}

Result<collections::AttemptRequest> decode(std::string_view body,
                                           const std::vector<std::string>& currencies,
                                           Problems& problems) {
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  ObjectReader reader(parsed.value(), "", problems);
  collections::AttemptRequest request;
  auto amount = read_money(reader, "amount", Need::required, currencies, problems);
  if (amount) {
    request.amount_minor = amount->amount_minor;
    request.currency = amount->currency;
  }
  request.key_type = reader.one_of("creditor_key_type", Need::optional, collections::key_types())
                         .value_or("alphanumeric");
  request.key_value = reader.string("creditor_key_value", Need::required).value_or("");
  request.error = reader.one_of("error", Need::optional, collections::sandbox_errors());
  request.payer = read_payer(reader, problems);
  request.payment_id =
      reader.string("payment_id", Need::optional, limits::k_payment_id_max_chars);
  if (request.payment_id && request.payment_id->empty()) {
    problems.invalid("payment_id", "must not be empty (leave it out to name no QR code)");
  }
  reader.reject_unknown();
  if (!problems.empty()) return problems.to_error();
  return request;
}

std::string result_text(const collections::Attempt& attempt) {
  json_text::Writer out(256);
  out.begin_object().key("attempt_id").string(attempt.id);
  out.key("attempt_state").string(attempt.state).key("attempt_state_reason");
  if (attempt.state_reason) {
    out.string(*attempt.state_reason);
  } else {
    out.null();
  }
  out.key("collection_id").string(attempt.collection_id).key("transfer_id");
  if (attempt.transfer_id) {
    out.string(*attempt.transfer_id);
  } else {
    out.null();
  }
  out.end_object();
  return out.take();
}

http::Response simulate(Context& context) {
  Problems problems;
  auto request = decode(context.request.body, context.services.settings.currencies, problems);
  if (!request) return context.error(request.error());
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto attempt =
        collections::simulate_attempt(tx, context.tenant_id(), request.value(), context.now());
    if (!attempt) return std::move(attempt).error();
    return json_text_response(202, result_text(attempt.value()));
  });
}

// A page of attempts, newest first, filtered by state; of one collection when `collection_id`
// is set (404 collection_not_found for a collection the tenant does not have).
http::Response list_of(Context& context, std::optional<std::string> collection_id,
                       Problems& problems) {
  QueryReader query(context.query, problems);
  Page page = read_page(query);
  collections::AttemptFilter filter;
  filter.collection_id = std::move(collection_id);
  filter.state = query.one_of("state", collections::attempt_states());
  query.reject_unknown();
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    if (filter.collection_id) {
      auto collection = collections::get_collection(tx, context.tenant_id(), *filter.collection_id);
      if (!collection) return std::move(collection).error();
    }
    auto found = collections::list_attempts(tx, context.tenant_id(), filter, page.offset(),
                                            page.size);
    if (!found) return std::move(found).error();
    return paginated_text("attempts", page, found.value(), collections::attempt_text);
  });
}

http::Response list_all(Context& context) {
  Problems problems;
  return list_of(context, std::nullopt, problems);
}

http::Response list_of_collection(Context& context) {
  Problems problems;
  std::string collection_id = check_path_id(context.param("collection_id"), "bbcol",
                                            "a collection", problems, "collection_id");
  return list_of(context, std::move(collection_id), problems);
}

http::Response show(Context& context) {
  Problems problems;
  std::string collection_id = check_path_id(context.param("collection_id"), "bbcol",
                                            "a collection", problems, "collection_id");
  std::string id =
      check_path_id(context.param("id"), "bbcolat", "a collection attempt", problems);
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto collection = collections::get_collection(tx, context.tenant_id(), collection_id);
    if (!collection) return std::move(collection).error();
    auto attempt = collections::get_attempt(tx, context.tenant_id(), id);
    if (!attempt) return std::move(attempt).error();
    // Under another collection it is not found either: the path names both.
    if (attempt->collection_id != collection_id) {
      return errors::item_not_found("collection attempt");
    }
    return json_text_response(200, collections::attempt_text(attempt.value()));
  });
}

}  // namespace

void add_collection_attempt_routes(Routes& routes) {
  routes.push_back({"POST", "/api/v1/sandbox/collections/attempts", AuthKind::participant,
                    "collections", simulate, true});
  routes.push_back({"GET", "/api/v1/collections/attempts", AuthKind::participant,
                    "collections:readonly", list_all});
  routes.push_back({"GET", "/api/v1/collections/{collection_id}/attempts", AuthKind::participant,
                    "collections:readonly", list_of_collection});
  routes.push_back({"GET", "/api/v1/collections/{collection_id}/attempts/{id}",
                    AuthKind::participant, "collections:readonly", show});
}

}  // namespace tesoro::api
