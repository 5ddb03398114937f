#include "domain/cards/card_transactions.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <map>
#include <utility>

#include "core/check.hpp"
#include "core/ids.hpp"
#include "core/json_writer.hpp"
#include "core/limits.hpp"
#include "core/money.hpp"
#include "domain/cards/configuration_groups.hpp"
#include "domain/tenant_clock/tenant_clock.hpp"
#include "domain/events/events.hpp"
#include "domain/ledger/accounts.hpp"
#include "domain/ledger/journal.hpp"
#include "store/pages.hpp"

namespace tesoro::cards {
namespace {

namespace json = boost::json;

constexpr const char* k_columns =
    "id, card_id, type, state, currency, amount, held, captured, reversed, released, expired, "
    "refunded, channel, merchant, decline_reason, iso8583_code, declined_by, history, "
    "expires_at_micros, inserted_at, updated_at, decision, decline_reason_detail";

// ---- Row encoding -------------------------------------------------------------------------

std::string text_of(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  return value && value->is_string() ? std::string(value->get_string()) : std::string();
}

// The stored JSON of the row and the events is written as text (json_text::Writer gives what
// json::serialize gave): an authorization built and freed a dozen Boost.JSON objects for it.
std::string encode_merchant(const spending_controls::Merchant& m) {
  json_text::Writer out;
  out.begin_object().key("name").string(m.name).key("mcc").string(m.mcc);
  out.key("mid").string(m.mid).key("country").string(m.country).end_object();
  return out.take();
}

spending_controls::Merchant decode_merchant(const std::string& text) {
  json::object o = json::parse(text).as_object();
  return {text_of(o, "name"), text_of(o, "mcc"), text_of(o, "mid"), text_of(o, "country")};
}

std::string encode_history(const std::vector<TransactionStep>& history) {
  json_text::Writer out;
  out.begin_array();
  for (const TransactionStep& step : history) {
    out.begin_object().key("type").string(step.type).key("amount").integer(step.amount_minor);
    out.key("performed_at").string(step.performed_at).end_object();
  }
  out.end_array();
  return out.take();
}

std::vector<TransactionStep> decode_history(const std::string& text) {
  std::vector<TransactionStep> history;
  const json::value parsed = json::parse(text);  // kept alive while its array is walked
  for (const json::value& item : parsed.as_array()) {
    const json::object& o = item.as_object();
    history.push_back({text_of(o, "type"), o.at("amount").to_number<std::int64_t>(),
                       text_of(o, "performed_at")});
  }
  return history;
}

store::Value encode_declined_by(const std::optional<DeclinedBy>& by) {
  if (!by) return nullptr;
  json_text::Writer out;
  out.begin_object().key("spending_control_id").string(by->spending_control_id);
  out.key("rule_type").string(by->rule_type).end_object();
  return out.take();
}

std::optional<DeclinedBy> decode_declined_by(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  json::object o = json::parse(*text).as_object();
  return DeclinedBy{text_of(o, "spending_control_id"), text_of(o, "rule_type")};
}

std::string encode_decision(const Decision& decision) {
  json_text::Writer out(128);
  out.begin_object().key("by").string(decision.by).key("webhook_endpoint_id");
  if (decision.webhook_endpoint_id) {
    out.string(*decision.webhook_endpoint_id);
  } else {
    out.null();
  }
  out.key("reason").string(decision.reason).key("duration_ms");
  if (decision.duration_ms) {
    out.integer(*decision.duration_ms);
  } else {
    out.null();
  }
  out.end_object();
  return out.take();
}

// A row written before decisions were recorded was decided by Tesoro alone.
Decision decode_decision(const std::optional<std::string>& text,
                         const std::optional<std::string>& decline_reason) {
  Decision decision;
  if (!text) {
    decision.reason = decline_reason.value_or("approved");
    return decision;
  }
  json::object o = json::parse(*text).as_object();
  decision.by = text_of(o, "by");
  decision.reason = text_of(o, "reason");
  if (const json::value* id = o.if_contains("webhook_endpoint_id"); id && id->is_string()) {
    decision.webhook_endpoint_id = std::string(id->get_string());
  }
  if (const json::value* ms = o.if_contains("duration_ms"); ms && ms->is_int64()) {
    decision.duration_ms = ms->get_int64();
  }
  return decision;
}

CardTransaction from_row(const store::Row& row) {
  CardTransaction t;
  t.id = row.text(0);
  t.card_id = row.text(1);
  t.type = row.text(2);
  t.state = row.text(3);
  t.currency = row.text(4);
  t.amount_minor = row.integer(5);
  t.held_minor = row.integer(6);
  t.captured_minor = row.integer(7);
  t.reversed_minor = row.integer(8);
  t.released_minor = row.integer(9);
  t.expired_minor = row.integer(10);
  t.refunded_minor = row.integer(11);
  t.purchase.channel = row.text(12);
  t.purchase.merchant = decode_merchant(row.text(13));
  t.decline_reason = row.optional_text(14);
  t.iso8583_code = row.text(15);
  t.declined_by = decode_declined_by(row.optional_text(16));
  t.history = decode_history(row.text(17));
  if (!row.is_null(18)) t.expires_at = time::iso(row.integer(18));
  t.inserted_at = row.text(19);
  t.updated_at = row.text(20);
  t.decision = decode_decision(row.optional_text(21), t.decline_reason);
  t.decline_reason_detail = row.optional_text(22);
  return t;
}

std::string event_data(const CardTransaction& t, std::int64_t amount_minor) {
  json_text::Writer out;
  out.begin_object().key("card_transaction_id").string(t.id).key("card_id").string(t.card_id);
  out.key("amount").begin_object().key("amount").integer(amount_minor);
  out.key("currency").string(t.currency).end_object();
  out.key("state").string(t.state).end_object();
  return out.take();
}

// Appends the step to the history and emits its event; the caller writes the row.
void record_step(store::Tx& tx, const std::string& tenant_id, CardTransaction& t,
                 const std::string& type, std::int64_t amount_minor, time::Micros now) {
  t.updated_at = time::iso(now);
  if (t.state != "pending") t.expires_at.reset();  // only a pending hold expires
  t.history.push_back({type, amount_minor, t.updated_at});
  events::emit(tx, tenant_id, "card_transaction." + type, event_data(t, amount_minor), now);
}

void insert_row(store::Tx& tx, const std::string& tenant_id, const CardTransaction& t,
                time::Micros authorized_at, std::optional<time::Micros> expires_at) {
  tx.exec("INSERT INTO card_transactions (tenant_id, id, card_id, type, state, currency, amount, "
          "held, captured, reversed, released, expired, refunded, channel, merchant, "
          "decline_reason, iso8583_code, declined_by, history, authorized_at_micros, "
          "expires_at_micros, inserted_at, updated_at, decision, decline_reason_detail) "
          "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, 0, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          {tenant_id, t.id, t.card_id, t.type, t.state, t.currency, t.amount_minor, t.held_minor,
           t.purchase.channel, encode_merchant(t.purchase.merchant),
           t.decline_reason ? store::Value(*t.decline_reason) : store::Value(nullptr),
           t.iso8583_code, encode_declined_by(t.declined_by), encode_history(t.history),
           authorized_at, expires_at ? store::Value(*expires_at) : store::Value(nullptr),
           t.inserted_at, t.updated_at, encode_decision(t.decision),
           store::optional_value(t.decline_reason_detail)});
}

// Writes what a step changed. A transaction that is no longer pending has no expiry.
void update_row(store::Tx& tx, const std::string& tenant_id, const CardTransaction& t) {
  // After every step the amounts add up and only a pending transaction holds anything, as
  // `tesoro verify` checks afterwards (verify_amounts).
  TESORO_CHECK(t.held_minor >= 0 && t.captured_minor >= 0 && t.reversed_minor >= 0 &&
                   t.released_minor >= 0 && t.expired_minor >= 0 && t.refunded_minor >= 0 &&
                   t.refunded_minor <= t.captured_minor &&
                   (t.state == "pending") == (t.held_minor > 0) &&
                   t.amount_minor == t.held_minor + t.captured_minor + t.reversed_minor +
                                         t.released_minor + t.expired_minor,
               "card transaction " + t.id + " of tenant " + tenant_id + " (" + t.state +
                   "): its amounts do not add up");
  std::string sql =
      "UPDATE card_transactions SET state = ?, amount = ?, held = ?, captured = ?, "
      "reversed = ?, released = ?, expired = ?, refunded = ?, history = ?, updated_at = ?";
  if (t.state != "pending") sql += ", expires_at_micros = NULL";
  tx.exec(sql + " WHERE tenant_id = ? AND id = ?",
          {t.state, t.amount_minor, t.held_minor, t.captured_minor, t.reversed_minor,
           t.released_minor, t.expired_minor, t.refunded_minor, encode_history(t.history),
           t.updated_at, tenant_id, t.id});
}

// ---- Controls and usage -------------------------------------------------------------------

// The controls of these ids that exist, in order. A control that is gone (it cannot be deleted
// while assigned, so only a race with that delete) applies no rules.
std::vector<spending_controls::SpendingControl> controls_by_id(
    store::Tx& tx, const std::string& tenant_id, const std::vector<std::string>& ids) {
  std::vector<spending_controls::SpendingControl> controls;
  for (const std::string& id : ids) {
    auto control = spending_controls::get_spending_control(tx, tenant_id, id);
    if (control) controls.push_back(std::move(control).value());
  }
  return controls;
}

std::vector<std::string> control_ids(const Card& card,
                                     const std::optional<std::string>& group_control_id) {
  std::vector<std::string> ids;
  if (card.spending_control_id) ids.push_back(*card.spending_control_id);
  if (group_control_id) ids.push_back(*group_control_id);
  return ids;
}

// The controls that apply to the card, its own first, then its group's.
std::vector<spending_controls::SpendingControl> controls_of(store::Tx& tx,
                                                            const std::string& tenant_id,
                                                            const Card& card) {
  auto group = get_configuration_group(tx, tenant_id, card.configuration_group_id);
  std::optional<std::string> group_control_id;
  if (group) group_control_id = group->spending_control_id;
  return controls_by_id(tx, tenant_id, control_ids(card, group_control_id));
}

// What the card's approved authorizations made in [start, end) still hold plus what they
// captured; only ATM withdrawals when `withdrawals_only`. Summed here with a ceiling rather
// than by SQL SUM, which would fail on SQLite past 2^63 (captures of a card have no bound), and
// shown at most as the API's largest amount (above every limit, so it refuses as the sum would).
std::int64_t usage(store::Tx& tx, const std::string& tenant_id, const std::string& card_id,
                   const spending_controls::Window& window, bool withdrawals_only) {
  std::string sql =
      "SELECT held + captured FROM card_transactions WHERE tenant_id = ? AND card_id = ? "
      "AND authorized_at_micros >= ? AND authorized_at_micros < ? "
      "AND type = 'authorization_approved' AND held + captured > 0";
  if (withdrawals_only) sql += " AND channel = 'atm_withdrawal'";
  std::int64_t used = 0;
  for (const store::Row& row : tx.query(sql, {tenant_id, card_id, window.start, window.end})) {
    used = money::add(used, row.integer(0)).value_or(INT64_MAX);
  }
  return std::min(used, limits::k_amount_max_minor);
}

struct Cap {
  spending_controls::Period period;
  std::int64_t limit_minor;
};

std::vector<Cap> caps_of(const spending_controls::Rule& rule) {
  std::vector<Cap> caps;
  using spending_controls::Period;
  if (rule.daily_minor) caps.push_back({Period::daily, *rule.daily_minor});
  if (rule.weekly_minor) caps.push_back({Period::weekly, *rule.weekly_minor});
  if (rule.monthly_minor) caps.push_back({Period::monthly, *rule.monthly_minor});
  return caps;
}

bool is_velocity(const std::string& type) {
  return type == "velocity" || type == "withdrawal_velocity";
}

// The first velocity rule of `control` that `amount_minor` more would break, or nullopt.
// withdrawal_velocity looks only at ATM withdrawals, and so only limits them.
std::optional<std::string> refusing_limit(store::Tx& tx, const std::string& tenant_id,
                                          const Card& card,
                                          const spending_controls::SpendingControl& control,
                                          const std::string& channel, std::int64_t amount_minor,
                                          time::Micros now) {
  if (control.currency_code != card.currency) return std::nullopt;
  for (const spending_controls::Rule& rule : control.rules) {
    if (!is_velocity(rule.type)) continue;
    const bool withdrawals_only = rule.type == "withdrawal_velocity";
    if (withdrawals_only && channel != "atm_withdrawal") continue;
    for (const Cap& cap : caps_of(rule)) {
      auto window = spending_controls::window_of(cap.period, now);
      auto total = money::add(usage(tx, tenant_id, card.id, window, withdrawals_only),
                              amount_minor);
      if (!total || *total > cap.limit_minor) return rule.type;
    }
  }
  return std::nullopt;
}

// ---- Declines -----------------------------------------------------------------------------

struct Decline {
  std::string reason;
  std::string iso8583_code;
  std::optional<DeclinedBy> declined_by;
};

std::string iso_code_of_rule(const std::string& rule_type) {
  if (rule_type == "withdrawal_velocity") return "61";
  if (rule_type == "velocity") return "65";
  return "57";
}

// The reason to decline, in the precedence order of the header, or nullopt to approve.
std::optional<Decline> decline_of(store::Tx& tx, const std::string& tenant_id,
                                  const CardWithGroupControl& found,
                                  const AuthorizationRequest& request,
                                  const ledger::Journal::Balance& balance, time::Micros now) {
  const Card& card = found.card;
  if (card.state == "canceled") return Decline{"card_canceled", "05", std::nullopt};
  if (card.state != "active") return Decline{"card_inactive", "62", std::nullopt};
  if (request.currency != card.currency) return Decline{"currency_mismatch", "05", std::nullopt};
  // Most cards have no control: then no lookup at all.
  const auto controls =
      controls_by_id(tx, tenant_id, control_ids(card, found.group_spending_control_id));
  if (card.type == "virtual" && request.purchase.channel != "online_purchase") {
    // A channel the tenant disabled with a card_usage rule is named as that control's decline,
    // even where the card's type could not use the channel anyway.
    for (const auto& control : controls) {
      if (spending_controls::refusing_rule(control, request.purchase) == "card_usage") {
        return Decline{"spending_controls", "57", DeclinedBy{control.id, "card_usage"}};
      }
    }
    return Decline{"not_allowed", "57", std::nullopt};
  }
  for (const auto& control : controls) {
    auto rule = spending_controls::refusing_rule(control, request.purchase);
    if (!rule) {
      rule = refusing_limit(tx, tenant_id, card, control, request.purchase.channel,
                            request.amount_minor, now);
    }
    if (rule) {
      return Decline{"spending_controls", iso_code_of_rule(*rule), DeclinedBy{control.id, *rule}};
    }
  }
  if (request.amount_minor > balance.available()) {
    return Decline{"insufficient_funds", "51", std::nullopt};
  }
  return std::nullopt;
}

// ---- Steps --------------------------------------------------------------------------------

Error invalid_state(const CardTransaction& t, std::string_view step) {
  return errors::of(ErrorCode::card_transaction_invalid_state, std::nullopt,
                    "the card transaction is " + t.state + ": it cannot be " + std::string(step));
}

Error exceeds(std::int64_t open_minor, const std::string& currency) {
  return errors::of(ErrorCode::amount_exceeds_authorization, "amount.amount",
                    "the amount is larger than what is open (" +
                        money::display(open_minor, currency) + ")");
}

// The amount of a step: the whole open amount when absent; positive and at most what is open.
Result<std::int64_t> step_amount(std::optional<std::int64_t> amount_minor,
                                 std::int64_t open_minor, const std::string& currency) {
  std::int64_t amount = amount_minor.value_or(open_minor);
  if (amount <= 0) return errors::validation("must be a positive amount", "amount.amount");
  if (amount > open_minor) return exceeds(open_minor, currency);
  return amount;
}

struct Locked {
  Card card;
  CardTransaction transaction;
};

// Every step's start: finds the transaction's card, locks its prepaid account (so the steps of
// one card run one at a time) and only then reads the transaction row for update.
Result<Locked> lock_transaction(store::Tx& tx, ledger::Journal& journal,
                                const std::string& tenant_id, const std::string& id) {
  auto found = tx.query_one("SELECT card_id FROM card_transactions WHERE tenant_id = ? AND id = ?",
                            {tenant_id, id});
  if (!found) return errors::item_not_found("card transaction");
  auto card = get_card(tx, tenant_id, found->text(0));
  if (!card) return std::move(card).error();
  if (Status locked = journal.lock({{tenant_id, card->prepaid_account_id}}); !locked) {
    return std::move(locked).error();
  }
  auto row = tx.query_one(std::string("SELECT ") + k_columns +
                              " FROM card_transactions WHERE tenant_id = ? AND id = ?" +
                              std::string(tx.lock_rows()),
                          {tenant_id, id});
  if (!row) return errors::item_not_found("card transaction");
  return Locked{std::move(card).value(), from_row(*row)};
}

// Why an increment of `amount_minor` may not be made, funds aside (the hold checks them):
// card_transaction_invalid_state, validation_error for a non-positive amount, card_invalid_state (a
// blocked or canceled card takes no new money, like a new authorization would be declined),
// balance_overflow, spending_limit_exceeded. Shared by the step and by the read-only
// check before the tenant's endpoint is asked (incrementable), so that both apply one set.
std::optional<Error> increment_refusal(store::Tx& tx, const std::string& tenant_id,
                                       const Card& card, const CardTransaction& t,
                                       std::int64_t amount_minor, time::Micros now) {
  if (t.state != "pending") return invalid_state(t, "incremented");
  if (amount_minor <= 0) return errors::validation("must be a positive amount", "amount.amount");
  if (card.state != "active") {
    return errors::of(ErrorCode::card_invalid_state, std::nullopt,
                      "the card is " + card.state + ": its authorizations cannot grow");
  }
  auto total = money::add(t.amount_minor, amount_minor);
  if (!total || *total > limits::k_amount_max_minor) {
    return errors::of(ErrorCode::balance_overflow, "amount.amount");
  }
  for (const auto& control : controls_of(tx, tenant_id, card)) {
    if (refusing_limit(tx, tenant_id, card, control, t.purchase.channel, amount_minor, now)) {
      return errors::of(ErrorCode::spending_limit_exceeded, "amount.amount");
    }
  }
  return std::nullopt;
}

// Releases the transaction's whole hold and ends it as expired (the expiry worker's step).
Status expire_locked(store::Tx& tx, ledger::Journal& journal, const std::string& tenant_id,
                     const Card& card, CardTransaction& t, time::Micros now) {
  const std::int64_t held = t.held_minor;
  if (Status released = journal.release(tenant_id, card.prepaid_account_id, held); !released) {
    return released;
  }
  t.expired_minor += held;  // amount = held + the rest: no overflow
  t.held_minor = 0;
  t.state = "expired";
  record_step(tx, tenant_id, t, "authorization_expiry", held, now);
  update_row(tx, tenant_id, t);
  return ok_status();
}

}  // namespace

