// Acceptance of outgoing transfers (batches and payout legs), their JSON, and their reads. The
// processor that moves them is in processor.cpp.
#include "domain/transfers/outgoing_transfers.hpp"
#include "domain/transfers/sandbox_failures.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <boost/unordered/unordered_flat_map.hpp>

#include "core/ids.hpp"
#include "core/json_writer.hpp"
#include "core/limits.hpp"
#include "core/money.hpp"
#include "domain/events/events.hpp"
#include "domain/ledger/accounts.hpp"
#include "domain/network/directory.hpp"
#include "domain/transfers/transfer_rows.hpp"
#include "store/bulk.hpp"
#include "store/pages.hpp"

namespace tesoro::transfers {
namespace {

const std::string k_created_event_type = "outgoing_transfer.created";

void optional_string(json_text::Writer& out, const std::optional<std::string>& text) {
  if (text) {
    out.string(*text);
  } else {
    out.null();
  }
}

void money(json_text::Writer& out, std::int64_t amount, const std::string& currency) {
  out.begin_object().key("amount").integer(amount).key("currency").string(currency).end_object();
}

// The tenant-time fields every transfer accepted at one time starts with, written once for a
// batch's thousand, and its transfers' ids: made together and handed out in ascending order,
// so that a batch's rows go into the ends of the indexes keyed by id (its key, its time index)
// in their order instead of at random places among each other.
struct Stamp {
  explicit Stamp(time::Micros at, std::size_t count = 1)
      : now(at), iso(time::iso(at)), timemarks_json(rows::with_timemark("{}", "T110", at)) {
    ids.reserve(count);
    for (std::size_t i = 0; i < count; ++i) ids.push_back(ids::generate("bbot"));
    std::sort(ids.begin(), ids.end());
  }
  time::Micros now;
  std::string iso;
  std::string timemarks_json;
  std::vector<std::string> ids;
  std::size_t next_id = 0;
};

void stamp(Transfer& t, Stamp& at) {
  t.id = at.next_id < at.ids.size() ? std::move(at.ids[at.next_id++]) : ids::generate("bbot");
  t.end_to_end_id = ids::end_to_end_id(at.now);
  t.state = "created";
  t.state_reason.reset();
  t.timemarks_json = at.timemarks_json;
  t.held_minor = t.amount_minor;
  t.next_step_at_micros = at.now + limits::k_transfer_step_seconds * time::k_micros_per_second;
  t.inserted_at = t.updated_at = at.iso;
}

Error insufficient_funds(std::int64_t available, const std::string& currency) {
  return errors::of(ErrorCode::insufficient_funds, "amount.amount",
                    "the source account's available balance (" +
                        money::display(available, currency) + ") does not cover the amount");
}

// What the batch may still hold of its locked source: the checks journal.hold makes, against
// the available balance less what the items accepted before took.
struct Funds {
  std::string account_id;
  std::string currency;
  std::string state;
  std::int64_t available = 0;

  Status check(std::int64_t amount_minor, const std::string& amount_currency) const {
    if (state != "active") {
      return errors::of(ErrorCode::account_invalid_state, std::nullopt,
                        "account " + account_id + " is " + state + ": it cannot be held");
    }
    if (amount_currency != currency) return ledger::currency_mismatch(currency);
    if (amount_minor > available) return insufficient_funds(available, currency);
    return ok_status();
  }
};

// The keys and targets the items of one batch name, each resolved once: the targets read
// together up front, then the directory's entries of every plain key and target key together.
class Resolver {
 public:
  Resolver(store::Tx& tx, const std::string& tenant_id, time::Micros now,
           const std::vector<std::string>& plain_keys, const std::vector<std::string>& target_ids)
      : now_(now),
        read_targets_(network::read_targets(tx, tenant_id, target_ids)),
        keys_(tx, plain_keys, keys_of(read_targets_)) {}

  const Result<network::Resolution>& plain_key(const std::string& value) {
    auto found = plain_keys_.find(value);
    if (found == plain_keys_.end()) {
      found = plain_keys_.emplace(value, keys_.plain(value, "query.value")).first;
    }
    return found->second;
  }

  struct Named {
    network::Target target;
    network::Resolution resolution;  // the target's key, resolved again now
    std::string stored_target;       // network::stored_target of the target's JSON
  };
  // The stored Target of a transfer to a plain key (network::stored_target), made once per
  // key and currency: the batch's transfers to one key show the same Target but for their ids.
  const std::string& plain_target(const network::Resolution& resolution,
                                  const std::string& currency) {
    auto key = std::make_pair(&resolution, currency);
    auto found = plain_targets_.find(key);
    if (found == plain_targets_.end()) {
      std::string stored = network::stored_target(
          resolution, std::string(network::k_format_plain_key), std::nullopt, currency,
          now_ + limits::k_target_ttl_seconds * time::k_micros_per_second, now_);
      found = plain_targets_.emplace(std::move(key), std::move(stored)).first;
    }
    return found->second;
  }

