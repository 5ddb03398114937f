#pragma once
// Activation links of physical cards. A physical card starts pending_activation; a link made for
// it carries a secret token (32 random bytes, base64url) in its url, which the cardholder opens to
// activate the card. Only the token's sha256 is stored: the token is known to the caller of
// create_activation_link alone, and a link is found again from its token across tenants (the url
// names no tenant).
//
// States: pending, used, expired. `expired` is never stored: a pending link whose expiry (on its
// tenant's clock) has passed reads as expired, so that a sandbox clock advance expires links at
// once and no worker has to sweep them.
#include <cstdint>
#include <optional>
#include <string>

#include "core/page.hpp"
#include "core/result.hpp"
#include "core/time.hpp"
#include "domain/cards/cards.hpp"
#include "store/store.hpp"

namespace tesoro::cards {

struct ActivationLink {
  std::string id;  // cal_
  std::string card_id;
  std::string state;  // pending | used | expired (derived from the tenant's time)
  time::Micros expires_at_micros = 0;
  std::optional<std::string> used_at;
  std::string inserted_at;
  std::string updated_at;
};

struct CreatedActivationLink {
  ActivationLink link;
  std::string token;  // the secret of the url; never stored, logged nor put in an event
};

// A link for a physical card pending activation, expiring limits::k_activation_link_ttl_seconds
// after `now` (tenant time). item_not_found at card_id for an unknown card;
// card_invalid_state at card_id for a virtual card or one not pending activation. Emits
// activation_link.created.
Result<CreatedActivationLink> create_activation_link(store::Tx& tx, const std::string& tenant_id,
                                                     const std::string& card_id,
                                                     time::Micros now);

// item_not_found ("activation link not found") when absent or another tenant's. `now` (tenant
// time) decides whether a pending link reads as expired.
Result<ActivationLink> get_activation_link(store::Tx& tx, const std::string& tenant_id,
                                           const std::string& id, time::Micros now);

// Newest first; only `card_id`'s links when given (none for an unknown card).
Result<PageOf<ActivationLink>> list_activation_links(store::Tx& tx, const std::string& tenant_id,
                                                     const std::optional<std::string>& card_id,
                                                     time::Micros now, std::int64_t offset,
                                                     std::int64_t limit);

// What a link's token leads to, for the activation page. Expected outcomes are values, not
// errors: the page answers each with a page of its own.
enum class TokenOutcome {
  unknown,            // no link has this token
  expired,            // pending, but its expiry passed on its tenant's clock
  used,               // used already (its card was activated through it)
  card_not_pending,   // pending, but its card is no longer pending activation
  ready,              // pending and its card pending activation: the page offers activation
  activated,          // use_activation_link activated the card just now
};

struct TokenLookup {
  TokenOutcome outcome = TokenOutcome::unknown;
  std::string tenant_id;
  ActivationLink link;
  Card card;  // set unless unknown
  std::optional<std::string> cardholder_name;  // "First Last" when the card has a cardholder
};

// Finds the link of `token` and what it leads to; `real_now` is the real time, to which the
// link's tenant's clock offset is added.
Result<TokenLookup> look_up_token(store::Tx& tx, const std::string& token, time::Micros real_now);

// Uses the link of `token`: when ready, the card becomes active (cards::activate_card) and the
// link used, in this unit; activated is then the outcome. Any other outcome changes nothing.
// Emits activation_link.used (and the card's card.active).
Result<TokenLookup> use_activation_link(store::Tx& tx, const std::string& token,
                                        time::Micros real_now);

}  // namespace tesoro::cards
