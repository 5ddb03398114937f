// /v1/spending_controls: create, list, show, rename, delete; PUT .../rules (one rule, upserted by
// type) and DELETE .../rules/{type}.
#include <algorithm>
#include <functional>
#include <set>

#include "api/context.hpp"
#include "api/lists.hpp"
#include "api/validation/fields.hpp"
#include "core/limits.hpp"
#include "domain/spending_controls/rules.hpp"
#include "domain/spending_controls/spending_controls.hpp"

namespace tesoro::api {
namespace {

namespace sc = spending_controls;

const std::vector<std::string> k_card_usages = {"online_purchase", "physical_purchase",
                                                "atm_withdrawal"};

// The fields each rule type has besides `type`.
const std::vector<std::pair<std::string, std::vector<std::string>>>& rule_fields() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> k_fields = {
      {"card_usage", {"disabled_card_usages"}},
      {"mcc", {"operation", "mccs"}},
      {"mid", {"operation", "mids"}},
      {"merchant_name", {"allow_pattern"}},
      {"velocity", {"daily", "weekly", "monthly"}},
      {"withdrawal_velocity", {"daily", "monthly"}}};
  return k_fields;
}

const std::vector<std::string>& fields_of(const std::string& type) {
  for (const auto& [name, fields] : rule_fields()) {
    if (name == type) return fields;
  }
  static const std::vector<std::string> k_none;
  return k_none;
}

bool contains(const std::vector<std::string>& values, const std::string& value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// A field of another rule type is refused with a message that says so.
void refuse_other_types_fields(ObjectReader& reader, const std::string& type, Problems& problems) {
  std::set<std::string> reported;
  for (const auto& [other, fields] : rule_fields()) {
    for (const std::string& field : fields) {
      if (other == type || contains(fields_of(type), field) || reported.contains(field)) continue;
      if (reader.present(field)) {
        problems.invalid(reader.path(field), "is not a field of a " + type + " rule");
        reported.insert(field);
      }
    }
  }
}

// velocity and withdrawal_velocity: Money caps, at least one.
void read_caps(ObjectReader& reader, const std::vector<std::string>& periods,
               const std::vector<std::string>& currencies, sc::RuleInput& input,
               Problems& problems) {
  bool any = false;
  for (const std::string& period : periods) {
    any = any || (reader.present(period) && !reader.is_null(period));
    auto money = read_money(reader, period, Need::optional, currencies, problems);
    if (!money) continue;
    std::optional<std::int64_t>& cap = period == "daily"    ? input.rule.daily_minor
                                       : period == "weekly" ? input.rule.weekly_minor
                                                            : input.rule.monthly_minor;
    cap = money->amount_minor;
    input.amount_currencies.emplace_back(period, money->currency);
  }
  if (!any) {
    std::string names;
    for (const std::string& period : periods) names += (names.empty() ? "" : ", ") + period;
    problems.add(errors::of(ErrorCode::missing_field, reader.path(periods.front()),
                            "a " + input.rule.type + " rule needs at least one of " + names));
  }
}

// A required array of 1 to `max_items` distinct strings, each passing `check` (which returns
// what is wrong with one, or nullopt).
using ItemCheck = std::function<std::optional<std::string>(const std::string&)>;
std::vector<std::string> read_distinct(ObjectReader& reader, std::string_view key,
                                       std::size_t max_items, const ItemCheck& check,
                                       Problems& problems) {
  std::vector<std::string> values;
  const json::array* items = reader.array(key, Need::required);
  if (!items) return values;
  if (items->empty() || items->size() > max_items) {
    problems.invalid(reader.path(key), "must have 1 to " + std::to_string(max_items) + " items");
    return values;
  }
  for (std::size_t i = 0; i < items->size(); ++i) {
    std::string path = reader.path(key) + "." + std::to_string(i);
    const json::value& item = (*items)[i];
    if (!item.is_string()) {
      problems.invalid(path, "must be a string");
      continue;
    }
    std::string value(item.get_string());
    if (auto wrong = check(value)) {
      problems.invalid(path, *wrong);
    } else if (contains(values, value)) {
      problems.invalid(path, "is listed twice");
    } else {
      values.push_back(std::move(value));
    }
  }
  return values;
}

std::optional<std::string> mcc_problem(const std::string& value) {
  bool digits = value.size() == 4 && std::all_of(value.begin(), value.end(), [](char c) {
                  return c >= '0' && c <= '9';
                });
  if (digits) return std::nullopt;
  return "must be a merchant category code of four digits";
}

std::optional<std::string> mid_problem(const std::string& value) {
  bool alphanumeric =
      !value.empty() && value.size() <= limits::k_merchant_id_max_chars &&
      std::all_of(value.begin(), value.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
      });
  if (alphanumeric) return std::nullopt;
  return "must be a merchant id of 1 to " + std::to_string(limits::k_merchant_id_max_chars) +
         " letters and digits";
}

std::optional<std::string> card_usage_problem(const std::string& value) {
  if (contains(k_card_usages, value)) return std::nullopt;
  return "must be one of: online_purchase, physical_purchase, atm_withdrawal";
}

void read_list_rule(ObjectReader& reader, const std::string& key, const ItemCheck& check,
                    sc::RuleInput& input, Problems& problems) {
  input.rule.operation =
      reader.one_of("operation", Need::required, {"allow_" + key, "block_" + key}).value_or("");
  input.rule.values = read_distinct(reader, key, limits::k_rule_values_max, check, problems);
}

void read_pattern(ObjectReader& reader, sc::RuleInput& input, Problems& problems) {
  std::string pattern =
      required_text(reader, "allow_pattern", limits::k_merchant_name_pattern_max_chars, problems);
  if (pattern.empty()) return;
  if (auto error = sc::pattern_error(pattern)) {
    problems.invalid(reader.path("allow_pattern"), "must be a PCRE2 pattern: " + *error);
    return;
  }
  input.rule.allow_pattern = std::move(pattern);
}

// One rule at `prefix` ("" for a body, "rules.3" inside a control). Without a valid type the
// other fields cannot be judged, and only the type is reported.
std::optional<sc::RuleInput> read_rule(const json::object& object, const std::string& prefix,
                                       const std::vector<std::string>& currencies,
                                       Problems& problems) {
  ObjectReader reader(object, prefix, problems);
  auto type = reader.one_of("type", Need::required, sc::rule_types());
  if (!type) return std::nullopt;
  sc::RuleInput input;
  input.rule.type = *type;
  if (*type == "velocity" || *type == "withdrawal_velocity") {
    read_caps(reader, fields_of(*type), currencies, input, problems);
  } else if (*type == "mcc") {
    read_list_rule(reader, "mccs", mcc_problem, input, problems);
  } else if (*type == "mid") {
    read_list_rule(reader, "mids", mid_problem, input, problems);
  } else if (*type == "merchant_name") {
    read_pattern(reader, input, problems);
  } else {
    input.rule.disabled_card_usages = read_distinct(
        reader, "disabled_card_usages", k_card_usages.size(), card_usage_problem, problems);
  }
  refuse_other_types_fields(reader, *type, problems);
  reader.reject_unknown();
  return input;
}

std::vector<sc::RuleInput> read_rules(ObjectReader& reader,
                                      const std::vector<std::string>& currencies,
                                      Problems& problems) {
  std::vector<sc::RuleInput> rules;
  const json::array* items = reader.array("rules", Need::optional);
  if (!items) return rules;
  if (items->size() > sc::rule_types().size()) {
    problems.invalid("rules", "must have at most one rule of each type");
    return rules;
  }
  for (std::size_t i = 0; i < items->size(); ++i) {
    std::string path = "rules." + std::to_string(i);
    if (!(*items)[i].is_object()) {
      problems.invalid(path, "must be an object");
      continue;
    }
    auto rule = read_rule((*items)[i].get_object(), path, currencies, problems);
    if (!rule) continue;
    bool repeated = std::any_of(rules.begin(), rules.end(), [&](const sc::RuleInput& earlier) {
      return earlier.rule.type == rule->rule.type;
    });
    if (repeated) problems.invalid(path + ".type", "another rule of this control has this type");
    rules.push_back(std::move(*rule));
  }
  return rules;
}

Result<sc::NewSpendingControl> decode_new_control(std::string_view body,
                                                  const std::vector<std::string>& currencies) {
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  Problems problems;
  ObjectReader reader(parsed.value(), "", problems);
  sc::NewSpendingControl input;
  input.name = required_text(reader, "name", limits::k_name_max_chars, problems);
  input.currency_code = reader.one_of("currency_code", Need::required, currencies).value_or("");
  input.rules = read_rules(reader, currencies, problems);
  reader.reject_unknown();
  if (!problems.empty()) return problems.to_error();
  return input;
}

Result<sc::RuleInput> decode_rule(std::string_view body,
                                  const std::vector<std::string>& currencies) {
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  Problems problems;
  auto rule = read_rule(parsed.value(), "", currencies, problems);
  if (!problems.empty()) return problems.to_error();
  return std::move(*rule);
}

// A PATCH: `name` only (it may not be null or empty).
Result<std::optional<std::string>> decode_rename(std::string_view body) {
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  Problems problems;
  ObjectReader reader(parsed.value(), "", problems);
  std::optional<std::string> name;
  if (reader.is_null("name")) {
    problems.invalid("name", "must not be null");
  } else if (reader.present("name")) {
    name = required_text(reader, "name", limits::k_name_max_chars, problems);
  }
  reader.reject_unknown();
  if (!problems.empty()) return problems.to_error();
  return name;
}

json::value cap_json(const std::optional<std::int64_t>& amount_minor,
                     const std::string& currency) {
  if (!amount_minor) return nullptr;
  return money_json(*amount_minor, currency);
}

json::object rule_json(const sc::Rule& rule, const std::string& currency) {
  json::object out{{"type", rule.type}};
  if (rule.type == "velocity" || rule.type == "withdrawal_velocity") {
    out["daily"] = cap_json(rule.daily_minor, currency);
    if (rule.type == "velocity") out["weekly"] = cap_json(rule.weekly_minor, currency);
    out["monthly"] = cap_json(rule.monthly_minor, currency);
  } else if (rule.type == "mcc" || rule.type == "mid") {
    out["operation"] = rule.operation;
    out[rule.type + "s"] = json::array(rule.values.begin(), rule.values.end());
  } else if (rule.type == "merchant_name") {
    out["allow_pattern"] = rule.allow_pattern;
  } else if (rule.type == "card_usage") {
    out["disabled_card_usages"] =
        json::array(rule.disabled_card_usages.begin(), rule.disabled_card_usages.end());
  }
  return out;
}

json::object spending_control_json(const sc::SpendingControl& control) {
  json::array rules;
  for (const sc::Rule& rule : control.rules) rules.push_back(rule_json(rule, control.currency_code));
  return json::object{{"id", control.id},
                      {"name", control.name},
                      {"currency_code", control.currency_code},
                      {"rules", std::move(rules)},
                      {"inserted_at", control.inserted_at},
                      {"updated_at", control.updated_at}};
}

std::string path_id(Context& context, std::string_view param, Problems& problems) {
  return check_path_id(context.param(param), "spc", "a spending control", problems,
                       std::string(param));
}

using ControlWrite = std::function<Result<sc::SpendingControl>(store::Tx&)>;
http::Response write_control(Context& context, int status, const ControlWrite& fn) {
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto control = fn(tx);
    if (!control) return std::move(control).error();
    return json_response(status, spending_control_json(control.value()));
  });
}

