#pragma once
// Many rows in few statements: what a unit that writes a thousand rows of one table (a batch of
// transfers and their events) uses instead of a thousand single-row statements. On PostgreSQL
// each statement is a round trip; on SQLite each is a prepare-cache lookup, a bind and a step.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/limits.hpp"
#include "store/store.hpp"

namespace tesoro::store {

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

// Calls fn(first, count) over [0, total) in chunks of the limits::k_bulk_rows sizes, largest
// first.
template <class Fn>
void for_each_chunk(std::size_t total, Fn fn) {
  std::size_t done = 0;
  for (std::size_t chunk : limits::k_bulk_rows) {
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
// each) in statements of limits::k_bulk_rows rows, in order: an INSERT of many rows, or an
// UPDATE ... FROM (VALUES ...) AS v whose columns are v.column1, v.column2, ... on both engines.
// Returns the rows the statements changed (an INSERT ... ON CONFLICT DO NOTHING: the rows it
// inserted).
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

// Rows of values made ready for a unit that writes them, where they are made (a batch's rows, in
// its preparation, off the SQLite writer): every text copied into one buffer, row after row,
// each followed by a NUL. The unit then reads a batch's rows as one run of memory instead of some
// twenty strings a row that another thread allocated and last wrote: the cache misses of binding
// those were about a tenth of the SQLite writer's CPU for a batch of transfers (docs/scaling.md).
class PackedRows {
 public:
  explicit PackedRows(std::size_t width = 0) : width_(width) {}

  void reserve(std::size_t rows, std::size_t text_bytes_per_row) {
    cells_.reserve(rows * width_);
    texts_.reserve(rows * text_bytes_per_row);
  }
  // The next value of the row being added (rows are added value after value, `width` each).
  // A text equal to the same column's in the row before is kept once (a batch's rows share
  // their times, source, and more).
  PackedRows& text(std::string_view text) {
    if (cells_.size() >= width_ && width_ > 0) {
      const Cell& above = cells_[cells_.size() - width_];
      if (above.kind == Kind::text &&
          text == std::string_view(texts_.data() + above.value, above.size)) {
        cells_.push_back(above);
        return *this;
      }
    }
    cells_.push_back({static_cast<std::int64_t>(texts_.size()),
                      static_cast<std::uint32_t>(text.size()), Kind::text});
    texts_.append(text);
    texts_.push_back('\0');
    return *this;
  }
  PackedRows& optional_text(const std::optional<std::string>& text) {
    return text ? this->text(*text) : null();
  }
  PackedRows& integer(std::int64_t value) {
    cells_.push_back({value, 0, Kind::integer});
    return *this;
  }
  PackedRows& optional_integer(const std::optional<std::int64_t>& value) {
    return value ? integer(*value) : null();
  }
  PackedRows& null() {
    cells_.push_back({0, 0, Kind::null});
    return *this;
  }

  std::size_t rows() const { return width_ == 0 ? 0 : cells_.size() / width_; }
  // The text at (row, column); empty for a NULL or an integer.
  std::string_view text_at(std::size_t row, std::size_t column) const {
    const Cell& cell = cells_.at(row * width_ + column);
    if (cell.kind != Kind::text) return {};
    return std::string_view(texts_).substr(static_cast<std::size_t>(cell.value), cell.size);
  }
  // Appends row `row`'s values to `out`, its texts as TextRefs into this buffer: keep it,
  // unchanged, until the statement has run.
  void append_row(std::size_t row, Params& out) const {
    for (std::size_t i = row * width_; i < (row + 1) * width_; ++i) {
      const Cell& cell = cells_[i];
      switch (cell.kind) {
        case Kind::null: out.emplace_back(nullptr); break;
        case Kind::integer: out.emplace_back(cell.value); break;
        case Kind::text:
          out.emplace_back(TextRef::terminated(
              std::string_view(texts_.data() + cell.value, cell.size)));
          break;
      }
    }
  }

 private:
  enum class Kind : std::uint8_t { null, integer, text };
  struct Cell {
    std::int64_t value;  // an integer's value; a text's offset in texts_
    std::uint32_t size;  // a text's bytes
    Kind kind;
  };
  std::size_t width_;
  std::vector<Cell> cells_;
  std::string texts_;
};

}  // namespace tesoro::store
