// POST /v1/ledger/account_holders, GET /v1/ledger/account_holders[/{id}].
#include "api/context.hpp"
#include "api/lists.hpp"
#include "api/validation.hpp"
#include "domain/ledger/account_holders.hpp"

namespace tesoro::api {
namespace {

const std::vector<std::string> k_document_types = {"CC", "CE", "NIT", "PA", "TI", "PEP", "PPT",
                                                   "RC"};
const std::vector<std::string> k_person_types = {"natural", "legal"};

bool is_country_code(const std::string& text) {
  return text.size() == 2 && std::isupper(static_cast<unsigned char>(text[0])) &&
         std::isupper(static_cast<unsigned char>(text[1]));
}

// +, a digit 1-9, then 1 to 14 digits (E.164).
bool is_phone_number(const std::string& text) {
  if (text.size() < 3 || text.size() > 16 || text[0] != '+' || text[1] < '1' || text[1] > '9') {
    return false;
  }
  for (std::size_t i = 2; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  return true;
}

// local@domain.tld, no spaces, one @, a dot in the domain, at most 254 characters.
bool is_email(const std::string& text) {
  auto at = text.find('@');
  if (at == std::string::npos || at == 0 || text.find('@', at + 1) != std::string::npos) {
    return false;
  }
  std::string domain = text.substr(at + 1);
  auto dot = domain.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 2 > domain.size() ||
      domain.find("..") != std::string::npos || domain.front() == '-') {
    return false;
  }
  for (char c : text) {
    if (c == ' ' || c == ',' || c == ';' || c == '<' || c == '>' || c == '(' || c == ')') {
      return false;
    }
  }
  return text.size() <= 254;
}

std::string required_text(ObjectReader& reader, std::string_view key, std::size_t max_chars,
                          Problems& problems) {
  auto value = reader.string(key, Need::required, max_chars);
  if (value && value->empty()) {
    problems.invalid(reader.path(key), "must not be empty");
    return {};
  }
  return value.value_or("");
}

ledger::Address read_address(const json::object& object, Problems& problems) {
  ObjectReader reader(object, "address", problems);
  ledger::Address address;
  address.city = required_text(reader, "city", 100, problems);
  address.country = required_text(reader, "country", 2, problems);
  if (!address.country.empty() && !is_country_code(address.country)) {
    problems.invalid("address.country", "must be a two-letter country code such as CO");
  }
  address.line_1 = required_text(reader, "line_1", 200, problems);
  address.line_2 = reader.string("line_2", Need::optional, 200);
  address.state = required_text(reader, "state", 100, problems);
  address.zip_code = required_text(reader, "zip_code", 20, problems);
  address.extra = reader.string("extra", Need::optional, 200);
  reader.reject_unknown();
  return address;
}

ledger::Person read_person(const json::object& object, Problems& problems) {
  ObjectReader reader(object, "person", problems);
  ledger::Person person;
  person.country_code = required_text(reader, "country_code", 2, problems);
  if (!person.country_code.empty() && !is_country_code(person.country_code)) {
    problems.invalid("person.country_code", "must be a two-letter country code such as CO");
  }
  person.document_number = required_text(reader, "document_number", 30, problems);
  person.document_type = reader.one_of("document_type", Need::required, k_document_types).value_or("");
  person.first_name = required_text(reader, "first_name", 100, problems);
  person.middle_name = reader.string("middle_name", Need::optional, 100);
  person.last_name = required_text(reader, "last_name", 100, problems);
  person.second_last_name = reader.string("second_last_name", Need::optional, 100);
  person.person_type = reader.one_of("person_type", Need::required, k_person_types).value_or("");
  reader.reject_unknown();
  return person;
}

// A flat object of at most 50 keys; scalar values are kept as their text.
std::optional<ledger::Metadata> read_metadata(ObjectReader& body, Problems& problems) {
  const json::object* object = body.object("metadata", Need::optional);
  if (!object) return std::nullopt;
  if (object->size() > static_cast<std::size_t>(limits::k_metadata_keys_max)) {
    problems.invalid("metadata", "must have at most 50 keys");
    return std::nullopt;
  }
  ledger::Metadata metadata;
  for (const auto& entry : *object) {
    std::string path = "metadata." + std::string(entry.key());
    const json::value& value = entry.value();
    std::string text;
    if (value.is_string()) text = std::string(value.get_string());
    else if (value.is_int64() || value.is_uint64() || value.is_bool()) {
      text = json::serialize(value);  // exact: the integer's digits, true or false
    } else if (value.is_double()) {
      // A decimal (or an integer past 64 bits) is parsed as a double and could not be returned
      // as given; as a string it is kept exactly.
      problems.invalid(path, "decimals and integers beyond 64 bits must be sent as strings");
      continue;
    } else {
      problems.invalid(path, "must be a string, integer or boolean (metadata is flat)");
      continue;
    }
    if (entry.key().empty() || utf8_length(entry.key()) > 100 || !is_clean_text(entry.key())) {
      problems.invalid(path, "keys must have 1 to 100 printable characters");
    } else if (utf8_length(text) > 500 || !is_clean_text(text)) {
      problems.invalid(path, "must be printable text of at most 500 characters");
    } else {
      metadata.emplace_back(std::string(entry.key()), std::move(text));
    }
  }
  return metadata;
}

json::value optional_json(const std::optional<std::string>& text) {
  return text ? json::value(*text) : json::value(nullptr);
}

json::object account_holder_json(const ledger::AccountHolder& holder) {
  const auto& f = holder.fields;
  json::object metadata;
  if (f.metadata) {
    for (const auto& [key, value] : *f.metadata) metadata[key] = value;
  }
  return json::object{
      {"id", holder.id},
      {"address",
       json::object{{"city", f.address.city},
                    {"country", f.address.country},
                    {"line_1", f.address.line_1},
                    {"line_2", optional_json(f.address.line_2)},
                    {"state", f.address.state},
                    {"zip_code", f.address.zip_code},
                    {"extra", optional_json(f.address.extra)}}},
      {"email", optional_json(f.email)},
      {"external_id", optional_json(f.external_id)},
      {"metadata", f.metadata ? json::value(std::move(metadata)) : json::value(nullptr)},
      {"person",
       json::object{{"country_code", f.person.country_code},
                    {"document_number", f.person.document_number},
                    {"document_type", f.person.document_type},
                    {"first_name", f.person.first_name},
                    {"middle_name", optional_json(f.person.middle_name)},
                    {"last_name", f.person.last_name},
                    {"second_last_name", optional_json(f.person.second_last_name)},
                    {"person_type", f.person.person_type}}},
      {"phone_number", optional_json(f.phone_number)},
      {"state", holder.state},
      {"state_reason", optional_json(holder.state_reason)},
      {"state_reason_detail", optional_json(holder.state_reason_detail)},
      {"type", holder.type},
      {"inserted_at", holder.inserted_at},
      {"updated_at", holder.updated_at}};
}

Result<ledger::NewAccountHolder> decode_new_account_holder(std::string_view body) {
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  Problems problems;
  ObjectReader reader(parsed.value(), "", problems);
  ledger::NewAccountHolder input;
  if (const json::object* address = reader.object("address", Need::required)) {
    input.address = read_address(*address, problems);
  }
  if (const json::object* person = reader.object("person", Need::required)) {
    input.person = read_person(*person, problems);
  }
  input.external_id = required_text(reader, "external_id", 255, problems);
  input.email = reader.string("email", Need::optional, 254);
  if (input.email && !is_email(*input.email)) problems.invalid("email", "must be an email address");
  input.phone_number = reader.string("phone_number", Need::optional, 16);
  if (input.phone_number && !is_phone_number(*input.phone_number)) {
    problems.invalid("phone_number", "must be +, a digit 1-9, then 1 to 14 digits");
  }
  input.metadata = read_metadata(reader, problems);
  reader.reject_unknown();
  if (!problems.empty()) return problems.to_error();
  return input;
}

http::Response create(Context& context) {
  auto input = decode_new_account_holder(context.request.body);
  if (!input) return context.error(input.error());
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto holder = ledger::create_account_holder(tx, context.tenant_id(), input.value(),
                                                time::now_micros());
    if (!holder) return std::move(holder).error();
    return json_response(201, account_holder_json(holder.value()));
  });
}

http::Response show(Context& context) {
  Problems problems;
  std::string id = check_path_id(context.param("id"), "acch", "an account holder", problems);
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto holder = ledger::get_account_holder(tx, context.tenant_id(), id);
    if (!holder) return std::move(holder).error();
    return json_response(200, account_holder_json(holder.value()));
  });
}

http::Response list(Context& context) {
  return paginated_list(
      context, "account_holders",
      [&](store::Tx& tx, const Page& page) {
        return ledger::list_account_holders(tx, context.tenant_id(), page.offset(), page.size);
      },
      account_holder_json);
}

}  // namespace

void add_account_holder_routes(Routes& routes) {
  routes.push_back({"POST", "/v1/ledger/account_holders", AuthKind::core, "ledger", create});
  routes.push_back({"GET", "/v1/ledger/account_holders", AuthKind::core, "ledger", list});
  routes.push_back({"GET", "/v1/ledger/account_holders/{id}", AuthKind::core, "ledger", show});
}

}  // namespace tesoro::api
