// api/validation: PATCH fields tell absent, null and a value apart; the shared field readers.
#include <gtest/gtest.h>

#include <limits>

#include "api/error_status.hpp"
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
      R"({"nickname": 5, "maximum": {"amount": 0, "currency": "USD"}})");
  Problems problems;
  ObjectReader reader(body, "", problems);
  EXPECT_TRUE(reader.patch_string("nickname").is_absent());
  EXPECT_TRUE(patch_money(reader, "maximum", {"COP"}, problems).is_absent());
  Error error = problems.to_error();
  EXPECT_EQ(tesoro::api::http_status(error), 400);
  std::vector<std::string> paths;
  for (const ErrorItem& item : error.errors) paths.push_back(item.path.value_or(""));
  EXPECT_EQ(paths, (std::vector<std::string>{"nickname", "maximum.amount", "maximum.currency"}));
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

namespace {

// The one problem a body parse_object refuses has, as "path: message".
std::string refusal(std::string_view body) {
  auto parsed = parse_object(body);
  if (parsed) return "accepted";
  const Error& error = parsed.error();
  if (error.errors.size() != 1) return "problems: " + std::to_string(error.errors.size());
  return error.errors[0].path.value_or("") + ": " + error.errors[0].message;
}

}  // namespace

TEST(ParseObject, TheDocumentIsWhatBoostJsonParses) {
  const std::string body =
      R"({"a":1,"b":-2,"c":18446744073709551615,"d":1.5e3,"e":true,"f":false,"g":null,)"
      R"("h":"x\u00e9\"y","i":[1,[2,{"j":[]}],{}],"k":{"l":{"m":"n"}},"o\u0070":"q"} )";
  auto parsed = parse_object(body);
  ASSERT_TRUE(parsed) << refusal(body);
  EXPECT_EQ(json::value(parsed.value()), json::parse(body));
  EXPECT_EQ(json::serialize(parsed.value()), json::serialize(json::parse(body)));
}

TEST(ParseObject, AKeyTwiceInOneObjectIsRefusedAndNamed) {
  EXPECT_EQ(refusal(R"({"a":1,"b":2,"a":3})"), "a: key \"a\" appears twice in one object");
  EXPECT_EQ(refusal(R"({"x":{"a":1,"b":{"c":1},"a":2}})"),
            "a: key \"a\" appears twice in one object");
  // Written with an escape (the parser gives such a key in parts), it is still the same key.
  EXPECT_EQ(refusal(R"({"ab":1,"a\u0062":2})"), "ab: key \"ab\" appears twice in one object");
  // The first key found twice is the one named.
  EXPECT_EQ(refusal(R"({"b":1,"a":1,"a":2,"b":2})"), "a: key \"a\" appears twice in one object");
}

TEST(ParseObject, TheSameKeyInOtherObjectsIsNoDuplicate) {
  // Objects one after another at the same depth, nested in each other, and in arrays.
  EXPECT_EQ(refusal(R"({"a":{"a":{"a":1}},"b":{"a":2,"b":3},"c":[{"a":1,"b":2},{"b":1,"a":2}]})"),
            "accepted");
  // An object after a larger one at its depth starts with no keys of the one before.
  EXPECT_EQ(refusal(R"({"l":[{"a":1,"b":2,"c":3,"d":4},{"d":1}],"m":{"c":1}})"), "accepted");
}

TEST(ParseObject, ObjectsOfManyKeysAreCheckedWhole) {
  auto object_of = [](int keys, const std::string& last) {
    std::string body = "{";
    for (int i = 0; i < keys; ++i) {
      body += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
    }
    return body + "\"" + last + "\":0}";
  };
  EXPECT_EQ(refusal(object_of(100, "other")), "accepted");
  EXPECT_EQ(refusal(object_of(100, "k3")), "k3: key \"k3\" appears twice in one object");
  EXPECT_EQ(refusal(object_of(100, "k31")), "k31: key \"k31\" appears twice in one object");
  EXPECT_EQ(refusal(object_of(100, "k32")), "k32: key \"k32\" appears twice in one object");
  EXPECT_EQ(refusal(object_of(100, "k99")), "k99: key \"k99\" appears twice in one object");
  // After an object of many keys, the next one at its depth has none of them.
  EXPECT_EQ(refusal("{\"x\":[" + object_of(50, "z") + ",{\"k40\":1,\"k2\":2}]}"), "accepted");
  EXPECT_EQ(refusal("{\"x\":[" + object_of(50, "z") + "," + object_of(40, "k45") + "]}"),
            "accepted");
  auto parsed = parse_object(object_of(5000, "last"));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed.value().size(), 5001U);
}

