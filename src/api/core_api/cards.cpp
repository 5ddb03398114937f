// POST /v1/cards, GET /v1/cards, GET /v1/cards/{id}, PATCH /v1/cards/{card_id},
// GET /v1/cards/{card_id}/look, POST and GET /v1/cards/{card_id}/prepaid/operations.
#include "api/card_fields.hpp"
#include "api/context.hpp"
#include "api/lists.hpp"
#include "api/validation/readers.hpp"
#include "core/limits.hpp"
#include "domain/cards/card_view.hpp"
#include "domain/cards/cards.hpp"

namespace tesoro::api {
namespace {


const std::vector<std::string> k_card_types = {"virtual", "physical"};
const std::vector<std::string> k_card_states = {"active", "blocked", "canceled"};
const std::vector<std::string> k_operations = {"topup", "withdrawal"};

json::object limit_json(const cards::LimitUsage& limit) {
  return json::object{{"spending_control_id", limit.spending_control_id},
                      {"rule_type", limit.rule_type},
                      {"window", spending_controls::to_string(limit.period)},
                      {"limit", money_json(limit.limit_minor, limit.currency)},
                      {"used", money_json(limit.used_minor, limit.currency)},
                      {"remaining", money_json(limit.remaining_minor, limit.currency)},
                      {"window_start", limit.window_start},
                      {"window_end", limit.window_end}};
}

json::object card_json(const cards::CardView& view) {
  const cards::Card& card = view.card;
  json::array limits;
  for (const cards::LimitUsage& limit : view.limits) limits.push_back(limit_json(limit));
  return json::object{
      {"id", card.id},
      {"account_id", card.account_id},
      // The card's prepaid balance is a ledger account: its statement is
      // GET /v1/accounts/{prepaid_account_id}/entries.
      {"prepaid_account_id", card.prepaid_account_id},
      {"cardholder_id", optional_json(card.cardholder_id)},
      {"cardholder", view.cardholder ? json::value(cardholder_json(*view.cardholder))
                                     : json::value(nullptr)},
      {"configuration_group_id", card.configuration_group_id},
      {"last_four", card.last_four},
      {"nickname", optional_json(card.nickname)},
      {"spending_controls",
       json::object{{"card_target", optional_json(card.spending_control_id)},
                    {"configuration_group_target", optional_json(view.group_spending_control_id)}}},
      {"state", card.state},
      {"type", card.type},
      {"currency", card.currency},
      {"initial_balance", card.initial_balance_minor
                              ? json::value(money_json(*card.initial_balance_minor, card.currency))
                              : json::value(nullptr)},
      {"balance",
       json::object{{"available", money_json(view.posted_minor - view.held_minor, card.currency)},
                    {"posted", money_json(view.posted_minor, card.currency)},
                    {"updated_at", view.balance_updated_at}}},
      {"spending_limits", std::move(limits)},
      {"expiration_month", card.expiration_month},
      {"expiration_year", card.expiration_year},
      {"inserted_at", card.inserted_at},
      {"updated_at", card.updated_at}};
}

// The card's design, as a card renderer (an app, a wallet) draws it. The sandbox has one design.
json::object look_json(const cards::CardView& view) {
  std::optional<std::string> embossed;
  if (view.cardholder) {
    std::string name = view.cardholder->fields.first_name + " " + view.cardholder->fields.last_name;
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    embossed = std::move(name);
  }
  const cards::Card& card = view.card;
  return json::object{{"card_id", card.id},
                      {"type", card.type},
                      {"state", card.state},
                      {"network", "tesoro"},
                      {"product_name", view.group_name},
                      {"embossed_name", optional_json(embossed)},
                      {"last_four", card.last_four},
                      {"expiration_month", card.expiration_month},
                      {"expiration_year", card.expiration_year},
                      {"background_color", "#0B3D2E"},
                      {"text_color", "#FFFFFF"},
                      {"orientation", "horizontal"}};
}

json::object operation_json(const cards::BalanceOperation& operation) {
  return json::object{{"id", operation.id},
                      {"card_id", operation.card_id},
                      {"amount", money_json(operation.amount_minor, operation.currency)},
                      {"description", operation.description},
                      {"entity_id", operation.entity_id},
                      {"operation", operation.operation},
                      {"performed_at", operation.performed_at}};
}

std::optional<std::string> read_nickname(ObjectReader& reader) {
  return reader.string("nickname", Need::optional, limits::k_nickname_max_chars);
}

// spending_controls: {card_target}; the group's target is the group's business.
std::optional<std::string> read_card_target(ObjectReader& reader, Problems& problems,
                                            bool& present) {
  present = false;
  const json::object* controls = reader.object("spending_controls", Need::optional);
  if (!controls) return std::nullopt;
  ObjectReader inner(*controls, reader.path("spending_controls"), problems);
  if (inner.present("configuration_group_target")) {
    problems.invalid(inner.path("configuration_group_target"),
                     "is set through the card's configuration group");
  }
  present = inner.present("card_target");
  auto target = inner.id("card_target", Need::optional, "spc");
  inner.reject_unknown();
  return target;
}

Result<cards::NewCard> decode_new_card(std::string_view body, const Settings& settings,
                                       time::Micros now) {
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  Problems problems;
  ObjectReader reader(parsed.value(), "", problems);
  cards::NewCard input;
  input.account_id = reader.id("account_id", Need::required, "acc").value_or("");
  input.type = reader.one_of("type", Need::optional, k_card_types).value_or("virtual");
  input.cardholder = read_cardholder(reader, "cardholder", Need::optional, now, problems);
  input.cardholder_id = reader.id("cardholder_id", Need::optional, "carh");
  if (input.cardholder && input.cardholder_id) {
    problems.invalid("cardholder_id", "give either cardholder or cardholder_id, not both");
  }
  input.configuration_group_id = reader.id("configuration_group_id", Need::optional, "ccg");
  input.nickname = read_nickname(reader);
  bool target_present = false;
  input.spending_control_id = read_card_target(reader, problems, target_present);
  if (auto initial = read_money(reader, "initial_balance", Need::optional,
                                settings.card_currencies, problems)) {
    input.initial_balance_minor = initial->amount_minor;
    input.initial_balance_currency = initial->currency;
  }
  reader.reject_unknown();
  if (!problems.empty()) return problems.to_error();
  return input;
}

Result<cards::CardChanges> decode_card_changes(std::string_view body) {
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  Problems problems;
  ObjectReader reader(parsed.value(), "", problems);
  cards::CardChanges changes;
  auto nickname = reader.patch_string("nickname", limits::k_nickname_max_chars);
  if (nickname.is_null()) changes.nickname = std::optional<std::string>();
  if (nickname.has_value()) changes.nickname = nickname.value();
  if (reader.is_null("state")) problems.invalid("state", "must be one of active, blocked, canceled");
  changes.state = reader.one_of("state", Need::optional, k_card_states);
  bool target_present = false;
  auto target = read_card_target(reader, problems, target_present);
  if (target_present) changes.spending_control_id = target;
  reader.reject_unknown();
  if (!problems.empty()) return problems.to_error();
  return changes;
}

std::string card_id_of(Context& context, std::string_view name, Problems& problems) {
  return check_path_id(context.param(name), "car", "a card", problems, std::string(name));
}

http::Response card_response(Context& context, store::Tx& tx, cards::Card card, int status) {
  return json_response(status, card_json(cards::view_card(tx, context.tenant_id(),
                                                          std::move(card), context.now())));
}

http::Response create(Context& context) {
  auto input = decode_new_card(context.request.body, context.services.settings, context.now());
  if (!input) return context.error(input.error());
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto card = cards::create_card(tx, context.tenant_id(), input.value(),
                                   context.services.card_numbers, context.now());
    if (!card) return std::move(card).error();
    return card_response(context, tx, std::move(card).value(), 201);
  });
}