  const Result<Named>& target(const std::string& id) {
    auto found = targets_.find(id);
    if (found == targets_.end()) found = targets_.emplace(id, resolve_target(id)).first;
    return found->second;
  }

 private:
  static std::vector<collections::KeyName> keys_of(
      const std::map<std::string, network::Target>& targets) {
    std::vector<collections::KeyName> keys;
    for (const auto& [id, target] : targets) keys.emplace_back(target.key_type, target.key_value);
    return keys;
  }

  // A target the batch names: read with the others (target_not_found when not the tenant's),
  // unexpired, and its key resolved as network::resolve_key would.
  Result<Named> resolve_target(const std::string& id) {
    const std::string path = "target_id";
    auto read = read_targets_.find(id);
    if (read == read_targets_.end()) return errors::of(ErrorCode::target_not_found, path);
    // Each id is resolved once (targets_ keeps the answer): its read target is moved out.
    network::Target& target = read->second;
    if (Status fresh = network::unexpired(target, now_, path); !fresh) {
      return std::move(fresh).error();
    }
    auto resolution = keys_.typed(target.key_type, target.key_value, path);
    if (!resolution) return std::move(resolution).error();
    std::string stored = network::stored_target(target.json);
    return Named{std::move(target), std::move(resolution).value(), std::move(stored)};
  }

