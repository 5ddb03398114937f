#include "domain/cards/cards.hpp"

#include <boost/json.hpp>

#include <chrono>

#include "core/card_numbers.hpp"
#include "core/ids.hpp"
#include "core/limits.hpp"
#include "domain/cards/configuration_groups.hpp"
#include "domain/events/events.hpp"
#include "domain/ledger/accounts.hpp"
#include "domain/ledger/journal.hpp"
#include "domain/spending_controls/spending_controls.hpp"
#include "store/pages.hpp"

namespace tesoro::cards {
namespace {

namespace json = boost::json;

constexpr const char* k_initial_balance_entity = "initial_balance";

constexpr const char* k_columns =
    "id, account_id, prepaid_account_id, cardholder_id, configuration_group_id, "
    "spending_control_id, nickname, state, type, currency, last_four, expiration_month, "
    "expiration_year, initial_balance, inserted_at, updated_at";

Card from_row(const store::Row& row) {
  Card card;
  card.id = row.text(0);
  card.account_id = row.text(1);
  card.prepaid_account_id = row.text(2);
  card.cardholder_id = row.optional_text(3);
  card.configuration_group_id = row.text(4);
  card.spending_control_id = row.optional_text(5);
  card.nickname = row.optional_text(6);
  card.state = row.text(7);
  card.type = row.text(8);
  card.currency = row.text(9);
  card.last_four = row.text(10);
  card.expiration_month = static_cast<int>(row.integer(11));
  card.expiration_year = static_cast<int>(row.integer(12));
  card.initial_balance_minor = row.optional_integer(13);
  card.inserted_at = row.text(14);
  card.updated_at = row.text(15);
  return card;
}

void emit_card_event(store::Tx& tx, const std::string& tenant_id, const Card& card,
                     const std::string& type, time::Micros now) {
  events::emit(tx, tenant_id, type,
               json::serialize(json::object{{"card_id", card.id}, {"state", card.state}}), now);
}

// The card's expiry: the end of the month limits::k_card_validity_years after issue (tenant time).
void set_expiration(Card& card, time::Micros now) {
  using namespace std::chrono;
  const sys_days day = floor<days>(sys_time<microseconds>(microseconds(now)));
  const year_month_day date(day);
  card.expiration_month = static_cast<int>(static_cast<unsigned>(date.month()));
  card.expiration_year = static_cast<int>(date.year()) + limits::k_card_validity_years;
}

// Checks every reference of a new card; the first unknown one answers item_not_found at its field.
Status check_references(store::Tx& tx, const std::string& tenant_id, const NewCard& input,
                        Card& card, time::Micros now) {
  auto account = ledger::get_account(tx, tenant_id, input.account_id, ledger::Surface::core);
  if (!account) return errors::of(ErrorCode::item_not_found, "account_id", "account not found");
  card.currency = account->currency;
  if (input.cardholder_id) {
    auto holder = get_cardholder(tx, tenant_id, *input.cardholder_id);
    if (!holder) {
      return errors::of(ErrorCode::item_not_found, "cardholder_id", "cardholder not found");
    }
  }
  if (input.configuration_group_id) {
    auto group = get_configuration_group(tx, tenant_id, *input.configuration_group_id);
    if (!group) {
      return errors::of(ErrorCode::item_not_found, "configuration_group_id",
                        "configuration group not found");
    }
    card.configuration_group_id = group->id;
  } else {
    card.configuration_group_id = default_configuration_group(tx, tenant_id, now).id;
  }
  if (input.spending_control_id) {
    // Under the control's lock: a concurrent DELETE either sees this card or is seen here.
    auto control =
        spending_controls::lock_spending_control(tx, tenant_id, *input.spending_control_id);
    if (!control) {
      return errors::of(ErrorCode::item_not_found, "spending_controls.card_target",
                        "spending control not found");
    }
  }
  return ok_status();
}


// Inserts the card with a new number; a number another card has (by fingerprint) is drawn again.
Status insert_card(store::Tx& tx, const std::string& tenant_id, Card& card,
                   const crypto::Sealer& sealer) {
  for (int attempt = 0; attempt < limits::k_random_number_attempts; ++attempt) {
    const std::string number = card_numbers::generate_card_number();
    card.last_four = number.substr(number.size() - 4);
    std::int64_t inserted = tx.exec(
        "INSERT INTO cards (tenant_id, id, account_id, prepaid_account_id, cardholder_id, "
        "configuration_group_id, spending_control_id, nickname, state, type, currency, "
        "last_four, pan, pan_fingerprint, expiration_month, expiration_year, initial_balance, "
        "inserted_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (pan_fingerprint) DO NOTHING",
        {tenant_id, card.id, card.account_id, card.prepaid_account_id,
         store::optional_value(card.cardholder_id), card.configuration_group_id,
         store::optional_value(card.spending_control_id), store::optional_value(card.nickname), card.state,
         card.type, card.currency, card.last_four, sealer.seal(number, tenant_id + ":" + card.id),
         sealer.fingerprint(number), static_cast<std::int64_t>(card.expiration_month),
         static_cast<std::int64_t>(card.expiration_year),
         card.initial_balance_minor ? store::Value(*card.initial_balance_minor)
                                    : store::Value(nullptr),
         card.inserted_at, card.updated_at});
    if (inserted == 1) return ok_status();
  }
  return errors::internal();
}

// Moves money between the card's account and its prepaid balance; both are locked in the
// journal's order first, so every step of one card queues on its prepaid account.
Result<ledger::EntryResult> move_prepaid(ledger::Journal& journal, const std::string& tenant_id,
                                         const Card& card, const std::string& operation,
                                         std::int64_t amount_minor, const std::string& currency,
                                         const std::string& description,
                                         const std::string& operation_id) {
  const bool topup = operation == "topup";
  const std::int64_t to_prepaid = topup ? amount_minor : -amount_minor;
  return journal.post(tenant_id, "card_" + operation, description,
                      {{card.account_id, -to_prepaid, currency},
                       {card.prepaid_account_id, to_prepaid, currency}},
                      {"card_balance_operation", operation_id});
}

BalanceOperation insert_operation(store::Tx& tx, const std::string& tenant_id,
                                  const std::string& card_id, const NewBalanceOperation& input,
                                  std::string id, const std::string& entry_id, time::Micros now) {
  BalanceOperation operation{std::move(id),        card_id,          input.operation,
                             input.amount_minor,   input.currency,   input.description,
                             input.entity_id,      time::iso(now)};
  tx.exec("INSERT INTO card_balance_operations (tenant_id, id, card_id, operation, amount, "
          "currency, description, entity_id, entry_id, performed_at) "
          "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          {tenant_id, operation.id, card_id, operation.operation, operation.amount_minor,
           operation.currency, operation.description, operation.entity_id, entry_id,
           operation.performed_at});
  events::emit(tx, tenant_id, "card_balance_operation.created",
               json::serialize(json::object{
                   {"card_balance_operation_id", operation.id},
                   {"card_id", card_id},
                   {"operation", operation.operation},
                   {"amount", json::object{{"amount", operation.amount_minor},
                                           {"currency", operation.currency}}}}),
               now);
  return operation;
}

constexpr const char* k_operation_columns =
    "id, card_id, operation, amount, currency, description, entity_id, performed_at";

BalanceOperation operation_from_row(const store::Row& row) {
  return {row.text(0),    row.text(1), row.text(2), row.integer(3),
          row.text(4),    row.text(5), row.text(6), row.text(7)};
}

// Moves an error's path under `prefix` ("amount.amount" -> "initial_balance.amount").
Error under(Error error, const std::string& field) {
  for (ErrorItem& item : error.errors) {
    if (item.path && item.path->starts_with("amount.")) {
      item.path = field + item.path->substr(std::string("amount").size());
    }
  }
  return error;
}

Result<BalanceOperationOutcome> perform_on(store::Tx& tx, const std::string& tenant_id,
                                           const Card& card, const NewBalanceOperation& input,
                                           time::Micros now);

}  // namespace

