#include "store/json_columns.hpp"

namespace tesoro::json_columns {

boost::json::value optional_json(const std::optional<std::string>& text) {
  return text ? boost::json::value(*text) : boost::json::value(nullptr);
}

std::optional<std::string> optional_text(const boost::json::object& object, std::string_view key) {
  const boost::json::value* value = object.if_contains(key);
  if (!value || !value->is_string()) return std::nullopt;
  return std::string(value->get_string());
}

std::string text(const boost::json::object& object, std::string_view key) {
  return optional_text(object, key).value_or("");
}

}  // namespace tesoro::json_columns