http::Response list(Context& context) {
  return paginated_list(
      context, "cards",
      [&](store::Tx& tx, const Page& page) -> Result<PageOf<cards::CardView>> {
        auto found = cards::list_cards(tx, context.tenant_id(), page.offset(), page.size);
        if (!found) return std::move(found).error();
        PageOf<cards::CardView> views;
        views.total_items = found->total_items;
        for (cards::Card& card : found->items) {
          views.items.push_back(cards::view_card(tx, context.tenant_id(), std::move(card),
                                                 context.now()));
        }
        return views;
      },
      card_json);
}

// A GET of one card, answered by `encode` of its view.
template <class Encode>
http::Response show_card(Context& context, std::string_view param, Encode encode) {
  Problems problems;
  std::string id = card_id_of(context, param, problems);
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto card = cards::get_card(tx, context.tenant_id(), id);
    if (!card) return std::move(card).error();
    return json_response(200, encode(cards::view_card(tx, context.tenant_id(),
                                                      std::move(card).value(), context.now())));
  });
}

http::Response show(Context& context) { return show_card(context, "id", card_json); }
http::Response look(Context& context) { return show_card(context, "card_id", look_json); }

http::Response update(Context& context) {
  Problems problems;
  std::string id = card_id_of(context, "card_id", problems);
  auto changes = decode_card_changes(context.request.body);
  if (!changes) problems.add(changes.error());
  if (!problems.empty()) return context.error(problems.to_error());
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto card = cards::update_card(tx, context.tenant_id(), id, changes.value(), context.now());
    if (!card) return std::move(card).error();
    return card_response(context, tx, std::move(card).value(), 200);
  });
}