  time::Micros now_;
  std::map<std::string, network::Target> read_targets_;  // declared before keys_: it reads them
  network::KeySet keys_;
  std::map<std::string, Result<network::Resolution>> plain_keys_;
  std::map<std::string, Result<Named>> targets_;
  // By the resolution (kept in plain_keys_, whose entries stay where they are) and currency.
  std::map<std::pair<const network::Resolution*, std::string>, std::string> plain_targets_;
};

// The plain key an item without a target names ("" when it has no query: not a key).
std::string plain_key_of(const BatchItem& item) { return item.query ? item.query->value : ""; }

// The amount of an item against its target's transaction_amount.
Status take_amount(Transfer& t, const BatchItem& item, const std::optional<std::int64_t>& target,
                   const std::optional<std::string>& target_currency, std::int64_t max) {
  if (item.amount_minor && target &&
      (*item.amount_minor != *target || item.currency != target_currency.value_or(""))) {
    return errors::of(ErrorCode::target_amount_mismatch, "amount.amount",
                      "the amount " + money::display(*item.amount_minor, item.currency) +
                          " differs from the target's transaction amount " +
                          money::display(*target, target_currency.value_or("")));
  }
  if (item.amount_minor) {
    t.amount_minor = *item.amount_minor;
    t.currency = item.currency;
  } else if (target) {
    t.amount_minor = *target;
    t.currency = target_currency.value_or("");
  } else {
    return errors::of(ErrorCode::amount_not_provided, "amount",
                      "the transfer has no amount and its target has no transaction amount");
  }
  if (t.amount_minor > max) {
    return errors::amount_exceeds_max_limit(t.amount_minor, max, t.currency, "amount.amount");
  }
  return ok_status();
}

// A batch item made a transfer of the batch (not yet stamped) in `t`, or why it is rejected
// (paths relative to the item; `t` is then partly filled). `t` is the one Transfer that
// prepare_batch makes every item's in: each field that stamp() and the batch id leave is set
// here, whatever an item before left in it. Outcomes in precedence order:
// amount_exceeds_max_limit (an amount given above the maximum), target_not_found,
// target_expired, amount_not_provided, amount_exceeds_max_limit (the target's amount),
// target_amount_mismatch.
Status prepare(Resolver& resolver, const NewBatch& input, const BatchItem& item,
               const std::string& payer_name, Transfer& t) {
  if (item.amount_minor && *item.amount_minor > input.max_amount_minor) {
    return errors::amount_exceeds_max_limit(*item.amount_minor, input.max_amount_minor,
                                            item.currency, "amount.amount");
  }
  const network::Resolution* resolution = nullptr;
  std::optional<std::int64_t> target_amount;
  std::optional<std::string> target_currency;
  if (item.target_id) {
    const auto& named = resolver.target(*item.target_id);
    if (!named) return named.error();
    const network::Target& target = named->target;
    resolution = &named->resolution;
    t.target_id = target.id;
    t.resolution_request_id = target.resolution_request_id;
    t.payment_id = target.payment_id;
    t.key_type = target.key_type;
    t.key_value = target.key_value;
    t.stored_target = named->stored_target;
    t.query.reset();
    target_amount = target.amount_minor;
    target_currency = target.currency;
  } else {
    const auto& resolved = resolver.plain_key(plain_key_of(item));
    if (!resolved) return resolved.error();
    resolution = &resolved.value();
    t.target_id = ids::generate("bbtgt");
    t.resolution_request_id = ids::generate("bbtgr");
    t.payment_id = network::new_payment_id();
    t.key_type = resolution->key_type;
    t.key_value = resolution->key_value;
    t.query = item.query;
  }
  if (Status amount = take_amount(t, item, target_amount, target_currency,
                                  input.max_amount_minor);
      !amount) {
    return amount.error();
  }
  if (!item.target_id) t.stored_target = resolver.plain_target(*resolution, t.currency);
  t.external_id = item.external_id;
  t.tenant_account_id = input.tenant_account_id;
  t.description = item.description ? item.description : input.description;
  t.payer_name = payer_name;
  t.expected_creditor = item.expected_creditor;
  t.metadata = item.metadata;
  t.sandbox_failure = requested_failure(t.description);
  if (!t.sandbox_failure) t.sandbox_failure = resolution->sandbox_failure;
  t.creditor_tenant_id = resolution->collection_tenant_id;
  t.creditor_collection_id = resolution->collection_id;
  return ok_status();
}

// Every error path under transfers.<index>.
Error under_item(Error error, std::size_t index) {
  const std::string prefix = "transfers." + std::to_string(index);
  for (ErrorItem& item : error.errors) {
    item.path = item.path ? prefix + "." + *item.path : prefix;
  }
  return error;
}

// The tenant's transfers with these external ids, by external id. The ids are bound where they
// are (a batch's thousand are its items').
std::map<std::string, Transfer> by_external_ids(store::Tx& tx, const std::string& tenant_id,
                                                const std::vector<store::TextRef>& external_ids) {
  std::map<std::string, Transfer> found;
  store::query_in(tx,
                  std::string("SELECT ") + rows::k_columns +
                      " FROM outgoing_transfers WHERE tenant_id = ? AND external_id",
                  {tenant_id}, external_ids, "", [&](const store::Row& row) {
                    Transfer t = rows::from_row(row);
                    std::string key = *t.external_id;
                    found.emplace(std::move(key), std::move(t));
                  });
  return found;
}

// The source of a batch: the tenant's own originator account, active.
// tenant_account_not_found otherwise.
Result<ledger::Account> source_account(store::Tx& tx, const std::string& tenant_id,
                                       const std::string& id) {
  auto account = ledger::get_account(tx, tenant_id, id, ledger::Surface::participant);
  if (!account) {
    return errors::of(ErrorCode::tenant_account_not_found, "tenant_account_id",
                      "tenant account not found");
  }
  if (account->role.value_or("") != "originator") {
    return errors::of(ErrorCode::tenant_account_not_found, "tenant_account_id",
                      "the tenant account is not an originator account (its role is " +
                          account->role.value_or("") + ")");
  }
  if (account->state != "active") {
    return errors::of(ErrorCode::tenant_account_not_found, "tenant_account_id",
                      "the tenant account is not active (it is " + account->state + ")");
  }
  return account;
}

// The data of outgoing_transfer.<state> events kept by reference (rows::event_reference): each
// the transfer as_of the event, from the transfers' rows, a statement per chunk of ids.
constexpr std::string_view k_event_type_prefix = "outgoing_transfer.";

std::vector<std::optional<std::string>> render_events(
    store::Tx& tx, const std::string& tenant_id, const std::vector<events::Referenced>& asked) {
  std::set<std::string> distinct;
  for (const events::Referenced& event : asked) distinct.insert(event.subject_id);
  std::map<std::string, Transfer, std::less<>> found;
  for (Transfer& t : rows::by_ids(tx, tenant_id, {distinct.begin(), distinct.end()}, false)) {
    std::string id = t.id;
    found.emplace(std::move(id), std::move(t));
  }
  std::vector<std::optional<std::string>> texts;
  texts.reserve(asked.size());
  for (const events::Referenced& event : asked) {
    auto transfer = found.find(event.subject_id);
    if (transfer == found.end() || !event.type.starts_with(k_event_type_prefix)) {
      texts.emplace_back();
      continue;
    }
    const std::string_view state =
        std::string_view(event.type).substr(k_event_type_prefix.size());
    texts.emplace_back(transfer_text(as_of(transfer->second, state, event.inserted_at)));
  }
  return texts;
}

[[maybe_unused]] const bool k_event_renderer_registered =
    events::register_renderer(rows::k_event_kind, &render_events);

// Writes the accepted transfers (prepared.items at done.accepted) and their events (references
// to the rows). A transfer that another unit's transfer with the same external id beat
// (PostgreSQL: committed between our read and our insert) is not accepted after all: it is
// listed as duplicated, and added to `known` (the tenant's transfers by external id), for the
// items that repeat it.
void write_accepted(store::Tx& tx, const std::string& tenant_id, const PreparedBatch& prepared,
                    AcceptedBatch& done, std::map<std::string, Transfer>& known) {
  std::vector<std::size_t> accepted_rows;
  accepted_rows.reserve(done.accepted.size());
  for (std::size_t item : done.accepted) accepted_rows.push_back(prepared.items[item].row);
  // On SQLite the rows keep their created events; elsewhere they are emitted.
  const bool rows_keep_events = events::rows_keep_events(tx);
  std::optional<std::int64_t> first_position;
  if (rows_keep_events) first_position = events::row_positions(tx, accepted_rows.size());
  const std::vector<bool> inserted =
      rows::insert(tx, tenant_id, prepared.rows, accepted_rows, first_position);
  std::vector<store::TextRef> beaten;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < inserted.size(); ++i) {
    if (!inserted[i]) {  // done.accepted[i] not yet moved: only places before i are written
      beaten.emplace_back(prepared.items[done.accepted[i]].external_id);
      continue;
    }
    done.accepted[kept] = done.accepted[i];
    ++kept;
  }
  done.accepted.resize(kept);
  if (!rows_keep_events) {
    std::vector<events::MadeEvent> created;
    created.reserve(kept);
    for (std::size_t item : done.accepted) {
      created.push_back(
          {&prepared.items[item].created_event_id, &prepared.items[item].created_event_data});
    }
    events::emit_made(tx, tenant_id, k_created_event_type, prepared.now, created);
  }
  for (auto& [external_id, winner] : by_external_ids(tx, tenant_id, beaten)) {
    done.batch.duplicated.push_back(winner);
    known.emplace(external_id, std::move(winner));
  }
}

void insert_batch(store::Tx& tx, const std::string& tenant_id, const Batch& batch,
                  std::size_t accepted) {
  // Every accepted transfer moves until it ends: moving_count starts at the accepted count.
  tx.exec("INSERT INTO outgoing_transfer_batches (tenant_id, id, tenant_account_id, description, "
          "state, accepted_count, duplicated_count, rejected_count, moving_count, inserted_at, "
          "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          {tenant_id, batch.id, batch.tenant_account_id, store::optional_value(batch.description),
           batch.state, static_cast<std::int64_t>(accepted),
           static_cast<std::int64_t>(batch.duplicated.size()),
           static_cast<std::int64_t>(batch.rejected.size()), static_cast<std::int64_t>(accepted),
           batch.inserted_at, batch.updated_at});
}

}  // namespace

