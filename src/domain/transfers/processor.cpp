// The network processor (process_due) and the invariants of outgoing transfers (verify).
//
// One pass moves at most a chunk of due transfers in one write unit, in phases that keep the
// source accounts' locks short and take every lock in the module's order:
//   1. read the due transfers and take each through every step that came due (a late pass walks
//      several, each with the time of the schedule), up to its last step: the keys are resolved
//      again here, before any lock;
//   2. lock the chunk's source accounts (one journal, global order), then (PostgreSQL) the
//      transfer rows, and leave out any transfer another node moved meanwhile;
//   3. deliveries: the collections of this Tesoro that last steps pay, locked in (tenant, id)
//      order, then their tenant accounts; each a payment attempt in the creditor's tenant;
//   4. per tenant: one release per source account for every transfer that ended, then the
//      settlement entries of the successful ones, written together (Journal::post_all);
//   5. the rows (a few statements), the events (or the leg follower for a payout's leg) and the
//      batches that ended.
#include "domain/transfers/processor.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

#include "core/check.hpp"
#include "core/limits.hpp"
#include "domain/tenant_clock/tenant_clock.hpp"
#include "domain/collections/attempts.hpp"
#include "domain/collections/collections.hpp"
#include "domain/events/events.hpp"
#include "domain/ledger/accounts.hpp"
#include "domain/network/directory.hpp"
#include "domain/transfers/outgoing_transfers.hpp"
#include "domain/transfers/sandbox_failures.hpp"
#include "domain/transfers/transfer_rows.hpp"
#include "store/bulk.hpp"

namespace tesoro::transfers {
namespace {

std::atomic<LegFollower> leg_follower{nullptr};  // constant-initialised: before any registration

void follow_leg(store::Tx& tx, const std::string& tenant_id, const Transfer& leg, time::Micros at) {
  LegFollower follower = leg_follower.load();
  if (!follower) throw std::logic_error("a payout's leg moved, and no leg follower is registered");
  follower(tx, tenant_id, leg, at);
}

constexpr time::Micros k_step_micros =
    limits::k_transfer_step_seconds * time::k_micros_per_second;

// Transfers still moving (alias x): the predicate of the partial index outgoing_transfers_moving.
constexpr const char* k_moving_condition = "x.next_step_at_micros IS NOT NULL";

struct Moving {
  std::string tenant_id;
  time::Micros tenant_now = 0;
  Transfer transfer;
  std::string read_updated_at;  // as phase 1 read it: another node's step changes it
  // Its last step came due and pays a collection of this Tesoro: phase 3 decides it.
  std::optional<time::Micros> delivery_at;
  // What each step announces, in order: its event outgoing_transfer.<state> (whose data is a
  // reference to the row: rows::event_reference), or the payout leg as it was then.
  struct Step {
    std::string state;
    time::Micros at = 0;
    std::optional<Transfer> leg;  // for the leg follower (register_leg_follower)
  };
  std::vector<Step> steps;
};

// The payer a delivered transfer shows the creditor: the source account's beneficiary (a tenant
// account), else its account holder (a core account), else the transfer's payer_name with a
// sandbox document.
collections::Payer payer_of(store::Tx& tx, const std::string& tenant_id, const Transfer& t) {
  for (ledger::Surface surface : {ledger::Surface::participant, ledger::Surface::core}) {
    auto account = ledger::get_account(tx, tenant_id, t.tenant_account_id, surface);
    if (!account) continue;
    if (account->beneficiary) {
      return {account->beneficiary->full_name, account->beneficiary->document_type,
              account->beneficiary->document_number};
    }
    if (account->account_holder_id) {
      auto holder = ledger::get_account_holder(tx, tenant_id, *account->account_holder_id);
      if (holder) {
        const ledger::Person& person = holder->fields.person;
        return {person.first_name + " " + person.last_name, person.document_type,
                person.document_number};
      }
    }
  }
  collections::Payer payer = collections::random_payer();
  if (!t.payer_name.empty()) payer.name = t.payer_name;
  return payer;
}

class Pass {
 public:
  Pass(store::Tx& tx, time::Micros real_now) : tx_(tx), real_now_(real_now) {}

  std::int64_t run(std::int64_t limit);

 private:
  void load(const std::vector<tenant_clock::DueRow>& due);
  void advance(Moving& m);
  void finish(Moving& m, std::string state, std::optional<std::string> reason, time::Micros at);
  void announce(Moving& m, time::Micros at);
  void lock_sources();
  void deliver_all();
  void deliver(Moving& m);
  Status settle_all();
  void write_all();

