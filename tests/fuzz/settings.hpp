#pragma once
// The settings the batch targets decode with: a sandbox server's defaults (COP on the ledger
// endpoints, COP and USD on the card endpoints).
#include "api/context.hpp"

inline const tesoro::api::Settings& sandbox_settings() {
  static const tesoro::api::Settings settings = [] {
    tesoro::api::Settings s;
    s.environment = "sandbox";
    s.currencies = {"COP"};
    s.card_currencies = {"COP", "USD"};
    return s;
  }();
  return settings;
}
