// POST /api/v1/outgoing_transfers (a batch of 1 to 1000 transfers), GET
// /api/v1/outgoing_transfers, GET /api/v1/outgoing_transfers/{id},
// GET /api/v1/outgoing_transfers/find_successful_by?external_id=.
#include "api/context.hpp"
#include "api/lists.hpp"
#include "api/participant/batch_decoders.hpp"
#include "api/validation/fields.hpp"
#include "api/validation/readers.hpp"
#include "core/limits.hpp"
#include "domain/network/targets.hpp"
#include "domain/transfers/outgoing_transfers.hpp"

namespace tesoro::api {
namespace {


std::optional<transfers::Query> read_query(ObjectReader& parent, Problems& problems) {
  const json::object* object = parent.object("query", Need::optional);
  if (!object) return std::nullopt;
  ObjectReader reader(*object, parent.path("query"), problems);
  auto format = reader.one_of("format", Need::required, network::query_formats());
  auto value = reader.string("value", Need::required, limits::k_key_value_max_chars);
  reader.reject_unknown();
  if (!format || !value) return std::nullopt;
  return transfers::Query{*format, *value};
}

std::optional<transfers::ExpectedCreditor> read_expected_creditor(ObjectReader& parent,
                                                                  Problems& problems) {
  const json::object* object = parent.object("expected_creditor", Need::optional);
  if (!object) return std::nullopt;
  ObjectReader reader(*object, parent.path("expected_creditor"), problems);
  transfers::ExpectedCreditor creditor;
  creditor.document_number = required_document_number(reader, "document_number", problems);
  creditor.document_type = required_document_type(reader, "document_type");
  reader.reject_unknown();
  return creditor;
}

// One item of the batch, or why the API rejects it (paths under `transfers.<index>`).
Result<transfers::BatchItem> decode_item(const json::value& value, const std::string& path,
                                         const Settings& settings) {
  if (!value.is_object()) return errors::validation("must be an object", path);
  Problems problems;
  ObjectReader reader(value.get_object(), path, problems);
  transfers::BatchItem item;
  item.external_id =
      required_text(reader, "external_id", limits::k_external_id_max_chars, problems);
  if (auto amount = read_money(reader, "amount", Need::optional, settings.currencies, problems)) {
    item.amount_minor = amount->amount_minor;
    item.currency = amount->currency;
  }
  const bool has_target = reader.present("target_id") && !reader.is_null("target_id");
  const bool has_query = reader.present("query") && !reader.is_null("query");
  item.target_id = reader.id("target_id", Need::optional, "bbtgt");
  item.query = read_query(reader, problems);
  item.description = reader.string("description", Need::optional, limits::k_description_max_chars);
  item.metadata = read_metadata(reader, "metadata", problems).value_or(ledger::Metadata{});
  item.expected_creditor = read_expected_creditor(reader, problems);
  reader.reject_unknown();
  // Rule 1 of the contract: a target or a query, and not both.
  if (has_target && has_query) {
    problems.invalid(reader.path("query"), "give either target_id or query, not both");
  } else if (!has_target && !has_query) {
    problems.add(errors::of(ErrorCode::missing_field, reader.path("target_id"),
                            "a transfer needs a target_id or a query"));
  }
  if (!problems.empty()) return problems.to_error();
  return item;
}

std::string external_id_of(const json::value& item) {
  if (!item.is_object()) return "";
  const json::value* external_id = item.get_object().if_contains("external_id");
  return external_id && external_id->is_string() ? std::string(external_id->get_string()) : "";
}

}  // namespace

Result<transfers::NewBatch> decode_transfer_batch(std::string_view body, const Settings& settings) {
  // The document is read into the NewBatch and let go here: its thousands of values come from
  // one arena, freed at once, instead of one allocation and one free each on the heap.
  json::monotonic_resource arena(body.size() * 2);
  auto parsed = parse_object(body, &arena);
  if (!parsed) return std::move(parsed).error();
  Problems problems;
  ObjectReader reader(parsed.value(), "", problems);
  transfers::NewBatch input;
  input.tenant_account_id = reader.id("tenant_account_id", Need::required, "bbtacc").value_or("");
  input.description = reader.string("description", Need::optional, limits::k_description_max_chars);
  const json::array* items = reader.array("transfers", Need::required);
  reader.reject_unknown();
  if (items && (items->empty() || items->size() > limits::k_batch_items_max)) {
    problems.invalid("transfers",
                     "must have 1 to " + std::to_string(limits::k_batch_items_max) + " items");
  }
  if (!problems.empty()) return problems.to_error();
  input.max_amount_minor = settings.transfer_max_amount_minor;
  input.items.reserve(items->size());
  for (std::size_t i = 0; i < items->size(); ++i) {
    auto item = decode_item((*items)[i], "transfers." + std::to_string(i), settings);
    if (item) {
      input.items.emplace_back(i, std::move(item).value());
    } else {
      input.rejected.push_back({i, external_id_of((*items)[i]), std::move(item).error()});
    }
  }
  return input;
}

namespace {

http::Response create(Context& context) {
  auto input = decode_transfer_batch(context.request.body, context.services.settings);
  if (!input) return context.error(input.error());
  // The items are resolved and their transfers written out in a read snapshot, off the write
  // unit; a preparation that fails (an unknown source) is left to the unit, which answers and
  // records the error.
  auto prepared = context.services.store.read<transfers::PreparedBatch>([&](store::Tx& tx) {
    return transfers::prepare_batch(tx, context.tenant_id(), input.value(), context.now());
  });
  if (!prepared) {
    return context.write([&](store::Tx& tx) -> Result<http::Response> {
      auto batch =
          transfers::create_batch(tx, context.tenant_id(), input.value(), context.now());
      if (!batch) return std::move(batch).error();
      return json_text_response(201, transfers::batch_text(batch.value()));
    });
  }
  // The answer (a thousand transfers' texts, written by the preparation) is put together after
  // the commit, off the SQLite writer, unless an idempotency key records it in the unit.
  return context.write_then<transfers::AcceptedBatch>(
      [&](store::Tx& tx) {
        return transfers::accept_batch(tx, context.tenant_id(), prepared.value());
      },
      [&](transfers::AcceptedBatch& done) -> Result<http::Response> {
        return json_text_response(201, transfers::batch_text(prepared.value(), done));
      });
}

http::Response list(Context& context) {
  Problems problems;
  QueryReader query(context.query, problems);
  Page page = read_page(query);
  transfers::TransferFilter filter;
  filter.state = query.one_of("state", transfers::states());
  filter.external_id = query.string("external_id");
  filter.batch_id = query.string("batch_id");
  query.reject_unknown();
  if (filter.batch_id) check_path_id(*filter.batch_id, "bbotb", "a batch", problems, "batch_id");
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto found =
        transfers::list_transfers(tx, context.tenant_id(), filter, page.offset(), page.size);
    if (!found) return std::move(found).error();
    network::ShownTargets shown;  // a page's transfers to one key share their Target's runs
    return paginated_text(
        "outgoing_transfers", page, found.value(),
        [&shown](const transfers::Transfer& t) { return transfers::transfer_text(t, &shown); },
        1536);
  });
}