  // The directory's answer for a key, asked once a pass (it cannot change within the unit).
  const Result<network::Resolution>& resolve(const std::string& key_type,
                                             const std::string& key_value) {
    auto key = std::make_pair(key_type, key_value);
    auto found = resolutions_.find(key);
    if (found == resolutions_.end()) {
      found = resolutions_.emplace(std::move(key), keys_->typed(key_type, key_value, "key_value"))
                  .first;
    }
    return found->second;
  }

  store::Tx& tx_;
  time::Micros real_now_;
  std::vector<Moving> moving_;
  // The keys of the loaded transfers not yet past target_resolved, looked up together (load).
  std::optional<network::KeySet> keys_;
  std::map<std::pair<std::string, std::string>, Result<network::Resolution>> resolutions_;
};

void Pass::load(const std::vector<tenant_clock::DueRow>& due) {
  std::map<std::string, std::vector<std::string>> ids;  // by tenant
  std::map<std::string, time::Micros> tenant_now;
  for (const tenant_clock::DueRow& d : due) {
    ids[d.tenant_id].push_back(d.id);
    tenant_now[d.tenant_id] = d.tenant_now;
  }
  for (const auto& [tenant_id, of_tenant] : ids) {
    const time::Micros now = tenant_now[tenant_id];
    for (Transfer& t : rows::by_ids(tx_, tenant_id, of_tenant, /*lock=*/false)) {
      if (!t.next_step_at_micros || *t.next_step_at_micros > now) continue;
      std::string read_updated_at = t.updated_at;
      moving_.push_back({tenant_id, now, std::move(t), std::move(read_updated_at), {}, {}});
    }
  }
  // Those still to reach target_resolved resolve their key again on the way (advance).
  std::vector<collections::KeyName> keys;
  for (const Moving& m : moving_) {
    if (rows::before_target_resolved(m.transfer.state)) {
      keys.emplace_back(m.transfer.key_type, m.transfer.key_value);
    }
  }
  keys_.emplace(tx_, std::vector<std::string>{}, keys);
}

// Every step that came due, each at its scheduled time, up to the last one.
void Pass::advance(Moving& m) {
  Transfer& t = m.transfer;
  while (t.next_step_at_micros && *t.next_step_at_micros <= m.tenant_now) {
    const time::Micros at = *t.next_step_at_micros;
    const std::string_view next = rows::next_state(t.state);
    // Only a moving transfer has a next step: a final one has none scheduled.
    TESORO_CHECK(!next.empty(), "transfer " + t.id + " is " + t.state + " with a step due");
    if (next == "successful") {
      if (t.sandbox_failure) return finish(m, "failed", t.sandbox_failure, at);
      if (t.creditor_collection_id) {
        m.delivery_at = at;
        return;
      }
      return finish(m, "successful", std::nullopt, at);
    }
    if (next == "target_resolved") {
      // The key is resolved again: it may have gone, or now belong to another collection.
      const auto& resolution = resolve(t.key_type, t.key_value);
      if (!resolution) return finish(m, "failed", "target_not_found", at);
      t.sandbox_failure = requested_failure(t.description);
      if (!t.sandbox_failure) t.sandbox_failure = resolution->sandbox_failure;
      t.creditor_tenant_id = resolution->collection_tenant_id;
      t.creditor_collection_id = resolution->collection_id;
    }
    t.state = std::string(next);
    t.updated_at = time::iso(at);
    t.next_step_at_micros = at + k_step_micros;
    if (next == "sent_to_breb_provider") {
      t.timemarks_json = rows::with_timemark(t.timemarks_json, "T120", at);
    }
    announce(m, at);
  }
}

void Pass::finish(Moving& m, std::string state, std::optional<std::string> reason,
                  time::Micros at) {
  Transfer& t = m.transfer;
  TESORO_CHECK(!rows::is_final(t.state) && rows::is_final(state),
               "transfer " + t.id + " is " + t.state + ": it cannot end " + state);
  t.state = std::move(state);
  t.state_reason = std::move(reason);
  t.updated_at = time::iso(at);
  t.next_step_at_micros.reset();
  t.timemarks_json = rows::with_timemark(t.timemarks_json, "T130", at);
  // The hold ends with the transfer: released (summed per account) in phase 4. held_minor stays
  // until then: phase 4 reads what to release from it.
  m.delivery_at.reset();
  announce(m, at);
}

// outgoing_transfer.<state>, or the payout's turn (the leg follower, once the leg is written).
void Pass::announce(Moving& m, time::Micros at) {
  const Transfer& t = m.transfer;
  Moving::Step step{t.state, at, std::nullopt};
  if (t.payout_id) step.leg = t;
  m.steps.push_back(std::move(step));
}

// Phase 2: the source accounts, all at once in the journal's global order; then, where rows are
// locked (PostgreSQL), the transfers themselves, read again: one that another node's pass moved
// since phase 1 read it is left to that node.
void Pass::lock_sources() {
  std::vector<ledger::AccountKey> accounts;
  for (const Moving& m : moving_) accounts.push_back({m.tenant_id, m.transfer.tenant_account_id});
  ledger::Journal sources(tx_, real_now_);  // locks only: phase 4 writes per tenant
  if (!sources.lock(accounts)) {
    moving_.clear();  // an account that vanished: nothing moves (verify would report it)
    return;
  }
  if (tx_.engine() != store::Engine::postgres) return;  // one writer: nothing moved meanwhile
  std::map<std::string, std::vector<std::string>> ids;  // by tenant
  for (const Moving& m : moving_) ids[m.tenant_id].push_back(m.transfer.id);
  std::set<std::tuple<std::string, std::string, std::string>> unchanged;  // tenant, id, version
  for (const auto& [tenant_id, of_tenant] : ids) {
    for (auto& [id, updated_at] : rows::lock_versions(tx_, tenant_id, of_tenant)) {
      unchanged.emplace(tenant_id, std::move(id), std::move(updated_at));
    }
  }
  std::erase_if(moving_, [&](const Moving& m) {
    return !unchanged.contains({m.tenant_id, m.transfer.id, m.read_updated_at});
  });
}

// Locks every collection the pass pays, in (tenant, id) order, then their tenant accounts in
// the journal's order (what a sandbox attempt locks, in the same order), then pays each.
void Pass::deliver_all() {
  std::vector<Moving*> deliveries;
  for (Moving& m : moving_) {
    if (m.delivery_at) deliveries.push_back(&m);
  }
  if (deliveries.empty()) return;
  std::sort(deliveries.begin(), deliveries.end(), [](const Moving* a, const Moving* b) {
    return std::tie(*a->transfer.creditor_tenant_id, *a->transfer.creditor_collection_id) <
           std::tie(*b->transfer.creditor_tenant_id, *b->transfer.creditor_collection_id);
  });
  std::vector<ledger::AccountKey> creditor_accounts;
  std::set<std::pair<std::string, std::string>> locked;
  for (const Moving* m : deliveries) {
    const std::string& tenant_id = *m->transfer.creditor_tenant_id;
    const std::string& collection_id = *m->transfer.creditor_collection_id;
    if (!locked.emplace(tenant_id, collection_id).second) continue;
    auto collection = collections::lock_collection(tx_, tenant_id, collection_id);
    if (collection) creditor_accounts.push_back({tenant_id, collection->tenant_account_id});
  }
  ledger::Journal creditors(tx_, real_now_);
  (void)creditors.lock(creditor_accounts);  // an account that vanished: its attempt refuses
  for (Moving* m : deliveries) deliver(*m);
}

// A payment attempt on the collection, in the creditor's tenant and at its clock, in a
// savepoint: a refused one (the key went inactive, the account is inactive) leaves nothing.
void Pass::deliver(Moving& m) {
  Transfer& t = m.transfer;
  const time::Micros at = *m.delivery_at;
  const std::string creditor = *t.creditor_tenant_id;
  collections::AttemptRequest request;
  request.amount_minor = t.amount_minor;
  request.currency = t.currency;
  request.key_type = t.key_type;
  request.key_value = t.key_value;
  request.payer = payer_of(tx_, m.tenant_id, t);
  request.payment_id = t.payment_id;
  request.end_to_end_id = t.end_to_end_id;
  const time::Micros creditor_now = tenant_clock::now(tx_, creditor, real_now_);
  auto attempt = tx_.nested<collections::Attempt>([&](store::Tx& inner) {
    return collections::simulate_attempt(inner, creditor, request, creditor_now);
  });
  if (attempt) t.attempt_id = attempt->id;
  if (attempt && attempt->state == "successful") return finish(m, "successful", std::nullopt, at);
  finish(m, "failed", "rejected_by_creditor", at);
}

// Phase 4, per tenant at its clock: the holds of the transfers that ended, one release per
// account, then the settlement entries of the successful ones, from each source to the tenant's
// network settlement account, written together. The accounts were locked in phase 2 (the
// journal of each tenant locks them again, which waits for nobody, and reads their balances as
// they are now).
Status Pass::settle_all() {
  std::map<std::string, std::vector<Moving*>> ended;  // by tenant
  for (Moving& m : moving_) {
    if (rows::is_final(m.transfer.state)) ended[m.tenant_id].push_back(&m);
  }
  for (auto& [tenant_id, of_tenant] : ended) {
    ledger::Journal journal(tx_, of_tenant.front()->tenant_now);
    std::map<ledger::AccountKey, std::int64_t> releases;
    for (Moving* m : of_tenant) {
      releases[{tenant_id, m->transfer.tenant_account_id}] += m->transfer.held_minor;
      m->transfer.held_minor = 0;
    }
    std::vector<ledger::AccountKey> accounts;
    for (const auto& [key, amount] : releases) accounts.push_back(key);
    if (Status locked = journal.lock(accounts); !locked) return locked;
    for (const auto& [key, amount] : releases) {
      if (Status released = journal.release(key.tenant_id, key.id, amount); !released) {
        return released;
      }
    }
    std::map<std::string, std::string> settlement;  // by currency
    std::vector<ledger::Journal::NewEntry> entries;
    std::vector<Moving*> settled;
    for (Moving* m : of_tenant) {
      const Transfer& t = m->transfer;
      if (t.state != "successful") continue;
      auto [found, fresh] = settlement.try_emplace(t.currency);
      if (fresh) {
        found->second = ledger::system_account(tx_, tenant_id,
                                               ledger::SystemRole::network_settlement,
                                               t.currency, m->tenant_now);
        if (Status locked = journal.lock({{tenant_id, found->second}}); !locked) return locked;
      }
      // A payout's leg is the payout's business: its entry names the payout.
      entries.push_back({"outgoing transfer " + t.id,
                         {{t.tenant_account_id, -t.amount_minor, t.currency},
                          {found->second, t.amount_minor, t.currency}},
                         t.payout_id ? ledger::Reference{"payout", *t.payout_id}
                                     : ledger::Reference{"outgoing_transfer", t.id}});
      settled.push_back(m);
    }
    auto posted = journal.post_all(tenant_id, "outgoing_transfer", entries);
    if (!posted) return std::move(posted).error();
    for (std::size_t i = 0; i < settled.size(); ++i) {
      settled[i]->transfer.entry_id = posted.value()[i].entry_id;
    }
  }
  return ok_status();
}

void Pass::write_all() {
  std::map<std::string, std::vector<const Transfer*>> changed;  // by tenant
  std::map<std::pair<std::string, std::string>, std::int64_t> ended_by_batch;  // how many ended
  std::vector<events::Emission> emissions;
  for (const Moving& m : moving_) {
    changed[m.tenant_id].push_back(&m.transfer);
    if (m.transfer.batch_id && rows::is_final(m.transfer.state)) {
      ++ended_by_batch[{m.tenant_id, *m.transfer.batch_id}];
    }
    for (const Moving::Step& step : m.steps) {
      if (!step.leg) {
        emissions.push_back({m.tenant_id, "outgoing_transfer." + step.state,
                             rows::event_reference(m.transfer), step.at});
      }
    }
  }
  for (const auto& [tenant_id, transfers] : changed) rows::save_progress(tx_, tenant_id, transfers);
  events::emit_many(tx_, emissions);
  for (const Moving& m : moving_) {
    for (const Moving::Step& step : m.steps) {
      if (step.leg) follow_leg(tx_, m.tenant_id, *step.leg, step.at);
    }
  }
  // A batch is completed once none of its transfers moves: its count of moving transfers goes
  // down by those that ended here (each transfer ends in one pass only: rows another node moved
  // were left out in lock_sources) and the batch completes when it reaches 0. SET reads the
  // row's values before the update. The map's (tenant, batch) order is the order every pass
  // locks batch rows in: two nodes ending transfers of the same batches queue, never deadlock.
  for (const auto& [batch, ended] : ended_by_batch) {
    const auto& [tenant_id, batch_id] = batch;
    tx_.exec("UPDATE outgoing_transfer_batches SET moving_count = moving_count - ?, "
             "state = CASE WHEN moving_count = ? THEN 'completed' ELSE state END, "
             "updated_at = CASE WHEN moving_count = ? THEN ? ELSE updated_at END "
             "WHERE tenant_id = ? AND id = ?",
             {ended, ended, ended, time::iso(tenant_clock::now(tx_, tenant_id, real_now_)),
              tenant_id, batch_id});
  }
}

std::int64_t Pass::run(std::int64_t limit) {
  const std::vector<tenant_clock::DueRow> due = tenant_clock::due_rows(
      tx_, {"outgoing_transfers", "next_step_at_micros", k_moving_condition}, real_now_, limit);
  if (due.empty()) return 0;
  load(due);
  for (Moving& m : moving_) advance(m);
  lock_sources();
  deliver_all();
  if (!settle_all()) {
    // The holds and balances were read under the locks: a settlement cannot fail but by a bug.
    throw store::StoreError("outgoing transfers: a settlement failed", false);
  }
  write_all();
  // What was due counts, moved or not (another node moved it): the caller runs again while a
  // whole chunk was due.
  return static_cast<std::int64_t>(due.size());
}

}  // namespace

std::int64_t process_due(store::Tx& tx, time::Micros real_now, std::int64_t limit) {
  Pass pass(tx, real_now);
  return pass.run(limit);
}

namespace {

// The checks of verify that are one query each: what a row that breaks it is, and the query
// that finds every such row as (tenant_id, id, what is wrong).
struct RowCheck {
  const char* subject;
  std::string sql;
};

const std::vector<RowCheck>& row_checks() {
  static const std::vector<RowCheck> k_checks = {
      // What each account holds is what its moving transfers hold (card prepaid accounts hold
      // for their authorizations: cards::verify).
      {"account",
       "SELECT a.tenant_id, a.id, 'holds ' || CAST(a.held AS TEXT) || ' but its moving "
       "outgoing transfers hold ' || CAST(COALESCE(h.held, 0) AS TEXT) "
       "FROM ledger_accounts a LEFT JOIN (SELECT tenant_id, tenant_account_id, SUM(held) AS held "
       "FROM outgoing_transfers WHERE held <> 0 GROUP BY tenant_id, tenant_account_id) h "
       "ON h.tenant_id = a.tenant_id AND h.tenant_account_id = a.id "
       "WHERE a.surface IN ('core', 'participant') AND a.held <> COALESCE(h.held, 0)"},
      {"outgoing transfer",
       "SELECT tenant_id, id, 'state ' || state || ' with held ' || CAST(held AS TEXT) || "
       "' of an amount of ' || CAST(amount AS TEXT) FROM outgoing_transfers WHERE "
       "(state IN ('successful', 'failed') AND (held <> 0 OR next_step_at_micros IS NOT NULL)) "
       "OR (state NOT IN ('successful', 'failed') AND (held <> amount "
       "OR next_step_at_micros IS NULL)) OR amount <= 0"},
      {"outgoing transfer",
       "SELECT t.tenant_id, t.id, 'successful without one settlement entry debiting its "
       "source by its amount' FROM outgoing_transfers t WHERE t.state = 'successful' AND "
       "(t.entry_id IS NULL OR NOT EXISTS (SELECT 1 FROM journal_entries e JOIN postings p "
       "ON p.tenant_id = e.tenant_id AND p.entry_id = e.id WHERE e.tenant_id = t.tenant_id "
       "AND e.id = t.entry_id AND e.kind = 'outgoing_transfer' "
       "AND p.account_id || '' = t.tenant_account_id AND p.amount = -t.amount "
       "AND p.currency = t.currency))"},
      {"outgoing transfer",
       "SELECT tenant_id, id, 'not successful but has a journal entry' FROM "
       "outgoing_transfers WHERE state <> 'successful' AND entry_id IS NOT NULL"},
      // A created event the row keeps (SQLite) has a position of its own: no event row has it
      // (transfers' positions are unique: their rowids).
      {"outgoing transfer",
       "SELECT t.tenant_id, t.id, 'keeps its created event at position ' || "
       "CAST(t.created_position AS TEXT) || ', which event ' || e.id || ' has too' FROM "
       "outgoing_transfers t JOIN events e ON e.position = t.created_position "
       "WHERE t." + std::string(events::k_row_event_kept_sql)},
      // A transfer delivered to a collection of this Tesoro arrived there: its successful
      // attempt of the same amount, carrying its end-to-end id on the incoming transfer.
      {"outgoing transfer",
       "SELECT t.tenant_id, t.id, 'successful to collection ' || t.creditor_collection_id || "
       "' without its successful attempt of the same amount' FROM outgoing_transfers t "
       "WHERE t.state = 'successful' AND t.creditor_collection_id IS NOT NULL AND NOT EXISTS "
       "(SELECT 1 FROM collection_attempts a JOIN incoming_transfers i "
       "ON i.tenant_id = a.tenant_id AND i.attempt_id = a.id "
       "WHERE a.tenant_id = t.creditor_tenant_id AND a.id = t.attempt_id "
       "AND a.collection_id = t.creditor_collection_id AND a.state = 'successful' "
       "AND a.amount = t.amount AND i.end_to_end_id = t.end_to_end_id)"},
      // The lists and the processor find a batch's transfers by its inserted_at.
      {"outgoing transfer",
       "SELECT t.tenant_id, t.id, 'inserted at ' || t.inserted_at || ' but its batch ' || "
       "t.batch_id || ' at ' || COALESCE(b.inserted_at, 'no time: the batch is missing') "
       "FROM outgoing_transfers t LEFT JOIN outgoing_transfer_batches b "
       "ON b.tenant_id = t.tenant_id AND b.id = t.batch_id WHERE t.batch_id IS NOT NULL "
       "AND (b.inserted_at IS NULL OR b.inserted_at <> t.inserted_at)"},
      {"outgoing transfer batch",
       "SELECT b.tenant_id, b.id, 'state ' || b.state || ' does not agree with its "
       "transfers' FROM outgoing_transfer_batches b WHERE (b.state = 'completed') = EXISTS "
       "(SELECT 1 FROM outgoing_transfers t WHERE t.tenant_id = b.tenant_id "
       "AND t.batch_id = b.id AND t.inserted_at = b.inserted_at "
       "AND t.next_step_at_micros IS NOT NULL)"},
      // The processor completes a batch when its count of moving transfers reaches 0. Counted
      // over the moving transfers only (their partial index), grouped by batch.
      {"outgoing transfer batch",
       "SELECT b.tenant_id, b.id, 'moving_count ' || CAST(b.moving_count AS TEXT) || ' but ' "
       "|| CAST(COALESCE(m.n, 0) AS TEXT) || ' of its transfers moving' "
       "FROM outgoing_transfer_batches b LEFT JOIN (SELECT tenant_id, batch_id, COUNT(*) AS n "
       "FROM outgoing_transfers WHERE next_step_at_micros IS NOT NULL AND batch_id IS NOT NULL "
       "GROUP BY tenant_id, batch_id) m ON m.tenant_id = b.tenant_id AND m.batch_id = b.id "
       "WHERE b.moving_count <> COALESCE(m.n, 0)"}};
  return k_checks;
}

}  // namespace

std::vector<std::string> verify(store::Tx& tx) {
  std::vector<std::string> violations;
  for (const RowCheck& check : row_checks()) {
    for (const store::Row& row : tx.query(check.sql)) {
      violations.push_back(std::string(check.subject) + " " + row.text(1) + " of tenant " +
                           row.text(0) + ": " + row.text(2));
    }
  }
  // One settlement entry per successful transfer, and none besides: counted per tenant.
  std::map<std::string, std::int64_t> entries;
  for (const store::Row& row : tx.query("SELECT tenant_id, COUNT(*) FROM journal_entries "
                                        "WHERE kind = 'outgoing_transfer' GROUP BY tenant_id")) {
    entries[row.text(0)] = row.integer(1);
  }
  for (const store::Row& row : tx.query("SELECT tenant_id, COUNT(DISTINCT entry_id) FROM "
                                        "outgoing_transfers WHERE entry_id IS NOT NULL "
                                        "GROUP BY tenant_id")) {
    entries[row.text(0)] -= row.integer(1);
  }
  for (const auto& [tenant_id, unmatched] : entries) {
    if (unmatched == 0) continue;
    violations.push_back("tenant " + tenant_id + ": " + std::to_string(unmatched) +
                         " outgoing_transfer journal entries more than its transfers have "
                         "(negative: transfers share entries)");
  }
  return violations;
}

bool register_leg_follower(LegFollower follower) {
  leg_follower.store(follower);
  return true;
}

}  // namespace tesoro::transfers