Result<CardTransaction> authorize(store::Tx& tx, const std::string& tenant_id,
                                  const std::string& card_id, const AuthorizationRequest& request,
                                  time::Micros now, const TenantDecision* tenant,
                                  const std::string& id, bool* unasked) {
  // The card and its group's control in one statement, read before the lock like the card
  // alone was (the group's control was read after it, a moment later: no guarantee hangs on it).
  auto found = get_card_with_group_control(tx, tenant_id, card_id);
  if (!found) return std::move(found).error();
  const Card* card = &found->card;
  ledger::Journal journal(tx, now);
  if (Status locked = journal.lock({{tenant_id, card->prepaid_account_id}}); !locked) {
    return std::move(locked).error();
  }
  auto balance = journal.balance_of(tenant_id, card->prepaid_account_id);
  if (!balance) return errors::internal();
  // Tesoro's checks first: the tenant's answer decides only what they approve.
  auto decline = decline_of(tx, tenant_id, found.value(), request, *balance, now);
  if (unasked && !decline && !tenant) {
    *unasked = true;
    return errors::unavailable();
  }
  Decision decision;
  if (tenant) {
    decision.webhook_endpoint_id = tenant->webhook_endpoint_id;
    decision.duration_ms = tenant->duration_ms;
  }
  if (decline) {
    decision.reason = decline->reason;
  } else if (tenant) {
    decision.by = tenant->by;
    decision.reason = tenant->reason;
    if (!tenant->approved) {
      decline = Decline{tenant->reason, tenant->reason == "webhook_declined" ? "05" : "91",
                        std::nullopt};
    }
  }
  if (!decline) {
    Status held = journal.hold(tenant_id, card->prepaid_account_id, request.amount_minor,
                               request.currency);
    if (!held) return std::move(held).error();
  }

  CardTransaction t;
  t.id = id.empty() ? ids::generate("ctx") : id;
  t.card_id = card_id;
  t.type = decline ? "authorization_declined" : "authorization_approved";
  t.state = decline ? "declined" : "pending";
  t.currency = request.currency;
  t.amount_minor = request.amount_minor;
  t.held_minor = decline ? 0 : request.amount_minor;
  t.purchase = request.purchase;
  t.iso8583_code = decline ? decline->iso8583_code : "00";
  if (decline) {
    t.decline_reason = decline->reason;
    t.declined_by = decline->declined_by;
    if (tenant && decision.by != "tesoro") t.decline_reason_detail = tenant->detail;
  }
  t.decision = std::move(decision);
  t.inserted_at = time::iso(now);
  std::optional<time::Micros> expires_at;
  if (!decline) {
    expires_at = now + limits::k_authorization_hold_seconds * time::k_micros_per_second;
    t.expires_at = time::iso(*expires_at);
  }
  record_step(tx, tenant_id, t, t.type, t.amount_minor, now);
  insert_row(tx, tenant_id, t, now, expires_at);
  return t;
}

