// The pure part of spending controls: which rule refuses a purchase, the velocity windows, and
// the merchant_name patterns (PCRE2).
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "core/limits.hpp"
#include "domain/spending_controls/rules.hpp"

namespace tesoro::spending_controls {
namespace {

// UTF-8 patterns and names, with Unicode classes (\w matches the i of "Panadería"); the whole
// name must match (anchored at both ends); \C, which could split a UTF-8 character, is refused.
constexpr std::uint32_t k_compile_options =
    PCRE2_UTF | PCRE2_UCP | PCRE2_ANCHORED | PCRE2_ENDANCHORED | PCRE2_NEVER_BACKSLASH_C;

struct CodeFree {
  void operator()(pcre2_code* code) const { pcre2_code_free(code); }
};
struct MatchDataFree {
  void operator()(pcre2_match_data* data) const { pcre2_match_data_free(data); }
};
struct MatchContextFree {
  void operator()(pcre2_match_context* context) const { pcre2_match_context_free(context); }
};
using Code = std::unique_ptr<pcre2_code, CodeFree>;

Code compile(std::string_view pattern, int& error_code, PCRE2_SIZE& error_offset) {
  return Code(pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                            k_compile_options, &error_code, &error_offset, nullptr));
}

// Whether the whole of `name` matches `pattern`. False as well when the pattern does not
// compile or the match runs out of its limits: a rule that cannot decide refuses.
bool matches_whole(std::string_view pattern, std::string_view name) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  Code code = compile(pattern, error_code, error_offset);
  if (!code) return false;
  std::unique_ptr<pcre2_match_context, MatchContextFree> context(
      pcre2_match_context_create(nullptr));
  std::unique_ptr<pcre2_match_data, MatchDataFree> data(
      pcre2_match_data_create_from_pattern(code.get(), nullptr));
  if (!context || !data) return false;
  pcre2_set_match_limit(context.get(), limits::k_pattern_match_limit);
  pcre2_set_depth_limit(context.get(), limits::k_pattern_depth_limit);
  pcre2_set_heap_limit(context.get(), limits::k_pattern_heap_limit_kib);
  int result = pcre2_match(code.get(), reinterpret_cast<PCRE2_SPTR>(name.data()), name.size(), 0,
                           0, data.get(), context.get());
  return result >= 0;  // PCRE2_ERROR_NOMATCH, _MATCHLIMIT, _DEPTHLIMIT, _HEAPLIMIT, bad UTF-8
}

bool contains(const std::vector<std::string>& values, const std::string& value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// allow_* refuses what is not listed, block_* what is.
bool refuses_listed(const Rule& rule, const std::string& value) {
  bool listed = contains(rule.values, value);
  return rule.operation.starts_with("allow_") ? !listed : listed;
}

bool refuses(const Rule& rule, const Purchase& purchase) {
  if (rule.type == "card_usage") return contains(rule.disabled_card_usages, purchase.channel);
  if (rule.type == "mcc") return refuses_listed(rule, purchase.merchant.mcc);
  if (rule.type == "mid") return refuses_listed(rule, purchase.merchant.mid);
  if (rule.type == "merchant_name") {
    return !matches_whole(rule.allow_pattern, purchase.merchant.name);
  }
  return false;  // velocity rules need the card's usage (cards::authorize)
}

time::Micros micros_of(std::chrono::sys_days day) {
  return std::chrono::duration_cast<std::chrono::microseconds>(day.time_since_epoch()).count();
}

}  // namespace

std::optional<std::string> refusing_rule(const SpendingControl& control,
                                         const Purchase& purchase) {
  for (std::string_view type : {"card_usage", "mcc", "mid", "merchant_name"}) {
    for (const Rule& rule : control.rules) {
      if (rule.type == type && refuses(rule, purchase)) return std::string(type);
    }
  }
  return std::nullopt;
}

std::optional<std::string> pattern_error(std::string_view pattern) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  if (compile(pattern, error_code, error_offset)) return std::nullopt;
  PCRE2_UCHAR message[256];
  if (pcre2_get_error_message(error_code, message, sizeof message) < 0) {
    return "the pattern does not compile";
  }
  return std::string(reinterpret_cast<const char*>(message)) + " at offset " +
         std::to_string(error_offset);
}

const char* to_string(Period period) {
  switch (period) {
    case Period::daily: return "daily";
    case Period::weekly: return "weekly";
    case Period::monthly: return "monthly";
  }
  return "daily";
}

Window window_of(Period period, time::Micros now) {
  namespace chrono = std::chrono;
  const chrono::sys_days day =
      chrono::floor<chrono::days>(chrono::sys_time<chrono::microseconds>(chrono::microseconds(now)));
  switch (period) {
    case Period::daily:
      return {micros_of(day), micros_of(day + chrono::days(1))};
    case Period::weekly: {
      // weekday difference is the days since the last Monday, 0 to 6.
      const chrono::sys_days monday = day - (chrono::weekday(day) - chrono::Monday);
      return {micros_of(monday), micros_of(monday + chrono::weeks(1))};
    }
    case Period::monthly: {
      const chrono::year_month_day date(day);
      const chrono::year_month month = date.year() / date.month();
      return {micros_of(chrono::sys_days(month / 1)),
              micros_of(chrono::sys_days((month + chrono::months(1)) / 1))};
    }
  }
  return {micros_of(day), micros_of(day + chrono::days(1))};
}

}  // namespace tesoro::spending_controls