http::Response show(Context& context) {
  Problems problems;
  std::string id = check_path_id(context.param("id"), "bbot", "an outgoing transfer", problems);
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto transfer = transfers::get_transfer(tx, context.tenant_id(), id);
    if (!transfer) return std::move(transfer).error();
    return json_text_response(200, transfers::transfer_text(transfer.value()));
  });
}

http::Response find_successful(Context& context) {
  return find_by_external_id(
      context, [&](store::Tx& tx, const std::string& external_id) -> Result<http::Response> {
        auto transfer = transfers::find_successful_by(tx, context.tenant_id(), external_id);
        if (!transfer) return std::move(transfer).error();
        return json_text_response(200, transfers::transfer_text(transfer.value()));
      });
}

}  // namespace

void add_outgoing_transfer_routes(Routes& routes) {
  // Batches need the outgoing_transfers scope; reads take outgoing_transfers:readonly, which
  // outgoing_transfers includes. find_successful_by is a literal: the router prefers it to {id}.
  routes.push_back(
      {"POST", "/api/v1/outgoing_transfers", AuthKind::participant, "outgoing_transfers", create});
  routes.back().bulk = true;
  routes.push_back({"GET", "/api/v1/outgoing_transfers", AuthKind::participant,
                    "outgoing_transfers:readonly", list});
  routes.push_back({"GET", "/api/v1/outgoing_transfers/find_successful_by",
                    AuthKind::participant, "outgoing_transfers:readonly", find_successful});
  routes.push_back({"GET", "/api/v1/outgoing_transfers/{id}", AuthKind::participant,
                    "outgoing_transfers:readonly", show});
}

}  // namespace tesoro::api