http::Response create(Context& context) {
  auto input = decode_new_control(context.request.body, context.services.settings.card_currencies);
  if (!input) return context.error(input.error());
  return write_control(context, 201, [&](store::Tx& tx) {
    return sc::create_spending_control(tx, context.tenant_id(), input.value(), context.now());
  });
}

http::Response list(Context& context) {
  return paginated_list(
      context, "spending_controls",
      [&](store::Tx& tx, const Page& page) {
        return sc::list_spending_controls(tx, context.tenant_id(), page.offset(), page.size);
      },
      spending_control_json);
}

http::Response show(Context& context) {
  Problems problems;
  std::string id = path_id(context, "id", problems);
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto control = sc::get_spending_control(tx, context.tenant_id(), id);
    if (!control) return std::move(control).error();
    return json_response(200, spending_control_json(control.value()));
  });
}

http::Response update(Context& context) {
  Problems problems;
  std::string id = path_id(context, "id", problems);
  if (!problems.empty()) return context.error(problems.to_error());
  auto name = decode_rename(context.request.body);
  if (!name) return context.error(name.error());
  return write_control(context, 200, [&](store::Tx& tx) {
    return sc::update_spending_control(tx, context.tenant_id(), id, name.value(), context.now());
  });
}

http::Response remove(Context& context) {
  Problems problems;
  std::string id = path_id(context, "id", problems);
  if (!problems.empty()) return context.error(problems.to_error());
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto deleted = sc::delete_spending_control(tx, context.tenant_id(), id, context.now());
    if (!deleted) return std::move(deleted).error();
    return no_content();
  });
}

