#pragma once
// Readers and encoders of the fields several resources share: addresses, people, identity
// documents, contact data, countries and metadata (account holders today; cardholders and
// collections next). Each reader records its problems with their paths and returns what it
// could read; the caller answers once with every problem (see readers.hpp).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/json.hpp"
#include "api/validation/readers.hpp"
#include "domain/ledger/account_holders.hpp"

namespace tesoro::api {

// Colombian identity document types: CC, CE, NIT, PA, TI, PEP, PPT, RC.
const std::vector<std::string>& document_types();
// natural or legal.
const std::vector<std::string>& person_types();

// Two uppercase letters (ISO 3166-1 alpha-2 shape).
bool is_country_code(std::string_view text);
// +, a digit 1-9, then 1 to 14 digits (E.164).
bool is_phone_number(std::string_view text);
// local@domain.tld, no spaces, one @, a dot in the domain, at most 254 bytes (RFC 5321).
bool is_email(std::string_view text);

// A required string that must not be empty ("" when absent or invalid).
std::string required_text(ObjectReader& reader, std::string_view key, std::size_t max_chars,
                          Problems& problems);
// A required two-letter country code ("" when absent or invalid).
std::string required_country(ObjectReader& reader, std::string_view key, Problems& problems);
std::optional<std::string> read_email(ObjectReader& reader, std::string_view key, Need need,
                                      Problems& problems);
std::optional<std::string> read_phone_number(ObjectReader& reader, std::string_view key,
                                             Need need, Problems& problems);
// document_type (one of document_types()) and document_number (1 to 30 characters).
std::string required_document_type(ObjectReader& reader, std::string_view key);
std::string required_document_number(ObjectReader& reader, std::string_view key,
                                     Problems& problems);

// The object at `key`: city, country, line_1, state, zip_code; optional line_2 and extra.
std::optional<ledger::Address> read_address(ObjectReader& parent, std::string_view key, Need need,
                                            Problems& problems);
// The object at `key`: country_code, document, names and person_type.
std::optional<ledger::Person> read_person(ObjectReader& parent, std::string_view key, Need need,
                                          Problems& problems);
// A flat object of at most 50 keys; strings, exact integers and booleans, kept as text.
std::optional<ledger::Metadata> read_metadata(ObjectReader& parent, std::string_view key,
                                              Problems& problems);

json::object address_json(const ledger::Address& address);
json::object person_json(const ledger::Person& person);
// null when there is no metadata.
json::value metadata_json(const std::optional<ledger::Metadata>& metadata);

}  // namespace tesoro::api