Result<cards::NewBalanceOperation> decode_operation(std::string_view body,
                                                    const Settings& settings) {
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  Problems problems;
  ObjectReader reader(parsed.value(), "", problems);
  cards::NewBalanceOperation input;
  input.operation = reader.one_of("operation", Need::required, k_operations).value_or("");
  if (auto amount = read_money(reader, "amount", Need::required, settings.card_currencies,
                               problems)) {
    input.amount_minor = amount->amount_minor;
    input.currency = amount->currency;
  }
  input.description = reader
                          .string("description", Need::optional,
                                  limits::k_balance_operation_description_max_chars)
                          .value_or("");
  auto entity_id = reader.string("entity_id", Need::required, limits::k_balance_operation_entity_id_max_chars);
  if (entity_id && entity_id->empty()) problems.invalid("entity_id", "must not be empty");
  input.entity_id = entity_id.value_or("");
  reader.reject_unknown();
  if (!problems.empty()) return problems.to_error();
  return input;
}

http::Response create_operation(Context& context) {
  Problems problems;
  std::string card_id = card_id_of(context, "card_id", problems);
  auto input = decode_operation(context.request.body, context.services.settings);
  if (!input) problems.add(input.error());
  if (!problems.empty()) return context.error(problems.to_error());
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto outcome = cards::perform_balance_operation(tx, context.tenant_id(), card_id,
                                                    input.value(), context.now());
    if (!outcome) return std::move(outcome).error();
    return json_response(outcome->created ? 201 : 200, operation_json(outcome->operation));
  });
}

http::Response list_operations(Context& context) {
  Problems problems;
  std::string card_id = card_id_of(context, "card_id", problems);
  QueryReader query(context.query, problems);
  Page page = read_page(query);
  cards::BalanceOperationFilter filter;
  filter.performed_from = query.timestamp("performed_at[gte]");
  filter.performed_to = query.timestamp("performed_at[lte]");
  query.reject_unknown();
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto found = cards::list_balance_operations(tx, context.tenant_id(), card_id, filter,
                                                page.offset(), page.size);
    if (!found) return std::move(found).error();
    // The list's envelope with card_id beside the items.
    json_text::Writer out(256 + 512 * found->items.size());
    out.begin_object().key("balance_operations").begin_array();
    for (const auto& operation : found->items) out.raw(json::serialize(operation_json(operation)));
    out.end_array().key("card_id").string(card_id).key("pagination");
    pagination_text(out, page, found->total_items);
    out.end_object();
    return json_text_response(200, out.take());
  });
}

}  // namespace

void add_card_routes(Routes& routes) {
  routes.push_back({"POST", "/v1/cards", AuthKind::core, "cards", create});
  routes.push_back({"GET", "/v1/cards", AuthKind::core, "cards", list});
  routes.push_back({"GET", "/v1/cards/{id}", AuthKind::core, "cards", show});
  routes.push_back({"PATCH", "/v1/cards/{card_id}", AuthKind::core, "cards", update});
  routes.push_back({"GET", "/v1/cards/{card_id}/look", AuthKind::core, "cards", look});
  routes.push_back(
      {"POST", "/v1/cards/{card_id}/prepaid/operations", AuthKind::core, "cards", create_operation});
  routes.push_back(
      {"GET", "/v1/cards/{card_id}/prepaid/operations", AuthKind::core, "cards", list_operations});
}

}  // namespace tesoro::api
