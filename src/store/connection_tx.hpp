#pragma once
// The Tx both engines hand to domain code: a thin adapter over an engine's connection, which
// provides run(sql, params, rows*) -> rows changed.
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
  Engine engine() const override { return kEngine; }

 private:
  Connection& connection_;
};

}  // namespace tesoro::store
