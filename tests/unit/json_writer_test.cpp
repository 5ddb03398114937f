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

TEST(JsonWriter, LongStringsAreScannedEightBytesAtATimeWithoutMissingAByte) {
  // Long plain runs are checked 8 bytes at a time: every byte at every offset of a 40-byte plain
  // string (within, across and after the 8-byte blocks), and random long strings.
  const std::string plain = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNk";
  for (int c = 0; c < 256; ++c) {
    for (std::size_t at = 0; at < plain.size(); ++at) {
      std::string text = plain;
      text[at] = static_cast<char>(c);
      json_text::Writer writer;
      writer.string(text);
      ASSERT_EQ(writer.text(), json::serialize(json::value(json::string(text))))
          << "byte " << c << " at " << at;
    }
  }
  std::uint64_t state = 2026;
  for (int round = 0; round < 200; ++round) {
    std::string text;
    const std::size_t size = 1 + round * 7;
    for (std::size_t i = 0; i < size; ++i) {
      state = state * 6364136223846793005u + 1442695040888963407u;
      const auto r = static_cast<unsigned>(state >> 33);
      // Mostly base64-like text, now and then a byte to escape or a high byte.
      text += r % 16 == 0 ? static_cast<char>(r >> 8) : "ABCxyz019+/="[r % 12];
    }
    json_text::Writer writer;
    writer.string(text);
    ASSERT_EQ(writer.text(), json::serialize(json::value(json::string(text)))) << "round " << round;
  }
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

// Members written elsewhere go in as the object's own, separated as keys written in place are:
// first, between keys, after a nested object, and last.
TEST(JsonWriter, MembersMadeElsewhereJoinTheOpenObject) {
  json_text::Writer writer;
  writer.begin_object().members(R"("a":1,"b":"two")").key("c").begin_object();
  writer.members(R"("inner":null)").end_object().members(R"("d":[3])");
  writer.key("e").string("five").members(R"("f":{"g":6})").end_object();
  EXPECT_EQ(writer.take(),
            R"({"a":1,"b":"two","c":{"inner":null},"d":[3],"e":"five","f":{"g":6}})");
}

// Keys and strings up to 64 bytes go through a buffer of their own, longer ones are appended in
// parts: both sides of that length, as keys, as values after keys, and as array elements.
TEST(JsonWriter, KeysAndStringsOnBothSidesOfTheShortLengthMatchBoostJson) {
  for (std::size_t size : {0u, 1u, 8u, 63u, 64u, 65u, 200u}) {
    const std::string name(size, 'k');
    const std::string plain(size, 'v');
    std::string escaped = plain;
    if (!escaped.empty()) escaped.back() = '"';
    json::object expected{{name, plain}, {"list", json::array{plain.c_str(), escaped.c_str(), ""}},
                          {name + "x", escaped}};
    json_text::Writer writer;
    writer.begin_object().key(name).string(plain).key("list").begin_array();
    writer.string(plain).string(escaped).string("").end_array();
    writer.key(name + "x").string(escaped).end_object();
    EXPECT_EQ(writer.take(), json::serialize(expected)) << "size " << size;
  }
}
