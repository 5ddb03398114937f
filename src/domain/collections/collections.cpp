#include "domain/collections/collections.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "core/check.hpp"
#include "core/crypto.hpp"
#include "core/email.hpp"
#include "core/ids.hpp"
#include "core/limits.hpp"
#include "core/money.hpp"
#include "domain/tenant_clock/tenant_clock.hpp"
#include "domain/events/events.hpp"
#include "domain/ledger/accounts.hpp"
#include "store/bulk.hpp"
#include "store/pages.hpp"

namespace tesoro::collections {
namespace {

namespace json = boost::json;

constexpr const char* k_columns =
    "id, external_id, tenant_account_id, usage_mode, currency, minimum_attempt_amount, "
    "maximum_attempt_amount, total_minimum_amount, total_maximum_amount, paid_amount, "
    "successful_attempts, state, state_reason, enabled, expires_at, expires_at_micros, "
    "nickname, reference, metadata, inserted_at, updated_at";

// Collections that may still expire (alias x): the predicate of the partial index
// collections_expiring, so that the expiry worker's reads use it.
constexpr const char* k_expiring_condition =
    "x.expires_at_micros IS NOT NULL AND x.state IN ('created', 'ready', 'minimum_paid')";


Collection from_row(const store::Row& row) {
  Collection c;
  c.id = row.text(0);
  c.external_id = row.text(1);
  c.tenant_account_id = row.text(2);
  c.usage_mode = row.text(3);
  c.currency = row.text(4);
  c.minimum_attempt_amount = row.integer(5);
  c.maximum_attempt_amount = row.integer(6);
  c.total_minimum_amount = row.integer(7);
  c.total_maximum_amount = row.integer(8);
  c.paid_amount = row.integer(9);
  c.successful_attempts = row.integer(10);
  c.state = row.text(11);
  c.state_reason = row.optional_text(12);
  c.enabled = row.integer(13) != 0;
  c.expires_at = row.optional_text(14);
  c.expires_at_micros = row.optional_integer(15);
  c.nickname = row.optional_text(16);
  c.reference = row.optional_text(17);
  c.metadata = ledger::decode_metadata(row.text(18));
  c.inserted_at = row.text(19);
  c.updated_at = row.text(20);
  return c;
}

// The keys of each collection among `collections`, newest first, in one query.
void load_keys(store::Tx& tx, const std::string& tenant_id, std::vector<Collection>& collections) {
  if (collections.empty()) return;
  std::string sql =
      "SELECT owner_id, key_type, key_value, state, inserted_at FROM network_keys "
      "WHERE tenant_id = ? AND owner_id IN (";
  store::Params params = {tenant_id};
  std::map<std::string, Collection*> by_id;
  for (Collection& c : collections) {
    sql += by_id.empty() ? "?" : ", ?";
    params.emplace_back(c.id);
    by_id.emplace(c.id, &c);
    c.keys.clear();
  }
  sql += ") ORDER BY inserted_at DESC, key_type DESC, key_value DESC";
  for (const store::Row& row : tx.query(sql, params)) {
    auto owner = by_id.find(row.text(0));
    if (owner == by_id.end()) continue;
    owner->second->keys.push_back({row.text(1), row.text(2), row.text(3), row.text(4)});
  }
}

Result<Collection> read_collection(store::Tx& tx, const std::string& tenant_id,
                                   const std::string& id, bool lock) {
  auto row = tx.query_one(std::string("SELECT ") + k_columns +
                              " FROM collections WHERE tenant_id = ? AND id = ?" +
                              std::string(lock ? tx.lock_rows() : ""),
                          {tenant_id, id});
  if (!row) return errors::of(ErrorCode::collection_not_found);
  std::vector<Collection> one{from_row(*row)};
  load_keys(tx, tenant_id, one);
  return std::move(one.front());
}

std::optional<Collection> by_external_id(store::Tx& tx, const std::string& tenant_id,
                                         const std::string& external_id) {
  auto row = tx.query_one(std::string("SELECT ") + k_columns +
                              " FROM collections WHERE tenant_id = ? AND external_id = ?",
                          {tenant_id, external_id});
  if (!row) return std::nullopt;
  std::vector<Collection> one{from_row(*row)};
  load_keys(tx, tenant_id, one);
  return std::move(one.front());
}

json::object money(std::int64_t amount, const std::string& currency) {
  return json::object{{"amount", amount}, {"currency", currency}};
}

json::value optional_text_json(const std::optional<std::string>& text) {
  if (!text) return nullptr;
  return json::value(*text);
}

json::object key_json(const Key& key) {
  return json::object{{"type", key.type},
                      {"value", key.value},
                      {"state", key.state},
                      {"inserted_at", key.inserted_at}};
}

void emit_state_event(store::Tx& tx, const std::string& tenant_id, const Collection& collection,
                      time::Micros now) {
  events::emit(tx, tenant_id, "collection." + collection.state,
               json::serialize(to_json(collection)), now);
}

// The state paid_amount and the limits call for, for a collection in an open state.
std::string state_for_payments(const Collection& c) {
  if (c.paid_amount >= c.total_maximum_amount ||
      (c.usage_mode == "single_use" && c.successful_attempts > 0)) {
    return "paid";
  }
  if (c.paid_amount >= c.total_minimum_amount) return "minimum_paid";
  return "ready";
}

// Keys are active exactly while the collection can be paid: open and enabled.
void sync_keys(store::Tx& tx, const std::string& tenant_id, Collection& collection,
               time::Micros now) {
  const std::string wanted = collection.payable() ? "active" : "inactive";
  bool differs = false;
  for (Key& key : collection.keys) {
    differs = differs || key.state != wanted;
    key.state = wanted;
  }
  if (!differs) return;
  tx.exec_later(
      "UPDATE network_keys SET state = ?, updated_at = ? WHERE tenant_id = ? AND "
      "owner_id = ? AND state <> ?",
      {wanted, time::iso(now), tenant_id, collection.id, wanted});
}

// Writes every field a change may touch.
void save(store::Tx& tx, const std::string& tenant_id, const Collection& c) {
  tx.exec_later(
      "UPDATE collections SET minimum_attempt_amount = ?, maximum_attempt_amount = ?, "
      "total_minimum_amount = ?, total_maximum_amount = ?, paid_amount = ?, "
      "successful_attempts = ?, state = ?, state_reason = ?, enabled = ?, expires_at = ?, "
      "expires_at_micros = ?, nickname = ?, updated_at = ? WHERE tenant_id = ? AND id = ?",
      {c.minimum_attempt_amount, c.maximum_attempt_amount, c.total_minimum_amount,
       c.total_maximum_amount, c.paid_amount, c.successful_attempts, c.state,
       store::optional_value(c.state_reason), std::int64_t{c.enabled ? 1 : 0},
       store::optional_value(c.expires_at),
       c.expires_at_micros ? store::Value(*c.expires_at_micros) : store::Value(nullptr),
       store::optional_value(c.nickname), c.updated_at, tenant_id, c.id});
}

// Moves an open collection to `state` (with its reason): keys follow, the row is saved and the
// change announced. No-op when the state is the same.
void move_to(store::Tx& tx, const std::string& tenant_id, Collection& c, const std::string& state,
             std::optional<std::string> reason, time::Micros now) {
  const bool changed = c.state != state;
  // paid, discarded and failed are terminal: every caller locked an open collection first.
  TESORO_CHECK(!changed || !is_terminal(c.state),
               "collection " + c.id + " of tenant " + tenant_id + " is " + c.state +
                   ": it cannot become " + state);
  c.state = state;
  c.state_reason = std::move(reason);
  c.updated_at = time::iso(now);
  sync_keys(tx, tenant_id, c, now);
  save(tx, tenant_id, c);
  if (changed) emit_state_event(tx, tenant_id, c, now);
}

// The four limits agree: minimum_attempt <= maximum_attempt <= total_maximum and
// total_minimum <= total_maximum. `given` names the limits the request set; a broken pair is
// reported at the one the request gave (the larger when it gave both or neither).
struct Limits {
  std::int64_t minimum_attempt, maximum_attempt, total_minimum, total_maximum;
};
struct GivenLimits {
  bool minimum_attempt = true, maximum_attempt = true, total_minimum = true, total_maximum = true;
};

Status check_limits(const Limits& l, const GivenLimits& given, const std::string& currency) {
  struct Pair {
    std::int64_t low, high;
    const char* low_name;
    const char* high_name;
    bool low_given, high_given;
  };
  const Pair pairs[] = {
      {l.minimum_attempt, l.maximum_attempt, "minimum_attempt_amount", "maximum_attempt_amount",
       given.minimum_attempt, given.maximum_attempt},
      {l.total_minimum, l.total_maximum, "total_minimum_amount", "total_maximum_amount",
       given.total_minimum, given.total_maximum},
      {l.maximum_attempt, l.total_maximum, "maximum_attempt_amount", "total_maximum_amount",
       given.maximum_attempt, given.total_maximum},
  };
  for (const Pair& pair : pairs) {
    if (pair.low <= pair.high) continue;
    const bool blame_low = pair.low_given && !pair.high_given;
    const std::string field = blame_low ? pair.low_name : pair.high_name;
    const std::string message = blame_low ? std::string("must not be above ") + pair.high_name
                                          : std::string("must not be below ") + pair.low_name;
    return errors::validation(
        message + " (" + money::display(pair.low, currency) + " > " +
            money::display(pair.high, currency) + ")",
        field + ".amount");
  }
  return ok_status();
}

// A new alphanumeric key: '@' and limits::k_generated_key_chars of [A-Z0-9], each uniform, from the
// cryptographic random source.
std::string generated_key_value() {
  return "@" + crypto::random_string("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", limits::k_generated_key_chars);
}

bool insert_key(store::Tx& tx, const std::string& tenant_id, const std::string& owner_id,
                const Key& key) {
  return tx.exec(
             "INSERT INTO network_keys (key_type, key_value, tenant_id, owner_id, state, "
             "inserted_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) "
             "ON CONFLICT (key_type, key_value) DO NOTHING",
             {key.type, key.value, tenant_id, owner_id, key.state, key.inserted_at,
              key.inserted_at}) == 1;
}

// Registers the collection's key: the one asked for (key_already_exists when the directory
// has it, whoever owns it), or a generated one (drawn again on a clash).
Result<Key> register_key(store::Tx& tx, const std::string& tenant_id, const std::string& owner_id,
                         const std::optional<KeyRequest>& asked, time::Micros now) {
  Key key;
  key.state = "active";
  key.inserted_at = time::iso(now);
  if (asked) {
    auto value = normalize_key(asked->type, asked->value);
    if (!value) return errors::validation(value.error().errors.front().message, "key.value");
    key.type = asked->type;
    key.value = std::move(value).value();
    if (!insert_key(tx, tenant_id, owner_id, key)) {
      return errors::of(ErrorCode::key_already_exists, "key.value",
                        "the " + key.type + " key " + key.value +
                            " is already registered in the network directory");
    }
    return key;
  }
  key.type = "alphanumeric";
  for (int attempt = 0; attempt < limits::k_random_number_attempts; ++attempt) {
    key.value = generated_key_value();
    if (insert_key(tx, tenant_id, owner_id, key)) return key;
  }
  return errors::internal();
}

// The tenant account a new collection pays into: the tenant's own, a receptor, active.
Result<ledger::Account> receptor_account(store::Tx& tx, const std::string& tenant_id,
                                         const std::string& id) {
  auto account = ledger::get_account(tx, tenant_id, id, ledger::Surface::participant);
  if (!account) {
    return errors::of(ErrorCode::tenant_account_not_found, "tenant_account_id",
                      "tenant account not found");
  }
  const std::string role = account->role.value_or("");
  if (role != "receptor" && role != "both") {
    return errors::of(ErrorCode::tenant_account_not_found, "tenant_account_id",
                      "the tenant account is not a receptor account (its role is " + role + ")");
  }
  if (account->state != "active") {
    return errors::of(ErrorCode::tenant_account_not_found, "tenant_account_id",
                      "the tenant account is not active (it is " + account->state + ")");
  }
  return account;
}

Status check_expiry(std::optional<time::Micros> expires_at, time::Micros now) {
  if (expires_at && *expires_at <= now) {
    return errors::validation(
        "must be in the future (the tenant's clock says " + time::iso(now) + ")", "expires_at");
  }
  return ok_status();
}

void insert_collection_row(store::Tx& tx, const std::string& tenant_id, const Collection& c,
                           bool& inserted) {
  inserted = tx.exec(
                 "INSERT INTO collections (tenant_id, id, external_id, tenant_account_id, "
                 "usage_mode, currency, minimum_attempt_amount, maximum_attempt_amount, "
                 "total_minimum_amount, total_maximum_amount, paid_amount, successful_attempts, "
                 "state, state_reason, enabled, expires_at, expires_at_micros, nickname, "
                 "reference, metadata, inserted_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
                 "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                 "ON CONFLICT (tenant_id, external_id) DO NOTHING",
                 {tenant_id,
                  c.id,
                  c.external_id,
                  c.tenant_account_id,
                  c.usage_mode,
                  c.currency,
                  c.minimum_attempt_amount,
                  c.maximum_attempt_amount,
                  c.total_minimum_amount,
                  c.total_maximum_amount,
                  c.paid_amount,
                  c.successful_attempts,
                  c.state,
                  store::optional_value(c.state_reason),
                  std::int64_t{c.enabled ? 1 : 0},
                  store::optional_value(c.expires_at),
                  c.expires_at_micros ? store::Value(*c.expires_at_micros) : store::Value(nullptr),
                  store::optional_value(c.nickname),
                  store::optional_value(c.reference),
                  ledger::encode_metadata(c.metadata),
                  c.inserted_at,
                  c.updated_at}) == 1;
}

// create_collection's work once the item is known to be new; runs in a savepoint.
Result<CreateOutcome> insert_new(store::Tx& tx, const std::string& tenant_id,
                                 const NewCollection& input, time::Micros now) {
  Collection c;
  c.id = ids::generate("bbcol");
  c.external_id = input.external_id;
  c.tenant_account_id = input.tenant_account_id;
  c.usage_mode = input.usage_mode;
  c.currency = input.currency;
  c.minimum_attempt_amount = input.minimum_attempt_amount;
  c.maximum_attempt_amount = input.maximum_attempt_amount;
  c.total_minimum_amount = input.total_minimum_amount;
  c.total_maximum_amount = input.total_maximum_amount;
  c.state = "ready";  // its key is registered below, in this same unit
  if (input.expires_at_micros) {
    c.expires_at_micros = input.expires_at_micros;
    c.expires_at = time::iso(*input.expires_at_micros);
  }
  c.nickname = input.nickname;
  c.reference = input.reference;
  c.metadata = input.metadata;
  c.inserted_at = c.updated_at = time::iso(now);
  bool inserted = false;
  insert_collection_row(tx, tenant_id, c, inserted);
  if (!inserted) {
    // Another unit created this external_id since we looked: theirs is the collection.
    auto existing = by_external_id(tx, tenant_id, input.external_id);
    if (!existing) return errors::internal();
    return CreateOutcome{std::move(*existing), false};
  }
  auto key = register_key(tx, tenant_id, c.id, input.key, now);
  if (!key) return std::move(key).error();
  c.keys.push_back(std::move(key).value());
  // created -> ready in one unit: `created` is announced with the key it is about to be ready with.
  Collection announced = c;
  announced.state = "created";
  emit_state_event(tx, tenant_id, announced, now);
  emit_state_event(tx, tenant_id, c, now);
  return CreateOutcome{std::move(c), true};
}

}  // namespace

const std::vector<std::string>& states() {
  static const std::vector<std::string> k_states = {"created", "ready",     "minimum_paid",
                                                    "paid",    "discarded", "failed"};
  return k_states;
}

bool is_terminal(const std::string& state) {
  return state == "paid" || state == "discarded" || state == "failed";
}

bool Collection::payable() const {
  return enabled && (state == "ready" || state == "minimum_paid");
}

bool payable_at(const Collection& collection, time::Micros now) {
  return collection.payable() &&
         (!collection.expires_at_micros || *collection.expires_at_micros > now);
}

Result<std::string> normalize_key(const std::string& type, const std::string& value) {
  auto all_digits = [&](std::size_t min, std::size_t max) {
    return value.size() >= min && value.size() <= max &&
           std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (type == "cellphone") {
    if (all_digits(10, 10) && value[0] == '3') return value;
    return errors::validation("a cellphone key is 10 digits starting with 3", std::nullopt);
  }
  if (type == "email") {
    std::string lower = value;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.size() <= limits::k_email_key_max_chars && email::is_email(lower)) return lower;
    return errors::validation("an email key is an email address of at most " +
                                  std::to_string(limits::k_email_key_max_chars) + " characters",
                              std::nullopt);
  }
  if (type == "alphanumeric") {
    std::string upper = value;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const bool shaped = upper.size() >= 1 + limits::k_alphanumeric_key_min_chars &&
                        upper.size() <= 1 + limits::k_alphanumeric_key_max_chars &&
                        upper[0] == '@' &&
                        std::all_of(upper.begin() + 1, upper.end(), [](char c) {
                          return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
                        });
    if (shaped) return upper;
    return errors::validation("an alphanumeric key is @ followed by " +
                                  std::to_string(limits::k_alphanumeric_key_min_chars) + " to " +
                                  std::to_string(limits::k_alphanumeric_key_max_chars) +
                                  " letters or digits",
                              std::nullopt);
  }
  // A key of digits only, `min` to `max` of them; `named` says which in the refusal.
  auto digits_key = [&](std::string_view named, std::size_t min,
                        std::size_t max) -> Result<std::string> {
    if (all_digits(min, max)) return value;
    return errors::validation(std::string(named) + " is " + std::to_string(min) + " to " +
                                  std::to_string(max) + " digits",
                              std::nullopt);
  };
  if (type == "identification") {
    return digits_key("an identification key", limits::k_identification_key_min_digits,
                      limits::k_identification_key_max_digits);
  }
  if (type == "merchant_code") {
    return digits_key("a merchant_code key", limits::k_merchant_code_key_min_digits,
                      limits::k_merchant_code_key_max_digits);
  }
  return errors::validation(
      "the key type must be one of identification, cellphone, email, alphanumeric, merchant_code",
      std::nullopt);
}

std::optional<Key> default_key(const Collection& collection) {
  for (const Key& key : collection.keys) {  // newest first
    if (key.state == "active") return key;
  }
  return std::nullopt;
}

Result<Collection> get_collection(store::Tx& tx, const std::string& tenant_id,
                                  const std::string& id) {
  return read_collection(tx, tenant_id, id, false);
}

Result<Collection> lock_collection(store::Tx& tx, const std::string& tenant_id,
                                   const std::string& id) {
  return read_collection(tx, tenant_id, id, true);
}

std::optional<DirectoryEntry> find_key(store::Tx& tx, const std::string& type,
                                       const std::string& normalized_value) {
  auto found = find_keys(tx, {{type, normalized_value}});
  if (found.empty()) return std::nullopt;
  return std::move(found.begin()->second);
}

std::map<std::string, std::string> collection_accounts(store::Tx& tx, const std::string& tenant_id,
                                                       const std::vector<std::string>& ids) {
  std::map<std::string, std::string> accounts;
  store::query_in(tx, "SELECT id, tenant_account_id FROM collections WHERE tenant_id = ? AND id",
                  {tenant_id}, ids, "", [&](const store::Row& row) {
                    accounts.emplace(row.text(0), row.text(1));
                  });
  return accounts;
}

std::map<KeyName, DirectoryEntry> find_keys(store::Tx& tx, const std::vector<KeyName>& keys) {
  std::map<std::string, std::set<std::string>> values_by_type;  // each value asked once
  for (const auto& [type, value] : keys) values_by_type[type].insert(value);
  std::map<KeyName, DirectoryEntry> found;
  for (const auto& entry : values_by_type) {
    // A name, not a structured binding: the lambda below captures it (clang before 16 refuses
    // to capture a binding).
    const std::string& type = entry.first;
    const std::vector<std::string> values(entry.second.begin(), entry.second.end());
    store::query_in(tx,
                    "SELECT key_value, tenant_id, owner_id, state FROM network_keys "
                    "WHERE key_type = ? AND key_value",
                    {type}, values, "", [&](const store::Row& row) {
                      found.emplace(KeyName{type, row.text(0)},
                                    DirectoryEntry{row.text(1), row.text(2), row.text(3)});
                    });
  }
  return found;
}

Status record_payment(store::Tx& tx, const std::string& tenant_id, Collection& collection,
                      std::int64_t amount, time::Micros now) {
  auto paid = money::add(collection.paid_amount, amount);
  if (amount <= 0 || !paid || *paid > collection.total_maximum_amount) {
    return errors::of(ErrorCode::balance_overflow, "amount.amount",
                      "the payment would take paid_amount past total_maximum_amount");
  }
  collection.paid_amount = *paid;
  collection.successful_attempts += 1;
  move_to(tx, tenant_id, collection, state_for_payments(collection), std::nullopt, now);
  return ok_status();
}

json::object to_json(const Collection& c) {
  json::array keys;
  for (const Key& key : c.keys) keys.push_back(key_json(key));
  json::value key = nullptr;
  if (auto chosen = default_key(c))
    key = json::object{{"type", chosen->type}, {"value", chosen->value}};
  json::object metadata;
  for (const auto& [name, value] : c.metadata) metadata[name] = value;
  return json::object{{"id", c.id},
                      {"external_id", c.external_id},
                      {"tenant_account_id", c.tenant_account_id},
                      {"usage_mode", c.usage_mode},
                      {"state", c.state},
                      {"state_reason", optional_text_json(c.state_reason)},
                      {"enabled", c.enabled},
                      {"minimum_attempt_amount", money(c.minimum_attempt_amount, c.currency)},
                      {"maximum_attempt_amount", money(c.maximum_attempt_amount, c.currency)},
                      {"total_minimum_amount", money(c.total_minimum_amount, c.currency)},
                      {"total_maximum_amount", money(c.total_maximum_amount, c.currency)},
                      {"paid_amount", money(c.paid_amount, c.currency)},
                      {"remaining_amount", money(c.remaining(), c.currency)},
                      {"successful_attempts", c.successful_attempts},
                      {"key", std::move(key)},
                      {"keys", std::move(keys)},
                      {"expires_at", optional_text_json(c.expires_at)},
                      {"nickname", optional_text_json(c.nickname)},
                      {"reference", optional_text_json(c.reference)},
                      {"metadata", std::move(metadata)},
                      {"inserted_at", c.inserted_at},
                      {"updated_at", c.updated_at}};
}

Result<CreateOutcome> create_collection(store::Tx& tx, const std::string& tenant_id,
                                        const NewCollection& input, time::Micros now) {
  if (auto existing = by_external_id(tx, tenant_id, input.external_id)) {
    return CreateOutcome{std::move(*existing), false};
  }
  const Limits limits{input.minimum_attempt_amount, input.maximum_attempt_amount,
                      input.total_minimum_amount, input.total_maximum_amount};
  if (Status checked = check_limits(limits, GivenLimits{}, input.currency); !checked) return checked.error();
  if (Status checked = check_expiry(input.expires_at_micros, now); !checked) {
    return checked.error();
  }
  if (input.key) {
    if (auto value = normalize_key(input.key->type, input.key->value); !value) {
      return errors::validation(value.error().errors.front().message, "key.value");
    }
  }
  auto account = receptor_account(tx, tenant_id, input.tenant_account_id);
  if (!account) return std::move(account).error();
  if (account->currency != input.currency) {
    return errors::of(
        ErrorCode::currency_mismatch, "minimum_attempt_amount.currency",
        "the limits must be in " + account->currency + ", the tenant account's currency");
  }
  // A savepoint of its own: a key that turns out taken leaves no collection behind.
  return tx.nested<CreateOutcome>(
      [&](store::Tx& inner) { return insert_new(inner, tenant_id, input, now); });
}

Result<PageOf<Collection>> list_collections(store::Tx& tx, const std::string& tenant_id,
                                            const CollectionFilter& filter, std::int64_t offset,
                                            std::int64_t limit) {
  std::string where = " FROM collections WHERE tenant_id = ?";
  store::Params params = {tenant_id};
  store::where_equal(where, params, "state", filter.state);
  store::where_equal(where, params, "external_id", filter.external_id);
  auto page = store::query_page<Collection>(tx, k_columns, where, params,
                                            "inserted_at DESC, id DESC", offset, limit, from_row);
  load_keys(tx, tenant_id, page.items);
  return page;
}

namespace {

// A limit of a PATCH in the collection's currency, or currency_mismatch at its field.
Status take_limit(const std::optional<LimitChange>& change, const char* field, const Collection& c,
                  std::int64_t& target, bool& given) {
  given = change.has_value();
  if (!change) return ok_status();
  if (change->currency != c.currency) {
    return errors::of(ErrorCode::currency_mismatch, std::string(field) + ".currency",
                      "must be " + c.currency + ", the collection's currency");
  }
  target = change->amount;
  return ok_status();
}

// The collection under its lock, or collection_invalid_state when its state is terminal
// (the message says it cannot be `done`).
Result<Collection> lock_open_collection(store::Tx& tx, const std::string& tenant_id,
                                        const std::string& id, const std::string& done) {
  auto found = lock_collection(tx, tenant_id, id);
  if (found && is_terminal(found->state)) {
    return errors::of(ErrorCode::collection_invalid_state, std::nullopt,
                      "a " + found->state + " collection cannot be " + done);
  }
  return found;
}

// What a PATCH may change.
bool same_changeable_fields(const Collection& a, const Collection& b) {
  return a.minimum_attempt_amount == b.minimum_attempt_amount &&
         a.maximum_attempt_amount == b.maximum_attempt_amount &&
         a.total_minimum_amount == b.total_minimum_amount &&
         a.total_maximum_amount == b.total_maximum_amount && a.nickname == b.nickname &&
         a.enabled == b.enabled && a.expires_at_micros == b.expires_at_micros;
}

}  // namespace

Result<Collection> update_collection(store::Tx& tx, const std::string& tenant_id,
                                     const std::string& id, const CollectionChanges& changes,
                                     time::Micros now) {
  auto found = lock_open_collection(tx, tenant_id, id, "changed");
  if (!found) return found;
  Collection c = std::move(found).value();
  Limits limits{c.minimum_attempt_amount, c.maximum_attempt_amount, c.total_minimum_amount,
                c.total_maximum_amount};
  GivenLimits given;
  for (Status taken : {take_limit(changes.minimum_attempt_amount, "minimum_attempt_amount", c,
                                  limits.minimum_attempt, given.minimum_attempt),
                       take_limit(changes.maximum_attempt_amount, "maximum_attempt_amount", c,
                                  limits.maximum_attempt, given.maximum_attempt),
                       take_limit(changes.total_minimum_amount, "total_minimum_amount", c,
                                  limits.total_minimum, given.total_minimum),
                       take_limit(changes.total_maximum_amount, "total_maximum_amount", c,
                                  limits.total_maximum, given.total_maximum)}) {
    if (!taken) return taken.error();
  }
  if (Status checked = check_limits(limits, given, c.currency); !checked) return checked.error();
  if (changes.expires_at_micros) {
    if (Status checked = check_expiry(*changes.expires_at_micros, now); !checked) {
      return checked.error();
    }
  }
  if (limits.total_maximum < c.paid_amount) {
    return errors::of(ErrorCode::amount_out_of_range, "total_maximum_amount.amount",
                      "must not be below paid_amount (" +
                          money::display(c.paid_amount, c.currency) + ")");
  }
  const Collection before = c;
  c.minimum_attempt_amount = limits.minimum_attempt;
  c.maximum_attempt_amount = limits.maximum_attempt;
  c.total_minimum_amount = limits.total_minimum;
  c.total_maximum_amount = limits.total_maximum;
  if (changes.nickname) c.nickname = *changes.nickname;
  if (changes.enabled) c.enabled = *changes.enabled;
  if (changes.expires_at_micros) {
    c.expires_at_micros = *changes.expires_at_micros;
    c.expires_at =
        c.expires_at_micros ? std::optional(time::iso(*c.expires_at_micros)) : std::nullopt;
  }
  if (same_changeable_fields(before, c)) return c;  // nothing to write; updated_at stays
  // New limits may move the state (e.g. a total_maximum_amount lowered to paid_amount pays it).
  move_to(tx, tenant_id, c, state_for_payments(c), std::nullopt, now);
  return c;
}

Result<Collection> discard_collection(store::Tx& tx, const std::string& tenant_id,
                                      const std::string& id, time::Micros now) {
  auto found = lock_open_collection(tx, tenant_id, id, "discarded");
  if (!found) return found;
  Collection c = std::move(found).value();
  move_to(tx, tenant_id, c, "discarded", std::nullopt, now);
  return c;
}

Result<Collection> find_successful_by(store::Tx& tx, const std::string& tenant_id,
                                      const std::string& external_id) {
  auto found = by_external_id(tx, tenant_id, external_id);
  if (!found) {
    return errors::of(ErrorCode::item_not_found, "external_id",
                      "no collection has this external_id");
  }
  if (found->state != "paid") {
    return errors::of(ErrorCode::invalid_state, "external_id",
                      "the collection is " + found->state + ", not paid");
  }
  return std::move(*found);
}

std::int64_t expire_due(store::Tx& tx, time::Micros real_now, std::int64_t limit) {
  std::vector<tenant_clock::DueRow> due = tenant_clock::due_rows(
      tx, {"collections", "expires_at_micros", k_expiring_condition}, real_now, limit);
  // Locked in one global order, so two nodes' passes queue instead of deadlocking; each row is
  // read again under its lock (a payment or a PATCH may have changed it meanwhile).
  std::sort(due.begin(), due.end(), [](const auto& a, const auto& b) {
    return std::tie(a.tenant_id, a.id) < std::tie(b.tenant_id, b.id);
  });
  std::int64_t expired = 0;
  for (const tenant_clock::DueRow& d : due) {
    auto locked = lock_collection(tx, d.tenant_id, d.id);
    if (!locked) continue;
    Collection c = std::move(locked).value();
    if (is_terminal(c.state) || !c.expires_at_micros || *c.expires_at_micros > d.tenant_now) {
      continue;
    }
    move_to(tx, d.tenant_id, c, "failed", "expired", d.tenant_now);
    ++expired;
  }
  return expired;
}

namespace {

void verify_amounts(store::Tx& tx, std::vector<std::string>& violations) {
  for (const store::Row& row :
       tx.query("SELECT tenant_id, id, paid_amount, total_maximum_amount FROM collections "
                "WHERE paid_amount < 0 OR paid_amount > total_maximum_amount")) {
    violations.push_back("collection " + row.text(1) + " of tenant " + row.text(0) +
                         ": paid_amount " + row.text(2) + " is not between 0 and " +
                         "total_maximum_amount " + row.text(3));
  }
}

// paid_amount is exactly what the collection's incoming transfers brought (summed here with
// checked arithmetic: SQLite's SUM fails past 2^63).
void verify_transfers(store::Tx& tx, std::vector<std::string>& violations) {
  std::map<std::pair<std::string, std::string>, std::int64_t> received;
  for (const store::Row& row :
       tx.query("SELECT tenant_id, collection_id, amount FROM incoming_transfers")) {
    auto& sum = received[{row.text(0), row.text(1)}];
    sum = money::add(sum, row.integer(2)).value_or(INT64_MAX);
  }
  std::set<std::pair<std::string, std::string>> seen;
  for (const store::Row& row : tx.query("SELECT tenant_id, id, paid_amount FROM collections")) {
    std::pair<std::string, std::string> key{row.text(0), row.text(1)};
    seen.insert(key);
    auto sum = received.find(key);
    const std::int64_t transferred = sum == received.end() ? 0 : sum->second;
    if (transferred == row.integer(2)) continue;
    violations.push_back("collection " + key.second + " of tenant " + key.first + ": paid_amount " +
                         row.text(2) + " but its incoming transfers sum to " +
                         std::to_string(transferred));
  }
  for (const auto& [key, amount] : received) {
    if (seen.contains(key)) continue;
    violations.push_back("incoming transfers of tenant " + key.first + " name collection " +
                         key.second + ", which does not exist");
  }
}

// The state agrees with paid_amount (state_for_payments), and only a payable collection has
// active keys.
void verify_states(store::Tx& tx, std::vector<std::string>& violations) {
  for (const store::Row& row :
       tx.query("SELECT tenant_id, id, state FROM collections WHERE state NOT IN ('ready', "
                "'minimum_paid', 'paid', 'discarded', 'failed') "
                "OR (state = 'ready' AND (paid_amount >= total_minimum_amount OR "
                "(usage_mode = 'single_use' AND successful_attempts > 0))) "
                "OR (state = 'minimum_paid' AND (paid_amount < total_minimum_amount OR "
                "paid_amount >= total_maximum_amount OR "
                "(usage_mode = 'single_use' AND successful_attempts > 0))) "
                "OR (state = 'paid' AND paid_amount <> total_maximum_amount AND NOT "
                "(usage_mode = 'single_use' AND successful_attempts > 0))")) {
    violations.push_back("collection " + row.text(1) + " of tenant " + row.text(0) + ": state " +
                         row.text(2) + " does not agree with its paid_amount");
  }
  for (const store::Row& row :
       tx.query("SELECT k.tenant_id, k.owner_id, k.key_type, k.key_value FROM network_keys k "
                "JOIN collections c ON c.tenant_id = k.tenant_id AND c.id = k.owner_id "
                "WHERE k.state = 'active' AND NOT (c.enabled = 1 AND "
                "c.state IN ('ready', 'minimum_paid'))")) {
    violations.push_back("collection " + row.text(1) + " of tenant " + row.text(0) +
                         " cannot be paid but its " + row.text(2) + " key " + row.text(3) +
                         " is active");
  }
}

}  // namespace

std::vector<std::string> verify(store::Tx& tx) {
  std::vector<std::string> violations;
  verify_amounts(tx, violations);
  verify_transfers(tx, violations);
  verify_states(tx, violations);
  return violations;
}

}  // namespace tesoro::collections
