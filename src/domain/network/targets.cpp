#include "domain/network/targets.hpp"

#include <boost/json.hpp>

#include <set>
#include <stdexcept>

#include "core/emvco.hpp"
#include "core/ids.hpp"
#include "core/json_writer.hpp"
#include "core/limits.hpp"
#include "store/bulk.hpp"

namespace tesoro::network {
namespace {

namespace json = boost::json;

constexpr const char* k_columns =
    "id, resolution_request_id, key_type, key_value, amount, currency, payment_id, "
    "expires_at_micros, target";

Target from_row(const store::Row& row) {
  Target target;
  target.id = row.text(0);
  target.resolution_request_id = row.text(1);
  target.key_type = row.text(2);
  target.key_value = row.text(3);
  target.amount_minor = row.optional_integer(4);
  target.currency = row.optional_text(5);
  target.payment_id = row.text(6);
  target.expires_at_micros = row.integer(7);
  target.json = row.text(8);
  return target;
}

}  // namespace

const std::vector<std::string>& query_formats() {
  static const std::vector<std::string> formats = {std::string(k_format_plain_key)};
  return formats;
}

std::string new_payment_id() {
  emvco::Payload payload;
  payload.network = std::string(k_network_code);
  payload.transaction_id = ids::network_transaction_id();
  return emvco::payment_id(payload);
}

std::string stored_target(const Resolution& resolution, const std::string& format,
                          std::optional<std::int64_t> amount_minor, const std::string& currency,
                          time::Micros expires_at, time::Micros now) {
  json_text::Writer out(256);
  out.begin_array().string(format).string(resolution.participant_nit).string(resolution.spbvi);
  if (amount_minor) {
    out.begin_array().integer(*amount_minor).string(currency).end_array();
  } else {
    out.null();
  }
  const Creditor& creditor = resolution.creditor;
  out.string(mask_number(creditor.document_number)).string(creditor.document_type);
  out.string(mask_name(creditor.full_name)).string(creditor.type);
  const CreditorAccount& account = resolution.account;
  out.string(account.currency_code).string(mask_number(account.number)).string(account.type);
  out.string(time::iso(expires_at)).string(time::iso(now));
  out.end_array();
  return out.take();
}

namespace {
// stored_target's values of a whole Target; throws when a field is missing, of another kind, or
// when there are fields besides (the values would lose them).
std::string stored_values(std::string_view target_json) {
  const json::value parsed = json::parse(target_json);
  const json::object& target = parsed.as_object();
  const json::object& creditor = target.at("creditor").as_object();
  const json::object& account = target.at("creditor_account").as_object();
  if (target.size() != 13 || creditor.size() != 4 || account.size() != 3) {
    throw std::invalid_argument("a Target of another layout");
  }
  json_text::Writer out(256);
  out.begin_array().string(target.at("resolution_type").as_string());
  out.string(target.at("participant_nit").as_string()).string(target.at("spbvi").as_string());
  const json::value& amount = target.at("transaction_amount");
  if (amount.is_null()) {
    out.null();
  } else {
    if (amount.as_object().size() != 2) throw std::invalid_argument("an amount of another layout");
    out.begin_array().integer(amount.at("amount").as_int64());
    out.string(amount.at("currency").as_string()).end_array();
  }
  for (std::string_view field : {"document_number", "document_type", "full_name", "type"}) {
    out.string(creditor.at(field).as_string());
  }
  for (std::string_view field : {"currency_code", "number", "type"}) {
    out.string(account.at(field).as_string());
  }
  out.string(target.at("expires_at").as_string()).string(target.at("inserted_at").as_string());
  out.end_array();
  return out.take();
}
}  // namespace

std::string stored_target(std::string_view target_json) {
  try {
    return stored_values(target_json);
  } catch (const std::exception&) {
    return std::string(target_json);  // a layout the values do not know: kept whole
  }
}

namespace {
// The members of `write` (one or more), without the braces of the object they were written in.
template <class Write>
std::string members_of(Write&& write) {
  json_text::Writer out(256);
  out.begin_object();
  write(out);
  out.end_object();
  std::string text = out.take();
  return text.substr(1, text.size() - 2);
}

// The runs of a stored Target in the array form.
ShownRuns shown_runs(std::string_view stored) {
  const json::value parsed = json::parse(stored);
  const json::array& values = parsed.as_array();
  auto text = [&](std::size_t i) -> std::string_view { return values.at(i).as_string(); };
  ShownRuns runs;
  runs.resolution_type = members_of([&](json_text::Writer& out) {
    out.key("resolution_type").string(text(0));
  });
  runs.participant = members_of([&](json_text::Writer& out) {
    out.key("participant_nit").string(text(1)).key("spbvi").string(text(2));
  });
  runs.rest = members_of([&](json_text::Writer& out) {
    out.key("transaction_amount");
    if (values.at(3).is_null()) {
      out.null();
    } else {
      const json::array& amount = values.at(3).as_array();
      out.begin_object().key("amount").integer(amount.at(0).as_int64());
      out.key("currency").string(amount.at(1).as_string()).end_object();
    }
    out.key("creditor").begin_object();
    out.key("document_number").string(text(4)).key("document_type").string(text(5));
    out.key("full_name").string(text(6)).key("type").string(text(7));
    out.end_object();
    out.key("creditor_account").begin_object();
    out.key("currency_code").string(text(8)).key("number").string(text(9));
    out.key("type").string(text(10));
    out.end_object();
    out.key("expires_at").string(text(11)).key("inserted_at").string(text(12));
  });
  return runs;
}

bool stored_whole(std::string_view stored) { return !stored.empty() && stored.front() == '{'; }

void write_runs(json_text::Writer& out, const ShownRuns& runs, const TargetIds& ids) {
  out.begin_object().key("id").string(ids.id);
  out.key("resolution_request_id").string(ids.resolution_request_id);
  out.members(runs.resolution_type);
  out.key("key_type").string(ids.key_type).key("key_value").string(ids.key_value);
  out.members(runs.participant);
  out.key("payment_id").string(ids.payment_id);
  out.members(runs.rest);
  out.end_object();
}
}  // namespace

const ShownRuns* ShownTargets::runs(std::string_view stored) {
  auto found = runs_.find(stored);
  if (found == runs_.end()) {
    std::optional<ShownRuns> made;
    if (!stored_whole(stored)) made = shown_runs(stored);
    found = runs_.emplace(std::string(stored), std::move(made)).first;
  }
  return found->second ? &*found->second : nullptr;
}

void write_target(json_text::Writer& out, std::string_view stored, const TargetIds& ids,
                  ShownTargets* shown) {
  if (stored_whole(stored)) {
    out.raw(stored);  // a row written before the stored form: the whole Target
    return;
  }
  if (shown) {
    write_runs(out, *shown->runs(stored), ids);
  } else {
    write_runs(out, shown_runs(stored), ids);
  }
}

std::string shown_target(std::string_view stored, const TargetIds& ids) {
  json_text::Writer out(768);
  write_target(out, stored, ids);
  return out.take();
}

std::string target_json(const Resolution& resolution, const std::string& id,
                        const std::string& resolution_request_id, const std::string& format,
                        const std::string& payment_id, std::optional<std::int64_t> amount_minor,
                        const std::string& currency, time::Micros expires_at, time::Micros now) {
  return shown_target(
      stored_target(resolution, format, amount_minor, currency, expires_at, now),
      {id, resolution_request_id, resolution.key_type, resolution.key_value, payment_id});
}

Result<Target> resolve_target(store::Tx& tx, const std::string& tenant_id,
                              const TargetRequest& request, time::Micros now) {
  if (request.format != k_format_plain_key) {
    return errors::validation("must be " + std::string(k_format_plain_key), "format");
  }
  auto resolution = resolve_plain_key(tx, request.value, "value");
  if (!resolution) return std::move(resolution).error();
  Target target;
  target.id = ids::generate("bbtgt");
  target.resolution_request_id = ids::generate("bbtgr");
  target.key_type = resolution->key_type;
  target.key_value = resolution->key_value;
  target.amount_minor = request.amount_minor;
  if (request.amount_minor) target.currency = request.currency;
  target.payment_id = new_payment_id();
  target.expires_at_micros = now + limits::k_target_ttl_seconds * time::k_micros_per_second;
  target.json = target_json(*resolution, target.id, target.resolution_request_id, request.format,
                            target.payment_id, target.amount_minor, request.currency,
                            target.expires_at_micros, now);
  tx.exec(
      "INSERT INTO targets (tenant_id, id, resolution_request_id, format, value, key_type, "
      "key_value, amount, currency, payment_id, target, expires_at, expires_at_micros, "
      "inserted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      {tenant_id, target.id, target.resolution_request_id, request.format, request.value,
       target.key_type, target.key_value,
       target.amount_minor ? store::Value(*target.amount_minor) : store::Value(nullptr),
       store::optional_value(target.currency), target.payment_id, target.json,
       time::iso(target.expires_at_micros), target.expires_at_micros, time::iso(now)});
  target.resolution = std::move(resolution).value();
  return target;
}