TEST(ParseObject, OnlyAJsonObjectWithNothingAfterItIsAccepted) {
  EXPECT_EQ(refusal("{} \n"), "accepted");
  EXPECT_EQ(refusal("[]"), ": body must be a JSON object");
  EXPECT_EQ(refusal("{}x").rfind(": body is not valid JSON: ", 0), 0U) << refusal("{}x");
  EXPECT_EQ(refusal(R"({"a":1}{})").rfind(": body is not valid JSON: ", 0), 0U);
  // A body that is not JSON is refused as such, even with a key twice before the fault.
  EXPECT_EQ(refusal(R"({"a":1,"a":2,)").rfind(": body is not valid JSON: ", 0), 0U);
  EXPECT_EQ(refusal(std::string(33, '[')).rfind(": body is not valid JSON: ", 0), 0U);
}

TEST(ParseObject, TheDocumentCanComeFromTheCallersArena) {
  const std::string body = R"({"a":[1,{"b":"a string longer than any inline one"}],"c":{"d":2}})";
  json::monotonic_resource arena;
  auto parsed = parse_object(body, &arena);
  ASSERT_TRUE(parsed) << refusal(body);
  EXPECT_EQ(json::value(parsed.value()), json::parse(body));
  EXPECT_EQ(parsed.value().storage().get(), &arena);
  EXPECT_EQ(parsed.value().at("a").as_array()[1].as_object().storage().get(), &arena);
  // Without one, the heap's default storage.
  EXPECT_EQ(parse(body).storage().get(), json::storage_ptr().get());
}

namespace {
// The paths of a reader's problems, in order.
std::vector<std::string> problem_paths(const Problems& problems) {
  std::vector<std::string> paths;
  if (problems.empty()) return paths;
  for (const ErrorItem& item : problems.to_error().errors) paths.push_back(item.path.value_or(""));
  return paths;
}
}  // namespace

TEST(ObjectReader, FieldsNoReadAskedForAreUnknownWhateverTheReadFound) {
  json::object body = parse(
      R"({"text":"x","flag":true,"gone":null,"extra":1,"nested":{"in":1,"out":2},"more":[]})");
  Problems problems;
  ObjectReader reader(body, "item", problems);
  EXPECT_EQ(reader.string("text", Need::required), "x");
  EXPECT_TRUE(reader.present("flag"));           // asked whether present: known
  EXPECT_TRUE(reader.is_null("gone"));           // asked whether null: known
  EXPECT_FALSE(reader.present("absent"));        // asked, not there: nothing to report
  EXPECT_EQ(reader.string("also_absent", Need::optional), std::nullopt);
  const json::object* nested = reader.object("nested", Need::required);
  ASSERT_NE(nested, nullptr);
  ObjectReader inner(*nested, reader.path("nested"), problems);
  EXPECT_EQ(inner.integer("in", Need::required, 0, 10), 1);
  inner.reject_unknown();
  reader.reject_unknown();
  EXPECT_EQ(problem_paths(problems),
            (std::vector<std::string>{"item.nested.out", "item.extra", "item.more"}));
}

TEST(ObjectReader, UnknownFieldsAreFoundInObjectsOfManyKeys) {
  // More keys than the reader keeps inline.
  std::string body = "{";
  for (int i = 0; i < 70; ++i) {
    body += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
  }
  body += "}";
  json::object object = parse(body);
  Problems problems;
  ObjectReader reader(object, "", problems);
  for (int i = 0; i < 70; ++i) {
    if (i == 3 || i == 66) continue;
    EXPECT_TRUE(reader.present("k" + std::to_string(i)));
  }
  reader.reject_unknown();
  EXPECT_EQ(problem_paths(problems), (std::vector<std::string>{"k3", "k66"}));
}
