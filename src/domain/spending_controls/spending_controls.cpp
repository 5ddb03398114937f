// Spending controls in storage: one row per control, its rules a JSON array in rule_types()
// order (an authorization reads them whole).
#include "domain/spending_controls/rules.hpp"
#include "domain/spending_controls/spending_controls.hpp"

#include <boost/json.hpp>

#include <algorithm>

#include "core/ids.hpp"
#include "domain/events/events.hpp"
#include "store/pages.hpp"

namespace tesoro::spending_controls {
namespace {

namespace json = boost::json;

bool is_velocity(const std::string& type) {
  return type == "velocity" || type == "withdrawal_velocity";
}

std::size_t type_order(const std::string& type) {
  const auto& types = rule_types();
  return static_cast<std::size_t>(std::find(types.begin(), types.end(), type) - types.begin());
}

json::value optional_amount(const std::optional<std::int64_t>& amount_minor) {
  return amount_minor ? json::value(*amount_minor) : json::value(nullptr);
}

std::optional<std::int64_t> amount_of(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  if (!value || !value->is_int64()) return std::nullopt;
  return value->get_int64();
}

json::array strings_json(const std::vector<std::string>& values) {
  return json::array(values.begin(), values.end());
}

std::vector<std::string> strings_of(const json::object& object, std::string_view key) {
  std::vector<std::string> out;
  const json::value* value = object.if_contains(key);
  if (!value || !value->is_array()) return out;
  for (const json::value& item : value->get_array()) out.emplace_back(item.as_string());
  return out;
}

json::object encode_rule(const Rule& rule) {
  json::object out{{"type", rule.type}};
  if (is_velocity(rule.type)) {
    out["daily"] = optional_amount(rule.daily_minor);
    out["weekly"] = optional_amount(rule.weekly_minor);
    out["monthly"] = optional_amount(rule.monthly_minor);
  } else if (rule.type == "mcc" || rule.type == "mid") {
    out["operation"] = rule.operation;
    out["values"] = strings_json(rule.values);
  } else if (rule.type == "merchant_name") {
    out["allow_pattern"] = rule.allow_pattern;
  } else if (rule.type == "card_usage") {
    out["disabled_card_usages"] = strings_json(rule.disabled_card_usages);
  }
  return out;
}

Rule decode_rule(const json::object& object) {
  Rule rule;
  rule.type = std::string(object.at("type").as_string());
  rule.daily_minor = amount_of(object, "daily");
  rule.weekly_minor = amount_of(object, "weekly");
  rule.monthly_minor = amount_of(object, "monthly");
  if (const json::value* operation = object.if_contains("operation")) {
    rule.operation = std::string(operation->as_string());
  }
  rule.values = strings_of(object, "values");
  if (const json::value* pattern = object.if_contains("allow_pattern")) {
    rule.allow_pattern = std::string(pattern->as_string());
  }
  rule.disabled_card_usages = strings_of(object, "disabled_card_usages");
  return rule;
}

std::string encode_rules(const std::vector<Rule>& rules) {
  json::array out;
  for (const Rule& rule : rules) out.push_back(encode_rule(rule));
  return json::serialize(out);
}

std::vector<Rule> decode_rules(const std::string& text) {
  std::vector<Rule> rules;
  const json::value parsed = json::parse(text);
  for (const json::value& item : parsed.as_array()) {
    rules.push_back(decode_rule(item.as_object()));
  }
  return rules;
}

void sort_rules(std::vector<Rule>& rules) {
  std::stable_sort(rules.begin(), rules.end(), [](const Rule& a, const Rule& b) {
    return type_order(a.type) < type_order(b.type);
  });
}

constexpr const char* k_columns = "id, name, currency_code, rules, inserted_at, updated_at";

SpendingControl from_row(const store::Row& row) {
  return {row.text(0), row.text(1), row.text(2), decode_rules(row.text(3)), row.text(4),
          row.text(5)};
}

Result<SpendingControl> select_control(store::Tx& tx, const std::string& tenant_id,
                                       const std::string& id, std::string_view lock) {
  auto row = tx.query_one(std::string("SELECT ") + k_columns +
                              " FROM spending_controls WHERE tenant_id = ? AND id = ?" +
                              std::string(lock),
                          {tenant_id, id});
  if (!row) return errors::item_not_found("spending control");
  return from_row(*row);
}

void emit(store::Tx& tx, const std::string& tenant_id, std::string_view type,
          const std::string& id, time::Micros now) {
  events::emit(tx, tenant_id, type, json::serialize(json::object{{"spending_control_id", id}}),
               now);
}

// The name, the rules and updated_at of a control read under its lock.
SpendingControl save(store::Tx& tx, const std::string& tenant_id, SpendingControl control,
                     time::Micros now) {
  sort_rules(control.rules);
  control.updated_at = time::iso(now);
  tx.exec(
      "UPDATE spending_controls SET name = ?, rules = ?, updated_at = ? "
      "WHERE tenant_id = ? AND id = ?",
      {control.name, encode_rules(control.rules), control.updated_at, tenant_id, control.id});
  emit(tx, tenant_id, "spending_control.updated", control.id, now);
  return control;
}

// The amounts of `input` given in another currency than the control's, as error items at
// <prefix><field>.currency.
void add_mismatches(const RuleInput& input, const std::string& currency_code,
                    const std::string& prefix, std::vector<ErrorItem>& items) {
  for (const auto& [field, currency] : input.amount_currencies) {
    if (currency == currency_code) continue;
    Error error = errors::of(ErrorCode::currency_mismatch, prefix + field + ".currency",
                             "must be the spending control's currency_code " + currency_code);
    items.push_back(std::move(error.errors.front()));
  }
}

std::optional<Error> mismatch_error(std::vector<ErrorItem> items) {
  if (items.empty()) return std::nullopt;
  Error error = errors::of(ErrorCode::currency_mismatch, items.front().path);
  error.errors = std::move(items);
  return error;
}

bool referenced(store::Tx& tx, const std::string& tenant_id, const std::string& id) {
  for (const char* table : {"cards", "configuration_groups"}) {
    if (tx.query_one(std::string("SELECT 1 FROM ") + table +
                         " WHERE tenant_id = ? AND spending_control_id = ? LIMIT 1",
                     {tenant_id, id})) {
      return true;
    }
  }
  return false;
}

}  // namespace

Result<SpendingControl> get_spending_control(store::Tx& tx, const std::string& tenant_id,
                                             const std::string& id) {
  return select_control(tx, tenant_id, id, "");
}

Result<SpendingControl> lock_spending_control(store::Tx& tx, const std::string& tenant_id,
                                              const std::string& id) {
  return select_control(tx, tenant_id, id, tx.lock_rows());
}

Result<PageOf<SpendingControl>> list_spending_controls(store::Tx& tx,
                                                       const std::string& tenant_id,
                                                       std::int64_t offset, std::int64_t limit) {
  return store::query_page<SpendingControl>(tx, k_columns, " FROM spending_controls WHERE tenant_id = ?", {tenant_id}, "inserted_at DESC, id DESC", offset, limit,
                                 from_row);
}

Result<SpendingControl> create_spending_control(store::Tx& tx, const std::string& tenant_id,
                                                const NewSpendingControl& input,
                                                time::Micros now) {
  std::vector<ErrorItem> mismatches;
  for (std::size_t i = 0; i < input.rules.size(); ++i) {
    add_mismatches(input.rules[i], input.currency_code, "rules." + std::to_string(i) + ".",
                   mismatches);
  }
  if (auto error = mismatch_error(std::move(mismatches))) return std::move(*error);
  SpendingControl control;
  control.id = ids::generate("spc");
  control.name = input.name;
  control.currency_code = input.currency_code;
  for (const RuleInput& rule : input.rules) control.rules.push_back(rule.rule);
  sort_rules(control.rules);
  control.inserted_at = control.updated_at = time::iso(now);
  tx.exec(
      "INSERT INTO spending_controls (tenant_id, id, name, currency_code, rules, inserted_at, "
      "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      {tenant_id, control.id, control.name, control.currency_code, encode_rules(control.rules),
       control.inserted_at, control.updated_at});
  emit(tx, tenant_id, "spending_control.created", control.id, now);
  return control;
}

