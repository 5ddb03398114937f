#pragma once
// Many rows in few statements: what a unit that writes a thousand rows of one table (a batch of
// transfers and their events) uses instead of a thousand single-row statements. On PostgreSQL
// each statement is a round trip; on SQLite each is a prepare-cache lookup, a bind and a step.
#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "store/store.hpp"

namespace tesoro::store {

// Rows per statement, largest first: every count splits into these, so a statement's text is
// one of a few (the engines cache prepared statements by text) and its parameters stay far
// below SQLite's 32,766 and PostgreSQL's 65,535 (at 40 columns: 10,000).
inline constexpr std::array<std::size_t, 4> k_bulk_rows = {250, 50, 10, 1};

// `<head> VALUES (?, ...), (?, ...) <tail>` with `width` placeholders per row.
inline std::string bulk_statement(std::string_view head, std::size_t width, std::size_t rows,
                                  std::string_view tail) {
  std::string row = "(";
  for (std::size_t i = 0; i < width; ++i) row += i == 0 ? "?" : ", ?";
  row += ")";
  std::string sql(head);
  sql += " VALUES ";
  sql.reserve(sql.size() + rows * (row.size() + 2) + tail.size() + 1);
  for (std::size_t i = 0; i < rows; ++i) {
    if (i > 0) sql += ", ";
    sql += row;
  }
  if (!tail.empty()) {
    sql += ' ';
    sql += tail;
  }
  return sql;
}

// Calls fn(first, count) over [0, total) in chunks of the k_bulk_rows sizes, largest first.
template <class Fn>
void for_each_chunk(std::size_t total, Fn fn) {
  std::size_t done = 0;
  for (std::size_t chunk : k_bulk_rows) {
    while (total - done >= chunk) {
      fn(done, chunk);
      done += chunk;
    }
  }
}

// "(?, ?, ...)" with `count` placeholders: an IN list of one chunk (for_each_chunk).
inline std::string in_list(std::size_t count) {
  std::string list = "(";
  for (std::size_t i = 0; i < count; ++i) list += i == 0 ? "?" : ", ?";
  return list + ")";
}

// Reads the rows of `<head> IN (?, ...) <tail>` for every one of `values`, a statement per chunk
// (for_each_chunk), each bound to `leading` (the parameters of `head`) then its chunk's values;
// calls each(row) for every row read. What a batch looks its thousand ids or keys up with.
// `values` are texts or integers (std::string, std::int64_t).
template <class Item, class Each>
void query_in(Tx& tx, std::string_view head, const Params& leading,
              const std::vector<Item>& values, std::string_view tail, Each each) {
  for_each_chunk(values.size(), [&](std::size_t first, std::size_t count) {
    Params params = leading;
    for (std::size_t i = first; i < first + count; ++i) params.emplace_back(values[i]);
    std::string sql(head);
    sql += " IN ";
    sql += in_list(count);
    sql += tail;
    for (const Row& row : tx.query(sql, params)) each(row);
  });
}

// Runs `<head> VALUES ... <tail>` over every row of `values` (row after row, `width` values
// each) in statements of k_bulk_rows rows, in order: an INSERT of many rows, or an UPDATE ...
// FROM (VALUES ...) AS v whose columns are v.column1, v.column2, ... on both engines. Returns the
// rows the statements changed (an INSERT ... ON CONFLICT DO NOTHING: the rows it inserted).
inline std::int64_t exec_many(Tx& tx, std::string_view head, std::size_t width,
                              std::string_view tail, std::span<const Value> values) {
  std::int64_t changed = 0;
  if (width == 0) return changed;
  for_each_chunk(values.size() / width, [&](std::size_t first, std::size_t count) {
    changed += tx.exec_values(bulk_statement(head, width, count, tail),
                              values.subspan(first * width, count * width));
  });
  return changed;
}

}  // namespace tesoro::store