Result<Card> create_card(store::Tx& tx, const std::string& tenant_id, const NewCard& input,
                         const crypto::Sealer& sealer, time::Micros now) {
  Card card;
  card.id = ids::generate("car");
  if (Status checked = check_references(tx, tenant_id, input, card, now); !checked) {
    return std::move(checked).error();
  }
  card.account_id = input.account_id;
  card.type = input.type;
  card.state = input.type == "physical" ? "pending_activation" : "active";
  card.nickname = input.nickname;
  card.spending_control_id = input.spending_control_id;
  card.cardholder_id = input.cardholder_id;
  if (input.cardholder) {
    auto holder = create_cardholder(tx, tenant_id, *input.cardholder, now);
    if (!holder) return std::move(holder).error();
    card.cardholder_id = holder->id;
  }
  auto prepaid = ledger::open_card_account(tx, tenant_id, card.id, card.currency, now);
  if (!prepaid) return std::move(prepaid).error();
  card.prepaid_account_id = prepaid->id;
  set_expiration(card, now);
  card.initial_balance_minor = input.initial_balance_minor;
  card.inserted_at = card.updated_at = time::iso(now);
  if (Status inserted = insert_card(tx, tenant_id, card, sealer); !inserted) {
    return std::move(inserted).error();
  }
  emit_card_event(tx, tenant_id, card, "card." + card.state, now);
  if (input.initial_balance_minor) {
    if (input.initial_balance_currency != card.currency) {
      return under(ledger::currency_mismatch(card.currency), "initial_balance");
    }
    NewBalanceOperation topup{"topup", *input.initial_balance_minor, card.currency,
                              "initial balance", k_initial_balance_entity};
    auto performed = perform_on(tx, tenant_id, card, topup, now);
    if (!performed) return under(std::move(performed).error(), "initial_balance");
  }
  return card;
}

