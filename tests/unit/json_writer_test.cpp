#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <cstdint>
#include <limits>
#include <string>

#include "core/json_writer.hpp"

using namespace tesoro;
namespace json = boost::json;

TEST(JsonWriter, EveryByteIsWrittenAsBoostJsonSerialisesIt) {
  for (int c = 0; c < 256; ++c) {
    std::string text = std::string("a") + static_cast<char>(c) + "b";
    json_text::Writer writer;
    writer.string(text);
    EXPECT_EQ(writer.text(), json::serialize(json::value(json::string(text)))) << "byte " << c;
  }
  const std::string mixed = "Caf\xC3\xA9 \"quoted\" back\\slash\n\ttab \x01\x1F\x7F end";
  json_text::Writer writer;
  writer.string(mixed);
  EXPECT_EQ(writer.text(), json::serialize(json::value(json::string(mixed))));
}

TEST(JsonWriter, NestedObjectsArraysAndNumbersMatchBoostJson) {
  json::object expected{
      {"id", "ctx_1"},
      {"amount", json::object{{"amount", std::numeric_limits<std::int64_t>::min()},
                              {"currency", "COP"}}},
      {"max", std::numeric_limits<std::int64_t>::max()},
      {"zero", 0},
      {"none", nullptr},
      {"empty_object", json::object{}},
      {"empty_array", json::array{}},
      {"history", json::array{json::object{{"type", "a"}, {"n", -5}},
                              json::object{{"type", "b"}, {"n", 7}}}},
      {"raw", json::object{{"k", "v"}}},
      {"last", "x"}};
  json_text::Writer writer;
  writer.begin_object()
      .key("id").string("ctx_1")
      .key("amount").begin_object()
      .key("amount").integer(std::numeric_limits<std::int64_t>::min())
      .key("currency").string("COP")
      .end_object()
      .key("max").integer(std::numeric_limits<std::int64_t>::max())
      .key("zero").integer(0)
      .key("none").null()
      .key("empty_object").begin_object().end_object()
      .key("empty_array").begin_array().end_array()
      .key("history").begin_array();
  writer.begin_object().key("type").string("a").key("n").integer(-5).end_object();
  writer.begin_object().key("type").string("b").key("n").integer(7).end_object();
  writer.end_array().key("raw").raw(R"({"k":"v"})").key("last").string("x").end_object();
  EXPECT_EQ(writer.take(), json::serialize(expected));
}
