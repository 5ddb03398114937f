#include "domain/payouts/payouts.hpp"

#include "core/ids.hpp"
#include "core/json_writer.hpp"
#include "core/limits.hpp"
#include "domain/events/events.hpp"
#include "domain/ledger/accounts.hpp"
#include "domain/ledger/journal.hpp"
#include "domain/network/directory.hpp"
#include "domain/network/targets.hpp"
#include "domain/transfers/processor.hpp"
#include "domain/transfers/sandbox_failures.hpp"

namespace tesoro::payouts {
namespace {

constexpr const char* k_columns =
    "id, external_id, account_id, method, amount, currency, description, target, metadata, "
    "state, state_reason, transfer_id, inserted_at, updated_at";

Payout from_row(const store::Row& row) {
  Payout p;
  p.id = row.text(0);
  p.external_id = row.text(1);
  p.account_id = row.text(2);
  p.method = row.text(3);
  p.amount_minor = row.integer(4);
  p.currency = row.text(5);
  p.description = row.optional_text(6);
  p.target_json = row.text(7);
  p.metadata = ledger::decode_metadata(row.text(8));
  p.state = row.text(9);
  p.state_reason = row.optional_text(10);
  p.transfer_id = row.text(11);
  p.inserted_at = row.text(12);
  p.updated_at = row.text(13);
  return p;
}

std::optional<Payout> find_by(store::Tx& tx, const std::string& tenant_id,
                              const std::string& column, const std::string& value, bool lock) {
  auto row = tx.query_one(std::string("SELECT ") + k_columns + " FROM payouts WHERE tenant_id = ? AND " +
                              column + " = ?" + std::string(lock ? tx.lock_rows() : ""),
                          {tenant_id, value});
  if (!row) return std::nullopt;
  return from_row(*row);
}

// The payout's state for its leg's.
std::string state_for(const std::string& leg_state) {
  if (leg_state == "created") return "pending";
  if (leg_state == "successful") return "settled";
  if (leg_state == "failed") return "failed";
  return "processing";
}

void emit_state(store::Tx& tx, const std::string& tenant_id, const Payout& payout,
                const transfers::Transfer& leg, time::Micros now) {
  events::emit(tx, tenant_id, "payout." + payout.state, payout_text(payout, leg), now);
}

}  // namespace

std::string payout_text(const Payout& p, const transfers::Transfer& leg) {
  json_text::Writer out(1024);
  out.begin_object().key("id").string(p.id).key("external_id").string(p.external_id);
  out.key("account_id").string(p.account_id).key("method").string(p.method);
  out.key("amount").begin_object().key("amount").integer(p.amount_minor);
  out.key("currency").string(p.currency).end_object();
  out.key("description");
  if (p.description) {
    out.string(*p.description);
  } else {
    out.null();
  }
  out.key("target").raw(p.target_json);
  out.key("metadata").raw(ledger::encode_metadata(p.metadata));
  out.key("state").string(p.state).key("state_reason");
  if (p.state_reason) {
    out.string(*p.state_reason);
  } else {
    out.null();
  }
  out.key("end_to_end_id").string(leg.end_to_end_id);
  out.key("timemarks").raw(leg.timemarks_json);
  out.key("inserted_at").string(p.inserted_at).key("updated_at").string(p.updated_at);
  out.end_object();
  return out.take();
}

Result<CreateOutcome> create_payout(store::Tx& tx, const std::string& tenant_id,
                                    const NewPayout& input, time::Micros now) {
  if (auto existing = find_by(tx, tenant_id, "external_id", input.external_id, false)) {
    return CreateOutcome{std::move(*existing), false};
  }
  auto account = ledger::get_account(tx, tenant_id, input.account_id, ledger::Surface::core);
  if (!account) return errors::of(ErrorCode::item_not_found, "account_id", "account not found");
  if (input.amount_minor > input.max_amount_minor) {
    return errors::amount_exceeds_max_limit(input.amount_minor, input.max_amount_minor,
                                            input.currency, "amount.amount");
  }
  auto resolution = network::resolve_key(tx, input.key_type, input.key_value, "target.key_value");
  if (!resolution) return std::move(resolution).error();

  Payout payout;
  payout.id = ids::generate("cpout");
  payout.external_id = input.external_id;
  payout.account_id = input.account_id;
  payout.method = input.method;
  payout.amount_minor = input.amount_minor;
  payout.currency = input.currency;
  payout.description = input.description;
  payout.metadata = input.metadata;
  payout.state = "pending";
  payout.inserted_at = payout.updated_at = time::iso(now);

  transfers::Transfer leg;
  leg.payout_id = payout.id;
  leg.tenant_account_id = input.account_id;
  leg.amount_minor = input.amount_minor;
  leg.currency = input.currency;
  leg.description = input.description;
  leg.payment_id = network::new_payment_id();
  leg.payer_name = account->name;
  leg.resolution_request_id = ids::generate("bbtgr");
  leg.target_id = ids::generate("bbtgt");
  leg.key_type = resolution->key_type;
  leg.key_value = resolution->key_value;
  leg.stored_target = network::stored_target(
      *resolution, "key", input.amount_minor, input.currency,
      now + limits::k_target_ttl_seconds * time::k_micros_per_second, now);
  leg.sandbox_failure = transfers::requested_failure(input.description);
  if (!leg.sandbox_failure) leg.sandbox_failure = resolution->sandbox_failure;
  leg.creditor_tenant_id = resolution->collection_tenant_id;
  leg.creditor_collection_id = resolution->collection_id;

  ledger::Journal journal(tx, now);
  if (auto locked = journal.lock({{tenant_id, input.account_id}}); !locked) {
    return std::move(locked).error();
  }
  auto accepted = transfers::accept(tx, tenant_id, journal, std::move(leg), now);
  if (!accepted) return std::move(accepted).error();
  payout.transfer_id = accepted->id;
  payout.target_json = transfers::target_text(*accepted);
  tx.exec("INSERT INTO payouts (tenant_id, id, external_id, account_id, method, amount, currency, "
          "description, target, metadata, state, state_reason, transfer_id, inserted_at, "
          "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          {tenant_id, payout.id, payout.external_id, payout.account_id, payout.method,
           payout.amount_minor, payout.currency, store::optional_value(payout.description),
           payout.target_json, ledger::encode_metadata(payout.metadata), payout.state, nullptr,
           payout.transfer_id, payout.inserted_at, payout.updated_at});
  emit_state(tx, tenant_id, payout, accepted.value(), now);
  return CreateOutcome{std::move(payout), true};
}