std::optional<Card> approvable_authorization(store::Tx& tx, const std::string& tenant_id,
                                             const std::string& card_id,
                                             const AuthorizationRequest& request,
                                             time::Micros now) {
  // The card, its group's control and its balance in one statement.
  auto found = get_card_with_balance(tx, tenant_id, card_id);
  if (!found) return std::nullopt;
  const ledger::Journal::Balance balance{found->balance_minor, found->held_minor,
                                         found->currency, found->state};
  if (decline_of(tx, tenant_id, found->found, request, balance, now)) return std::nullopt;
  return std::move(found->found.card);
}

std::optional<Incrementable> incrementable(store::Tx& tx, const std::string& tenant_id,
                                           const std::string& id, std::int64_t amount_minor,
                                           const std::optional<std::string>& currency,
                                           time::Micros now) {
  auto row = tx.query_one(std::string("SELECT ") + k_columns +
                              " FROM card_transactions WHERE tenant_id = ? AND id = ?",
                          {tenant_id, id});
  if (!row) return std::nullopt;
  CardTransaction t = from_row(*row);
  if (currency && *currency != t.currency) return std::nullopt;
  auto found = get_card_with_balance(tx, tenant_id, t.card_id);
  if (!found) return std::nullopt;
  Card& card = found->found.card;
  if (increment_refusal(tx, tenant_id, card, t, amount_minor, now) ||
      amount_minor > found->balance_minor - found->held_minor) {
    return std::nullopt;
  }
  return Incrementable{std::move(t), std::move(card)};
}