const std::vector<std::string>& states() {
  static const std::vector<std::string> values = {
      "created", "processing", "target_resolved", "held", "sent_to_breb_provider",
      "successful", "failed"};
  return values;
}

namespace {
// The fields of a transfer's Target that its row has in columns of its own.
network::TargetIds target_ids(const Transfer& t) {
  return {t.target_id, t.resolution_request_id, t.key_type, t.key_value, t.payment_id};
}
}  // namespace

std::string target_text(const Transfer& transfer) {
  return network::shown_target(transfer.stored_target, target_ids(transfer));
}

std::string transfer_text(const Transfer& t, network::ShownTargets* shown) {
  json_text::Writer out(1536);
  write_transfer(out, t, shown);
  return out.take();
}

void write_transfer(json_text::Writer& out, const Transfer& t, network::ShownTargets* shown) {
  out.begin_object().key("id").string(t.id).key("batch_id");
  optional_string(out, t.batch_id);
  out.key("external_id");
  optional_string(out, t.external_id);
  out.key("tenant_account_id").string(t.tenant_account_id).key("amount");
  money(out, t.amount_minor, t.currency);
  out.key("description");
  optional_string(out, t.description);
  out.key("end_to_end_id").string(t.end_to_end_id).key("payment_id").string(t.payment_id);
  out.key("payer_name").string(t.payer_name);
  out.key("resolution_request_id").string(t.resolution_request_id);
  out.key("metadata").raw(ledger::encode_metadata(t.metadata));
  out.key("state").string(t.state).key("state_reason");
  optional_string(out, t.state_reason);
  out.key("timemarks").raw(t.timemarks_json).key("expected_creditor");
  if (t.expected_creditor) {
    out.begin_object().key("document_number").string(t.expected_creditor->document_number);
    out.key("document_type").string(t.expected_creditor->document_type).end_object();
  } else {
    out.null();
  }
  out.key("query");
  if (t.query) {
    out.begin_object().key("format").string(t.query->format);
    out.key("value").string(t.query->value).end_object();
  } else {
    out.null();
  }
  out.key("target");
  network::write_target(out, t.stored_target, target_ids(t), shown);
  out.key("inserted_at").string(t.inserted_at).key("updated_at").string(t.updated_at);
  out.end_object();
}

