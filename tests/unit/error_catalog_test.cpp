// The error catalog: one row per code, each with an error status, each documented.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/error.hpp"

namespace tesoro::api {
extern const char* const k_openapi_yaml;  // openapi/tesoro.yaml, compiled in
}

using namespace tesoro;

namespace {

// `word` appears in `text` not as a part of a longer identifier.
bool mentions(std::string_view text, std::string_view word) {
  auto is_identifier = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  };
  for (std::size_t at = text.find(word); at != std::string_view::npos;
       at = text.find(word, at + 1)) {
    bool starts = at == 0 || !is_identifier(text[at - 1]);
    std::size_t end = at + word.size();
    bool ends = end == text.size() || !is_identifier(text[end]);
    if (starts && ends) return true;
  }
  return false;
}

}  // namespace

TEST(ErrorCatalog, CodesAreUniqueWithErrorStatusesAndMessages) {
  std::set<std::string_view> names;
  for (const ErrorKind& kind : error_catalog()) {
    EXPECT_TRUE(names.insert(kind.name).second) << kind.name << " is listed twice";
    EXPECT_GE(kind.status, 400) << kind.name;
    EXPECT_LE(kind.status, 599) << kind.name;
    EXPECT_FALSE(kind.message.empty()) << kind.name;
    EXPECT_STRNE(reason_phrase(kind.status), "Error") << kind.name << ": status without a phrase";
  }
  EXPECT_EQ(error_kind(ErrorCode::account_invalid_state).status, 409);
  EXPECT_EQ(error_kind(ErrorCode::account_invalid_state).message,
            "the account's state does not allow this operation");
}

TEST(ErrorCatalog, EveryCodeIsInTheOpenApiDescription) {
  std::string_view yaml = api::k_openapi_yaml;
  for (const ErrorKind& kind : error_catalog()) {
    EXPECT_TRUE(mentions(yaml, kind.name)) << kind.name << " is not in openapi/tesoro.yaml";
  }
}

TEST(ErrorCatalog, ConstructorTakesTheCodeWithOptionalPathAndMessage) {
  Error plain = errors::of(ErrorCode::insufficient_funds);
  EXPECT_EQ(plain.status, 422);
  EXPECT_EQ(plain.first_code(), "insufficient_funds");
  EXPECT_EQ(plain.errors[0].message, "the account's available balance is too low");
  EXPECT_EQ(plain.message, plain.errors[0].message);
  EXPECT_FALSE(plain.errors[0].path.has_value());

  Error detailed = errors::of(ErrorCode::validation_error, "amount.amount", "must be positive");
  EXPECT_EQ(detailed.status, 400);
  EXPECT_EQ(detailed.message, "malformed request");  // the fixed summary of the kind
  EXPECT_EQ(detailed.errors[0].message, "must be positive");
  EXPECT_EQ(detailed.errors[0].path, "amount.amount");
}
