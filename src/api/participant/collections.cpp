// POST /api/v1/collections (a batch), GET /api/v1/collections, GET /api/v1/collections/{id},
// PATCH /api/v1/collections/{id}, DELETE /api/v1/collections/{id},
// GET /api/v1/collections/find_successful_by?external_id=.
#include "api/context.hpp"
#include "api/lists.hpp"
#include "api/participant/batch_decoders.hpp"
#include "api/validation/fields.hpp"
#include "api/validation/readers.hpp"
#include "core/limits.hpp"
#include "domain/collections/collections.hpp"

namespace tesoro::api {
namespace {


const std::vector<std::string> k_usage_modes = {"single_use", "multiple_use"};
// The four limits, in the order they are read and reported.
const char* const k_limit_fields[] = {"minimum_attempt_amount", "maximum_attempt_amount",
                                      "total_minimum_amount", "total_maximum_amount"};

std::optional<time::Micros> read_time(ObjectReader& reader, std::string_view key,
                                      Problems& problems) {
  auto text = reader.string(key, Need::optional, limits::k_date_time_field_max_chars);
  if (!text) return std::nullopt;
  auto at = time::parse_iso(*text);
  if (!at) problems.invalid(reader.path(key), "must be an ISO 8601 date-time with a zone");
  return at;
}

std::optional<collections::KeyRequest> read_key(ObjectReader& parent, Problems& problems) {
  const json::object* object = parent.object("key", Need::optional);
  if (!object) return std::nullopt;
  ObjectReader reader(*object, parent.path("key"), problems);
  auto type = reader.one_of("type", Need::required, collections::key_types());
  auto value = reader.string("value", Need::required, limits::k_key_value_max_chars);
  reader.reject_unknown();
  if (!type || !value) return std::nullopt;
  if (auto normalized = collections::normalize_key(*type, *value); !normalized) {
    problems.invalid(reader.path("value"), normalized.error().errors.front().message);
    return std::nullopt;
  }
  return collections::KeyRequest{*type, *value};
}

// One item of the batch, or why it is rejected (paths under `collections.<index>`).
Result<collections::NewCollection> decode_item(const json::value& value, const std::string& path,
                                               const Settings& settings) {
  if (!value.is_object()) return errors::validation("must be an object", path);
  Problems problems;
  ObjectReader reader(value.get_object(), path, problems);
  collections::NewCollection input;
  input.external_id =
      required_text(reader, "external_id", limits::k_external_id_max_chars, problems);
  input.tenant_account_id = reader.id("tenant_account_id", Need::required, "bbtacc").value_or("");
  input.usage_mode = reader.one_of("usage_mode", Need::required, k_usage_modes).value_or("");
  std::optional<Money> limits[4];
  for (std::size_t i = 0; i < 4; ++i) {
    limits[i] =
        read_money(reader, k_limit_fields[i], Need::required, settings.currencies, problems);
  }
  input.expires_at_micros = read_time(reader, "expires_at", problems);
  input.nickname = reader.string("nickname", Need::optional, limits::k_nickname_max_chars);
  input.reference = reader.string("reference", Need::optional, limits::k_collection_reference_max_chars);
  input.metadata = read_metadata(reader, "metadata", problems).value_or(ledger::Metadata{});
  input.key = read_key(reader, problems);
  reader.reject_unknown();
  if (!problems.empty()) return problems.to_error();
  // Every limit was read (no problem was recorded): they must share one currency.
  input.currency = limits[0]->currency;
  for (std::size_t i = 1; i < 4; ++i) {
    if (limits[i]->currency != input.currency) {
      return errors::of(ErrorCode::currency_mismatch, reader.path(k_limit_fields[i]) + ".currency",
                        "the four limits must share one currency (minimum_attempt_amount is " +
                            input.currency + ")");
    }
  }
  input.minimum_attempt_amount = limits[0]->amount_minor;
  input.maximum_attempt_amount = limits[1]->amount_minor;
  input.total_minimum_amount = limits[2]->amount_minor;
  input.total_maximum_amount = limits[3]->amount_minor;
  return input;
}

// An error of the domain, whose paths are relative to the item, under the item's path.
Error under_item(Error error, const std::string& item_path) {
  for (ErrorItem& item : error.errors) {
    item.path = item.path ? item_path + "." + *item.path : item_path;
  }
  return error;
}

json::object rejected_json(std::size_t index, const json::value& item, const Error& error) {
  json::value external_id = nullptr;
  if (item.is_object()) {
    auto found = item.get_object().find("external_id");
    if (found != item.get_object().end() && found->value().is_string()) {
      external_id = found->value();
    }
  }
  json::array problems;
  for (const ErrorItem& problem : error.errors) {
    problems.push_back(json::object{{"error_code", problem.error_code},
                                    {"message", problem.message},
                                    {"path", optional_json(problem.path)},
                                    {"url", optional_json(problem.url)}});
  }
  const ErrorItem& first = error.errors.front();
  return json::object{{"index", index},
                      {"external_id", std::move(external_id)},
                      {"error_code", first.error_code},
                      {"message", first.message},
                      {"path", optional_json(first.path)},
                      {"errors", std::move(problems)}};
}

}  // namespace

Result<CollectionBatch> decode_collection_batch(std::string_view body, const Settings& settings) {
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  Problems problems;
  ObjectReader reader(parsed.value(), "", problems);
  const json::array* items = reader.array("collections", Need::required);
  reader.reject_unknown();
  if (items && (items->empty() || items->size() > limits::k_batch_items_max)) {
    problems.invalid("collections",
                     "must have 1 to " + std::to_string(limits::k_batch_items_max) + " items");
  }
  if (!problems.empty()) return problems.to_error();
  CollectionBatch batch;
  batch.items.reserve(items->size());
  for (std::size_t i = 0; i < items->size(); ++i) {
    batch.items.push_back(decode_item((*items)[i], "collections." + std::to_string(i), settings));
  }
  batch.document = std::move(parsed).value();
  return batch;
}

namespace {

http::Response create(Context& context) {
  auto batch = decode_collection_batch(context.request.body, context.services.settings);
  if (!batch) return context.error(batch.error());
  const std::vector<Result<collections::NewCollection>>& decoded = batch->items;
  const json::array& items = batch->written();
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    json::array created, duplicated, rejected;
    for (std::size_t i = 0; i < decoded.size(); ++i) {
      const std::string path = "collections." + std::to_string(i);
      if (!decoded[i]) {
        rejected.push_back(rejected_json(i, items[i], decoded[i].error()));
        continue;
      }
      auto outcome = collections::create_collection(tx, context.tenant_id(), decoded[i].value(),
                                                    context.now());
      if (!outcome) {
        rejected.push_back(rejected_json(i, items[i], under_item(outcome.error(), path)));
      } else {
        (outcome->created ? created : duplicated)
            .push_back(collections::to_json(outcome->collection));
      }
    }
    return json_response(201, json::object{{"created", std::move(created)},
                                           {"duplicated", std::move(duplicated)},
                                           {"rejected", std::move(rejected)}});
  });
}