Result<Card> get_card(store::Tx& tx, const std::string& tenant_id, const std::string& id) {
  auto row = tx.query_one(
      std::string("SELECT ") + k_columns + " FROM cards WHERE tenant_id = ? AND id = ?",
      {tenant_id, id});
  if (!row) return errors::item_not_found("card");
  return from_row(*row);
}

namespace {

// The card's columns under `alias`, in from_row's order.
std::string card_columns_of(std::string_view alias) {
  const std::string prefix = std::string(alias) + ".";
  std::string columns = prefix + k_columns;
  for (std::size_t at = columns.find(", "); at != std::string::npos;
       at = columns.find(", ", at + 2 + prefix.size())) {
    columns.replace(at, 2, ", " + prefix);
  }
  return columns;
}

}  // namespace

Result<CardWithGroupControl> get_card_with_group_control(store::Tx& tx,
                                                         const std::string& tenant_id,
                                                         const std::string& id) {
  // The card's columns under the alias c, in from_row's order, then the group's control.
  static const std::string sql = [] {
    const std::string columns = card_columns_of("c");
    return "SELECT " + columns +
           ", g.spending_control_id FROM cards c LEFT JOIN configuration_groups g "
           "ON g.tenant_id = c.tenant_id AND g.id = c.configuration_group_id "
           "WHERE c.tenant_id = ? AND c.id = ?";
  }();
  auto row = tx.query_one(sql, {tenant_id, id});
  if (!row) return errors::item_not_found("card");
  return CardWithGroupControl{from_row(*row), row->optional_text(16)};
}

Result<CardWithBalance> get_card_with_balance(store::Tx& tx, const std::string& tenant_id,
                                              const std::string& id) {
  static const std::string sql = [] {
    const std::string columns = card_columns_of("c");
    return "SELECT " + columns +
           ", g.spending_control_id, a.balance, a.held, a.currency, a.state "
           "FROM cards c LEFT JOIN configuration_groups g "
           "ON g.tenant_id = c.tenant_id AND g.id = c.configuration_group_id "
           "JOIN ledger_accounts a ON a.tenant_id = c.tenant_id AND a.id = c.prepaid_account_id "
           "WHERE c.tenant_id = ? AND c.id = ?";
  }();
  auto row = tx.query_one(sql, {tenant_id, id});
  if (!row) return errors::item_not_found("card");
  return CardWithBalance{{from_row(*row), row->optional_text(16)},
                         row->integer(17),
                         row->integer(18),
                         row->text(19),
                         row->text(20)};
}

Result<PageOf<Card>> list_cards(store::Tx& tx, const std::string& tenant_id,
                                std::int64_t offset, std::int64_t limit) {
  return store::query_page<Card>(tx, k_columns, " FROM cards WHERE tenant_id = ?", {tenant_id}, "inserted_at DESC, id DESC", offset, limit,
                                 from_row);
}

namespace {

bool transition_allowed(const std::string& from, const std::string& to) {
  if (from == to) return true;
  if (from == "canceled") return false;
  if (to == "canceled") return true;
  return (from == "active" && to == "blocked") || (from == "blocked" && to == "active");
}

void save_card(store::Tx& tx, const std::string& tenant_id, const Card& card) {
  tx.exec("UPDATE cards SET nickname = ?, state = ?, spending_control_id = ?, updated_at = ? "
          "WHERE tenant_id = ? AND id = ?",
          {store::optional_value(card.nickname), card.state, store::optional_value(card.spending_control_id),
           card.updated_at, tenant_id, card.id});
}

}  // namespace

Result<Card> update_card(store::Tx& tx, const std::string& tenant_id, const std::string& id,
                         const CardChanges& changes, time::Micros now) {
  auto found = tx.query_one(std::string("SELECT ") + k_columns +
                                " FROM cards WHERE tenant_id = ? AND id = ?" +
                                std::string(tx.lock_rows()),
                            {tenant_id, id});
  if (!found) return errors::item_not_found("card");
  Card card = from_row(*found);
  const std::string before = card.state;
  if (changes.state && !transition_allowed(card.state, *changes.state)) {
    return errors::of(ErrorCode::card_invalid_state, "state",
                      "a " + card.state + " card cannot become " + *changes.state);
  }
  if (changes.spending_control_id && *changes.spending_control_id) {
    auto control =
        spending_controls::lock_spending_control(tx, tenant_id, **changes.spending_control_id);
    if (!control) {
      return errors::of(ErrorCode::item_not_found, "spending_controls.card_target",
                        "spending control not found");
    }
  }
  if (changes.nickname) card.nickname = *changes.nickname;
  if (changes.spending_control_id) card.spending_control_id = *changes.spending_control_id;
  if (changes.state) card.state = *changes.state;
  card.updated_at = time::iso(now);
  save_card(tx, tenant_id, card);
  emit_card_event(tx, tenant_id, card, card.state != before ? "card." + card.state : "card.updated",
                  now);
  return card;
}

