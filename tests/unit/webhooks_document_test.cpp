// docs/webhooks.md lists every event type in its catalogue table; the server validates endpoint
// subscriptions and the events list's `type` filter against webhooks::event_types(). The two
// lists must be the same: a type missing from either is a document that lies or a type nobody
// can subscribe to. (The events API suite checks the other side: what a broad run of actions
// really emits is in the document.)
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "webhooks_document.hpp"
#include "domain/webhooks/endpoints.hpp"

TEST(WebhooksDocumentCatalogue, TheTableIsTheServersCatalogue) {
  const std::set<std::string> documented = webhooks_document::event_types();
  const std::set<std::string> served(tesoro::webhooks::event_types().begin(),
                                     tesoro::webhooks::event_types().end());
  EXPECT_EQ(served.size(), tesoro::webhooks::event_types().size()) << "a type listed twice";
  for (const std::string& type : served) {
    EXPECT_TRUE(documented.contains(type)) << type << " is not in docs/webhooks.md";
  }
  for (const std::string& type : documented) {
    EXPECT_TRUE(served.contains(type)) << type << " is documented but not in event_types()";
  }
}