Result<CardTransaction> capture(store::Tx& tx, const std::string& tenant_id,
                                const std::string& id, std::optional<std::int64_t> amount_minor,
                                time::Micros now) {
  ledger::Journal journal(tx, now);
  auto locked = lock_transaction(tx, journal, tenant_id, id);
  if (!locked) return std::move(locked).error();
  auto& [card, t] = locked.value();
  if (t.state != "pending") return invalid_state(t, "captured");
  auto amount = step_amount(amount_minor, t.held_minor, t.currency);
  if (!amount) return std::move(amount).error();
  // The whole hold goes first, so that the debit may take the money it kept.
  if (Status released = journal.release(tenant_id, card.prepaid_account_id, t.held_minor);
      !released) {
    return std::move(released).error();
  }
  std::string network =
      ledger::system_account(tx, tenant_id, ledger::SystemRole::card_network, t.currency, now);
  if (Status locked_network = journal.lock({{tenant_id, network}}); !locked_network) {
    return std::move(locked_network).error();
  }
  auto entry = journal.post(tenant_id, "card_capture", "card transaction " + t.id,
                            {{card.prepaid_account_id, -*amount, t.currency},
                             {network, *amount, t.currency}},
                            {"card_transaction", t.id});
  if (!entry) return std::move(entry).error();
  t.released_minor = t.held_minor - *amount;
  t.captured_minor = *amount;
  t.held_minor = 0;
  t.state = "captured";
  record_step(tx, tenant_id, t, "capture", *amount, now);
  update_row(tx, tenant_id, t);
  return std::move(t);
}

