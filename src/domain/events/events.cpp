#include "domain/events/events.hpp"

#include "core/ids.hpp"
#include "core/time.hpp"

namespace tesoro::events {

std::string emit(store::Tx& tx, std::string_view tenant_id, std::string_view type,
                 std::string_view data_json) {
  std::string id = ids::generate("evt");
  tx.exec("INSERT INTO events (tenant_id, id, type, data, inserted_at) VALUES (?, ?, ?, ?, ?)",
          {std::string(tenant_id), id, std::string(type), std::string(data_json),
           time::iso_now()});
  return id;
}

}  // namespace tesoro::events
