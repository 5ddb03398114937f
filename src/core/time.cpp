#include "core/time.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace tesoro::time {

Micros now_micros() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

std::string iso_local(Micros at) {
  std::time_t seconds = static_cast<std::time_t>(at / k_micros_per_second);
  long micros = static_cast<long>(at % k_micros_per_second);
  if (micros < 0) {
    micros += k_micros_per_second;
    seconds -= 1;
  }
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  char buffer[80];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%06ld", parts.tm_year + 1900,
                parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec, micros);
  return buffer;
}

std::string iso(Micros at) { return iso_local(at) + "Z"; }
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