Result<CardTransaction> increment(store::Tx& tx, const std::string& tenant_id,
                                  const std::string& id, std::int64_t amount_minor,
                                  time::Micros now, const TenantDecision* tenant,
                                  bool* unasked) {
  ledger::Journal journal(tx, now);
  auto locked = lock_transaction(tx, journal, tenant_id, id);
  if (!locked) return std::move(locked).error();
  auto& [card, t] = locked.value();
  if (auto refused = increment_refusal(tx, tenant_id, card, t, amount_minor, now)) {
    return std::move(*refused);
  }
  if (Status held = journal.hold(tenant_id, card.prepaid_account_id, amount_minor, t.currency);
      !held) {
    return std::move(held).error();
  }
  if (unasked && !tenant) {  // the hold above is undone with the step
    *unasked = true;
    return errors::unavailable();
  }
  if (tenant && !tenant->approved) {  // the hold above is undone with the step
    std::string message = "the tenant's authorization endpoint did not approve the increment (" +
                          tenant->reason + ")";
    if (tenant->detail) message += ": " + *tenant->detail;
    return errors::of(ErrorCode::authorization_declined, std::nullopt, message);
  }
  t.amount_minor += amount_minor;  // increment_refusal made sure it stays in range
  t.held_minor += amount_minor;
  record_step(tx, tenant_id, t, "authorization_increment", amount_minor, now);
  update_row(tx, tenant_id, t);
  return std::move(t);
}

