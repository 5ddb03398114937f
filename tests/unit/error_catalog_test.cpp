// The error catalog: one row per code, each with an error status, each documented.
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <set>
#include <string>

#include "api/error_status.hpp"
#include "core/error.hpp"
#include "http/status.hpp"

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
    const int status = api::http_status(kind.code);
    EXPECT_GE(status, 400) << kind.name;
    EXPECT_LE(status, 599) << kind.name;
    EXPECT_FALSE(kind.message.empty()) << kind.name;
    EXPECT_STRNE(http::reason_phrase(status), "Error") << kind.name << ": status without a phrase";
  }
  EXPECT_EQ(api::http_status(ErrorCode::account_invalid_state), 409);
  EXPECT_EQ(error_kind(ErrorCode::account_invalid_state).message,
            "the account's state does not allow this operation");
}

TEST(ErrorCatalog, EveryCodeIsInTheOpenApiDescription) {
  std::string_view yaml = api::k_openapi_yaml;
  for (const ErrorKind& kind : error_catalog()) {
    EXPECT_TRUE(mentions(yaml, kind.name)) << kind.name << " is not in openapi/tesoro.yaml";
  }
}

// The description's catalogue ("**Error codes.** ... 400 `validation_error`, ...; 401 ...") lists
// every code under its status: each backquoted code belongs to the status number before it.
TEST(ErrorCatalog, TheDescriptionsCatalogueListsEveryCodeWithItsStatus) {
  std::string_view yaml = api::k_openapi_yaml;
  const std::size_t start = yaml.find("**Error codes.**");
  ASSERT_NE(start, std::string_view::npos);
  const std::size_t end = yaml.find("**", start + std::string_view("**Error codes.**").size());
  const std::string_view catalogue = yaml.substr(start, end - start);
  std::map<std::string, int, std::less<>> listed;
  int status = 0;
  for (std::size_t at = 0; at < catalogue.size(); ++at) {
    if (catalogue[at] == '`') {
      const std::size_t close = catalogue.find('`', at + 1);
      ASSERT_NE(close, std::string_view::npos);
      listed.emplace(std::string(catalogue.substr(at + 1, close - at - 1)), status);
      at = close;
    } else if (std::isdigit(static_cast<unsigned char>(catalogue[at])) && at + 3 <= catalogue.size() &&
               std::isdigit(static_cast<unsigned char>(catalogue[at + 1])) &&
               std::isdigit(static_cast<unsigned char>(catalogue[at + 2]))) {
      status = std::stoi(std::string(catalogue.substr(at, 3)));
      at += 2;
    }
  }
  for (const ErrorKind& kind : error_catalog()) {
    auto found = listed.find(kind.name);
    if (found == listed.end()) {
      ADD_FAILURE() << kind.name << " is not in the description's catalogue of error codes";
    } else {
      EXPECT_EQ(found->second, api::http_status(kind.code))
          << kind.name << " is listed under another status";
    }
  }
}

TEST(ErrorCatalog, ConstructorTakesTheCodeWithOptionalPathAndMessage) {
  Error plain = errors::of(ErrorCode::insufficient_funds);
  EXPECT_EQ(plain.code, ErrorCode::insufficient_funds);
  EXPECT_EQ(api::http_status(plain), 422);
  EXPECT_EQ(plain.first_code(), "insufficient_funds");
  EXPECT_EQ(plain.errors[0].message, "the account's available balance is too low");
  EXPECT_EQ(plain.message, plain.errors[0].message);
  EXPECT_FALSE(plain.errors[0].path.has_value());

  Error detailed = errors::of(ErrorCode::validation_error, "amount.amount", "must be positive");
  EXPECT_EQ(detailed.code, ErrorCode::validation_error);
  EXPECT_EQ(api::http_status(detailed), 400);
  EXPECT_EQ(detailed.message, "malformed request");  // the fixed summary of the kind
  EXPECT_EQ(detailed.errors[0].message, "must be positive");
  EXPECT_EQ(detailed.errors[0].path, "amount.amount");
}

// An error outside the catalog (a command-line refusal, a worker's own outcome) has no code; were
// one ever returned to a client, it would be answered as the server's fault.
TEST(ErrorCatalog, AnErrorOutsideTheCatalogHasNoCodeAndWouldBeA500) {
  Error outside = errors::make("email_taken", "a console user with this email already exists");
  EXPECT_FALSE(outside.code.has_value());
  EXPECT_EQ(outside.first_code(), "email_taken");
  EXPECT_EQ(api::http_status(outside), 500);
}
