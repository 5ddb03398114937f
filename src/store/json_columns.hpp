#pragma once
// Nested parts of records (addresses, documents, people, merchants) are kept as JSON text columns,
// read and written whole. These read and write their fields.
#include <boost/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace tesoro::json_columns {

// The text, or null.
boost::json::value optional_json(const std::optional<std::string>& text);
// The string at `key`, or nullopt when absent or not a string.
std::optional<std::string> optional_text(const boost::json::object& object, std::string_view key);
// The string at `key`, or "".
std::string text(const boost::json::object& object, std::string_view key);

}  // namespace tesoro::json_columns