Result<CardTransaction> reverse(store::Tx& tx, const std::string& tenant_id,
                                const std::string& id, std::optional<std::int64_t> amount_minor,
                                time::Micros now) {
  ledger::Journal journal(tx, now);
  auto locked = lock_transaction(tx, journal, tenant_id, id);
  if (!locked) return std::move(locked).error();
  auto& [card, t] = locked.value();
  if (t.state != "pending") return invalid_state(t, "reversed");
  auto amount = step_amount(amount_minor, t.held_minor, t.currency);
  if (!amount) return std::move(amount).error();
  if (Status released = journal.release(tenant_id, card.prepaid_account_id, *amount); !released) {
    return std::move(released).error();
  }
  t.held_minor -= *amount;
  t.reversed_minor += *amount;
  if (t.held_minor == 0) t.state = "reversed";
  record_step(tx, tenant_id, t, "authorization_reversal", *amount, now);
  update_row(tx, tenant_id, t);
  return std::move(t);
}

Result<CardTransaction> refund(store::Tx& tx, const std::string& tenant_id, const std::string& id,
                               std::optional<std::int64_t> amount_minor, time::Micros now) {
  ledger::Journal journal(tx, now);
  auto locked = lock_transaction(tx, journal, tenant_id, id);
  if (!locked) return std::move(locked).error();
  auto& [card, t] = locked.value();
  if (t.state != "captured") return invalid_state(t, "refunded");
  auto amount = step_amount(amount_minor, t.captured_minor - t.refunded_minor, t.currency);
  if (!amount) return std::move(amount).error();
  std::string network =
      ledger::system_account(tx, tenant_id, ledger::SystemRole::card_network, t.currency, now);
  if (Status locked_network = journal.lock({{tenant_id, network}}); !locked_network) {
    return std::move(locked_network).error();
  }
  auto entry = journal.post(tenant_id, "card_refund", "card transaction " + t.id,
                            {{network, -*amount, t.currency},
                             {card.prepaid_account_id, *amount, t.currency}},
                            {"card_transaction", t.id});
  if (!entry) return std::move(entry).error();
  t.refunded_minor += *amount;
  if (t.refunded_minor == t.captured_minor) t.state = "refunded";
  record_step(tx, tenant_id, t, "refund", *amount, now);
  update_row(tx, tenant_id, t);
  return std::move(t);
}

