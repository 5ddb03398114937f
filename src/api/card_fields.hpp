#pragma once
// The card module's JSON that several endpoint groups share: a cardholder as POST
// /v1/cards/cardholders takes it, as POST /v1/cards takes it inline (`cardholder`), as a PATCH
// changes it, and as every answer shows it.
#include <optional>
#include <string_view>

#include "api/json.hpp"
#include "api/validation/readers.hpp"
#include "core/result.hpp"
#include "core/time.hpp"
#include "domain/cards/cardholders.hpp"

namespace tesoro::api {

// The cardholder object at `key` of `parent`: first_name and last_name (1 to 100 characters)
// required; middle_name, second_last_name, birthdate (a real date YYYY-MM-DD before the tenant's
// today and not before 1900-01-01), nationality (two uppercase letters), email, phone_number,
// address and document (country_code, number, person_type, type, all four required) optional.
// `now` is the tenant's time (Context::now()): what "before today" is judged against.
std::optional<cards::CardholderFields> read_cardholder(ObjectReader& parent, std::string_view key,
                                                       Need need, time::Micros now,
                                                       Problems& problems);
// A request body that is one cardholder (POST /v1/cards/cardholders).
Result<cards::CardholderFields> decode_cardholder(std::string_view body, time::Micros now);

// A PATCH of a cardholder: each field absent (kept), null (cleared; not for the two required
// names) or a value (set), validated as on create.
struct CardholderPatch {
  Patch<std::string> first_name;
  Patch<std::string> middle_name;
  Patch<std::string> last_name;
  Patch<std::string> second_last_name;
  Patch<std::string> birthdate;
  Patch<std::string> nationality;
  Patch<std::string> email;
  Patch<std::string> phone_number;
  Patch<ledger::Address> address;
  Patch<cards::CardholderDocument> document;
};
Result<CardholderPatch> decode_cardholder_patch(std::string_view body, time::Micros now);
// The stored fields with the patch applied.
cards::CardholderFields patched(cards::CardholderFields fields, const CardholderPatch& patch);

// Every field present, null when unset.
json::object cardholder_json(const cards::Cardholder& holder);

}  // namespace tesoro::api