Result<Target> read_target(store::Tx& tx, const std::string& tenant_id, const std::string& id,
                           const std::string& path) {
  auto row = tx.query_one(std::string("SELECT ") + k_columns +
                              " FROM targets WHERE tenant_id = ? AND id = ?",
                          {tenant_id, id});
  if (!row) return errors::of(ErrorCode::target_not_found, path);
  return from_row(*row);
}

std::map<std::string, Target> read_targets(store::Tx& tx, const std::string& tenant_id,
                                           const std::vector<std::string>& ids) {
  const std::set<std::string> unique(ids.begin(), ids.end());
  const std::vector<std::string> asked(unique.begin(), unique.end());
  std::map<std::string, Target> found;
  store::query_in(tx,
                  std::string("SELECT ") + k_columns + " FROM targets WHERE tenant_id = ? AND id",
                  {tenant_id}, asked, "", [&](const store::Row& row) {
                    Target target = from_row(row);
                    std::string id = target.id;
                    found.emplace(std::move(id), std::move(target));
                  });
  return found;
}

Status unexpired(const Target& target, time::Micros now, const std::string& path) {
  if (now < target.expires_at_micros) return ok_status();
  return errors::of(ErrorCode::target_expired, path,
                    "the target expired at " + time::iso(target.expires_at_micros) +
                        ": resolve the key again");
}

}  // namespace tesoro::network
