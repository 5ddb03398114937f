#include "api/card_fields.hpp"

#include <chrono>

#include "api/validation/fields.hpp"
#include "core/limits.hpp"

namespace tesoro::api {
namespace {

namespace chrono = std::chrono;


// "YYYY-MM-DD" naming a day of the calendar (no 2023-02-29), or nullopt.
std::optional<chrono::sys_days> parse_date(std::string_view text) {
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return std::nullopt;
  int parts[3] = {0, 0, 0};
  const std::size_t starts[3] = {0, 5, 8};
  const std::size_t lengths[3] = {4, 2, 2};
  for (int part = 0; part < 3; ++part) {
    for (std::size_t i = starts[part]; i < starts[part] + lengths[part]; ++i) {
      if (text[i] < '0' || text[i] > '9') return std::nullopt;
      parts[part] = parts[part] * 10 + (text[i] - '0');
    }
  }
  chrono::year_month_day date{chrono::year{parts[0]},
                              chrono::month{static_cast<unsigned>(parts[1])},
                              chrono::day{static_cast<unsigned>(parts[2])}};
  if (!date.ok()) return std::nullopt;
  return chrono::sys_days{date};
}

// A real date before the tenant's today (UTC) and not before January 1 of
// limits::k_birthdate_min_year.
std::optional<std::string> read_birthdate(ObjectReader& reader, std::string_view key,
                                          time::Micros now, Problems& problems) {
  auto text = reader.string(key, Need::optional, 10);
  if (!text) return std::nullopt;
  auto date = parse_date(*text);
  if (!date) {
    problems.invalid(reader.path(key), "must be a calendar date YYYY-MM-DD");
    return std::nullopt;
  }
  const auto today = chrono::floor<chrono::days>(
      chrono::sys_time<chrono::microseconds>(chrono::microseconds(now)));
  const chrono::year first_year{limits::k_birthdate_min_year};
  const chrono::sys_days earliest{first_year / chrono::January / 1};
  if (*date >= today || *date < earliest) {
    problems.invalid(reader.path(key),
                     "must be a date in the past, not before " +
                         std::to_string(limits::k_birthdate_min_year) + "-01-01");
    return std::nullopt;
  }
  return text;
}

// An optional name: absent or null is none; when given, 1 to 100 characters.
std::optional<std::string> optional_name(ObjectReader& reader, std::string_view key,
                                         Problems& problems) {
  auto name = reader.string(key, Need::optional, limits::k_name_max_chars);
  if (name && name->empty()) {
    problems.invalid(reader.path(key), "must not be empty (send null for none)");
    return std::nullopt;
  }
  return name;
}

std::optional<std::string> read_nationality(ObjectReader& reader, std::string_view key,
                                            Problems& problems) {
  auto code = reader.string(key, Need::optional, 2);
  if (code && !is_country_code(*code)) {
    problems.invalid(reader.path(key), "must be a two-letter country code such as CO");
    return std::nullopt;
  }
  return code;
}

std::optional<cards::CardholderDocument> read_document(ObjectReader& parent, std::string_view key,
                                                       Problems& problems) {
  const json::object* object = parent.object(key, Need::optional);
  if (!object) return std::nullopt;
  ObjectReader reader(*object, parent.path(key), problems);
  cards::CardholderDocument document;
  document.country_code = required_country(reader, "country_code", problems);
  document.number = required_document_number(reader, "number", problems);
  document.person_type =
      reader.one_of("person_type", Need::required, person_types()).value_or("");
  document.type = required_document_type(reader, "type");
  reader.reject_unknown();
  return document;
}

cards::CardholderFields read_fields(ObjectReader& reader, time::Micros now, Problems& problems) {
  cards::CardholderFields fields;
  fields.first_name = required_text(reader, "first_name", limits::k_name_max_chars, problems);
  fields.middle_name = optional_name(reader, "middle_name", problems);
  fields.last_name = required_text(reader, "last_name", limits::k_name_max_chars, problems);
  fields.second_last_name = optional_name(reader, "second_last_name", problems);
  fields.birthdate = read_birthdate(reader, "birthdate", now, problems);
  fields.nationality = read_nationality(reader, "nationality", problems);
  fields.email = read_email(reader, "email", Need::optional, problems);
  fields.phone_number = read_phone_number(reader, "phone_number", Need::optional, problems);
  fields.address = read_address(reader, "address", Need::optional, problems);
  fields.document = read_document(reader, "document", problems);
  reader.reject_unknown();
  return fields;
}

// first_name and last_name: absent keeps them; null or "" is refused, since a cardholder always
// has both.
Patch<std::string> patch_required_name(ObjectReader& reader, std::string_view key,
                                       Problems& problems) {
  if (reader.is_null(key)) {
    problems.invalid(reader.path(key), "must not be null");
    return Patch<std::string>::absent();
  }
  if (!reader.present(key)) return Patch<std::string>::absent();
  std::string name = required_text(reader, key, limits::k_name_max_chars, problems);
  return name.empty() ? Patch<std::string>::absent() : Patch<std::string>::of(std::move(name));
}

template <class T>
void apply(const Patch<T>& patch, std::optional<T>& field) {
  if (patch.is_null()) field.reset();
  if (patch.has_value()) field = patch.value();
}

json::value document_json(const std::optional<cards::CardholderDocument>& document) {
  if (!document) return nullptr;
  return json::object{{"country_code", document->country_code},
                      {"number", document->number},
                      {"person_type", document->person_type},
                      {"type", document->type}};
}

}  // namespace

std::optional<cards::CardholderFields> read_cardholder(ObjectReader& parent, std::string_view key,
                                                       Need need, time::Micros now,
                                                       Problems& problems) {
  const json::object* object = parent.object(key, need);
  if (!object) return std::nullopt;
  ObjectReader reader(*object, parent.path(key), problems);
  return read_fields(reader, now, problems);
}

Result<cards::CardholderFields> decode_cardholder(std::string_view body, time::Micros now) {
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  Problems problems;
  ObjectReader reader(parsed.value(), "", problems);
  cards::CardholderFields fields = read_fields(reader, now, problems);
  if (!problems.empty()) return problems.to_error();
  return fields;
}

Result<CardholderPatch> decode_cardholder_patch(std::string_view body, time::Micros now) {
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  Problems problems;
  ObjectReader reader(parsed.value(), "", problems);
  CardholderPatch patch;
  auto optional = [&](std::string_view key, auto read) {
    return reader.patch<std::string>(key, read);
  };
  patch.first_name = patch_required_name(reader, "first_name", problems);
  patch.last_name = patch_required_name(reader, "last_name", problems);
  patch.middle_name =
      optional("middle_name", [&] { return optional_name(reader, "middle_name", problems); });
  patch.second_last_name = optional(
      "second_last_name", [&] { return optional_name(reader, "second_last_name", problems); });
  patch.birthdate =
      optional("birthdate", [&] { return read_birthdate(reader, "birthdate", now, problems); });
  patch.nationality =
      optional("nationality", [&] { return read_nationality(reader, "nationality", problems); });
  patch.email = optional(
      "email", [&] { return read_email(reader, "email", Need::optional, problems); });
  patch.phone_number = optional("phone_number", [&] {
    return read_phone_number(reader, "phone_number", Need::optional, problems);
  });
  patch.address = reader.patch<ledger::Address>(
      "address", [&] { return read_address(reader, "address", Need::optional, problems); });
  patch.document = reader.patch<cards::CardholderDocument>(
      "document", [&] { return read_document(reader, "document", problems); });
  reader.reject_unknown();
  if (!problems.empty()) return problems.to_error();
  return patch;
}

cards::CardholderFields patched(cards::CardholderFields fields, const CardholderPatch& patch) {
  if (patch.first_name.has_value()) fields.first_name = patch.first_name.value();
  if (patch.last_name.has_value()) fields.last_name = patch.last_name.value();
  apply(patch.middle_name, fields.middle_name);
  apply(patch.second_last_name, fields.second_last_name);
  apply(patch.birthdate, fields.birthdate);
  apply(patch.nationality, fields.nationality);
  apply(patch.email, fields.email);
  apply(patch.phone_number, fields.phone_number);
  apply(patch.address, fields.address);
  apply(patch.document, fields.document);
  return fields;
}

json::object cardholder_json(const cards::Cardholder& holder) {
  const cards::CardholderFields& f = holder.fields;
  return json::object{
      {"id", holder.id},
      {"first_name", f.first_name},
      {"middle_name", optional_json(f.middle_name)},
      {"last_name", f.last_name},
      {"second_last_name", optional_json(f.second_last_name)},
      {"birthdate", optional_json(f.birthdate)},
      {"nationality", optional_json(f.nationality)},
      {"email", optional_json(f.email)},
      {"phone_number", optional_json(f.phone_number)},
      {"address", f.address ? json::value(address_json(*f.address)) : json::value(nullptr)},
      {"document", document_json(f.document)},
      {"inserted_at", holder.inserted_at},
      {"updated_at", holder.updated_at}};
}

}  // namespace tesoro::api
