#pragma once
// One page of a list and the size of the whole list: the two statements every paginated list
// runs, with the same filter.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/page.hpp"
#include "store/store.hpp"

namespace tesoro::store {

// A list's optional filter on one column: " AND <column> = ?" and its value, when it has one.
inline void where_equal(std::string& where, Params& params, std::string_view column,
                        const std::optional<std::string>& value) {
  if (!value) return;
  where += " AND ";
  where += column;
  where += " = ?";
  params.emplace_back(*value);
}

// `SELECT COUNT(*) <from_where>`, then `SELECT <columns> <from_where> ORDER BY <order_by>
// LIMIT ? OFFSET ?`; `params` are those of from_where (" FROM t WHERE tenant_id = ? ..."), and
// `from_row` makes each row an item.
template <class T, class FromRow>
PageOf<T> query_page(Tx& tx, std::string_view columns, const std::string& from_where,
                     const Params& params, std::string_view order_by, std::int64_t offset,
                     std::int64_t limit, FromRow from_row) {
  PageOf<T> page;
  page.total_items = tx.query_one("SELECT COUNT(*)" + from_where, params)->integer(0);
  Params page_params = params;
  page_params.emplace_back(limit);
  page_params.emplace_back(offset);
  for (const Row& row : tx.query("SELECT " + std::string(columns) + from_where + " ORDER BY " +
                                     std::string(order_by) + " LIMIT ? OFFSET ?",
                                 page_params)) {
    page.items.push_back(from_row(row));
  }
  return page;
}

}  // namespace tesoro::store
