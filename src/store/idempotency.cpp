#include "store/idempotency.hpp"

#include "core/crypto.hpp"
#include "core/limits.hpp"

namespace tesoro::idempotency {

bool is_valid_key(std::string_view key) {
  static_assert(36 <= limits::k_idempotency_key_max_chars);
  if (key.size() != 36) return false;
  for (std::size_t i = 0; i < key.size(); ++i) {
    char c = key[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
      return false;
    }
  }
  return true;
}

std::string fingerprint(std::string_view method, std::string_view target, std::string_view body) {
  std::string material;
  material.reserve(method.size() + target.size() + body.size() + 2);
  material.append(method).append("\n").append(target).append("\n").append(body);
  return crypto::sha256_hex(material);
}

namespace {

std::optional<Found> found_in(const std::optional<store::Row>& row, std::string_view request_hash) {
  if (!row) return std::nullopt;
  return Found{row->text(0) == request_hash,
               StoredResponse{static_cast<int>(row->integer(1)), row->text(2), row->text(3)}};
}

}  // namespace

std::optional<Found> find(store::Tx& tx, std::string_view tenant_id, std::string_view key,
                          std::string_view request_hash, time::Micros now) {
  return found_in(tx.query_one("SELECT request_hash, status, content_type, body FROM idempotency_keys "
                               "WHERE tenant_id = ? AND idempotency_key = ? AND expires_at > ?",
                               {std::string(tenant_id), std::string(key), now}),
                  request_hash);
}

std::optional<Found> find_for_replay(store::Tx& tx, std::string_view tenant_id,
                                     std::string_view key, std::string_view request_hash,
                                     time::Micros now) {
  return found_in(tx.query_one("UPDATE idempotency_keys SET expires_at = expires_at "
                               "WHERE tenant_id = ? AND idempotency_key = ? AND expires_at > ? "
                               "RETURNING request_hash, status, content_type, body",
                               {std::string(tenant_id), std::string(key), now}),
                  request_hash);
}

bool record(store::Tx& tx, std::string_view tenant_id, std::string_view key,
            std::string_view request_hash, const StoredResponse& response, time::Micros now) {
  // One statement: a new key inserts; an expired record the sweeper has not removed yet is
  // taken over; a live one is left alone and reported (0 rows changed).
  return tx.exec(
             "INSERT INTO idempotency_keys (tenant_id, idempotency_key, request_hash, status, "
             "content_type, body, inserted_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
             "ON CONFLICT (tenant_id, idempotency_key) DO UPDATE SET "
             "request_hash = excluded.request_hash, status = excluded.status, "
             "content_type = excluded.content_type, body = excluded.body, "
             "inserted_at = excluded.inserted_at, expires_at = excluded.expires_at "
             "WHERE idempotency_keys.expires_at <= ?",
             {std::string(tenant_id), std::string(key), std::string(request_hash),
              std::int64_t{response.status}, response.content_type, response.body, time::iso(now),
              now + limits::k_idempotency_retention_seconds * time::k_micros_per_second,
              now}) == 1;
}

bool is_storable(int status, std::string_view first_error_code) {
  if (status >= 500) return false;
  switch (status) {
    case 400: case 401: case 403: case 405: case 413: case 429: case 431: return false;
    case 422: return first_error_code != "missing_field";
    default: return true;
  }
}

std::int64_t sweep_expired(store::Tx& tx, time::Micros now, std::int64_t limit) {
  return tx.exec(
      "DELETE FROM idempotency_keys WHERE (tenant_id, idempotency_key) IN (SELECT tenant_id, "
      "idempotency_key FROM idempotency_keys WHERE expires_at <= ? LIMIT ?)",
      {now, limit});
}

}  // namespace tesoro::idempotency
