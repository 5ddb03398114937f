#pragma once
// Card configuration groups: a card belongs to one (the tenant's default unless told), and the
// group's spending control applies to every card of the group, on top of the card's own.
#include <cstdint>
#include <optional>
#include <string>

#include "core/page.hpp"
#include "core/result.hpp"
#include "core/time.hpp"
#include "store/store.hpp"

namespace tesoro::cards {

struct ConfigurationGroup {
  std::string id;  // ccg_
  std::string name;
  std::optional<std::string> spending_control_id;
  bool is_default = false;
  std::string inserted_at;
  std::string updated_at;
};

// item_not_found when spending_control_id names no control of the tenant.
Result<ConfigurationGroup> create_configuration_group(
    store::Tx& tx, const std::string& tenant_id, const std::string& name,
    const std::optional<std::string>& spending_control_id, time::Micros now);
// item_not_found ("configuration group not found").
Result<ConfigurationGroup> get_configuration_group(store::Tx& tx, const std::string& tenant_id,
                                                   const std::string& id);
Result<PageOf<ConfigurationGroup>> list_configuration_groups(store::Tx& tx,
                                                             const std::string& tenant_id,
                                                             std::int64_t offset,
                                                             std::int64_t limit);
// What a PATCH changes; absent members are kept.
struct ConfigurationGroupChanges {
  std::optional<std::string> name;
  // A value sets the group's control: a control's id, or none (the inner nullopt) to clear it.
  std::optional<std::optional<std::string>> spending_control_id;
};
// item_not_found for an unknown group, or a spending_control_id naming no control of the
// tenant.
Result<ConfigurationGroup> update_configuration_group(store::Tx& tx, const std::string& tenant_id,
                                                      const std::string& id,
                                                      const ConfigurationGroupChanges& changes,
                                                      time::Micros now);
// The tenant's default group, made on first use (init and tenant create make it; a tenant
// created before cards existed gets it here). Safe when two units make it at once.
ConfigurationGroup default_configuration_group(store::Tx& tx, const std::string& tenant_id,
                                               time::Micros now);

}  // namespace tesoro::cards