Result<CardTransaction> apply_step(store::Tx& tx, const std::string& tenant_id,
                                   const std::string& id, Step step,
                                   std::optional<std::int64_t> amount_minor,
                                   const std::optional<std::string>& currency, time::Micros now,
                                   const TenantDecision* tenant, bool* unasked) {
  // The currency never changes, so it may be read before the step takes its locks.
  auto found = tx.query_one("SELECT currency FROM card_transactions WHERE tenant_id = ? AND id = ?",
                            {tenant_id, id});
  if (!found) return errors::item_not_found("card transaction");
  if (currency && *currency != found->text(0)) {
    return errors::of(ErrorCode::currency_mismatch, "amount.currency",
                      "the amount's currency is not the card transaction's (" + found->text(0) +
                          ")");
  }
  switch (step) {
    case Step::capture: return capture(tx, tenant_id, id, amount_minor, now);
    case Step::increment:
      if (!amount_minor) return errors::missing_field("amount");
      return increment(tx, tenant_id, id, *amount_minor, now, tenant, unasked);
    case Step::reverse: return reverse(tx, tenant_id, id, amount_minor, now);
    case Step::refund: return refund(tx, tenant_id, id, amount_minor, now);
  }
  return errors::internal();
}

Result<CardTransaction> get_card_transaction(store::Tx& tx, const std::string& tenant_id,
                                             const std::string& id) {
  auto row = tx.query_one(std::string("SELECT ") + k_columns +
                              " FROM card_transactions WHERE tenant_id = ? AND id = ?",
                          {tenant_id, id});
  if (!row) return errors::item_not_found("card transaction");
  return from_row(*row);
}

Result<PageOf<CardTransaction>> list_card_transactions(store::Tx& tx,
                                                       const std::string& tenant_id,
                                                       const std::string& card_id,
                                                       std::int64_t offset, std::int64_t limit) {
  auto card = get_card(tx, tenant_id, card_id);
  if (!card) return std::move(card).error();
  return store::query_page<CardTransaction>(tx, k_columns, " FROM card_transactions WHERE tenant_id = ? AND card_id = ?", {tenant_id, card_id}, "authorized_at_micros DESC, id DESC", offset, limit,
                                 from_row);
}

std::int64_t expire_due(store::Tx& tx, time::Micros real_now, std::int64_t limit) {
  // Due on each tenant's clock. The candidates' cards are then locked all at once in the
  // journal's global order (two passes on two nodes queue instead of deadlocking), and each
  // row is read again under the lock: a step or another pass may have closed it meanwhile.
  // The partial index card_transactions_pending answers the usual pass, where nothing is due.
  const std::vector<tenant_clock::DueRow> due = tenant_clock::due_rows(
      tx, {"card_transactions", "expires_at_micros", "x.state = 'pending'"}, real_now, limit);
  if (due.empty()) return 0;
  std::vector<ledger::AccountKey> accounts;
  std::map<std::string, Card> cards;  // by "tenant/transaction"
  for (const tenant_clock::DueRow& d : due) {
    auto card_id = tx.query_one("SELECT card_id FROM card_transactions WHERE tenant_id = ? "
                                "AND id = ?",
                                {d.tenant_id, d.id});
    auto card = get_card(tx, d.tenant_id, card_id->text(0));
    if (!card) continue;
    accounts.push_back({d.tenant_id, card->prepaid_account_id});
    cards.emplace(d.tenant_id + "/" + d.id, std::move(card).value());
  }
  ledger::Journal journal(tx, real_now);
  if (!journal.lock(accounts)) return 0;
  std::int64_t expired = 0;
  for (const tenant_clock::DueRow& d : due) {
    auto card = cards.find(d.tenant_id + "/" + d.id);
    if (card == cards.end()) continue;
    auto row = tx.query_one(std::string("SELECT ") + k_columns +
                                " FROM card_transactions WHERE tenant_id = ? AND id = ? "
                                "AND state = 'pending' AND expires_at_micros <= ?" +
                                std::string(tx.lock_rows()),
                            {d.tenant_id, d.id, d.tenant_now});
    if (!row) continue;
    CardTransaction t = from_row(*row);
    if (expire_locked(tx, journal, d.tenant_id, card->second, t, d.tenant_now)) ++expired;
  }
  return expired;
}

