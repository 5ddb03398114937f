#include "api/validation/fields.hpp"

#include "core/email.hpp"
#include "core/limits.hpp"

namespace tesoro::api {

const std::vector<std::string>& document_types() {
  static const std::vector<std::string> k_types = {"CC", "CE",  "NIT", "PA",
                                                   "TI", "PEP", "PPT", "RC"};
  return k_types;
}

const std::vector<std::string>& person_types() {
  static const std::vector<std::string> k_types = {"natural", "legal"};
  return k_types;
}

bool is_country_code(std::string_view text) {
  return text.size() == 2 && std::isupper(static_cast<unsigned char>(text[0])) &&
         std::isupper(static_cast<unsigned char>(text[1]));
}

bool is_phone_number(std::string_view text) {
  if (text.size() < 3 || text.size() > 16 || text[0] != '+' || text[1] < '1' || text[1] > '9') {
    return false;
  }
  for (std::size_t i = 2; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  return true;
}

bool is_email(std::string_view text) { return email::is_email(text); }

std::string required_text(ObjectReader& reader, std::string_view key, std::size_t max_chars,
                          Problems& problems) {
  auto value = reader.string(key, Need::required, max_chars);
  if (value && value->empty()) {
    problems.invalid(reader.path(key), "must not be empty");
    return {};
  }
  return value.value_or("");
}

std::string required_country(ObjectReader& reader, std::string_view key, Problems& problems) {
  std::string code = required_text(reader, key, 2, problems);
  if (!code.empty() && !is_country_code(code)) {
    problems.invalid(reader.path(key), "must be a two-letter country code such as CO");
  }
  return code;
}

std::optional<std::string> read_email(ObjectReader& reader, std::string_view key, Need need,
                                      Problems& problems) {
  auto email = reader.string(key, need, limits::k_email_max_chars);
  if (email && !is_email(*email)) problems.invalid(reader.path(key), "must be an email address");
  return email;
}

std::optional<std::string> read_phone_number(ObjectReader& reader, std::string_view key,
                                             Need need, Problems& problems) {
  auto phone = reader.string(key, need, 16);
  if (phone && !is_phone_number(*phone)) {
    problems.invalid(reader.path(key), "must be +, a digit 1-9, then 1 to 14 digits");
  }
  return phone;
}

std::string required_document_type(ObjectReader& reader, std::string_view key) {
  return reader.one_of(key, Need::required, document_types()).value_or("");
}

std::string required_document_number(ObjectReader& reader, std::string_view key,
                                     Problems& problems) {
  return required_text(reader, key, limits::k_document_number_max_chars, problems);
}

std::optional<ledger::Address> read_address(ObjectReader& parent, std::string_view key, Need need,
                                            Problems& problems) {
  const json::object* object = parent.object(key, need);
  if (!object) return std::nullopt;
  ObjectReader reader(*object, parent.path(key), problems);
  ledger::Address address;
  address.city = required_text(reader, "city", limits::k_address_city_max_chars, problems);
  address.country = required_country(reader, "country", problems);
  address.line_1 = required_text(reader, "line_1", limits::k_address_line_max_chars, problems);
  address.line_2 = reader.string("line_2", Need::optional, limits::k_address_line_max_chars);
  address.state = required_text(reader, "state", limits::k_address_state_max_chars, problems);
  address.zip_code = required_text(reader, "zip_code", limits::k_zip_code_max_chars, problems);
  address.extra = reader.string("extra", Need::optional, limits::k_address_line_max_chars);
  reader.reject_unknown();
  return address;
}

std::optional<ledger::Person> read_person(ObjectReader& parent, std::string_view key, Need need,
                                          Problems& problems) {
  const json::object* object = parent.object(key, need);
  if (!object) return std::nullopt;
  ObjectReader reader(*object, parent.path(key), problems);
  ledger::Person person;
  person.country_code = required_country(reader, "country_code", problems);
  person.document_number = required_document_number(reader, "document_number", problems);
  person.document_type = required_document_type(reader, "document_type");
  person.first_name = required_text(reader, "first_name", limits::k_name_max_chars, problems);
  person.middle_name = reader.string("middle_name", Need::optional, limits::k_name_max_chars);
  person.last_name = required_text(reader, "last_name", limits::k_name_max_chars, problems);
  person.second_last_name =
      reader.string("second_last_name", Need::optional, limits::k_name_max_chars);
  person.person_type = reader.one_of("person_type", Need::required, person_types()).value_or("");
  reader.reject_unknown();
  return person;
}

namespace {

// The text a metadata value is kept as, or a problem at `path`.
std::optional<std::string> metadata_text(const json::value& value, const std::string& path,
                                         Problems& problems) {
  if (value.is_string()) return std::string(value.get_string());
  if (value.is_int64() || value.is_uint64() || value.is_bool()) {
    return json::serialize(value);  // exact: the integer's digits, true or false
  }
  if (value.is_double()) {
    // A decimal (or an integer past 64 bits) is parsed as a double and could not be returned
    // as given; as a string it is kept exactly.
    problems.invalid(path, "decimals and integers beyond 64 bits must be sent as strings");
  } else {
    problems.invalid(path, "must be a string, integer or boolean (metadata is flat)");
  }
  return std::nullopt;
}

}  // namespace

std::optional<ledger::Metadata> read_metadata(ObjectReader& parent, std::string_view key,
                                              Problems& problems) {
  const json::object* object = parent.object(key, Need::optional);
  if (!object) return std::nullopt;
  if (object->size() > static_cast<std::size_t>(limits::k_metadata_keys_max)) {
    problems.invalid(parent.path(key),
                     "must have at most " + std::to_string(limits::k_metadata_keys_max) + " keys");
    return std::nullopt;
  }
  ledger::Metadata metadata;
  for (const auto& entry : *object) {
    std::string path = parent.path(key) + "." + std::string(entry.key());
    auto text = metadata_text(entry.value(), path, problems);
    if (!text) continue;
    if (entry.key().empty() || utf8_length(entry.key()) > limits::k_metadata_key_max_chars ||
        !is_clean_text(entry.key())) {
      problems.invalid(path, "keys must have 1 to " +
                                 std::to_string(limits::k_metadata_key_max_chars) +
                                 " printable characters");
    } else if (utf8_length(*text) > limits::k_metadata_value_max_chars || !is_clean_text(*text)) {
      problems.invalid(path, "must be printable text of at most " +
                                 std::to_string(limits::k_metadata_value_max_chars) +
                                 " characters");
    } else {
      metadata.emplace_back(std::string(entry.key()), std::move(*text));
    }
  }
  return metadata;
}

json::object address_json(const ledger::Address& address) {
  return json::object{{"city", address.city},
                      {"country", address.country},
                      {"line_1", address.line_1},
                      {"line_2", optional_json(address.line_2)},
                      {"state", address.state},
                      {"zip_code", address.zip_code},
                      {"extra", optional_json(address.extra)}};
}

json::object person_json(const ledger::Person& person) {
  return json::object{{"country_code", person.country_code},
                      {"document_number", person.document_number},
                      {"document_type", person.document_type},
                      {"first_name", person.first_name},
                      {"middle_name", optional_json(person.middle_name)},
                      {"last_name", person.last_name},
                      {"second_last_name", optional_json(person.second_last_name)},
                      {"person_type", person.person_type}};
}

json::value metadata_json(const std::optional<ledger::Metadata>& metadata) {
  if (!metadata) return nullptr;
  json::object out;
  for (const auto& [key, value] : *metadata) out[key] = value;
  return out;
}

}  // namespace tesoro::api
