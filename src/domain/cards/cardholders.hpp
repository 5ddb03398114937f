#pragma once
// Cardholders: the people cards are issued to. Every field but first_name and last_name is
// optional; a PATCH sets, keeps (absent) or clears (null) each optional field.
#include <cstdint>
#include <optional>
#include <string>

#include "core/page.hpp"
#include "core/result.hpp"
#include "core/time.hpp"
#include "domain/ledger/account_holders.hpp"
#include "store/store.hpp"

namespace tesoro::cards {

struct CardholderDocument {
  std::string country_code;  // two letters
  std::string number;
  std::string person_type;   // natural | legal
  std::string type;          // a document type (CC, CE, NIT, ...)
};

struct CardholderFields {
  std::string first_name;
  std::string last_name;
  std::optional<std::string> middle_name;
  std::optional<std::string> second_last_name;
  std::optional<std::string> birthdate;    // YYYY-MM-DD, a real date in the past
  std::optional<std::string> nationality;  // two letters
  std::optional<std::string> email;
  std::optional<std::string> phone_number;
  std::optional<ledger::Address> address;
  std::optional<CardholderDocument> document;
};

struct Cardholder {
  std::string id;  // carh_
  CardholderFields fields;
  std::string inserted_at;
  std::string updated_at;
};

Result<Cardholder> create_cardholder(store::Tx& tx, const std::string& tenant_id,
                                     const CardholderFields& fields, time::Micros now);
// item_not_found ("cardholder not found") when absent or another tenant's.
Result<Cardholder> get_cardholder(store::Tx& tx, const std::string& tenant_id,
                                  const std::string& id);
// get_cardholder with the row locked until the unit ends (on engines with row locks): a PATCH
// reads, merges and replaces, and two at once must not lose one's changes.
Result<Cardholder> lock_cardholder(store::Tx& tx, const std::string& tenant_id,
                                   const std::string& id);
// Replaces every field with `fields` (the handler merged the PATCH into the stored record).
Result<Cardholder> replace_cardholder(store::Tx& tx, const std::string& tenant_id,
                                      const std::string& id, const CardholderFields& fields,
                                      time::Micros now);
// Newest first.
Result<PageOf<Cardholder>> list_cardholders(store::Tx& tx, const std::string& tenant_id,
                                            std::int64_t offset, std::int64_t limit);

}  // namespace tesoro::cards