Transfer as_of(Transfer transfer, std::string_view state, std::string_view at) {
  transfer.state = std::string(state);
  if (state != "failed") transfer.state_reason.reset();  // set only by the failure
  transfer.updated_at = std::string(at);
  transfer.timemarks_json = rows::timemarks_until(transfer.timemarks_json, at);
  return transfer;
}

namespace {

// The batch as POST answers it, its accepted transfers being `accepted` (their transfer_text).
std::string batch_text_with(const Batch& batch, const std::vector<std::string_view>& accepted) {
  std::size_t size = 1024 + 1536 * batch.duplicated.size();
  for (std::string_view text : accepted) size += text.size() + 1;
  json_text::Writer out(size);
  out.begin_object().key("id").string(batch.id);
  out.key("tenant_account_id").string(batch.tenant_account_id).key("description");
  optional_string(out, batch.description);
  out.key("state").string(batch.state).key("accepted_transfers").begin_array();
  for (std::string_view text : accepted) out.raw(text);
  out.end_array().key("duplicated_transfers").begin_array();
  for (const Transfer& t : batch.duplicated) out.raw(transfer_text(t));
  out.end_array().key("rejected_transfers").begin_array();
  for (const RejectedItem& item : batch.rejected) {
    const ErrorItem& first = item.error.errors.front();
    out.begin_object().key("index").integer(static_cast<std::int64_t>(item.index));
    out.key("external_id");
    optional_string(out, item.external_id.empty() ? std::nullopt
                                                  : std::optional<std::string>(item.external_id));
    out.key("error_code").string(first.error_code).key("message").string(first.message);
    out.key("path");
    optional_string(out, first.path);
    out.key("errors").begin_array();
    for (const ErrorItem& problem : item.error.errors) {
      out.begin_object().key("error_code").string(problem.error_code);
      out.key("message").string(problem.message).key("path");
      optional_string(out, problem.path);
      out.key("url");
      optional_string(out, problem.url);
      out.end_object();
    }
    out.end_array().end_object();
  }
  out.end_array();
  out.key("inserted_at").string(batch.inserted_at).key("updated_at").string(batch.updated_at);
  out.end_object();
  return out.take();
}

}  // namespace

std::string batch_text(const Batch& batch) {
  std::vector<std::string> texts;
  texts.reserve(batch.accepted.size());
  for (const Transfer& t : batch.accepted) texts.push_back(transfer_text(t));
  return batch_text_with(batch, {texts.begin(), texts.end()});
}

std::string batch_text(const PreparedBatch& prepared, const AcceptedBatch& done) {
  std::vector<std::string_view> texts;
  texts.reserve(done.accepted.size());
  for (std::size_t item : done.accepted) texts.push_back(prepared.text(prepared.items[item]));
  return batch_text_with(done.batch, texts);
}

std::string_view PreparedBatch::transfer_id(const PreparedItem& item) const {
  return rows::packed_id(rows, item.row);
}

Result<PreparedBatch> prepare_batch(store::Tx& tx, const std::string& tenant_id,
                                    const NewBatch& input, time::Micros now) {
  auto account = source_account(tx, tenant_id, input.tenant_account_id);
  if (!account) return std::move(account).error();
  const std::string payer_name = account->beneficiary ? account->beneficiary->full_name : "";
  PreparedBatch prepared;
  prepared.id = ids::generate("bbotb");
  prepared.tenant_account_id = input.tenant_account_id;
  prepared.description = input.description;
  prepared.now = now;
  prepared.rejected = input.rejected;
  // An item whose external_id is already taken is a duplicate whatever it says: not prepared.
  std::vector<store::TextRef> external_ids;
  external_ids.reserve(input.items.size());
  std::vector<std::string> plain_keys;
  std::vector<std::string> target_ids;
  for (const auto& [index, item] : input.items) {
    external_ids.emplace_back(item.external_id);
    if (item.target_id) {
      target_ids.push_back(*item.target_id);
    } else {
      plain_keys.push_back(plain_key_of(item));
    }
  }
  const std::map<std::string, Transfer> existing = by_external_ids(tx, tenant_id, external_ids);
  Resolver resolver(tx, tenant_id, now, plain_keys, target_ids);
  network::ShownTargets shown;
  // External id -> its last item so far: a flat hash map (one allocation for the batch's
  // thousand, and a hash each instead of a dozen comparisons of ids with a long common prefix).
  boost::unordered_flat_map<std::string_view, std::size_t> last_with;
  last_with.reserve(input.items.size());
  Stamp stamped(now, input.items.size());
  const bool rows_keep_events = events::rows_keep_events(tx);  // else the events are made here
  prepared.items.reserve(input.items.size());
  json_text::Writer texts(input.items.size() * 1536);
  prepared.rows = rows::packed_rows(input.items.size());
  // Every item's transfer is made here in turn (PreparedItem): prepare() and stamp() set each
  // of its fields, so nothing of an item before is left.
  Transfer made;
  for (const auto& [index, item] : input.items) {
    PreparedItem& out = prepared.items.emplace_back();
    out.index = index;
    out.external_id = item.external_id;
    auto [last, first] = last_with.try_emplace(item.external_id, prepared.items.size() - 1);
    if (!first) {
      out.earlier_same = last->second;
      last->second = prepared.items.size() - 1;
    }
    if (auto found = existing.find(item.external_id); found != existing.end()) {
      out.duplicate_of = found->second;
      continue;
    }
    if (Status prepared_item = prepare(resolver, input, item, payer_name, made);
        !prepared_item) {
      out.rejection = under_item(std::move(prepared_item).error(), index);
      continue;
    }
    stamp(made, stamped);
    made.batch_id = prepared.id;
    out.made = true;
    out.amount_minor = made.amount_minor;
    out.currency = made.currency;
    // The writer puts a comma between two texts: an item's own text starts at its '{'.
    const std::size_t before = texts.text().size();
    write_transfer(texts, made, &shown);
    out.text_begin = before + (texts.text()[before] == ',' ? 1 : 0);
    out.text_size = texts.text().size() - out.text_begin;
    out.row = prepared.rows.rows();
    rows::pack(prepared.rows, made);
    if (!rows_keep_events) {
      out.created_event_id = ids::generate("evt");
      out.created_event_data = rows::event_reference(made);
    }
  }
  prepared.texts = texts.take();
  return prepared;
}