Result<Card> activate_card(store::Tx& tx, const std::string& tenant_id, const std::string& id,
                           time::Micros now) {
  auto card = get_card(tx, tenant_id, id);
  if (!card) return card;
  if (card->state != "pending_activation") {
    return errors::of(ErrorCode::card_invalid_state, std::nullopt,
                      "only a card pending activation can be activated; this one is " +
                          card->state);
  }
  // Only the state moves, and only from pending_activation: a concurrent change loses.
  std::int64_t changed = tx.exec(
      "UPDATE cards SET state = 'active', updated_at = ? WHERE tenant_id = ? AND id = ? "
      "AND state = 'pending_activation'",
      {time::iso(now), tenant_id, id});
  if (changed == 0) {
    return errors::of(ErrorCode::card_invalid_state, std::nullopt,
                      "the card is no longer pending activation");
  }
  card->state = "active";
  card->updated_at = time::iso(now);
  emit_card_event(tx, tenant_id, *card, "card.active", now);
  return card;
}

namespace {

// The operation on a card already read in this unit.
Result<BalanceOperationOutcome> perform_on(store::Tx& tx, const std::string& tenant_id,
                                           const Card& card, const NewBalanceOperation& input,
                                           time::Micros now) {
  ledger::Journal journal(tx, now);
  // Lock first: a concurrent request with the same entity_id waits here, then finds ours.
  if (Status locked = journal.lock({{tenant_id, card.account_id},
                                    {tenant_id, card.prepaid_account_id}});
      !locked) {
    return std::move(locked).error();
  }
  auto existing = tx.query_one(std::string("SELECT ") + k_operation_columns +
                                   " FROM card_balance_operations WHERE tenant_id = ? AND "
                                   "card_id = ? AND entity_id = ?",
                               {tenant_id, card.id, input.entity_id});
  if (existing) return BalanceOperationOutcome{operation_from_row(*existing), false};
  if (input.operation == "topup" && card.state == "canceled") {
    return errors::of(ErrorCode::card_invalid_state, std::nullopt,
                      "a canceled card cannot be topped up");
  }
  if (input.currency != card.currency) return ledger::currency_mismatch(card.currency);
  // Named before the entry, which refers to it.
  std::string operation_id = ids::generate("cbo");
  auto entry = move_prepaid(journal, tenant_id, card, input.operation, input.amount_minor,
                            input.currency, input.description, operation_id);
  if (!entry) return std::move(entry).error();
  return BalanceOperationOutcome{
      insert_operation(tx, tenant_id, card.id, input, std::move(operation_id), entry->entry_id,
                       now),
      true};
}

}  // namespace

Result<BalanceOperationOutcome> perform_balance_operation(store::Tx& tx,
                                                          const std::string& tenant_id,
                                                          const std::string& card_id,
                                                          const NewBalanceOperation& input,
                                                          time::Micros now) {
  auto card = get_card(tx, tenant_id, card_id);
  if (!card) return std::move(card).error();
  return perform_on(tx, tenant_id, *card, input, now);
}

Result<PageOf<BalanceOperation>> list_balance_operations(store::Tx& tx,
                                                         const std::string& tenant_id,
                                                         const std::string& card_id,
                                                         const BalanceOperationFilter& filter,
                                                         std::int64_t offset,
                                                         std::int64_t limit) {
  auto card = get_card(tx, tenant_id, card_id);
  if (!card) return std::move(card).error();
  // performed_at is fixed-width ISO text: text order is time order.
  std::string where = " FROM card_balance_operations WHERE tenant_id = ? AND card_id = ?";
  store::Params params = {tenant_id, card_id};
  if (filter.performed_from) {
    where += " AND performed_at >= ?";
    params.emplace_back(time::iso(*filter.performed_from));
  }
  if (filter.performed_to) {
    where += " AND performed_at <= ?";
    params.emplace_back(time::iso(*filter.performed_to));
  }
  return store::query_page<BalanceOperation>(tx, k_operation_columns, where, params,
                                             "performed_at DESC, id DESC", offset, limit,
                                             operation_from_row);
}

}  // namespace tesoro::cards
