#include "domain/cards/activation_links.hpp"

#include <boost/json.hpp>

#include "core/crypto.hpp"
#include "core/ids.hpp"
#include "core/limits.hpp"
#include "domain/cards/cardholders.hpp"
#include "domain/tenant_clock/tenant_clock.hpp"
#include "domain/events/events.hpp"
#include "store/pages.hpp"

namespace tesoro::cards {
namespace {

namespace json = boost::json;

constexpr const char* k_columns =
    "id, card_id, state, expires_at_micros, used_at, inserted_at, updated_at";

// `now` is the tenant's time: a stored pending link past its expiry reads as expired.
ActivationLink from_row(const store::Row& row, std::size_t first, time::Micros now) {
  ActivationLink link;
  link.id = row.text(first);
  link.card_id = row.text(first + 1);
  link.state = row.text(first + 2);
  link.expires_at_micros = row.integer(first + 3);
  link.used_at = row.optional_text(first + 4);
  link.inserted_at = row.text(first + 5);
  link.updated_at = row.text(first + 6);
  if (link.state == "pending" && now >= link.expires_at_micros) link.state = "expired";
  return link;
}

void emit_link_event(store::Tx& tx, const std::string& tenant_id, const ActivationLink& link,
                     std::string_view type, time::Micros now) {
  // Never the token nor the url: events leave the server (webhooks).
  events::emit(tx, tenant_id, type,
               json::serialize(json::object{{"activation_link_id", link.id},
                                            {"card_id", link.card_id},
                                            {"state", link.state}}),
               now);
}

std::optional<std::string> cardholder_name(store::Tx& tx, const std::string& tenant_id,
                                           const Card& card) {
  if (!card.cardholder_id) return std::nullopt;
  auto holder = get_cardholder(tx, tenant_id, *card.cardholder_id);
  if (!holder) return std::nullopt;
  return holder->fields.first_name + " " + holder->fields.last_name;
}

// The link of `token` (locked until the unit ends when `lock`), its tenant, the card and what
// the link leads to on the tenant's clock.
TokenLookup find_by_token(store::Tx& tx, const std::string& token, time::Micros real_now,
                          bool lock) {
  TokenLookup lookup;
  auto row = tx.query_one(std::string("SELECT tenant_id, ") + k_columns +
                              " FROM activation_links WHERE token_hash = ?" +
                              std::string(lock ? tx.lock_rows() : ""),
                          {crypto::sha256_hex(token)});
  if (!row) return lookup;
  lookup.tenant_id = row->text(0);
  const time::Micros now = tenant_clock::now(tx, lookup.tenant_id, real_now);
  lookup.link = from_row(*row, 1, now);
  auto card = get_card(tx, lookup.tenant_id, lookup.link.card_id);
  if (!card) return lookup;  // cards are never deleted; unknown is the safe answer regardless
  lookup.card = std::move(card).value();
  lookup.cardholder_name = cardholder_name(tx, lookup.tenant_id, lookup.card);
  if (lookup.link.state == "used") {
    lookup.outcome = TokenOutcome::used;
  } else if (lookup.link.state == "expired") {
    lookup.outcome = TokenOutcome::expired;
  } else if (lookup.card.state != "pending_activation") {
    lookup.outcome = TokenOutcome::card_not_pending;
  } else {
    lookup.outcome = TokenOutcome::ready;
  }
  return lookup;
}

}  // namespace

Result<CreatedActivationLink> create_activation_link(store::Tx& tx, const std::string& tenant_id,
                                                     const std::string& card_id,
                                                     time::Micros now) {
  auto card = get_card(tx, tenant_id, card_id);
  if (!card) return errors::of(ErrorCode::item_not_found, "card_id", "card not found");
  if (card->type != "physical" || card->state != "pending_activation") {
    return errors::of(ErrorCode::card_invalid_state, "card_id",
                      "only a physical card pending activation gets an activation link; this is "
                      "a " + card->type + " card, " + card->state);
  }
  CreatedActivationLink created;
  created.token = crypto::random_token(limits::k_activation_token_bytes);
  ActivationLink& link = created.link;
  link.id = ids::generate("cal");
  link.card_id = card_id;
  link.state = "pending";
  link.expires_at_micros = now + limits::k_activation_link_ttl_seconds * time::k_micros_per_second;
  link.inserted_at = link.updated_at = time::iso(now);
  tx.exec("INSERT INTO activation_links (tenant_id, id, card_id, token_hash, state, "
          "expires_at_micros, used_at, inserted_at, updated_at) "
          "VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?)",
          {tenant_id, link.id, link.card_id, crypto::sha256_hex(created.token), link.state,
           link.expires_at_micros, link.inserted_at, link.updated_at});
  emit_link_event(tx, tenant_id, link, "activation_link.created", now);
  return created;
}

Result<ActivationLink> get_activation_link(store::Tx& tx, const std::string& tenant_id,
                                           const std::string& id, time::Micros now) {
  auto row = tx.query_one(std::string("SELECT ") + k_columns +
                              " FROM activation_links WHERE tenant_id = ? AND id = ?",
                          {tenant_id, id});
  if (!row) return errors::item_not_found("activation link");
  return from_row(*row, 0, now);
}

Result<PageOf<ActivationLink>> list_activation_links(store::Tx& tx, const std::string& tenant_id,
                                                     const std::optional<std::string>& card_id,
                                                     time::Micros now, std::int64_t offset,
                                                     std::int64_t limit) {
  const std::string where = std::string(" FROM activation_links WHERE tenant_id = ?") +
                            (card_id ? " AND card_id = ?" : "");
  const store::Params filter =
      card_id ? store::Params{tenant_id, *card_id} : store::Params{tenant_id};
  return store::query_page<ActivationLink>(
      tx, k_columns, where, filter, "inserted_at DESC, id DESC", offset, limit,
      [&](const store::Row& row) { return from_row(row, 0, now); });
}

Result<TokenLookup> look_up_token(store::Tx& tx, const std::string& token,
                                  time::Micros real_now) {
  return find_by_token(tx, token, real_now, /*lock=*/false);
}

Result<TokenLookup> use_activation_link(store::Tx& tx, const std::string& token,
                                        time::Micros real_now) {
  // Locked: a second use of the same link waits here, then finds it used.
  TokenLookup lookup = find_by_token(tx, token, real_now, /*lock=*/true);
  if (lookup.outcome != TokenOutcome::ready) return lookup;
  const time::Micros now = tenant_clock::now(tx, lookup.tenant_id, real_now);
  // The card first: when another link of the card won the race, nothing has been written yet.
  auto activated = activate_card(tx, lookup.tenant_id, lookup.card.id, now);
  if (!activated) {
    if (activated.error().first_code() != "card_invalid_state") return std::move(activated).error();
    lookup.outcome = TokenOutcome::card_not_pending;
    return lookup;
  }
  lookup.card = std::move(activated).value();
  lookup.link.state = "used";
  lookup.link.used_at = lookup.link.updated_at = time::iso(now);
  tx.exec("UPDATE activation_links SET state = 'used', used_at = ?, updated_at = ? "
          "WHERE tenant_id = ? AND id = ? AND state = 'pending'",
          {*lookup.link.used_at, lookup.link.updated_at, lookup.tenant_id, lookup.link.id});
  emit_link_event(tx, lookup.tenant_id, lookup.link, "activation_link.used", now);
  lookup.outcome = TokenOutcome::activated;
  return lookup;
}

}  // namespace tesoro::cards