namespace {

// Which items of a batch are accepted against `funds`, in request order.
struct Decision {
  AcceptedBatch done;
  // The tenant's transfers the preparation found by external id; those that other units
  // committed since are found by the inserts (write_accepted).
  std::map<std::string, Transfer> existing;
  std::vector<std::string> duplicated_ids;  // in item order, listed once written
  std::int64_t accepted_total = 0;  // <= funds.available
  // An item the account refused (its state, its currency, or its funds, whose refusal names
  // what was left): such a decision stands only on the same balance.
  bool refused_for_funds = false;
};

Result<Decision> decide(const PreparedBatch& prepared, Funds funds) {
  Decision decision;
  Batch& batch = decision.done.batch;
  batch.id = prepared.id;
  batch.tenant_account_id = prepared.tenant_account_id;
  batch.description = prepared.description;
  batch.rejected = prepared.rejected;
  batch.inserted_at = batch.updated_at = time::iso(prepared.now);
  for (const PreparedItem& item : prepared.items) {
    if (item.duplicate_of) decision.existing.emplace(item.external_id, *item.duplicate_of);
  }
  // Whether an item with the same external id before item `i` is accepted.
  std::vector<bool> accepted(prepared.items.size(), false);
  auto taken_before = [&](std::size_t i) {
    for (auto j = prepared.items[i].earlier_same; j; j = prepared.items[*j].earlier_same) {
      if (accepted[*j]) return true;
    }
    return false;
  };
  for (std::size_t i = 0; i < prepared.items.size(); ++i) {
    const PreparedItem& item = prepared.items[i];
    // The tenant had the external id at the preparation (every such item has duplicate_of).
    if (item.duplicate_of || taken_before(i)) {
      decision.duplicated_ids.push_back(item.external_id);
      continue;
    }
    if (!item.rejection && !item.made) return errors::internal();
    Status funded =
        item.rejection ? Status(*item.rejection) : funds.check(item.amount_minor, item.currency);
    if (!funded) {
      Error error = std::move(funded).error();
      if (!item.rejection) {
        decision.refused_for_funds = true;
        error = under_item(std::move(error), item.index);
      }
      batch.rejected.push_back({item.index, item.external_id, std::move(error)});
      continue;
    }
    funds.available -= item.amount_minor;
    decision.accepted_total += item.amount_minor;
    accepted[i] = true;
    decision.done.accepted.push_back(i);
  }
  return decision;
}

// Locks the batch's source account (its one lock) and reads its funds under the lock.
Result<Funds> lock_source(ledger::Journal& journal, const std::string& tenant_id,
                          const std::string& account_id) {
  if (Status locked = journal.lock({{tenant_id, account_id}}); !locked) {
    return std::move(locked).error();
  }
  const ledger::Journal::Balance balance = *journal.balance_of(tenant_id, account_id);
  return Funds{account_id, balance.currency, balance.state, balance.available()};
}

// Whether deciding against `locked` makes `decision` again, item for item and message for
// message, when it was made against `read`. Items are taken greedily in order, so with the same
// state and currency and no item refused for its funds, any balance that covers the accepted
// total accepts the same items; a refusal names the funds left, so it stands only on the same
// balance.
bool same_decision(const Funds& read, const Funds& locked, const Decision& decision) {
  if (read.state != locked.state || read.currency != locked.currency) return false;
  if (decision.refused_for_funds) return read.available == locked.available;
  return locked.available >= decision.accepted_total;
}

// The tenant's transfers with these ids as their rows hold them, by id: the accepted transfers of
// a batch, whose items keep no Transfer (PreparedItem).
std::map<std::string, Transfer> read_back(store::Tx& tx, const std::string& tenant_id,
                                          const std::vector<std::string>& ids) {
  std::map<std::string, Transfer> found;
  for (Transfer& t : rows::by_ids(tx, tenant_id, ids, false)) {
    std::string id = t.id;
    found.emplace(std::move(id), std::move(t));
  }
  return found;
}

// The decision's transfers and their events; the batch as the answer lists it.
AcceptedBatch record(store::Tx& tx, const std::string& tenant_id, const PreparedBatch& prepared,
                     Decision& decision) {
  AcceptedBatch& done = decision.done;
  write_accepted(tx, tenant_id, prepared, done, decision.existing);
  if (!decision.duplicated_ids.empty()) {
    // An item repeating an item accepted in this batch shows that transfer, read back from the
    // row just written (the items were made without a Transfer each; a repeat is rare).
    std::map<std::string_view, std::string> accepted_id_by;  // external id -> transfer id
    for (std::size_t item : done.accepted) {
      accepted_id_by.emplace(prepared.items[item].external_id,
                             prepared.transfer_id(prepared.items[item]));
    }
    std::vector<std::string> repeated_ids;
    for (const std::string& external_id : decision.duplicated_ids) {
      if (!decision.existing.contains(external_id)) {
        repeated_ids.push_back(accepted_id_by.at(external_id));
      }
    }
    std::map<std::string, Transfer> repeated = read_back(tx, tenant_id, repeated_ids);
    for (const std::string& external_id : decision.duplicated_ids) {
      auto found = decision.existing.find(external_id);
      done.batch.duplicated.push_back(found != decision.existing.end()
                                          ? found->second
                                          : repeated.at(accepted_id_by.at(external_id)));
    }
  }
  std::sort(done.batch.rejected.begin(), done.batch.rejected.end(),
            [](const RejectedItem& a, const RejectedItem& b) { return a.index < b.index; });
  done.batch.state = done.accepted.empty() ? "completed" : "created";
  return std::move(done);
}

// Under `journal`'s lock of the source: one hold for the transfers written, and the batch's row.
Status hold_accepted(store::Tx& tx, const std::string& tenant_id, const PreparedBatch& prepared,
                     ledger::Journal& journal, const AcceptedBatch& done,
                     const std::string& currency) {
  // One hold for the whole batch: the held column is written once, not once per transfer.
  std::int64_t total = 0;
  for (std::size_t item : done.accepted) {
    total += prepared.items[item].amount_minor;  // <= the accepted total
  }
  if (total > 0) {
    if (Status held = journal.hold(tenant_id, prepared.tenant_account_id, total, currency);
        !held) {
      return errors::internal();  // the items were checked against the locked balance
    }
    tx.notify(std::string(k_moving_topic));
  }
  insert_batch(tx, tenant_id, done.batch, done.accepted.size());
  return ok_status();
}

}  // namespace

