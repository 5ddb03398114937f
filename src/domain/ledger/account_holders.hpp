#pragma once
// Third-party account holders of the ledger. external_id is unique per tenant.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/page.hpp"
#include "core/result.hpp"
#include "core/time.hpp"
#include "store/store.hpp"

namespace tesoro::ledger {

struct Address {
  std::string city;
  std::string country;
  std::string line_1;
  std::string state;
  std::string zip_code;
  std::optional<std::string> line_2;
  std::optional<std::string> extra;
};

struct Person {
  std::string country_code;
  std::string document_number;
  std::string document_type;
  std::string first_name;
  std::string last_name;
  std::string person_type;
  std::optional<std::string> middle_name;
  std::optional<std::string> second_last_name;
};

using Metadata = std::vector<std::pair<std::string, std::string>>;

struct NewAccountHolder {
  Address address;
  Person person;
  std::optional<std::string> external_id;  // a required key whose value may be null
  std::optional<std::string> email;
  std::optional<std::string> phone_number;
  std::optional<Metadata> metadata;
};

struct AccountHolder {
  std::string id;
  NewAccountHolder fields;
  std::string state = "active";
  std::optional<std::string> state_reason;
  std::optional<std::string> state_reason_detail;
  std::string type = "self";
  std::string inserted_at;
  std::string updated_at;
};

// An address as the JSON text column it is stored in (account holders, cardholders), and back.
std::string encode_address(const Address& address);
Address decode_address(const std::string& text_json);
// Metadata as the JSON text column it is stored in (account holders, collections), and back.
std::string encode_metadata(const Metadata& metadata);
Metadata decode_metadata(const std::string& text_json);

// external_id_already_exists when the tenant already has one with that external_id (null
// external ids never clash).
Result<AccountHolder> create_account_holder(store::Tx& tx, const std::string& tenant_id,
                                            const NewAccountHolder& input, time::Micros now);
// item_not_found when absent or another tenant's.
Result<AccountHolder> get_account_holder(store::Tx& tx, const std::string& tenant_id,
                                         const std::string& id);
Result<PageOf<AccountHolder>> list_account_holders(store::Tx& tx, const std::string& tenant_id,
                                                   std::int64_t offset, std::int64_t limit);

}  // namespace tesoro::ledger