Result<Payout> get_payout(store::Tx& tx, const std::string& tenant_id, const std::string& id) {
  auto payout = find_by(tx, tenant_id, "id", id, false);
  if (!payout) return errors::item_not_found("payout");
  return std::move(*payout);
}

Result<Payout> find_successful_by(store::Tx& tx, const std::string& tenant_id,
                                  const std::string& external_id) {
  auto payout = find_by(tx, tenant_id, "external_id", external_id, false);
  if (!payout) return errors::item_not_found("payout");
  if (payout->state != "settled") {
    return errors::of(ErrorCode::invalid_state, "external_id",
                      "the payout is " + payout->state + ", not settled");
  }
  return std::move(*payout);
}

void follow(store::Tx& tx, const std::string& tenant_id, const transfers::Transfer& leg,
            time::Micros now) {
  if (!leg.payout_id) return;
  auto payout = find_by(tx, tenant_id, "id", *leg.payout_id, true);
  if (!payout) return;  // verify reports a leg without its payout
  const std::string state = state_for(leg.state);
  if (state == payout->state) return;
  payout->state = state;
  payout->state_reason = state == "failed" ? leg.state_reason : std::nullopt;
  payout->updated_at = time::iso(now);
  tx.exec("UPDATE payouts SET state = ?, state_reason = ?, updated_at = ? "
          "WHERE tenant_id = ? AND id = ?",
          {payout->state, store::optional_value(payout->state_reason), payout->updated_at,
           tenant_id, payout->id});
  emit_state(tx, tenant_id, *payout, leg, now);
}

namespace {
// The processor hands every step of a payout's leg to follow (transfers::register_leg_follower).
[[maybe_unused]] const bool k_follows_legs = transfers::register_leg_follower(&follow);
}  // namespace

std::vector<std::string> verify(store::Tx& tx) {
  std::vector<std::string> violations;
  for (const store::Row& row : tx.query(
           "SELECT p.tenant_id, p.id, p.state, t.state, p.amount, t.amount, p.currency, "
           "t.currency, p.account_id, t.tenant_account_id, t.payout_id FROM payouts p "
           "LEFT JOIN outgoing_transfers t ON t.tenant_id = p.tenant_id AND t.id = p.transfer_id")) {
    const std::string where = "payout " + row.text(1) + " of tenant " + row.text(0);
    if (row.is_null(3)) {
      violations.push_back(where + ": its network transfer is missing");
      continue;
    }
    if (row.text(10) != row.text(1)) {
      violations.push_back(where + ": its network transfer carries another payout");
    }
    if (state_for(row.text(3)) != row.text(2)) {
      violations.push_back(where + " is " + row.text(2) + " but its network transfer is " +
                           row.text(3));
    }
    if (row.integer(4) != row.integer(5) || row.text(6) != row.text(7) ||
        row.text(8) != row.text(9)) {
      violations.push_back(where + ": its amount, currency or account differ from its network "
                                   "transfer's");
    }
  }
  for (const store::Row& row : tx.query(
           "SELECT t.tenant_id, t.id FROM outgoing_transfers t LEFT JOIN payouts p "
           "ON p.tenant_id = t.tenant_id AND p.id = t.payout_id "
           "WHERE t.payout_id IS NOT NULL AND p.id IS NULL")) {
    violations.push_back("outgoing transfer " + row.text(1) + " of tenant " + row.text(0) +
                         " carries a payout that does not exist");
  }
  return violations;
}

}  // namespace tesoro::payouts