Result<AcceptedBatch> accept_batch(store::Tx& tx, const std::string& tenant_id,
                                   const PreparedBatch& prepared) {
  auto account = source_account(tx, tenant_id, prepared.tenant_account_id);
  if (!account) return std::move(account).error();
  // The batch's one lock, on its source account, is taken last: just before the hold and the
  // commit. On PostgreSQL batches from one account then write their thousands of rows side by
  // side instead of one after another; the decisions are made against the balance read without
  // the lock and stand when the balance under the lock makes the same ones (same_decision), which
  // a hold by another batch meanwhile does as long as the balance covers both. Otherwise the
  // unit goes back to its savepoint and decides again under the lock. (SQLite's one writer
  // changes nothing between the read and the lock.)
  const Funds read{prepared.tenant_account_id, account->currency, account->state,
                   account->balance_minor - account->held_minor};
  bool decide_again = false;
  auto optimistic = tx.nested<AcceptedBatch>([&](store::Tx& inner) -> Result<AcceptedBatch> {
    auto decision = decide(prepared, read);
    if (!decision) return std::move(decision).error();
    AcceptedBatch recorded = record(inner, tenant_id, prepared, decision.value());
    ledger::Journal journal(inner, prepared.now);
    auto locked = lock_source(journal, tenant_id, prepared.tenant_account_id);
    if (!locked) return std::move(locked).error();
    if (!same_decision(read, locked.value(), decision.value())) {
      decide_again = true;
      return errors::internal();  // rolls the savepoint back; not returned
    }
    if (Status held = hold_accepted(inner, tenant_id, prepared, journal, recorded, read.currency);
        !held) {
      return std::move(held).error();
    }
    return recorded;
  });
  if (!decide_again) return optimistic;
  // The balance moved in a way that changes the decisions: lock first, then decide.
  ledger::Journal journal(tx, prepared.now);
  auto funds = lock_source(journal, tenant_id, prepared.tenant_account_id);
  if (!funds) return std::move(funds).error();
  auto decision = decide(prepared, funds.value());
  if (!decision) return std::move(decision).error();
  AcceptedBatch recorded = record(tx, tenant_id, prepared, decision.value());
  if (Status held = hold_accepted(tx, tenant_id, prepared, journal, recorded, funds->currency);
      !held) {
    return std::move(held).error();
  }
  return recorded;
}

