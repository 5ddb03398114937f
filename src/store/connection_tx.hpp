#pragma once
// The Tx both engines hand to domain code: a thin adapter over an engine's connection, which
// provides run(sql, params, rows*) -> rows changed, and may provide copy_in(table_columns, width,
// values) -> rows written for Tx::append_rows and defer(sql, params) for Tx::exec_later.
#include "store/store.hpp"

namespace tesoro::store {

template <class Connection, Engine kEngine>
class ConnectionTx final : public Tx {
 public:
  explicit ConnectionTx(Connection& connection) : connection_(connection) {}
  Rows query(std::string_view sql, const Params& params) override {
    Rows rows;
    connection_.run(sql, params, &rows);
    return rows;
  }
  std::int64_t exec_values(std::string_view sql, std::span<const Value> params) override {
    return connection_.run(sql, params, nullptr);
  }
  void exec_later_values(std::string_view sql, std::span<const Value> params) override {
    if constexpr (requires { connection_.defer(sql, params); }) {
      connection_.defer(sql, params);
    } else {
      connection_.run(sql, params, nullptr);
    }
  }
  std::int64_t append_rows(std::string_view table_columns, std::size_t width,
                           std::span<const Value> values) override {
    if constexpr (requires { connection_.copy_in(table_columns, width, values); }) {
      return connection_.copy_in(table_columns, width, values);
    } else {
      return Tx::append_rows(table_columns, width, values);
    }
  }
  Engine engine() const override { return kEngine; }

 private:
  Connection& connection_;
};

}  // namespace tesoro::store
