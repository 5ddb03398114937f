#include "domain/cards/configuration_groups.hpp"

#include <boost/json.hpp>

#include "core/ids.hpp"
#include "domain/events/events.hpp"
#include "domain/spending_controls/spending_controls.hpp"
#include "store/pages.hpp"

namespace tesoro::cards {
namespace {

namespace json = boost::json;

constexpr const char* k_columns =
    "id, name, spending_control_id, is_default, inserted_at, updated_at";

ConfigurationGroup from_row(const store::Row& row) {
  ConfigurationGroup group;
  group.id = row.text(0);
  group.name = row.text(1);
  group.spending_control_id = row.optional_text(2);
  group.is_default = row.integer(3) == 1;
  group.inserted_at = row.text(4);
  group.updated_at = row.text(5);
  return group;
}

void emit(store::Tx& tx, const std::string& tenant_id, std::string_view type,
          const ConfigurationGroup& group, time::Micros now) {
  json::value control = group.spending_control_id ? json::value(*group.spending_control_id)
                                                  : json::value(nullptr);
  events::emit(tx, tenant_id, type,
               json::serialize(json::object{{"configuration_group_id", group.id},
                                            {"spending_control_id", control}}),
               now);
}

// A group may only name a control of its tenant. The control's row stays locked until the unit
// ends, so that a concurrent DELETE of the control waits and then sees this reference.
Status check_control(store::Tx& tx, const std::string& tenant_id,
                     const std::optional<std::string>& spending_control_id) {
  if (!spending_control_id) return ok_status();
  auto control = spending_controls::lock_spending_control(tx, tenant_id, *spending_control_id);
  if (!control) {
    return errors::of(ErrorCode::item_not_found, "spending_control_id",
                      "spending control not found");
  }
  return ok_status();
}

std::optional<ConfigurationGroup> find_default(store::Tx& tx, const std::string& tenant_id) {
  auto row = tx.query_one(std::string("SELECT ") + k_columns +
                              " FROM configuration_groups WHERE tenant_id = ? AND is_default = 1",
                          {tenant_id});
  if (!row) return std::nullopt;
  return from_row(*row);
}

}  // namespace

Result<ConfigurationGroup> create_configuration_group(
    store::Tx& tx, const std::string& tenant_id, const std::string& name,
    const std::optional<std::string>& spending_control_id, time::Micros now) {
  if (auto checked = check_control(tx, tenant_id, spending_control_id); !checked) {
    return std::move(checked).error();
  }
  ConfigurationGroup group;
  group.id = ids::generate("ccg");
  group.name = name;
  group.spending_control_id = spending_control_id;
  group.inserted_at = group.updated_at = time::iso(now);
  tx.exec(
      "INSERT INTO configuration_groups (tenant_id, id, name, spending_control_id, is_default, "
      "inserted_at, updated_at) VALUES (?, ?, ?, ?, 0, ?, ?)",
      {tenant_id, group.id, group.name, store::optional_value(spending_control_id), group.inserted_at,
       group.updated_at});
  emit(tx, tenant_id, "configuration_group.created", group, now);
  return group;
}

Result<ConfigurationGroup> get_configuration_group(store::Tx& tx, const std::string& tenant_id,
                                                   const std::string& id) {
  auto row = tx.query_one(std::string("SELECT ") + k_columns +
                              " FROM configuration_groups WHERE tenant_id = ? AND id = ?",
                          {tenant_id, id});
  if (!row) return errors::item_not_found("configuration group");
  return from_row(*row);
}

Result<PageOf<ConfigurationGroup>> list_configuration_groups(store::Tx& tx,
                                                             const std::string& tenant_id,
                                                             std::int64_t offset,
                                                             std::int64_t limit) {
  return store::query_page<ConfigurationGroup>(tx, k_columns, " FROM configuration_groups WHERE tenant_id = ?", {tenant_id}, "inserted_at DESC, id DESC", offset, limit,
                                 from_row);
}

Result<ConfigurationGroup> update_configuration_group(store::Tx& tx, const std::string& tenant_id,
                                                      const std::string& id,
                                                      const ConfigurationGroupChanges& changes,
                                                      time::Micros now) {
  auto row = tx.query_one(std::string("SELECT ") + k_columns +
                              " FROM configuration_groups WHERE tenant_id = ? AND id = ?" +
                              std::string(tx.lock_rows()),
                          {tenant_id, id});
  if (!row) return errors::item_not_found("configuration group");
  ConfigurationGroup group = from_row(*row);
  if (changes.spending_control_id) {
    if (auto checked = check_control(tx, tenant_id, *changes.spending_control_id); !checked) {
      return std::move(checked).error();
    }
    group.spending_control_id = *changes.spending_control_id;
  }
  if (changes.name) group.name = *changes.name;
  group.updated_at = time::iso(now);
  tx.exec(
      "UPDATE configuration_groups SET name = ?, spending_control_id = ?, updated_at = ? "
      "WHERE tenant_id = ? AND id = ?",
      {group.name, store::optional_value(group.spending_control_id), group.updated_at, tenant_id, id});
  emit(tx, tenant_id, "configuration_group.updated", group, now);
  return group;
}

ConfigurationGroup default_configuration_group(store::Tx& tx, const std::string& tenant_id,
                                               time::Micros now) {
  if (auto found = find_default(tx, tenant_id)) return *found;
  // Two units may get here at once: the partial unique index configuration_groups_one_default
  // lets one insert win; the other inserts nothing and reads the winner's row (on PostgreSQL
  // its insert waited for the winner to commit, and the next statement sees it).
  ConfigurationGroup group;
  group.id = ids::generate("ccg");
  group.name = "Default";
  group.is_default = true;
  group.inserted_at = group.updated_at = time::iso(now);
  std::int64_t inserted = tx.exec(
      "INSERT INTO configuration_groups (tenant_id, id, name, spending_control_id, is_default, "
      "inserted_at, updated_at) VALUES (?, ?, ?, NULL, 1, ?, ?) ON CONFLICT DO NOTHING",
      {tenant_id, group.id, group.name, group.inserted_at, group.updated_at});
  if (inserted == 1) {
    emit(tx, tenant_id, "configuration_group.created", group, now);
    return group;
  }
  auto found = find_default(tx, tenant_id);
  if (!found) throw store::StoreError("the default configuration group vanished", false);
  return *found;
}

}  // namespace tesoro::cards
