#pragma once
// The events outbox. Modules call emit() inside the transaction of the change the event
// describes, so an event exists exactly when its change does. Delivery comes later.
#include <string>
#include <string_view>

#include "store/store.hpp"

namespace tesoro::events {

// `data_json` is the serialised JSON object of the event. Returns the event id (evt_...).
std::string emit(store::Tx& tx, std::string_view tenant_id, std::string_view type,
                 std::string_view data_json);

}  // namespace tesoro::events
