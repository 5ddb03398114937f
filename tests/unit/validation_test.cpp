// api/validation: PATCH fields tell absent, null and a value apart; the shared field readers.
#include <gtest/gtest.h>

#include <limits>

#include "api/validation/fields.hpp"
#include "api/validation/readers.hpp"

using namespace tesoro;
using namespace tesoro::api;

namespace {

json::object parse(std::string_view text) { return parse_object(text).value(); }

}  // namespace

TEST(Patch, StringsTellAbsentNullAndValueApart) {
  json::object body = parse(R"({"nickname": null, "reference": "r-1"})");
  Problems problems;
  ObjectReader reader(body, "", problems);
  auto nickname = reader.patch_string("nickname");
  auto reference = reader.patch_string("reference");
  auto description = reader.patch_string("description");
  reader.reject_unknown();
  EXPECT_TRUE(problems.empty());
  EXPECT_TRUE(nickname.is_null());
  EXPECT_FALSE(nickname.is_absent() || nickname.has_value());
  ASSERT_TRUE(reference.has_value());
  EXPECT_EQ(reference.value(), "r-1");
  EXPECT_TRUE(description.is_absent());
  EXPECT_FALSE(description.is_null() || description.has_value());
}

TEST(Patch, AnEmptyStringIsAValueNotNull) {
  json::object body = parse(R"({"nickname": ""})");
  Problems problems;
  ObjectReader reader(body, "", problems);
  auto nickname = reader.patch_string("nickname");
  ASSERT_TRUE(nickname.has_value());
  EXPECT_EQ(nickname.value(), "");
}

TEST(Patch, IntegersAndObjects) {
  json::object body = parse(R"({"limit": 7, "cap": null, "rules": {"a": 1}, "extra": null})");
  Problems problems;
  ObjectReader reader(body, "", problems);
  auto limit = reader.patch_integer("limit", 1, 10);
  auto cap = reader.patch_integer("cap", 1, 10);
  auto missing = reader.patch_integer("missing", 1, 10);
  auto rules = reader.patch_object("rules");
  auto extra = reader.patch_object("extra");
  reader.reject_unknown();
  EXPECT_TRUE(problems.empty());
  ASSERT_TRUE(limit.has_value());
  EXPECT_EQ(limit.value(), 7);
  EXPECT_TRUE(cap.is_null());
  EXPECT_TRUE(missing.is_absent());
  ASSERT_TRUE(rules.has_value());
  EXPECT_EQ(rules.value()->at("a").as_int64(), 1);
  EXPECT_TRUE(extra.is_null());
}

TEST(Patch, MoneyTellsAbsentNullAndValueApart) {
  json::object body = parse(R"({"maximum": {"amount": 500, "currency": "COP"}, "minimum": null})");
  Problems problems;
  ObjectReader reader(body, "", problems);
  const std::vector<std::string> currencies = {"COP"};
  auto maximum = patch_money(reader, "maximum", currencies, problems);
  auto minimum = patch_money(reader, "minimum", currencies, problems);
  auto total = patch_money(reader, "total", currencies, problems);
  EXPECT_TRUE(problems.empty());
  ASSERT_TRUE(maximum.has_value());
  EXPECT_EQ(maximum.value().amount_minor, 500);
  EXPECT_EQ(maximum.value().currency, "COP");
  EXPECT_TRUE(minimum.is_null());
  EXPECT_TRUE(total.is_absent());
}

TEST(Patch, InvalidValuesAreProblemsWithTheirPaths) {
  json::object body = parse(
      R"({"nickname": 5, "limit": 11, "rules": [], "maximum": {"amount": 0, "currency": "USD"}})");
  Problems problems;
  ObjectReader reader(body, "", problems);
  EXPECT_TRUE(reader.patch_string("nickname").is_absent());
  EXPECT_TRUE(reader.patch_integer("limit", 1, 10).is_absent());
  EXPECT_TRUE(reader.patch_object("rules").is_absent());
  EXPECT_TRUE(patch_money(reader, "maximum", {"COP"}, problems).is_absent());
  Error error = problems.to_error();
  EXPECT_EQ(error.status, 400);
  std::vector<std::string> paths;
  for (const ErrorItem& item : error.errors) paths.push_back(item.path.value_or(""));
  EXPECT_EQ(paths, (std::vector<std::string>{"nickname", "limit", "rules", "maximum.amount",
                                             "maximum.currency"}));
}

TEST(Fields, SharedFormatChecks) {
  EXPECT_TRUE(is_country_code("CO"));
  EXPECT_FALSE(is_country_code("co"));
  EXPECT_FALSE(is_country_code("COL"));
  EXPECT_TRUE(is_phone_number("+573001234567"));
  EXPECT_FALSE(is_phone_number("+0123"));
  EXPECT_FALSE(is_phone_number("573001234567"));
  EXPECT_TRUE(is_email("ana@example.co"));
  EXPECT_FALSE(is_email("ana@example"));
  EXPECT_FALSE(is_email("a b@example.co"));
}

TEST(Fields, AddressUnderAnyKeyReportsPathsUnderThatKey) {
  json::object body = parse(R"({"billing_address": {"city": "", "country": "co", "line_1": "x",
                                "state": "s", "zip_code": "1", "floor": 3}})");
  Problems problems;
  ObjectReader reader(body, "", problems);
  auto address = read_address(reader, "billing_address", Need::required, problems);
  ASSERT_TRUE(address.has_value());
  std::vector<std::string> paths;
  for (const ErrorItem& item : problems.to_error().errors) paths.push_back(*item.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"billing_address.city", "billing_address.country",
                                             "billing_address.floor"}));
}
