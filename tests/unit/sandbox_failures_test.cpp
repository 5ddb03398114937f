#include <gtest/gtest.h>

#include "domain/transfers/outgoing_transfers.hpp"
#include "domain/transfers/sandbox_failures.hpp"

namespace tesoro {
namespace {

TEST(SandboxFailures, ADescriptionNamesItsFirstTriggerWithoutThePrefix) {
  EXPECT_EQ(transfers::requested_failure(std::string("rent tx_risk_control")), "risk_control");
  EXPECT_EQ(transfers::requested_failure(std::string("tx_unknown")), "unknown");
  EXPECT_EQ(transfers::requested_failure(std::string("a tx_breb_timeout b")), "breb_timeout");
  EXPECT_EQ(transfers::requested_failure(std::string("tx_provider_unavailable")),
            "provider_unavailable");
  // The first one in the text wins, whatever the order of the list.
  EXPECT_EQ(transfers::requested_failure(std::string("tx_provider_unavailable tx_unknown")),
            "provider_unavailable");
}

TEST(SandboxFailures, NoTriggerNoFailure) {
  EXPECT_EQ(transfers::requested_failure(std::nullopt), std::nullopt);
  EXPECT_EQ(transfers::requested_failure(std::string("rent for March")), std::nullopt);
  EXPECT_EQ(transfers::requested_failure(std::string("TX_UNKNOWN")), std::nullopt);
  EXPECT_EQ(transfers::requested_failure(std::string("tx_")), std::nullopt);
}

}  // namespace
}  // namespace tesoro
