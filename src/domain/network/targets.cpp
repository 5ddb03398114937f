#include "domain/network/targets.hpp"

#include "core/emvco.hpp"
#include "core/ids.hpp"
#include "core/json_writer.hpp"
#include "core/limits.hpp"

namespace tesoro::network {
namespace {

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

std::string new_payment_id() {
  emvco::Payload payload;
  payload.network = std::string(k_network_code);
  payload.transaction_id = ids::network_transaction_id();
  return emvco::payment_id(payload);
}

std::string target_json(const Resolution& resolution, const std::string& id,
                        const std::string& resolution_request_id, const std::string& format,
                        const std::string& payment_id, std::optional<std::int64_t> amount_minor,
                        const std::string& currency, time::Micros expires_at, time::Micros now) {
  json_text::Writer out(768);
  out.begin_object().key("id").string(id);
  out.key("resolution_request_id").string(resolution_request_id);
  out.key("resolution_type").string(format);
  out.key("key_type").string(resolution.key_type).key("key_value").string(resolution.key_value);
  out.key("participant_nit").string(resolution.participant_nit);
  out.key("spbvi").string(resolution.spbvi).key("payment_id").string(payment_id);
  out.key("transaction_amount");
  if (amount_minor) {
    out.begin_object().key("amount").integer(*amount_minor).key("currency").string(currency);
    out.end_object();
  } else {
    out.null();
  }
  const Creditor& creditor = resolution.creditor;
  out.key("creditor").begin_object();
  out.key("document_number").string(mask_number(creditor.document_number));
  out.key("document_type").string(creditor.document_type);
  out.key("full_name").string(mask_name(creditor.full_name)).key("type").string(creditor.type);
  out.end_object();
  const CreditorAccount& account = resolution.account;
  out.key("creditor_account").begin_object();
  out.key("currency_code").string(account.currency_code);
  out.key("number").string(mask_number(account.number)).key("type").string(account.type);
  out.end_object();
  out.key("expires_at").string(time::iso(expires_at)).key("inserted_at").string(time::iso(now));
  out.end_object();
  return out.take();
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

Result<Target> get_target(store::Tx& tx, const std::string& tenant_id, const std::string& id,
                          time::Micros now, const std::string& path) {
  auto target = read_target(tx, tenant_id, id, path);
  if (!target) return target;
  if (now >= target->expires_at_micros) {
    return errors::of(ErrorCode::target_expired, path,
                      "the target expired at " + time::iso(target->expires_at_micros) +
                          ": resolve the key again");
  }
  return target;
}

}  // namespace tesoro::network
