#include "domain/collections/qr_codes.hpp"

#include <algorithm>

#include "core/ids.hpp"
#include "core/json_writer.hpp"
#include "core/money.hpp"
#include "core/qr_image.hpp"
#include "domain/collections/collections.hpp"
#include "domain/ledger/accounts.hpp"
#include "store/pages.hpp"

namespace tesoro::collections {
namespace {

constexpr const char* k_columns =
    "id, collection_id, usage_mode, amount, currency, canceled, emvco, error_correction_level, "
    "image_width, expires_at, expires_at_micros, failed_attempts, successful_attempts, key_type, "
    "key_value, payment_id, inserted_at, updated_at";

QrCode from_row(const store::Row& row) {
  QrCode qr;
  qr.id = row.text(0);
  qr.collection_id = row.text(1);
  qr.usage_mode = row.text(2);
  qr.amount_minor = row.optional_integer(3);
  qr.currency = row.text(4);
  qr.canceled = row.integer(5) != 0;
  qr.emvco = row.text(6);
  qr.error_correction_level = row.text(7);
  qr.image_width = row.integer(8);
  qr.expires_at = row.optional_text(9);
  qr.expires_at_micros = row.optional_integer(10);
  qr.failed_attempts = row.integer(11);
  qr.successful_attempts = row.integer(12);
  qr.key_type = row.text(13);
  qr.key_value = row.text(14);
  qr.payment_id = row.text(15);
  qr.inserted_at = row.text(16);
  qr.updated_at = row.text(17);
  return qr;
}

// The key the code names: the one asked for, which must be an active key of the collection, or
// the collection's newest active key.
Result<Key> choose_key(const Collection& collection, const QrRequest& request) {
  if (request.key_type && request.key_value) {
    for (const Key& key : collection.keys) {
      if (key.type == *request.key_type && key.value == *request.key_value &&
          key.state == "active") {
        return key;
      }
    }
    return errors::of(ErrorCode::key_not_found, "key_value",
                      "the key is not an active key of this collection");
  }
  auto key = default_key(collection);
  if (!key) {
    return errors::of(ErrorCode::key_not_found, "key_value", "the collection has no active key");
  }
  return *key;
}

// Rule 3: within the attempt bounds and not above what remains to be paid.
Status check_amount(const Collection& collection, const QrRequest& request) {
  if (!request.amount_minor) return ok_status();
  if (request.currency != collection.currency) {
    return errors::of(ErrorCode::currency_mismatch, "amount.currency",
                      "the amount's currency is not the collection's (" + collection.currency +
                          ")");
  }
  const std::int64_t amount = *request.amount_minor;
  if (amount < collection.minimum_attempt_amount || amount > collection.maximum_attempt_amount) {
    return errors::of(ErrorCode::amount_out_of_range, "amount.amount",
                      "the amount must lie between the collection's minimum_attempt_amount (" +
                          money::display(collection.minimum_attempt_amount, collection.currency) +
                          ") and maximum_attempt_amount (" +
                          money::display(collection.maximum_attempt_amount, collection.currency) +
                          ")");
  }
  if (amount > emvco::k_amount_max_minor) {
    return errors::of(ErrorCode::amount_out_of_range, "amount.amount",
                      "a QR code's amount is at most " +
                          money::display(emvco::k_amount_max_minor, collection.currency) +
                          " (tag 54 holds " + std::to_string(emvco::k_amount_max_chars) +
                          " characters)");
  }
  if (amount > collection.remaining()) {
    return errors::of(ErrorCode::amount_out_of_range, "amount.amount",
                      "the amount is more than the collection's remaining balance (" +
                          money::display(collection.remaining(), collection.currency) + ")");
  }
  return ok_status();
}

// Holds the collection's row against changes until the unit ends, without excluding other QR
// codes of it: a code changes nothing of the collection, so codes need not queue behind each
// other's commits (with lock_collection's FOR UPDATE, PostgreSQL made ~300 codes a second on
// one collection); a payment or an update (FOR UPDATE, UPDATE) waits for the code's unit, and the
// code's unit for theirs, so the collection read after this is the one the code is checked
// against. SQLite's single writer serialises units anyway.
void share_collection(store::Tx& tx, const std::string& tenant_id,
                      const std::string& collection_id) {
  if (tx.engine() != store::Engine::postgres) return;
  tx.query_one("SELECT id FROM collections WHERE tenant_id = ? AND id = ? FOR SHARE",
               {tenant_id, collection_id});
}

Status check_collection(const Collection& collection, const QrRequest& request,
                        time::Micros now) {
  if (!payable_at(collection, now)) {
    std::string why = !collection.enabled ? std::string("the collection is disabled")
                      : collection.payable() ? std::string("the collection has expired")
                                             : "the collection is " + collection.state;
    return errors::of(ErrorCode::collection_invalid_state, std::nullopt,
                      why + "; QR codes are made for enabled collections in state ready or "
                            "minimum_paid");
  }
  // Rule 5: a payer of a static code types the amount, and a fixed-value single-use collection
  // takes one payment of one amount.
  if (request.usage_mode == "multiple_use" && collection.usage_mode == "single_use" &&
      collection.fixed_value()) {
    return errors::of(ErrorCode::qr_type_not_allowed, "usage_mode");
  }
  return ok_status();
}

}  // namespace

std::string merchant_name(std::string_view full_name) {
  std::string name = emvco::ascii_field(full_name, emvco::k_merchant_name_max_chars);
  for (char& c : name) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return name.empty() ? std::string("TESORO") : name;
}

Result<QrPlan> plan_qr(store::Tx& tx, const std::string& tenant_id,
                       const std::string& collection_id, const QrRequest& request,
                       const std::string& transaction_id, bool lock, time::Micros now) {
  if (lock) share_collection(tx, tenant_id, collection_id);
  auto collection = get_collection(tx, tenant_id, collection_id);
  if (!collection) return std::move(collection).error();
  if (auto checked = check_collection(*collection, request, now); !checked) {
    return checked.error();
  }
  auto key = choose_key(*collection, request);
  if (!key) return std::move(key).error();
  if (auto checked = check_amount(*collection, request); !checked) return checked.error();
  auto account = ledger::get_account(tx, tenant_id, collection->tenant_account_id,
                                     ledger::Surface::participant);
  if (!account) return std::move(account).error();

  QrPlan plan;
  plan.currency = collection->currency;
  emvco::Payload& payload = plan.payload;
  payload.dynamic = request.usage_mode == "single_use";
  payload.network = std::string(k_network);
  payload.key_type = key->type;
  payload.key_value = key->value;
  payload.merchant_category_code = std::string(k_merchant_category_code);
  payload.amount_minor = request.amount_minor;
  payload.merchant_name =
      merchant_name(account->beneficiary ? account->beneficiary->full_name : std::string());
  payload.merchant_city = std::string(k_merchant_city);
  payload.terminal_label = std::string(k_terminal_label);
  // A static code's tag 90 is 000000 (the Colombian standard); its payment_id is still unique,
  // Tesoro's reference for it, built from the transaction id the payload does not carry.
  payload.transaction_id =
      payload.dynamic ? transaction_id : std::string(emvco::k_static_transaction_id);
  auto text = emvco::build(payload);
  if (!text) {
    // Everything else was checked or made to fit; a key (an email of up to 100 characters) may
    // be longer than tag 26 has room for.
    const Error& error = text.error();
    if (error.errors.empty() || error.errors.front().path != "key_value") return errors::internal();
    return errors::validation("this key cannot be written in a QR code: " +
                                  error.errors.front().message,
                              "key_value");
  }
  plan.emvco = std::move(text).value();
  emvco::Payload identified = payload;
  identified.transaction_id = transaction_id;
  plan.payment_id = emvco::payment_id(identified);
  return plan;
}

Result<std::string> render_image(const std::string& emvco, const std::string& level,
                                 std::int64_t width) {
  auto parsed_level = qr_image::level_from_string(level);
  if (!parsed_level) return errors::internal();
  auto png = qr_image::png(emvco, *parsed_level, static_cast<int>(width));
  if (!png) return errors::internal();
  return qr_image::data_url(png.value());
}

Result<QrCode> create_qr(store::Tx& tx, const std::string& tenant_id,
                         const std::string& collection_id, const QrRequest& request,
                         const std::string& transaction_id, time::Micros now) {
  auto plan = plan_qr(tx, tenant_id, collection_id, request, transaction_id, /*lock=*/true, now);
  if (!plan) return std::move(plan).error();
  QrCode qr;
  qr.id = ids::generate("bbqr");
  qr.collection_id = collection_id;
  qr.usage_mode = request.usage_mode;
  qr.amount_minor = request.amount_minor;
  qr.currency = plan->currency;
  qr.emvco = plan->emvco;
  qr.error_correction_level = request.error_correction_level;
  qr.image_width = request.image_width;
  if (request.expiration_seconds) {
    qr.expires_at_micros = now + *request.expiration_seconds * time::k_micros_per_second;
    qr.expires_at = time::iso(*qr.expires_at_micros);
  }
  qr.key_type = plan->payload.key_type;
  qr.key_value = plan->payload.key_value;
  qr.payment_id = plan->payment_id;
  qr.inserted_at = qr.updated_at = time::iso(now);
  tx.exec("INSERT INTO qr_codes (tenant_id, id, collection_id, usage_mode, amount, currency, "
          "canceled, emvco, error_correction_level, image_width, expires_at, expires_at_micros, "
          "failed_attempts, successful_attempts, key_type, key_value, payment_id, inserted_at, "
          "updated_at) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, 0, 0, ?, ?, ?, ?, ?)",
          {tenant_id, qr.id, qr.collection_id, qr.usage_mode,
           qr.amount_minor ? store::Value(*qr.amount_minor) : store::Value(nullptr), qr.currency,
           qr.emvco, qr.error_correction_level, qr.image_width, store::optional_value(qr.expires_at),
           qr.expires_at_micros ? store::Value(*qr.expires_at_micros) : store::Value(nullptr),
           qr.key_type, qr.key_value, qr.payment_id, qr.inserted_at, qr.updated_at});
  return qr;
}

Result<std::string> image_of(const QrCode& qr, const PrebuiltImage* prebuilt) {
  if (prebuilt && prebuilt->emvco == qr.emvco) return prebuilt->data_url;
  return render_image(qr.emvco, qr.error_correction_level, qr.image_width);
}

std::optional<QrCode> find_qr_by_payment_id(store::Tx& tx, const std::string& tenant_id,
                                            const std::string& payment_id, bool lock) {
  std::string sql = std::string("SELECT ") + k_columns +
                    " FROM qr_codes WHERE tenant_id = ? AND payment_id = ?";
  if (lock) sql += tx.lock_rows();
  auto row = tx.query_one(sql, {tenant_id, payment_id});
  if (!row) return std::nullopt;
  return from_row(*row);
}

void count_qr_attempt(store::Tx& tx, const std::string& tenant_id, const std::string& qr_code_id,
                      bool successful, time::Micros now) {
  const char* column = successful ? "successful_attempts" : "failed_attempts";
  tx.exec_later(std::string("UPDATE qr_codes SET ") + column + " = " + column +
                    " + 1, updated_at = ? WHERE tenant_id = ? AND id = ?",
                {time::iso(now), tenant_id, qr_code_id});
}

PageOf<QrCode> list_qr_codes(store::Tx& tx, const std::string& tenant_id,
                             const std::string& collection_id, std::int64_t offset,
                             std::int64_t limit) {
  return store::query_page<QrCode>(tx, k_columns,
                                   " FROM qr_codes WHERE tenant_id = ? AND collection_id = ?",
                                   {tenant_id, collection_id}, "inserted_at DESC, id DESC",
                                   offset, limit, from_row);
}

std::string qr_code_text(const QrCode& qr) {
  json_text::Writer out(qr.image.size() + 1024);
  out.begin_object().key("id").string(qr.id).key("collection_id").string(qr.collection_id);
  out.key("usage_mode").string(qr.usage_mode).key("amount");
  if (qr.amount_minor) {
    out.begin_object().key("amount").integer(*qr.amount_minor).key("currency").string(qr.currency);
    out.end_object();
  } else {
    out.null();
  }
  out.key("canceled").raw(qr.canceled ? "true" : "false");
  out.key("emvco").string(qr.emvco);
  out.key("error_correction_level").string(qr.error_correction_level).key("expires_at");
  if (qr.expires_at) {
    out.string(*qr.expires_at);
  } else {
    out.null();
  }
  out.key("failed_attempts").integer(qr.failed_attempts);
  out.key("successful_attempts").integer(qr.successful_attempts);
  if (!qr.image.empty()) out.key("image").string(qr.image);
  out.key("image_width").integer(qr.image_width);
  out.key("key_type").string(qr.key_type).key("key_value").string(qr.key_value);
  out.key("payment_id").string(qr.payment_id);
  out.key("inserted_at").string(qr.inserted_at).key("updated_at").string(qr.updated_at);
  out.end_object();
  return out.take();
}

}  // namespace tesoro::collections