Result<SpendingControl> update_spending_control(store::Tx& tx, const std::string& tenant_id,
                                                const std::string& id,
                                                const std::optional<std::string>& name,
                                                time::Micros now) {
  auto control = lock_spending_control(tx, tenant_id, id);
  if (!control) return control;
  if (name) control->name = *name;
  return save(tx, tenant_id, std::move(control).value(), now);
}

Status delete_spending_control(store::Tx& tx, const std::string& tenant_id,
                               const std::string& id, time::Micros now) {
  auto control = lock_spending_control(tx, tenant_id, id);
  if (!control) return std::move(control).error();
  if (referenced(tx, tenant_id, id)) return errors::of(ErrorCode::spending_control_in_use);
  tx.exec("DELETE FROM spending_controls WHERE tenant_id = ? AND id = ?", {tenant_id, id});
  emit(tx, tenant_id, "spending_control.deleted", id, now);
  return ok_status();
}

Result<SpendingControl> put_rule(store::Tx& tx, const std::string& tenant_id,
                                 const std::string& id, const RuleInput& input,
                                 time::Micros now) {
  auto control = lock_spending_control(tx, tenant_id, id);
  if (!control) return control;
  std::vector<ErrorItem> mismatches;
  add_mismatches(input, control->currency_code, "", mismatches);
  if (auto error = mismatch_error(std::move(mismatches))) return std::move(*error);
  std::erase_if(control->rules, [&](const Rule& rule) { return rule.type == input.rule.type; });
  control->rules.push_back(input.rule);
  return save(tx, tenant_id, std::move(control).value(), now);
}

Result<SpendingControl> delete_rule(store::Tx& tx, const std::string& tenant_id,
                                    const std::string& id, const std::string& type,
                                    time::Micros now) {
  auto control = lock_spending_control(tx, tenant_id, id);
  if (!control) return control;
  if (std::erase_if(control->rules, [&](const Rule& rule) { return rule.type == type; }) == 0) {
    return errors::of(ErrorCode::item_not_found, "type",
                      "the spending control has no rule of this type");
  }
  return save(tx, tenant_id, std::move(control).value(), now);
}

}  // namespace tesoro::spending_controls
