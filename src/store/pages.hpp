#pragma once
// One page of a list and the size of the whole list, with the same filter.
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

// One page and the list's size in one statement, so one round trip on PostgreSQL:
// `SELECT <columns>, (SELECT COUNT(*) <from_where>) <from_where> ORDER BY <order_by> LIMIT ?
// OFFSET ?`. Both engines run the uncorrelated count once per statement, and it sees the same
// snapshot as the page. Only an empty page (an empty list, or an offset past its end) carries
// no count; then a plain `SELECT COUNT(*)` follows. `params` are those of from_where
// (" FROM t WHERE tenant_id = ? ..."), and `from_row` makes each row an item (the count is the
// row's last column, after the ones from_row reads).
template <class T, class FromRow>
PageOf<T> query_page(Tx& tx, std::string_view columns, const std::string& from_where,
                     const Params& params, std::string_view order_by, std::int64_t offset,
                     std::int64_t limit, FromRow from_row) {
  PageOf<T> page;
  Params page_params;
  page_params.reserve(params.size() * 2 + 2);
  page_params.insert(page_params.end(), params.begin(), params.end());  // the count's
  page_params.insert(page_params.end(), params.begin(), params.end());  // the page's
  page_params.emplace_back(limit);
  page_params.emplace_back(offset);
  const Rows rows = tx.query("SELECT " + std::string(columns) + ", (SELECT COUNT(*)" +
                                 from_where + ")" + from_where + " ORDER BY " +
                                 std::string(order_by) + " LIMIT ? OFFSET ?",
                             page_params);
  if (rows.empty()) {
    page.total_items = tx.query_one("SELECT COUNT(*)" + from_where, params)->integer(0);
    return page;
  }
  page.total_items = rows.front().integer(rows.front().size() - 1);
  page.items.reserve(rows.size());
  for (const Row& row : rows) page.items.push_back(from_row(row));
  return page;
}

}  // namespace tesoro::store
