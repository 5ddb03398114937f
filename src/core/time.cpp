#include "core/time.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace tesoro::time {

Micros now_micros() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

namespace {

// The old formatting, kept for years outside 0..9999 (which "%04d" does not write in four digits).
std::string iso_local_by_printf(std::time_t seconds, long micros) {
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  char buffer[80];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%06ld", parts.tm_year + 1900,
                parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec, micros);
  return buffer;
}

void put_digits(char* out, long value, int width) {
  for (int i = width - 1; i >= 0; --i) {
    out[i] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
}

// Writes "YYYY-MM-DDTHH:MM:SS.ffffff" (26 characters), or returns false when the year does not
// have four digits. Days to civil date by the proleptic Gregorian era arithmetic (400-year eras),
// without gmtime_r and snprintf, which cost thousands of instructions per timestamp.
bool put_iso_local(char* out, std::int64_t seconds, long micros) {
  std::int64_t days = seconds / 86400;
  std::int64_t second_of_day = seconds % 86400;
  if (second_of_day < 0) {
    second_of_day += 86400;
    days -= 1;
  }
  const std::int64_t z = days + 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const std::int64_t day_of_era = z - era * 146097;
  const std::int64_t year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  const std::int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const std::int64_t month_index = (5 * day_of_year + 2) / 153;  // March = 0
  const std::int64_t day = day_of_year - (153 * month_index + 2) / 5 + 1;
  const std::int64_t month = month_index < 10 ? month_index + 3 : month_index - 9;
  const std::int64_t year = year_of_era + era * 400 + (month <= 2 ? 1 : 0);
  if (year < 0 || year > 9999) return false;
  put_digits(out, static_cast<long>(year), 4);
  out[4] = '-';
  put_digits(out + 5, static_cast<long>(month), 2);
  out[7] = '-';
  put_digits(out + 8, static_cast<long>(day), 2);
  out[10] = 'T';
  put_digits(out + 11, static_cast<long>(second_of_day / 3600), 2);
  out[13] = ':';
  put_digits(out + 14, static_cast<long>(second_of_day / 60 % 60), 2);
  out[16] = ':';
  put_digits(out + 17, static_cast<long>(second_of_day % 60), 2);
  out[19] = '.';
  put_digits(out + 20, micros, 6);
  return true;
}

// Splits `at` into whole seconds and the microseconds of that second (0..999999).
void split(Micros at, std::int64_t& seconds, long& micros) {
  seconds = at / k_micros_per_second;
  micros = static_cast<long>(at % k_micros_per_second);
  if (micros < 0) {
    micros += k_micros_per_second;
    seconds -= 1;
  }
}

}  // namespace

std::string iso_local(Micros at) {
  std::int64_t seconds;
  long micros;
  split(at, seconds, micros);
  char buffer[26];
  if (!put_iso_local(buffer, seconds, micros)) {
    return iso_local_by_printf(static_cast<std::time_t>(seconds), micros);
  }
  return std::string(buffer, sizeof buffer);
}

std::string iso(Micros at) {
  std::int64_t seconds;
  long micros;
  split(at, seconds, micros);
  char buffer[27];
  if (!put_iso_local(buffer, seconds, micros)) {
    return iso_local_by_printf(static_cast<std::time_t>(seconds), micros) + "Z";
  }
  buffer[26] = 'Z';
  return std::string(buffer, sizeof buffer);
}

std::string iso_now() { return iso(now_micros()); }

std::optional<Micros> parse_iso(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS[.fraction](Z|+hh:mm|-hh:mm)
  auto digits = [&](std::size_t at, std::size_t count, int& out) {
    if (at + count > text.size()) return false;
    out = 0;
    for (std::size_t i = at; i < at + count; ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
      out = out * 10 + (text[i] - '0');
    }
    return true;
  };
  int year, month, day, hour, minute, second;
  if (!digits(0, 4, year) || text.size() < 20 || text[4] != '-' || !digits(5, 2, month) ||
      text[7] != '-' || !digits(8, 2, day) || (text[10] != 'T' && text[10] != 't') ||
      !digits(11, 2, hour) || text[13] != ':' || !digits(14, 2, minute) || text[16] != ':' ||
      !digits(17, 2, second)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return std::nullopt;
  }
  std::size_t at = 19;
  Micros fraction = 0;
  if (at < text.size() && text[at] == '.') {
    ++at;
    std::size_t start = at;
    Micros scale = 100'000;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
      fraction += (text[at] - '0') * scale;
      scale /= 10;
      ++at;
    }
    if (at == start || at - start > 9) return std::nullopt;
  }
  Micros offset_seconds = 0;
  if (at < text.size() && (text[at] == 'Z' || text[at] == 'z')) {
    ++at;
  } else if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
    int sign = text[at] == '+' ? 1 : -1;
    int offset_hour, offset_minute;
    if (!digits(at + 1, 2, offset_hour) || at + 3 >= text.size() || text[at + 3] != ':' ||
        !digits(at + 4, 2, offset_minute) || offset_hour > 23 || offset_minute > 59) {
      return std::nullopt;
    }
    offset_seconds = sign * (offset_hour * 3600 + offset_minute * 60);
    at += 6;
  } else {
    return std::nullopt;
  }
  if (at != text.size()) return std::nullopt;
  static constexpr int k_days_in_month[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (day > k_days_in_month[month - 1] || (month == 2 && day == 29 && !leap)) return std::nullopt;
  std::tm parts{};
  parts.tm_year = year - 1900;
  parts.tm_mon = month - 1;
  parts.tm_mday = day;
  parts.tm_hour = hour;
  parts.tm_min = minute;
  parts.tm_sec = second;
  Micros seconds = static_cast<Micros>(timegm(&parts)) - offset_seconds;
  return seconds * k_micros_per_second + fraction;
}

}  // namespace tesoro::time