http::Response list(Context& context) {
  Problems problems;
  QueryReader query(context.query, problems);
  Page page = read_page(query);
  collections::CollectionFilter filter;
  filter.state = query.one_of("state", collections::states());
  filter.external_id = query.string("external_id");
  query.reject_unknown();
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto found =
        collections::list_collections(tx, context.tenant_id(), filter, page.offset(), page.size);
    if (!found) return std::move(found).error();
    return paginated_json("collections", page, found.value(), collections::to_json);
  });
}

std::string collection_id_of(Context& context, Problems& problems) {
  return check_path_id(context.param("id"), "bbcol", "a collection", problems);
}

http::Response show(Context& context) {
  Problems problems;
  std::string id = collection_id_of(context, problems);
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto collection = collections::get_collection(tx, context.tenant_id(), id);
    if (!collection) return std::move(collection).error();
    return json_response(200, collections::to_json(collection.value()));
  });
}

Result<collections::CollectionChanges> decode_changes(std::string_view body,
                                                      const Settings& settings) {
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  const json::object& object = parsed.value();
  Problems problems;
  ObjectReader reader(object, "", problems);
  collections::CollectionChanges changes;
  auto nickname = reader.patch_string("nickname", limits::k_nickname_max_chars);
  if (nickname.is_null()) changes.nickname = std::optional<std::string>();
  if (nickname.has_value()) changes.nickname = nickname.value();
  if (reader.is_null("enabled")) {
    problems.invalid("enabled", "must be true or false");
  } else {
    changes.enabled = reader.boolean("enabled", Need::optional);
  }
  auto expires_at = reader.patch<time::Micros>(
      "expires_at", [&] { return read_time(reader, "expires_at", problems); });
  if (expires_at.is_null()) changes.expires_at_micros = std::optional<time::Micros>();
  if (expires_at.has_value()) changes.expires_at_micros = expires_at.value();
  std::optional<collections::LimitChange>* targets[] = {
      &changes.minimum_attempt_amount, &changes.maximum_attempt_amount,
      &changes.total_minimum_amount, &changes.total_maximum_amount};
  for (std::size_t i = 0; i < 4; ++i) {
    auto limit = patch_money(reader, k_limit_fields[i], settings.currencies, problems);
    if (limit.is_null()) problems.invalid(k_limit_fields[i], "a limit cannot be cleared");
    if (limit.has_value()) {
      *targets[i] = collections::LimitChange{limit.value().amount_minor, limit.value().currency};
    }
  }
  reader.reject_unknown();
  if (!problems.empty()) return problems.to_error();
  return changes;
}

