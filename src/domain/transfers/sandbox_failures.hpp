#pragma once
// The failures a sandbox transfer's description can ask the simulated network for.
#include <optional>
#include <string>

namespace tesoro::transfers {

// The sandbox failure a description asks for: its first trigger among tx_unknown,
// tx_risk_control, tx_breb_timeout, tx_provider_unavailable, without the `tx_` (unknown,
// risk_control, ...); nullopt when it names none.
std::optional<std::string> requested_failure(const std::optional<std::string>& description);

}  // namespace tesoro::transfers
