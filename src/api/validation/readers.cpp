#include "api/validation/readers.hpp"

#include <boost/url/params_view.hpp>
#include <boost/url/parse_query.hpp>

#include <algorithm>
#include <limits>

#include "core/ids.hpp"

namespace tesoro::api {

namespace {
const ErrorKind& k_invalid = error_kind(ErrorCode::validation_error);
const ErrorKind& k_missing = error_kind(ErrorCode::missing_field);
}  // namespace

void Problems::push(ErrorItem item) {
  if (item.error_code != k_missing.name) any_invalid_ = true;
  // A small body can hold thousands of bad fields; the answer lists a bounded number of them.
  if (items_.size() < limits::k_problems_listed_max) {
    items_.push_back(std::move(item));
  } else {
    ++not_listed_;
  }
}

void Problems::invalid(std::string path, std::string message) {
  push({std::string(k_invalid.name), std::move(message), std::move(path), {}});
}

void Problems::missing(std::string path) {
  push({std::string(k_missing.name), std::string(k_missing.message), std::move(path), {}});
}

void Problems::add(const Error& error) {
  for (const ErrorItem& item : error.errors) push(item);
}

Error Problems::to_error() const {
  Error error;
  const ErrorKind& kind = any_invalid_ ? k_invalid : k_missing;
  error.code = kind.code;
  error.message = kind.summary;
  error.errors = items_;
  // The first item names the status's kind: validation problems before missing fields.
  std::stable_partition(error.errors.begin(), error.errors.end(),
                        [](const ErrorItem& item) { return item.error_code != k_missing.name; });
  if (not_listed_ > 0) {
    error.errors.push_back({std::string(kind.name),
                            std::to_string(not_listed_) + " more problems not listed",
                            std::nullopt,
                            {}});
  }
  return error;
}

std::string check_path_id(std::string_view value, std::string_view prefix, std::string_view what,
                          Problems& problems, std::string path) {
  if (!ids::has_prefix(value, prefix)) {
    problems.invalid(std::move(path), "must be " + std::string(what) + " id (" +
                                          std::string(prefix) + "_...)");
  }
  return std::string(value);
}

std::optional<Error> read_no_body(std::string_view body, Problems& problems) {
  if (body.empty()) return std::nullopt;
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  ObjectReader reader(parsed.value(), "", problems);
  reader.reject_unknown();
  return std::nullopt;
}

bool is_clean_text(std::string_view text) {
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

bool is_valid_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    std::size_t extra;
    std::uint32_t code;
    if (c < 0x80) { ++i; continue; }
    else if ((c & 0xE0) == 0xC0) { extra = 1; code = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { extra = 2; code = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { extra = 3; code = c & 0x07; }
    else return false;
    if (i + extra >= text.size()) return false;  // truncated sequence
    for (std::size_t k = 1; k <= extra; ++k) {
      unsigned char next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    static constexpr std::uint32_t k_smallest[] = {0, 0x80, 0x800, 0x10000};
    if (code < k_smallest[extra] || (code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF) {
      return false;
    }
    i += extra + 1;
  }
  return true;
}

std::size_t utf8_length(std::string_view text) {
  std::size_t count = 0;
  for (unsigned char c : text) count += (c & 0xC0) != 0x80;
  return count;
}

std::string ObjectReader::path(std::string_view key) const {
  return prefix_.empty() ? std::string(key) : prefix_ + "." + std::string(key);
}

json::object::const_iterator ObjectReader::entry(std::string_view key) {
  auto found = object_.find(key);
  if (found != object_.end()) known_[static_cast<std::size_t>(found - object_.begin())] = true;
  return found;
}

const json::value* ObjectReader::find(std::string_view key, Need need) {
  auto found = entry(key);
  if (found == object_.end() || found->value().is_null()) {
    if (need == Need::required) problems_.missing(path(key));
    return nullptr;
  }
  return &found->value();
}

std::optional<std::string> ObjectReader::string(std::string_view key, Need need,
                                                std::size_t max_chars) {
  const json::value* value = find(key, need);
  if (!value) return std::nullopt;
  if (!value->is_string()) {
    problems_.invalid(path(key), "must be a string");
    return std::nullopt;
  }
  std::string_view text = value->get_string();
  if (!is_clean_text(text)) {
    problems_.invalid(path(key), "must not contain control characters");
    return std::nullopt;
  }
  if (utf8_length(text) > max_chars) {
    problems_.invalid(path(key), "must have at most " + std::to_string(max_chars) + " characters");
    return std::nullopt;
  }
  return std::string(text);
}

std::optional<std::int64_t> ObjectReader::integer(std::string_view key, Need need,
                                                  std::int64_t min, std::int64_t max) {
  const json::value* value = find(key, need);
  if (!value) return std::nullopt;
  std::int64_t number;
  if (value->is_int64()) {
    number = value->get_int64();
  } else if (value->is_uint64()) {  // above 2^63 - 1: out of range for every field
    problems_.invalid(path(key), "must be at most " + std::to_string(max));
    return std::nullopt;
  } else {
    problems_.invalid(path(key), "must be an integer");
    return std::nullopt;
  }
  if (number < min || number > max) {
    problems_.invalid(path(key), "must be between " + std::to_string(min) + " and " +
                                     std::to_string(max));
    return std::nullopt;
  }
  return number;
}

std::optional<bool> ObjectReader::boolean(std::string_view key, Need need) {
  const json::value* value = find(key, need);
  if (!value) return std::nullopt;
  if (!value->is_bool()) {
    problems_.invalid(path(key), "must be true or false");
    return std::nullopt;
  }
  return value->get_bool();
}

std::optional<std::string> ObjectReader::one_of(std::string_view key, Need need,
                                                const std::vector<std::string>& allowed) {
  auto text = string(key, need);
  if (!text) return std::nullopt;
  for (const std::string& candidate : allowed) {
    if (candidate == *text) return text;
  }
  std::string list;
  for (const std::string& candidate : allowed) list += (list.empty() ? "" : ", ") + candidate;
  problems_.invalid(path(key), "must be one of: " + list);
  return std::nullopt;
}

std::optional<std::string> ObjectReader::id(std::string_view key, Need need,
                                            std::string_view prefix) {
  auto text = string(key, need, limits::k_id_field_max_chars);
  if (!text) return std::nullopt;
  if (!ids::has_prefix(*text, prefix)) {
    problems_.invalid(path(key), "must be an identifier like " + std::string(prefix) +
                                     "_ followed by " +
                                     std::to_string(limits::k_id_chars_after_prefix) +
                                     " characters");
    return std::nullopt;
  }
  return text;
}

const json::object* ObjectReader::object(std::string_view key, Need need) {
  const json::value* value = find(key, need);
  if (!value) return nullptr;
  if (!value->is_object()) {
    problems_.invalid(path(key), "must be an object");
    return nullptr;
  }
  return &value->get_object();
}

const json::array* ObjectReader::array(std::string_view key, Need need) {
  const json::value* value = find(key, need);
  if (!value) return nullptr;
  if (!value->is_array()) {
    problems_.invalid(path(key), "must be an array");
    return nullptr;
  }
  return &value->get_array();
}

bool ObjectReader::present(std::string_view key) { return entry(key) != object_.end(); }

bool ObjectReader::is_null(std::string_view key) {
  auto found = entry(key);
  return found != object_.end() && found->value().is_null();
}

Patch<std::string> ObjectReader::patch_string(std::string_view key, std::size_t max_chars) {
  return patch<std::string>(key, [&] { return string(key, Need::optional, max_chars); });
}

void ObjectReader::reject_unknown() {
  for (std::size_t i = 0; i < object_.size(); ++i) {
    if (!known_[i]) problems_.invalid(path(object_.begin()[i].key()), "unknown field");
  }
}

QueryReader::QueryReader(std::string_view raw_query, Problems& problems) : problems_(problems) {
  // Filters are named like `performed_at[gte]`, and most clients send the brackets as they are,
  // although RFC 3986 wants them percent-encoded in a query: accept both spellings.
  std::string query;
  query.reserve(raw_query.size());
  for (char c : raw_query) {
    if (c == '[') {
      query += "%5B";
    } else if (c == ']') {
      query += "%5D";
    } else {
      query += c;
    }
  }
  auto parsed = boost::urls::parse_query(query);
  if (!parsed) {
    problems_.invalid("query", "malformed query string");
    return;
  }
  for (auto param : boost::urls::params_view(query)) {  // decodes %XX and '+' as space
    // A decoded name goes back to the client as a `path`: it must be text we can echo.
    if (!is_valid_utf8(param.key) || !is_clean_text(param.key) || !is_valid_utf8(param.value)) {
      problems_.invalid("query", "parameters must be printable UTF-8 text");
      params_.clear();
      return;
    }
    params_.emplace_back(param.key, param.value);
  }
}

std::optional<std::string> QueryReader::string(std::string_view key) {
  known_.emplace(key);
  const std::string* found = nullptr;
  for (const auto& [name, value] : params_) {
    if (name != key) continue;
    if (found) {
      problems_.invalid(std::string(key), "must be given once");
      return std::nullopt;
    }
    found = &value;
  }
  if (!found) return std::nullopt;
  if (!is_clean_text(*found) || utf8_length(*found) > limits::k_string_max_chars) {
    problems_.invalid(std::string(key), "must be printable text of at most " +
                                            std::to_string(limits::k_string_max_chars) +
                                            " characters");
    return std::nullopt;
  }
  return *found;
}

std::optional<std::int64_t> QueryReader::integer(std::string_view key, std::int64_t min,
                                                 std::int64_t max) {
  auto text = string(key);
  if (!text) return std::nullopt;
  bool digits = !text->empty() && text->size() <= limits::k_query_integer_max_digits;
  for (char c : *text) digits = digits && c >= '0' && c <= '9';
  std::int64_t number = digits ? std::stoll(*text) : 0;
  if (!digits || number < min || number > max) {
    problems_.invalid(std::string(key), "must be an integer between " + std::to_string(min) +
                                            " and " + std::to_string(max));
    return std::nullopt;
  }
  return number;
}

std::optional<std::string> QueryReader::one_of(std::string_view key,
                                               const std::vector<std::string>& allowed) {
  auto text = string(key);
  if (!text) return std::nullopt;
  for (const std::string& candidate : allowed) {
    if (candidate == *text) return text;
  }
  std::string list;
  for (const std::string& candidate : allowed) list += (list.empty() ? "" : ", ") + candidate;
  problems_.invalid(std::string(key), "must be one of: " + list);
  return std::nullopt;
}

std::optional<time::Micros> QueryReader::timestamp(std::string_view key) {
  auto text = string(key);
  if (!text) return std::nullopt;
  auto at = time::parse_iso(*text);
  if (!at) problems_.invalid(std::string(key), "must be an ISO 8601 date-time with a zone");
  return at;
}

bool QueryReader::present(std::string_view key) const {
  for (const auto& param : params_) {
    if (param.first == key) return true;
  }
  return false;
}

void QueryReader::reject_unknown() {
  std::set<std::string, std::less<>> reported;
  for (const auto& [name, value] : params_) {
    if (!known_.contains(std::string_view(name)) && reported.insert(name).second) {
      problems_.invalid(name, "unknown parameter");
    }
  }
}

std::optional<Money> read_money(ObjectReader& reader, std::string_view key, Need need,
                                const std::vector<std::string>& currencies, Problems& problems) {
  const json::object* object = reader.object(key, need);
  if (!object) return std::nullopt;
  ObjectReader money(*object, reader.path(key), problems);
  auto amount = money.integer("amount", Need::required, 1, limits::k_amount_max_minor);
  auto currency = money.one_of("currency", Need::required, currencies);
  money.reject_unknown();
  if (!amount || !currency) return std::nullopt;
  return Money{*amount, *currency};
}

Patch<Money> patch_money(ObjectReader& reader, std::string_view key,
                         const std::vector<std::string>& currencies, Problems& problems) {
  return reader.patch<Money>(
      key, [&] { return read_money(reader, key, Need::optional, currencies, problems); });
}

json::object money_json(std::int64_t amount_minor, const std::string& currency) {
  return json::object{{"amount", amount_minor}, {"currency", currency}};
}

Page read_page(QueryReader& query) {
  Page page;
  if (auto number = query.integer("page_number", 1, std::numeric_limits<std::int32_t>::max())) {
    page.number = *number;
  }
  if (auto size = query.integer("page_size", limits::k_page_size_min, limits::k_page_size_max)) {
    page.size = *size;
  }
  return page;
}

std::int64_t total_pages(const Page& page, std::int64_t total_items) {
  return (total_items + page.size - 1) / page.size;
}

}  // namespace tesoro::api
