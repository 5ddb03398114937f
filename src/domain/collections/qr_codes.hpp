#pragma once
// QR codes of collections (POST /api/v1/collections/{collection_id}/qr): an EMVCo
// merchant-presented payload (core/emvco.hpp) naming one of the collection's keys, and its PNG.
//
// Rules, in precedence order (the request's own shape is checked by the handler first):
//   collection_not_found; collection_invalid_state unless the collection is payable (ready or
//   minimum_paid, enabled, not past its expires_at: collections::payable_at);
//   qr_type_not_allowed for a static (multiple_use) code of a fixed-value single-use
//   collection; key_not_found when the key named is not an active key of this collection (or
//   it has none); currency_mismatch, then
//   amount_out_of_range for an amount outside the attempt bounds, above what tag 54 can hold
//   or above remaining(); validation_error at key_value for a key too long for tag 26.
//
// A single_use request makes a dynamic code (tag 01 `12`) with an amount and an expiry on the
// tenant clock; multiple_use a static one (`11`), amount optional, no expiry. The image is not
// stored: it is a pure function of (emvco, level, width), made once for the answer.
//
// Speed: the PNG is the costly part, and a write unit must not pay for it (on SQLite every
// write waits for the one writer). create_qr plans the payload with the collection's row held (a
// share lock on PostgreSQL: codes of one collection do not queue behind each other) and inserts;
// the image is made from what it inserted, after the commit (api::Context::write_then). A
// request with an idempotency key records its whole response in the unit: its handler plans the
// payload in a read first (plan_qr) and draws the image before the unit, which image_of uses
// unless the payload changed in between (another default key, the beneficiary's name).
#include <cstdint>
#include <optional>
#include <string>

#include "core/emvco.hpp"
#include "core/limits.hpp"
#include "core/page.hpp"
#include "core/result.hpp"
#include "core/time.hpp"
#include "store/store.hpp"

namespace tesoro::collections {

struct QrRequest {
  std::string usage_mode;  // single_use | multiple_use
  std::optional<std::int64_t> amount_minor;
  std::string currency;  // of the amount, when given
  std::string error_correction_level = "medium";
  std::optional<std::int64_t> expiration_seconds;  // single_use only
  std::int64_t image_width = limits::k_qr_image_width_default;
  // Both or neither; key_value already normalised (normalize_key).
  std::optional<std::string> key_type;
  std::optional<std::string> key_value;
};

struct QrCode {
  std::string id;  // bbqr_
  std::string collection_id;
  std::string usage_mode;
  std::optional<std::int64_t> amount_minor;
  std::string currency;
  bool canceled = false;
  std::string emvco;
  std::string error_correction_level;
  std::int64_t image_width = 0;
  std::optional<std::string> expires_at;
  std::optional<time::Micros> expires_at_micros;
  std::int64_t failed_attempts = 0;
  std::int64_t successful_attempts = 0;
  std::string key_type;
  std::string key_value;
  std::string payment_id;
  std::string image;  // data:image/png;base64,... on creation only (never stored)
  std::string inserted_at;
  std::string updated_at;
};

// What the payload says. Tesoro's choices (docs/decisions.md, "QR codes and sandbox attempts"):
// network CRB, merchant category code 0000, city BOGOTA, terminal label TESORO01, purpose 00;
// the merchant name is the tenant account's beneficiary in plain capitals, cut to 25.
inline constexpr std::string_view k_network = "CRB";
inline constexpr std::string_view k_merchant_category_code = "0000";
inline constexpr std::string_view k_merchant_city = "BOGOTA";
inline constexpr std::string_view k_terminal_label = "TESORO01";

struct QrPlan {
  emvco::Payload payload;
  std::string emvco;
  std::string payment_id;
  std::string currency;  // the collection's
};

// The payload a QR code of this request would carry: the rules above, read from the collection
// (held against changes until the unit ends when `lock`) at the tenant's time `now`.
// `transaction_id` is drawn by the caller (ids::network_transaction_id) so that two plans of one
// request agree.
Result<QrPlan> plan_qr(store::Tx& tx, const std::string& tenant_id,
                       const std::string& collection_id, const QrRequest& request,
                       const std::string& transaction_id, bool lock, time::Micros now);

// The data URL of the code's PNG. internal_error when the payload does not fit a QR code
// (it always does: a payload is under 300 characters).
Result<std::string> render_image(const std::string& emvco, const std::string& level,
                                 std::int64_t width);

struct PrebuiltImage {
  std::string emvco;
  std::string data_url;
};

// Plans with the collection's row held and inserts the code. Its `image` is left empty: image_of
// makes it, outside the unit when it can.
Result<QrCode> create_qr(store::Tx& tx, const std::string& tenant_id,
                         const std::string& collection_id, const QrRequest& request,
                         const std::string& transaction_id, time::Micros now);

// The data URL of the code's PNG: `prebuilt`'s when that was made from the code's payload (the
// same emvco), else drawn now.
Result<std::string> image_of(const QrCode& qr, const PrebuiltImage* prebuilt);

// The tenant's QR code with this payment_id, nullopt when none. Locked (FOR UPDATE on
// PostgreSQL) when `lock`.
std::optional<QrCode> find_qr_by_payment_id(store::Tx& tx, const std::string& tenant_id,
                                            const std::string& payment_id, bool lock);
// Counts one attempt on the code (successful or not).
void count_qr_attempt(store::Tx& tx, const std::string& tenant_id, const std::string& qr_code_id,
                      bool successful, time::Micros now);

// The collection's QR codes, newest first (ties by id), without their images: an image is
// made on creation only. The caller checks the collection is the tenant's.
PageOf<QrCode> list_qr_codes(store::Tx& tx, const std::string& tenant_id,
                             const std::string& collection_id, std::int64_t offset,
                             std::int64_t limit);

// The contract's QR code record: with `image` when it has one (on creation), without the key
// in a list.
std::string qr_code_text(const QrCode& qr);

// A name as the EMVCo merchant name (tag 59) takes it: emvco::ascii_field (accents dropped, other
// characters outside printable ASCII dropped, spaces collapsed, at most 25) in capitals;
// TESORO when nothing is left.
std::string merchant_name(std::string_view full_name);

}  // namespace tesoro::collections
