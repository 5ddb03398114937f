#pragma once
// Card transactions: sandbox merchant authorizations, two-phase as on card networks.
//
// An authorization is approved or declined. An approved one holds its amount on the card's
// prepaid account (available drops, posted does not; see ledger::Journal::hold) and is
// `pending` until a step closes it:
//   capture   (whole or partial; posts the captured amount to the card network system account
//              and releases the rest)                              -> captured
//   increment (holds more; the balance and the limits must allow it) stays pending
//   reverse   (whole or partial; releases it)                      -> reversed when nothing is
//                                                                     left held, else pending
//   expiry    (7 days on the tenant clock without capture; releases the hold) -> expired
//   refund    (of a captured one, whole or partial; credits the card back)   -> refunded once
//              everything captured is refunded, else captured
// Each step is one history item, one event `card_transaction.<step type>` and its postings.
//
// Declines, in precedence order: card_canceled (05), card_inactive (62: blocked or
// pending_activation), currency_mismatch (05), not_allowed (57: a channel the card type may not
// use: virtual cards are online only; a card_usage rule of the card's controls that disables the
// channel too declines as spending_controls instead, naming its control), spending_controls (rules
// of the card's control, then of its group's control, each in spending_controls::rule_types()
// order; 57 for card_usage, mcc, mid and merchant_name, 61 for withdrawal_velocity, 65 for
// velocity), insufficient_funds (51).
//
// Velocity usage of a card in a window: what its approved authorizations made in the window
// still hold plus what they captured (that is, authorized less reversed, released and expired);
// refunds do not restore it. velocity counts every channel, withdrawal_velocity only
// atm_withdrawal. A limit applies only to cards of its control's currency.
//
// Concurrency: every step locks the card's prepaid account first (Journal::lock), so the steps
// of one card run one at a time, and usage is read under that lock.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/page.hpp"
#include "core/result.hpp"
#include "core/time.hpp"
#include "domain/cards/cards.hpp"
#include "domain/spending_controls/rules.hpp"
#include "domain/spending_controls/spending_controls.hpp"
#include "store/store.hpp"

