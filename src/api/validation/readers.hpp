#pragma once
// Request validation that collects every problem with its path, then answers once:
// 400 validation_error when any problem is of that kind (listing all), else 422 missing_field.
#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "api/json.hpp"
#include "core/limits.hpp"
#include "core/time.hpp"

namespace tesoro::api {

class Problems {
 public:
  void invalid(std::string path, std::string message);
  void missing(std::string path);
  void add(const Error& error);  // every item of an error found elsewhere
  bool empty() const { return items_.empty(); }
  Error to_error() const;

 private:
  void push(ErrorItem item);
  std::vector<ErrorItem> items_;
  std::size_t not_listed_ = 0;
  bool any_invalid_ = false;
};

enum class Need { optional, required };

// A field of a PATCH body, which must tell three cases apart: absent (leave the value as it
// is), null (clear it) and a value (set it). A present but invalid value is recorded as a
// problem and reads as absent; the request is refused anyway.
template <class T>
class Patch {
 public:
  static Patch absent() { return Patch(State::absent, std::nullopt); }
  static Patch null() { return Patch(State::null, std::nullopt); }
  static Patch of(T value) { return Patch(State::value, std::move(value)); }
  Patch() : Patch(State::absent, std::nullopt) {}

  bool is_absent() const { return state_ == State::absent; }
  bool is_null() const { return state_ == State::null; }
  bool has_value() const { return state_ == State::value; }
  const T& value() const { return *value_; }

 private:
  enum class State { absent, null, value };
  Patch(State state, std::optional<T> value) : state_(state), value_(std::move(value)) {}
  State state_;
  std::optional<T> value_;
};

// Reads the fields of one JSON object; every read marks the key as known, and
// reject_unknown() reports the rest. Paths are dotted: "transfers.3.amount.amount".
class ObjectReader {
 public:
  ObjectReader(const json::object& object, std::string prefix, Problems& problems)
      : object_(object), prefix_(std::move(prefix)), problems_(problems),
        known_(object.size(), false) {}

  std::string path(std::string_view key) const;
  // Absent and null are the same for optional fields.
  std::optional<std::string> string(std::string_view key, Need need,
                                    std::size_t max_chars = limits::k_string_max_chars);
  std::optional<std::int64_t> integer(std::string_view key, Need need, std::int64_t min,
                                      std::int64_t max);
  std::optional<bool> boolean(std::string_view key, Need need);
  std::optional<std::string> one_of(std::string_view key, Need need,
                                    const std::vector<std::string>& allowed);
  // An identifier with the given prefix (pattern ^[a-z]{2,7}_[A-Za-z0-9_-]{22}$).
  std::optional<std::string> id(std::string_view key, Need need, std::string_view prefix);
  const json::object* object(std::string_view key, Need need);
  const json::array* array(std::string_view key, Need need);
  // PATCH forms of the readers above: absent, null or a valid value.
  Patch<std::string> patch_string(std::string_view key,
                                  std::size_t max_chars = limits::k_string_max_chars);
  // Whether the body has `key` at all (null included); marks it known.
  bool present(std::string_view key);
  // Whether the body has `key` set to null; marks it known.
  bool is_null(std::string_view key);
  // A PATCH read of any field: absent or null from the body itself, else what `read` (a reader
  // of this object returning std::optional<T>) makes of the value.
  template <class T, class Read>
  Patch<T> patch(std::string_view key, Read read) {
    if (!present(key)) return Patch<T>::absent();
    if (is_null(key)) return Patch<T>::null();
    auto value = read();
    return value ? Patch<T>::of(std::move(*value)) : Patch<T>::absent();
  }
  void reject_unknown();

 private:
  const json::value* find(std::string_view key, Need need);
  // The object's entry with this key (or end()), marked as read.
  json::object::const_iterator entry(std::string_view key);
  const json::object& object_;
  std::string prefix_;
  Problems& problems_;
  // Which of the object's entries a read asked for, by their place in it: reject_unknown()
  // reports the others. Kept inline for a request's few keys (a batch reads thousands of
  // objects: a set of key names allocated a node per key read).
  boost::container::small_vector<bool, 32> known_;
};

// Free text rules shared by every string field: valid UTF-8 is already guaranteed by the parser;
// control characters (NUL included) are refused.
// An identifier taken from the path: a problem at `path` unless it has the prefix.
std::string check_path_id(std::string_view value, std::string_view prefix, std::string_view what,
                          Problems& problems, std::string path = "id");

bool is_clean_text(std::string_view text);
bool is_valid_utf8(std::string_view text);
// Characters (code points) of valid UTF-8: what every "at most N characters" counts.
std::size_t utf8_length(std::string_view text);

// The body of a POST that takes none (a replay, a secret rotation): absent, or an empty JSON
// object (every field in it is unknown, a problem). A body that is not an object is its error.
std::optional<Error> read_no_body(std::string_view body, Problems& problems);

// Query string parameters (already split), with the same problem collection.
class QueryReader {
 public:
  QueryReader(std::string_view query, Problems& problems);
  std::optional<std::string> string(std::string_view key);
  std::optional<std::int64_t> integer(std::string_view key, std::int64_t min, std::int64_t max);
  std::optional<std::string> one_of(std::string_view key, const std::vector<std::string>& allowed);
  // An ISO 8601 date-time with a zone (time::parse_iso), such as `performed_at[gte]`.
  std::optional<time::Micros> timestamp(std::string_view key);
  // Whether the query has `key` at all (does not mark it known).
  bool present(std::string_view key) const;
  void reject_unknown();

 private:
  std::vector<std::pair<std::string, std::string>> params_;
  Problems& problems_;
  std::set<std::string, std::less<>> known_;
};

struct Money {
  std::int64_t amount_minor = 0;
  std::string currency;
};
// {"amount": <integer minor units, 1..2^53-1 (limits::k_amount_max_minor)>, "currency": one of `currencies`}.
std::optional<Money> read_money(ObjectReader& reader, std::string_view key, Need need,
                                const std::vector<std::string>& currencies, Problems& problems);
Patch<Money> patch_money(ObjectReader& reader, std::string_view key,
                         const std::vector<std::string>& currencies, Problems& problems);
json::object money_json(std::int64_t amount_minor, const std::string& currency);

struct Page {
  std::int64_t number = 1;
  std::int64_t size = limits::k_page_size_default;
  std::int64_t offset() const { return (number - 1) * size; }
};
Page read_page(QueryReader& query);
// Pages of page.size needed for total_items (0 for none).
std::int64_t total_pages(const Page& page, std::int64_t total_items);

}  // namespace tesoro::api
