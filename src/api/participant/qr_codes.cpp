// POST /api/v1/collections/{collection_id}/qr: a QR code of a collection, with its PNG; GET:
// the collection's codes, newest first, without images.
#include "api/context.hpp"
#include "api/lists.hpp"
#include "api/validation/readers.hpp"
#include "core/ids.hpp"
#include "domain/collections/collections.hpp"
#include "domain/collections/qr_codes.hpp"

namespace tesoro::api {
namespace {

const std::vector<std::string> k_usage_modes = {"single_use", "multiple_use"};
const std::vector<std::string> k_levels = {"low", "medium", "quarter", "high"};

// Present with a value other than null.
bool given(ObjectReader& reader, std::string_view key) {
  return reader.present(key) && !reader.is_null(key);
}

// key_type and key_value come together (rule 4); a value must be a valid key of its type.
void read_key(ObjectReader& reader, collections::QrRequest& request, Problems& problems) {
  request.key_type = reader.one_of("key_type", Need::optional, collections::key_types());
  auto value = reader.string("key_value", Need::optional);
  const bool type_given = given(reader, "key_type");
  const bool value_given = given(reader, "key_value");
  if (type_given != value_given) problems.missing(type_given ? "key_value" : "key_type");
  if (!request.key_type || !value) return;
  auto normalized = collections::normalize_key(*request.key_type, *value);
  if (!normalized) {
    const Error& error = normalized.error();
    problems.invalid("key_value", error.errors.empty() ? std::string("is not a valid key")
                                                       : error.errors.front().message);
    return;
  }
  request.key_value = std::move(normalized).value();
}

Result<collections::QrRequest> decode(std::string_view body,
                                      const std::vector<std::string>& currencies,
                                      Problems& problems) {
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  ObjectReader reader(parsed.value(), "", problems);
  collections::QrRequest request;
  request.usage_mode = reader.one_of("usage_mode", Need::required, k_usage_modes).value_or("");
  auto amount = read_money(reader, "amount", Need::optional, currencies, problems);
  if (amount) {
    request.amount_minor = amount->amount_minor;
    request.currency = amount->currency;
  }
  request.error_correction_level =
      reader.one_of("error_correction_level", Need::optional, k_levels).value_or("medium");
  request.expiration_seconds = reader.integer("expiration_seconds", Need::optional, 1,
                                              limits::k_qr_expiration_max_seconds);
  request.image_width = reader
                            .integer("image_width", Need::optional, limits::k_qr_image_width_min,
                                     limits::k_qr_image_width_max)
                            .value_or(limits::k_qr_image_width_default);
  read_key(reader, request, problems);
  // Rules 1 and 2: a dynamic code has an amount and expires; a static one never expires.
  if (request.usage_mode == "single_use") {
    if (!given(reader, "amount")) problems.missing("amount");
    if (!given(reader, "expiration_seconds")) problems.missing("expiration_seconds");
  } else if (request.usage_mode == "multiple_use" && given(reader, "expiration_seconds")) {
    problems.invalid("expiration_seconds",
                     "is not allowed for multiple_use: a static QR code does not expire");
  }
  reader.reject_unknown();
  if (!problems.empty()) return problems.to_error();
  return request;
}

http::Response create(Context& context) {
  Problems problems;
  std::string collection_id = check_path_id(context.param("collection_id"), "bbcol",
                                            "a collection", problems, "collection_id");
  auto request = decode(context.request.body, context.services.settings.currencies, problems);
  if (!request) return context.error(request.error());
  const std::string transaction_id = ids::network_transaction_id();
  // The image outside the write unit (collections/qr_codes.hpp). With an idempotency key the
  // response is recorded in the unit: plan in a read and draw the image before it. A plan that
  // fails here is left to the write unit, which answers (and records) the error.
  std::optional<collections::PrebuiltImage> prebuilt;
  if (context.idempotency) {
    auto plan = context.services.store.read<collections::QrPlan>([&](store::Tx& tx) {
      return collections::plan_qr(tx, context.tenant_id(), collection_id, request.value(),
                                  transaction_id, /*lock=*/false, context.now());
    });
    if (plan) {
      auto image = collections::render_image(plan->emvco, request->error_correction_level,
                                             request->image_width);
      if (image) prebuilt = collections::PrebuiltImage{plan->emvco, std::move(image).value()};
    }
  }
  return context.write_then<collections::QrCode>(
      [&](store::Tx& tx) {
        return collections::create_qr(tx, context.tenant_id(), collection_id, request.value(),
                                      transaction_id, context.now());
      },
      [&](collections::QrCode& qr) -> Result<http::Response> {
        auto image = collections::image_of(qr, prebuilt ? &*prebuilt : nullptr);
        if (!image) return std::move(image).error();
        qr.image = std::move(image).value();
        return json_text_response(201, collections::qr_code_text(qr));
      });
}

http::Response list(Context& context) {
  Problems problems;
  std::string collection_id = check_path_id(context.param("collection_id"), "bbcol",
                                            "a collection", problems, "collection_id");
  QueryReader query(context.query, problems);
  Page page = read_page(query);
  query.reject_unknown();
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto collection = collections::get_collection(tx, context.tenant_id(), collection_id);
    if (!collection) return std::move(collection).error();
    return paginated_text("qr_codes", page,
                          collections::list_qr_codes(tx, context.tenant_id(), collection_id,
                                                     page.offset(), page.size),
                          collections::qr_code_text);
  });
}

}  // namespace

void add_qr_code_routes(Routes& routes) {
  routes.push_back({"POST", "/api/v1/collections/{collection_id}/qr", AuthKind::participant,
                    "collections", create});
  routes.push_back({"GET", "/api/v1/collections/{collection_id}/qr", AuthKind::participant,
                    "collections:readonly", list});
}

}  // namespace tesoro::api