http::Response put_rule(Context& context) {
  Problems problems;
  std::string id = path_id(context, "spending_control_id", problems);
  if (!problems.empty()) return context.error(problems.to_error());
  auto rule = decode_rule(context.request.body, context.services.settings.card_currencies);
  if (!rule) return context.error(rule.error());
  return write_control(context, 200, [&](store::Tx& tx) {
    return sc::put_rule(tx, context.tenant_id(), id, rule.value(), context.now());
  });
}

http::Response delete_rule(Context& context) {
  Problems problems;
  std::string id = path_id(context, "spending_control_id", problems);
  std::string type(context.param("type"));
  if (!contains(sc::rule_types(), type)) {
    problems.invalid("type", "must be a rule type: card_usage, mcc, mid, merchant_name, "
                             "velocity or withdrawal_velocity");
  }
  if (!problems.empty()) return context.error(problems.to_error());
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto control = sc::delete_rule(tx, context.tenant_id(), id, type, context.now());
    if (!control) return std::move(control).error();
    return no_content();
  });
}

}  // namespace

void add_spending_control_routes(Routes& routes) {
  const std::string base = "/v1/spending_controls";
  const std::string scope = "spending_controls";
  routes.push_back({"POST", base, AuthKind::core, scope, create});
  routes.push_back({"GET", base, AuthKind::core, scope, list});
  routes.push_back({"GET", base + "/{id}", AuthKind::core, scope, show});
  routes.push_back({"PATCH", base + "/{id}", AuthKind::core, scope, update});
  routes.push_back({"DELETE", base + "/{id}", AuthKind::core, scope, remove});
  routes.push_back({"PUT", base + "/{spending_control_id}/rules", AuthKind::core, scope, put_rule});
  routes.push_back(
      {"DELETE", base + "/{spending_control_id}/rules/{type}", AuthKind::core, scope, delete_rule});
}

}  // namespace tesoro::api