std::vector<LimitUsage> limit_usages(store::Tx& tx, const std::string& tenant_id,
                                     const Card& card, time::Micros now) {
  std::vector<LimitUsage> usages;
  for (const auto& control : controls_of(tx, tenant_id, card)) {
    if (control.currency_code != card.currency) continue;
    for (const spending_controls::Rule& rule : control.rules) {
      if (!is_velocity(rule.type)) continue;
      for (const Cap& cap : caps_of(rule)) {
        auto window = spending_controls::window_of(cap.period, now);
        LimitUsage usage_of_cap;
        usage_of_cap.spending_control_id = control.id;
        usage_of_cap.rule_type = rule.type;
        usage_of_cap.period = cap.period;
        usage_of_cap.currency = control.currency_code;
        usage_of_cap.limit_minor = cap.limit_minor;
        usage_of_cap.used_minor =
            usage(tx, tenant_id, card.id, window, rule.type == "withdrawal_velocity");
        usage_of_cap.remaining_minor = std::max<std::int64_t>(0, cap.limit_minor - usage_of_cap.used_minor);
        usage_of_cap.window_start = time::iso(window.start);
        usage_of_cap.window_end = time::iso(window.end);
        usages.push_back(std::move(usage_of_cap));
      }
    }
  }
  return usages;
}

namespace {

// Each card's prepaid account holds exactly what its pending authorizations hold.
void verify_holds(store::Tx& tx, std::vector<std::string>& violations) {
  for (const store::Row& row : tx.query(
           "SELECT c.tenant_id, c.id, a.held, (SELECT COALESCE(SUM(t.held), 0) FROM "
           "card_transactions t WHERE t.tenant_id = c.tenant_id AND t.card_id = c.id "
           "AND t.state = 'pending') FROM cards c JOIN ledger_accounts a "
           "ON a.tenant_id = c.tenant_id AND a.id = c.prepaid_account_id")) {
    if (row.integer(2) == row.integer(3)) continue;
    violations.push_back("card " + row.text(1) + " of tenant " + row.text(0) +
                         ": its prepaid account holds " + row.text(2) +
                         " but its pending authorizations hold " + row.text(3));
  }
}

// Each transaction's amounts add up, and only a pending one holds anything.
void verify_amounts(store::Tx& tx, std::vector<std::string>& violations) {
  for (const store::Row& row : tx.query(
           "SELECT tenant_id, id, state FROM card_transactions WHERE "
           "held < 0 OR captured < 0 OR reversed < 0 OR released < 0 OR expired < 0 "
           "OR refunded < 0 OR refunded > captured OR (state <> 'pending' AND held <> 0) "
           "OR (state = 'pending' AND held = 0) "
           "OR (type = 'authorization_approved' AND "
           "amount <> held + captured + reversed + released + expired) "
           "OR (type = 'authorization_declined' AND (state <> 'declined' OR "
           "held + captured + reversed + released + expired + refunded <> 0))")) {
    violations.push_back("card transaction " + row.text(1) + " of tenant " + row.text(0) + " (" +
                         row.text(2) + "): its amounts do not add up");
  }
}

using SumByTenantCurrency = std::map<std::pair<std::string, std::string>, std::int64_t>;

// The card network got exactly what was captured less what was refunded, per tenant and
// currency: the postings of capture and refund entries to system accounts.
void verify_network(store::Tx& tx, std::vector<std::string>& violations) {
  SumByTenantCurrency expected;
  for (const store::Row& row : tx.query("SELECT tenant_id, currency, captured, refunded FROM "
                                        "card_transactions WHERE captured <> 0")) {
    auto& sum = expected[{row.text(0), row.text(1)}];
    sum = money::add(sum, row.integer(2) - row.integer(3)).value_or(INT64_MAX);
  }
  SumByTenantCurrency posted;
  for (const store::Row& row : tx.query(
           "SELECT p.tenant_id, p.currency, p.amount FROM postings p JOIN journal_entries e "
           "ON e.tenant_id = p.tenant_id AND e.id = p.entry_id JOIN ledger_accounts a "
           "ON a.tenant_id = p.tenant_id AND a.id = p.account_id "
           "WHERE e.kind IN ('card_capture', 'card_refund') AND a.surface = 'system'")) {
    auto& sum = posted[{row.text(0), row.text(1)}];
    sum = money::add(sum, row.integer(2)).value_or(INT64_MAX);
  }
  for (const auto& [key, amount] : expected) posted.try_emplace(key, 0);
  for (const auto& [key, amount] : posted) {
    auto want = expected.find(key);
    std::int64_t captured = want == expected.end() ? 0 : want->second;
    if (amount == captured) continue;
    violations.push_back("tenant " + key.first + ": card transactions captured less refunded " +
                         std::to_string(captured) + " " + key.second +
                         " but the card network was posted " + std::to_string(amount));
  }
}

}  // namespace

std::vector<std::string> verify(store::Tx& tx) {
  std::vector<std::string> violations;
  verify_holds(tx, violations);
  verify_amounts(tx, violations);
  verify_network(tx, violations);
  return violations;
}

}  // namespace tesoro::cards
