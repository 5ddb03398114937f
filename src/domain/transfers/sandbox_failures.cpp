// The sandbox network's failure triggers in descriptions (outgoing transfers and payouts).
#include "domain/transfers/sandbox_failures.hpp"

#include <array>

#include "domain/transfers/outgoing_transfers.hpp"

namespace tesoro::transfers {

std::optional<std::string> requested_failure(const std::optional<std::string>& description) {
  if (!description) return std::nullopt;
  static constexpr std::array<std::string_view, 4> k_triggers = {
      "tx_unknown", "tx_risk_control", "tx_breb_timeout", "tx_provider_unavailable"};
  std::optional<std::string> first;
  std::size_t first_at = std::string::npos;
  for (std::string_view trigger : k_triggers) {
    const std::size_t at = description->find(trigger);
    if (at < first_at) {
      first_at = at;
      first = std::string(trigger.substr(3));  // without "tx_"
    }
  }
  return first;
}

}  // namespace tesoro::transfers