http::Response update(Context& context) {
  Problems problems;
  std::string id = collection_id_of(context, problems);
  auto changes = decode_changes(context.request.body, context.services.settings);
  if (!changes) problems.add(changes.error());
  if (!problems.empty()) return context.error(problems.to_error());
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto collection =
        collections::update_collection(tx, context.tenant_id(), id, changes.value(), context.now());
    if (!collection) return std::move(collection).error();
    return json_response(200, collections::to_json(collection.value()));
  });
}

http::Response discard(Context& context) {
  Problems problems;
  std::string id = collection_id_of(context, problems);
  if (!problems.empty()) return context.error(problems.to_error());
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto collection = collections::discard_collection(tx, context.tenant_id(), id, context.now());
    if (!collection) return std::move(collection).error();
    return no_content();
  });
}

http::Response find_successful(Context& context) {
  return find_by_external_id(
      context, [&](store::Tx& tx, const std::string& external_id) -> Result<http::Response> {
        auto collection = collections::find_successful_by(tx, context.tenant_id(), external_id);
        if (!collection) return std::move(collection).error();
        return json_response(200, collections::to_json(collection.value()));
      });
}

}  // namespace

void add_collection_routes(Routes& routes) {
  // Writes need the collections scope; reads take collections:readonly, which collections
  // includes. /collections/find_successful_by (and the attempts routes) are literals: the
  // router prefers them to /collections/{id}.
  routes.push_back({"POST", "/api/v1/collections", AuthKind::participant, "collections", create});
  routes.back().bulk = true;
  routes.push_back(
      {"GET", "/api/v1/collections", AuthKind::participant, "collections:readonly", list});
  routes.push_back({"GET", "/api/v1/collections/find_successful_by", AuthKind::participant,
                    "collections:readonly", find_successful});
  routes.push_back(
      {"GET", "/api/v1/collections/{id}", AuthKind::participant, "collections:readonly", show});
  routes.push_back(
      {"PATCH", "/api/v1/collections/{id}", AuthKind::participant, "collections", update});
  routes.push_back(
      {"DELETE", "/api/v1/collections/{id}", AuthKind::participant, "collections", discard});
}

}  // namespace tesoro::api
