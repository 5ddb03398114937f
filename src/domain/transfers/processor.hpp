#pragma once
// The sandbox network's processor (the `network.processor` worker): moves outgoing transfers
// through their states on their tenant's clock, and the invariants `tesoro verify` checks of
// them.
#include <cstdint>
#include <string>
#include <vector>

#include "core/time.hpp"
#include "domain/transfers/outgoing_transfers.hpp"
#include "store/store.hpp"

namespace tesoro::transfers {

// The processor: moves at most `limit` transfers whose next step came due on their tenant's
// clock (tenant_clock::due_rows over outgoing_transfers_moving). Returns how many it moved; the
// caller runs it again while it returns `limit`.
std::int64_t process_due(store::Tx& tx, time::Micros real_now, std::int64_t limit);

// A transfer that is a payout's leg (payout_id set) emits no outgoing_transfer.<state>: each of
// its steps goes to the payouts module, which registers what a step does (payouts::follow brings
// the payout in line with its leg), once, at static initialisation, so that this module needs
// nothing of that one. The processor calls it in the unit that wrote the step; a leg's step
// with nothing registered is a logic_error (the unit fails). Returns true, for that
// initialisation.
using LegFollower = void (*)(store::Tx& tx, const std::string& tenant_id, const Transfer& leg,
                             time::Micros at);
bool register_leg_follower(LegFollower follower);

// Invariants for `tesoro verify`: every account that is not a card's prepaid account (those are
// cards::verify's) holds exactly what its moving transfers hold; a successful transfer holds
// nothing and has one settlement entry debiting its source by its amount; a failed one holds
// nothing and has no entry; a delivered one has its successful attempt of the same amount on
// the creditor's side. One message per violation.
std::vector<std::string> verify(store::Tx& tx);

}  // namespace tesoro::transfers