Result<Batch> create_batch(store::Tx& tx, const std::string& tenant_id, const NewBatch& input,
                           time::Micros now) {
  auto prepared = prepare_batch(tx, tenant_id, input, now);
  if (!prepared) return std::move(prepared).error();
  auto done = accept_batch(tx, tenant_id, prepared.value());
  if (!done) return std::move(done).error();
  Batch batch = std::move(done->batch);
  // The accepted transfers as their rows now hold them, in the items' order.
  std::vector<std::string> ids;
  ids.reserve(done->accepted.size());
  for (std::size_t item : done->accepted) {
    ids.emplace_back(prepared->transfer_id(prepared->items[item]));
  }
  std::map<std::string, Transfer> written = read_back(tx, tenant_id, ids);
  for (const std::string& id : ids) batch.accepted.push_back(std::move(written.at(id)));
  return batch;
}

Result<Transfer> accept(store::Tx& tx, const std::string& tenant_id, ledger::Journal& journal,
                        Transfer transfer, time::Micros now) {
  Stamp stamped(now);
  stamp(transfer, stamped);
  if (Status held = journal.hold(tenant_id, transfer.tenant_account_id, transfer.amount_minor,
                                 transfer.currency);
      !held) {
    return std::move(held).error();
  }
  if (!rows::insert(tx, tenant_id, {&transfer}).front()) {
    // Only a transfer with an external_id can clash, and payout legs have none.
    if (Status released =
            journal.release(tenant_id, transfer.tenant_account_id, transfer.amount_minor);
        !released) {
      return std::move(released).error();
    }
    return errors::internal();
  }
  if (!transfer.payout_id) {
    events::emit(tx, tenant_id, k_created_event_type, rows::event_reference(transfer),
                 now);
  }
  tx.notify(std::string(k_moving_topic));
  return transfer;
}

Result<Transfer> get_any_transfer(store::Tx& tx, const std::string& tenant_id,
                                  const std::string& id) {
  auto row = tx.query_one(std::string("SELECT ") + rows::k_columns +
                              " FROM outgoing_transfers WHERE tenant_id = ? AND id = ?",
                          {tenant_id, id});
  if (!row) return errors::item_not_found("outgoing transfer");
  return rows::from_row(*row);
}

Result<Transfer> get_transfer(store::Tx& tx, const std::string& tenant_id, const std::string& id) {
  auto found = get_any_transfer(tx, tenant_id, id);
  if (found && found->payout_id) return errors::item_not_found("outgoing transfer");
  return found;
}

Result<PageOf<Transfer>> list_transfers(store::Tx& tx, const std::string& tenant_id,
                                        const TransferFilter& filter, std::int64_t offset,
                                        std::int64_t limit) {
  std::string where = " FROM outgoing_transfers WHERE tenant_id = ? AND payout_id IS NULL";
  store::Params params = {tenant_id};
  store::where_equal(where, params, "state", filter.state);
  store::where_equal(where, params, "external_id", filter.external_id);
  if (filter.batch_id) {
    // A batch's transfers have its inserted_at (stamp, insert_batch: the preparation's time),
    // so the time index finds them: no index by batch to write a thousand entries into.
    where += " AND batch_id = ? AND inserted_at = (SELECT b.inserted_at FROM "
             "outgoing_transfer_batches b WHERE b.tenant_id = ? AND b.id = ?)";
    params.insert(params.end(), {*filter.batch_id, tenant_id, *filter.batch_id});
  }
  return store::query_page<Transfer>(tx, rows::k_columns, where, params,
                                     "inserted_at DESC, id DESC", offset, limit, rows::from_row);
}

Result<Transfer> find_successful_by(store::Tx& tx, const std::string& tenant_id,
                                    const std::string& external_id) {
  auto found = by_external_ids(tx, tenant_id, {store::TextRef(external_id)});
  if (found.empty()) {
    return errors::of(ErrorCode::item_not_found, "external_id",
                      "no outgoing transfer has this external_id");
  }
  Transfer& t = found.begin()->second;
  if (t.state != "successful") {
    return errors::of(ErrorCode::invalid_state, "external_id",
                      "the outgoing transfer is " + t.state + ", not successful");
  }
  return std::move(t);
}

}  // namespace tesoro::transfers