namespace tesoro::cards {


struct AuthorizationRequest {
  std::int64_t amount_minor = 0;
  std::string currency;
  spending_controls::Purchase purchase;
};

struct DeclinedBy {
  std::string spending_control_id;
  std::string rule_type;
};

// Who decided an authorization (decisions.md, "Authorization decisioning by the tenant"):
//   by tesoro:   Tesoro's own checks: reason `approved`, or the decline reason. When the tenant's
//                endpoint was asked and approved but the money had gone by the time the decision
//                was recorded, the decline is Tesoro's too (`insufficient_funds`), with the
//                endpoint and the time it took;
//   by endpoint: the tenant's answer: webhook_approved | webhook_declined;
//   by fallback: the endpoint's authorization_fallback, after webhook_timeout | webhook_error.
struct Decision {
  std::string by = "tesoro";
  std::optional<std::string> webhook_endpoint_id;
  std::string reason = "approved";
  std::optional<std::int64_t> duration_ms;
};

// What the tenant's endpoint decided (domain/cards/authorization_decisions.hpp), handed to
// authorize() and increment(), which apply it after Tesoro's own checks.
struct TenantDecision {
  std::string webhook_endpoint_id;
  bool approved = false;
  std::string by;      // endpoint | fallback
  std::string reason;  // webhook_approved | webhook_declined | webhook_timeout | webhook_error
  std::optional<std::string> detail;  // the endpoint's `reason`, kept on a decline
  std::int64_t duration_ms = 0;
};

struct TransactionStep {
  // authorization_approved | authorization_declined | authorization_increment |
  // authorization_reversal | authorization_expiry | capture | refund
  std::string type;
  std::int64_t amount_minor = 0;
  std::string performed_at;
};

struct CardTransaction {
  std::string id;  // ctx_
  std::string card_id;
  std::string type;   // authorization_approved | authorization_declined
  std::string state;  // pending | captured | reversed | expired | refunded | declined
  std::string currency;
  std::int64_t amount_minor = 0;  // authorized, increments included
  std::int64_t held_minor = 0;
  std::int64_t captured_minor = 0;
  std::int64_t reversed_minor = 0;
  std::int64_t released_minor = 0;  // the rest of a partial capture
  std::int64_t expired_minor = 0;
  std::int64_t refunded_minor = 0;
  spending_controls::Purchase purchase;
  std::optional<std::string> decline_reason;
  std::string iso8583_code;  // 00 when approved
  std::optional<DeclinedBy> declined_by;
  std::optional<std::string> decline_reason_detail;  // the tenant endpoint's reason
  Decision decision;
  std::vector<TransactionStep> history;
  std::optional<std::string> expires_at;  // of a pending hold
  std::string inserted_at;
  std::string updated_at;
};

// item_not_found for an unknown card. Otherwise 201-worthy: approved or declined.
// `tenant`: what the tenant's endpoint decided, when it was asked; it applies only when Tesoro's
// own checks, run again here, approve. `id`: the id the endpoint was told (empty: a new one).
//
// `unasked`: given when the tenant has an authorization endpoint that was not asked, because
// Tesoro's checks declined in the read before (approvable_authorization). If they approve now
// (money came meanwhile), nothing is written, *unasked is set and the error is
// service_is_unavailable: the caller asks the endpoint instead (the tenant decides every
// authorization that passes Tesoro's checks).
Result<CardTransaction> authorize(store::Tx& tx, const std::string& tenant_id,
                                  const std::string& card_id, const AuthorizationRequest& request,
                                  time::Micros now, const TenantDecision* tenant = nullptr,
                                  const std::string& id = "", bool* unasked = nullptr);

// What Tesoro's own checks would decide now, without writing (a read snapshot; the decision
// that counts is the write's). For an authorization that they approve: the card, to put the
// authorization to the tenant's endpoint. nullopt when they decline it or the card is unknown.
std::optional<Card> approvable_authorization(store::Tx& tx, const std::string& tenant_id,
                                             const std::string& card_id,
                                             const AuthorizationRequest& request,
                                             time::Micros now);
// The same for an increment of `amount_minor` (in `currency` when given): the transaction and
// its card when every check of increment() would pass.
struct Incrementable {
  CardTransaction transaction;
  Card card;
};
std::optional<Incrementable> incrementable(store::Tx& tx, const std::string& tenant_id,
                                           const std::string& id, std::int64_t amount_minor,
                                           const std::optional<std::string>& currency,
                                           time::Micros now);
// The steps. item_not_found ("card transaction not found");
// card_transaction_invalid_state when the state does not allow the step;
// amount_exceeds_authorization when the amount is more than is open (held for capture and
// reverse, captured less refunded for refund); increment: insufficient_funds or
// spending_limit_exceeded. An absent amount means the whole open amount.
Result<CardTransaction> capture(store::Tx& tx, const std::string& tenant_id,
                                const std::string& id, std::optional<std::int64_t> amount_minor,
                                time::Micros now);
// increment also takes the tenant's decision, when its endpoint was asked: after every check of
// its own passes, a decline (or a timeout or error that falls back to decline) is an
// authorization_declined naming the outcome, and changes nothing.
// `unasked` as for authorize(): the increment would pass and the endpoint was not asked.
Result<CardTransaction> increment(store::Tx& tx, const std::string& tenant_id,
                                  const std::string& id, std::int64_t amount_minor,
                                  time::Micros now, const TenantDecision* tenant = nullptr,
                                  bool* unasked = nullptr);
Result<CardTransaction> reverse(store::Tx& tx, const std::string& tenant_id,
                                const std::string& id, std::optional<std::int64_t> amount_minor,
                                time::Micros now);
Result<CardTransaction> refund(store::Tx& tx, const std::string& tenant_id, const std::string& id,
                               std::optional<std::int64_t> amount_minor, time::Micros now);

// One of the steps above for the API, whose amounts carry a currency: item_not_found for an
// unknown transaction, then currency_mismatch (at amount.currency) when `currency` is given
// and is not the transaction's, then as the step itself.
enum class Step { capture, increment, reverse, refund };
Result<CardTransaction> apply_step(store::Tx& tx, const std::string& tenant_id,
                                   const std::string& id, Step step,
                                   std::optional<std::int64_t> amount_minor,
                                   const std::optional<std::string>& currency, time::Micros now,
                                   const TenantDecision* tenant = nullptr,
                                   bool* unasked = nullptr);

Result<CardTransaction> get_card_transaction(store::Tx& tx, const std::string& tenant_id,
                                             const std::string& id);
// Newest first.
Result<PageOf<CardTransaction>> list_card_transactions(store::Tx& tx,
                                                       const std::string& tenant_id,
                                                       const std::string& card_id,
                                                       std::int64_t offset, std::int64_t limit);

// Expires up to `limit` pending authorizations whose hold ran out on their tenant's clock
// (real_now + the tenant's clock offset); returns how many. Run by the card expiry worker.
std::int64_t expire_due(store::Tx& tx, time::Micros real_now, std::int64_t limit);

// Each limit that applies to the card (its own control's, then its group's), with what was used
// in the current window and what remains.
struct LimitUsage {
  std::string spending_control_id;
  std::string rule_type;  // velocity | withdrawal_velocity
  spending_controls::Period period;
  std::string currency;
  std::int64_t limit_minor = 0;
  std::int64_t used_minor = 0;
  std::int64_t remaining_minor = 0;  // never below 0
  std::string window_start;
  std::string window_end;
};
std::vector<LimitUsage> limit_usages(store::Tx& tx, const std::string& tenant_id,
                                     const Card& card, time::Micros now);

// Card invariants: each card's prepaid account holds exactly what its pending authorizations
// hold; each transaction's amounts add up (amount = held + captured + reversed + released +
// expired; refunded <= captured). Empty when all hold.
std::vector<std::string> verify(store::Tx& tx);

}  // namespace tesoro::cards
