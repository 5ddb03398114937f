// Sandbox payment attempts on collections over HTTP (POST /api/v1/sandbox/collections/attempts)
// and the attempt lists: successes that move money, rejections by the collection's and the QR
// code's rules, requested errors failed by the background worker, expiry on the tenant clock,
// concurrency, keys that are not found, and the lists' pages and filters.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "payment_fixtures.hpp"

using harness::Reply;
using harness::Server;
using namespace payment_fixtures;
namespace json = boost::json;

namespace {

json::value get_attempt(const Server& server, const Tenant& tenant, const std::string& collection_id,
                        const std::string& id) {
  Reply reply =
      server.get("/api/v1/collections/" + collection_id + "/attempts/" + id, {tenant.bearer});
  EXPECT_EQ(reply.status, 200) << reply.body;
  return reply.json();
}

// The attempt's 202 result, checked for its shape.
json::value pay(const Server& server, const Tenant& tenant, const std::string& body) {
  Reply reply = attempt(server, tenant, body);
  EXPECT_EQ(reply.status, 202) << body << " -> " << reply.body;
  json::value result = reply.json();
  EXPECT_TRUE(text(result, "attempt_id").starts_with("bbcolat_")) << reply.body;
  return result;
}

std::string qr_payment_id(const Server& server, const Tenant& tenant,
                          const std::string& collection_id, const std::string& body) {
  Reply reply = create_qr(server, tenant, collection_id, body);
  EXPECT_EQ(reply.status, 201) << reply.body;
  return text(reply.json(), "payment_id");
}

std::string with_payment_id(const std::string& payment_id) {
  return R"(,"payment_id":")" + payment_id + "\"";
}

// The subsequence of `types` that are collection payment events.
std::vector<std::string> payment_events(const std::vector<std::string>& types) {
  std::vector<std::string> out;
  for (const std::string& type : types) {
    if (type.starts_with("collection.attempt_") || type == "collection.minimum_paid" ||
        type == "collection.paid") {
      out.push_back(type);
    }
  }
  return out;
}

}  // namespace

TEST(CollectionAttempts, ASuccessCreditsTheTenantAccountThroughAnIncomingTransfer) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  json::value collection = create_collection(server, tenant);
  const std::string id = text(collection, "id");
  const long long before = tenant_account_balance(server, tenant);
  json::value result = pay(server, tenant, attempt_body(123'400, key_of(collection)));
  EXPECT_EQ(text(result, "attempt_state"), "successful");
  EXPECT_TRUE(result.at("attempt_state_reason").is_null());
  EXPECT_EQ(text(result, "collection_id"), id);
  EXPECT_TRUE(text(result, "transfer_id").starts_with("bbit_"));
  EXPECT_EQ(tenant_account_balance(server, tenant), before + 123'400);
  EXPECT_EQ(amount_of(get_collection(server, tenant, id), "paid_amount"), 123'400);

  json::value shown = get_attempt(server, tenant, id, text(result, "attempt_id"));
  EXPECT_EQ(text(shown, "id"), text(result, "attempt_id"));
  EXPECT_EQ(text(shown, "collection_id"), id);
  EXPECT_EQ(amount_of(shown, "amount"), 123'400);
  EXPECT_EQ(text(shown.at("amount"), "currency"), "COP");
  EXPECT_EQ(text(shown, "state"), "successful");
  EXPECT_TRUE(shown.at("state_reason").is_null());
  EXPECT_EQ(text(shown, "transfer_id"), text(result, "transfer_id"));
  EXPECT_TRUE(shown.at("payment_id").is_null());
  EXPECT_TRUE(shown.at("qr_code_id").is_null());
  EXPECT_EQ(text(shown, "key_type"), "alphanumeric");
  EXPECT_EQ(text(shown, "key_value"), key_of(collection));
  EXPECT_FALSE(text(shown, "inserted_at").empty());
  EXPECT_FALSE(text(shown, "updated_at").empty());
  // A payer was made up: a first name and two surnames, a cédula of ten digits.
  const json::value& payer = shown.at("payer");
  const std::string name = text(payer, "name");
  EXPECT_EQ(std::count(name.begin(), name.end(), ' '), 2) << name;
  EXPECT_EQ(text(payer, "document_type"), "CC");
  EXPECT_EQ(text(payer, "document_number").size(), 10u);
  EXPECT_EQ(text(payer, "document_number").find_first_not_of("0123456789"), std::string::npos);

  EXPECT_EQ(payment_events(event_types(server, text(result, "attempt_id"))),
            std::vector<std::string>{"collection.attempt_successful"});
  // The incoming transfer and its credit, as the ledger keeps them.
  EXPECT_EQ(query_column(server, "SELECT amount FROM incoming_transfers WHERE id = '" +
                                     text(result, "transfer_id") + "'"),
            std::vector<std::string>{"123400"});
  const std::vector<std::string> entry = query_column(
      server, "SELECT entry_id FROM incoming_transfers WHERE id = '" + text(result, "transfer_id") + "'");
  ASSERT_EQ(entry.size(), 1u);
  EXPECT_EQ(query_column(server, "SELECT COUNT(*) FROM " + all_events(server) +
                                 " WHERE type = 'account.credited' "
                                 "AND data LIKE '%" + entry[0] + "%' AND data LIKE '%" +
                                 tenant.tenant_account_id + "%'"),
            std::vector<std::string>{"1"});
}

TEST(CollectionAttempts, AGivenPayerIsKeptAndAnIncompleteOneIsRefused) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  json::value collection = create_collection(server, tenant);
  const std::string payer =
      R"(,"payer":{"name":"Ana María Pérez","document_type":"CE","document_number":"123456"})";
  json::value result = pay(server, tenant, attempt_body(1000, key_of(collection), payer));
  json::value shown = get_attempt(server, tenant, text(collection, "id"), text(result, "attempt_id"));
  EXPECT_EQ(text(shown.at("payer"), "name"), "Ana María Pérez");
  EXPECT_EQ(text(shown.at("payer"), "document_type"), "CE");
  EXPECT_EQ(text(shown.at("payer"), "document_number"), "123456");

  Reply partial = attempt(server, tenant,
                          attempt_body(1000, key_of(collection), R"(,"payer":{"name":"Ana"})"));
  EXPECT_EQ(partial.status, 422) << partial.body;
  EXPECT_NE(partial.body.find("\"path\":\"payer.document_type\""), std::string::npos);
  EXPECT_NE(partial.body.find("\"path\":\"payer.document_number\""), std::string::npos);
  Reply bad_type = attempt(server, tenant,
                           attempt_body(1000, key_of(collection),
                                        R"(,"payer":{"name":"Ana","document_type":"XX",)"
                                        R"("document_number":"1"})"));
  EXPECT_EQ(bad_type.status, 400) << bad_type.body;
  EXPECT_EQ(bad_type.error_path(), "payer.document_type");
}

TEST(CollectionAttempts, TheCollectionReachesMinimumPaidThenPaidWithItsEvents) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  CollectionSpec spec;
  spec.maximum_attempt = 25'000;
  spec.total_minimum = 10'000;
  spec.total_maximum = 25'000;
  json::value collection = create_collection(server, tenant, spec);
  const std::string id = text(collection, "id");
  const long long before = tenant_account_balance(server, tenant);
  EXPECT_EQ(text(pay(server, tenant, attempt_body(6'000, key_of(collection))), "attempt_state"),
            "successful");
  EXPECT_EQ(text(get_collection(server, tenant, id), "state"), "ready");
  pay(server, tenant, attempt_body(4'000, key_of(collection)));
  EXPECT_EQ(text(get_collection(server, tenant, id), "state"), "minimum_paid");
  pay(server, tenant, attempt_body(15'000, key_of(collection)));
  json::value paid = get_collection(server, tenant, id);
  EXPECT_EQ(text(paid, "state"), "paid");
  EXPECT_EQ(amount_of(paid, "paid_amount"), 25'000);
  EXPECT_EQ(tenant_account_balance(server, tenant), before + 25'000);
  EXPECT_EQ(payment_events(event_types(server, id)),
            (std::vector<std::string>{"collection.attempt_successful",
                                      "collection.attempt_successful", "collection.minimum_paid",
                                      "collection.attempt_successful", "collection.paid"}));
  // A paid collection's key is no longer active.
  Reply after = attempt(server, tenant, attempt_body(1'000, key_of(collection)));
  EXPECT_EQ(after.status, 400) << after.body;
  EXPECT_EQ(after.error_code(), "key_not_found");
}

TEST(CollectionAttempts, BreachesOfTheCollectionsRulesAreRejectedAttempts) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  CollectionSpec spec = with_limits(1'000, 50'000, 60'000, 60'000);
  json::value collection = create_collection(server, tenant, spec);
  const std::string id = text(collection, "id");
  const std::string key = key_of(collection);
  pay(server, tenant, attempt_body(50'000, key));
  const long long before = tenant_account_balance(server, tenant);
  struct Case {
    long long amount;
    std::string extra;
    std::string reason;
  };
  const std::string fixed_qr =
      qr_payment_id(server, tenant, id, R"({"usage_mode":"multiple_use","amount":)" +
                                            money(5'000) + "}");
  const std::vector<Case> cases = {
      {999, "", "amount_out_of_range"},
      {50'001, "", "amount_out_of_range"},
      {10'001, "", "amount_exceeds_remaining"},
      {5'000, with_payment_id("CO.COM.CRB.TRXIDNOSUCHCODE"), "qr_not_found"},
      {6'000, with_payment_id(fixed_qr), "amount_mismatch"},
  };
  for (const Case& c : cases) {
    json::value result = pay(server, tenant, attempt_body(c.amount, key, c.extra));
    EXPECT_EQ(text(result, "attempt_state"), "rejected") << c.reason;
    EXPECT_EQ(text(result, "attempt_state_reason"), c.reason);
    EXPECT_TRUE(result.at("transfer_id").is_null());
    json::value shown = get_attempt(server, tenant, id, text(result, "attempt_id"));
    EXPECT_EQ(text(shown, "state"), "rejected");
    EXPECT_EQ(text(shown, "state_reason"), c.reason);
    EXPECT_EQ(payment_events(event_types(server, text(result, "attempt_id"))),
              std::vector<std::string>{"collection.attempt_unsuccessful"});
  }
  // The fixed-amount code names itself on the rejected attempt.
  json::value mismatch = get_attempt(
      server, tenant, id, text(pay(server, tenant, attempt_body(6'000, key, with_payment_id(fixed_qr))),
                               "attempt_id"));
  EXPECT_TRUE(text(mismatch, "qr_code_id").starts_with("bbqr_"));
  EXPECT_EQ(tenant_account_balance(server, tenant), before);
  EXPECT_EQ(amount_of(get_collection(server, tenant, id), "paid_amount"), 50'000);
  // What fits still pays, through the code too.
  EXPECT_EQ(text(pay(server, tenant, attempt_body(5'000, key, with_payment_id(fixed_qr))),
                 "attempt_state"),
            "successful");
}

TEST(CollectionAttempts, ADisabledCollectionsKeyIsNotFoundUntilItIsEnabledAgain) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  json::value collection = create_collection(server, tenant);
  const std::string path = "/api/v1/collections/" + text(collection, "id");
  Reply disabled = server.send({"PATCH", path, R"({"enabled":false})", {tenant.bearer}});
  ASSERT_EQ(disabled.status, 200) << disabled.body;
  Reply refused = attempt(server, tenant, attempt_body(1'000, key_of(collection)));
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_EQ(refused.error_code(), "key_not_found");
  ASSERT_EQ(server.send({"PATCH", path, R"({"enabled":true})", {tenant.bearer}}).status, 200);
  EXPECT_EQ(text(pay(server, tenant, attempt_body(1'000, key_of(collection))), "attempt_state"),
            "successful");
}

TEST(CollectionAttempts, ASingleUseCodeIsSpentByOneSuccess) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  json::value collection = create_collection(server, tenant);
  const std::string id = text(collection, "id");
  const std::string key = key_of(collection);
  const std::string dynamic = qr_payment_id(
      server, tenant, id,
      R"({"usage_mode":"single_use","expiration_seconds":3600,"amount":)" + money(7'000) + "}");
  json::value first = pay(server, tenant, attempt_body(7'000, key, with_payment_id(dynamic)));
  EXPECT_EQ(text(first, "attempt_state"), "successful");
  json::value shown = get_attempt(server, tenant, id, text(first, "attempt_id"));
  EXPECT_EQ(text(shown, "payment_id"), dynamic);
  EXPECT_TRUE(text(shown, "qr_code_id").starts_with("bbqr_"));
  json::value second = pay(server, tenant, attempt_body(7'000, key, with_payment_id(dynamic)));
  EXPECT_EQ(text(second, "attempt_state"), "rejected");
  EXPECT_EQ(text(second, "attempt_state_reason"), "qr_already_used");
  // A static code with a fixed amount is paid again and again.
  const std::string fixed = qr_payment_id(
      server, tenant, id, R"({"usage_mode":"multiple_use","amount":)" + money(2'000) + "}");
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(text(pay(server, tenant, attempt_body(2'000, key, with_payment_id(fixed))),
                   "attempt_state"),
              "successful");
  }
  // What a static code's payload carries (tag 90 of 000000) names no code: the key pays.
  json::value scanned =
      pay(server, tenant, attempt_body(3'000, key, with_payment_id("CO.COM.CRB.TRXID000000")));
  EXPECT_EQ(text(scanned, "attempt_state"), "successful");
  EXPECT_TRUE(get_attempt(server, tenant, id, text(scanned, "attempt_id")).at("qr_code_id").is_null());
  // Another collection's code is not found through this collection's key.
  std::string other_id = text(create_collection(server, tenant), "id");
  const std::string other = qr_payment_id(server, tenant, other_id, R"({"usage_mode":"multiple_use"})");
  EXPECT_EQ(text(pay(server, tenant, attempt_body(1'000, key, with_payment_id(other))),
                 "attempt_state_reason"),
            "qr_not_found");
}

TEST(CollectionAttempts, ADynamicCodeExpiresOnTheTenantClock) {
  Server server;  // a clock of its own to advance
  Tenant tenant = init_tenant(server);
  json::value collection = create_collection(server, tenant);
  const std::string id = text(collection, "id");
  const std::string body =
      R"({"usage_mode":"single_use","expiration_seconds":60,"amount":)" + money(4'000) + "}";
  const std::string paid_in_time = qr_payment_id(server, tenant, id, body);
  const std::string too_late = qr_payment_id(server, tenant, id, body);
  EXPECT_EQ(text(pay(server, tenant, attempt_body(4'000, key_of(collection),
                                                  with_payment_id(paid_in_time))),
                 "attempt_state"),
            "successful");
  Reply advanced =
      server.post("/api/v1/sandbox/clock/advance", R"({"seconds":60})", {tenant.bearer});
  ASSERT_EQ(advanced.status, 200) << advanced.body;
  json::value expired =
      pay(server, tenant, attempt_body(4'000, key_of(collection), with_payment_id(too_late)));
  EXPECT_EQ(text(expired, "attempt_state"), "rejected");
  EXPECT_EQ(text(expired, "attempt_state_reason"), "qr_expired");
  server.check_ledger();
}

TEST(CollectionAttempts, ConcurrentAttemptsNeverPayPastTheTotalMaximum) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  // Ten fit; the state stays minimum_paid and the key active.
  CollectionSpec spec = with_limits(10'000, 10'000, 10'000, 105'000);
  json::value collection = create_collection(server, tenant, spec);
  const std::string id = text(collection, "id");
  const long long before = tenant_account_balance(server, tenant);
  std::vector<std::thread> threads;
  std::mutex mutex;
  std::map<std::string, int> outcomes;
  for (int i = 0; i < 32; ++i) {
    threads.emplace_back([&] {
      Reply reply = attempt(server, tenant, attempt_body(10'000, key_of(collection)));
      std::string outcome = std::to_string(reply.status);
      if (reply.status == 202) {
        json::value result = reply.json();
        outcome = text(result, "attempt_state");
        if (!result.at("attempt_state_reason").is_null()) {
          outcome += " " + text(result, "attempt_state_reason");
        }
      }
      std::lock_guard lock(mutex);
      ++outcomes[outcome];
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(outcomes, (std::map<std::string, int>{{"successful", 10},
                                                  {"rejected amount_exceeds_remaining", 22}}));
  json::value after = get_collection(server, tenant, id);
  EXPECT_EQ(amount_of(after, "paid_amount"), 100'000);
  EXPECT_LE(amount_of(after, "paid_amount"), amount_of(after, "total_maximum_amount"));
  EXPECT_EQ(tenant_account_balance(server, tenant), before + 100'000);
}

TEST(CollectionAttempts, ARequestedErrorLeavesTheAttemptPendingUntilTheWorkerFailsIt) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  json::value collection = create_collection(server, tenant);
  const std::string id = text(collection, "id");
  const std::string payment_id = qr_payment_id(server, tenant, id, R"({"usage_mode":"multiple_use"})");
  const long long before = tenant_account_balance(server, tenant);
  for (const std::string error :
       {"tx_risk_control", "tx_unknown", "tx_provider_unavailable", "tx_breb_timeout"}) {
    json::value result =
        pay(server, tenant, attempt_body(2'500, key_of(collection),
                                         R"(,"error":")" + error + "\"" + with_payment_id(payment_id)));
    EXPECT_EQ(text(result, "attempt_state"), "pending") << error;
    EXPECT_TRUE(result.at("attempt_state_reason").is_null());
    EXPECT_TRUE(result.at("transfer_id").is_null());
    json::value failed = wait_for_attempt(server, tenant, id, text(result, "attempt_id"),
                                          [](const json::value& a) {
                                            return text(a, "state") != "pending";
                                          });
    EXPECT_EQ(text(failed, "state"), "failed") << error;
    EXPECT_EQ(text(failed, "state_reason"), error);
    EXPECT_TRUE(failed.at("transfer_id").is_null());
    EXPECT_EQ(payment_events(event_types(server, text(result, "attempt_id"))),
              std::vector<std::string>{"collection.attempt_unsuccessful"});
  }
  EXPECT_EQ(tenant_account_balance(server, tenant), before);
  EXPECT_EQ(amount_of(get_collection(server, tenant, id), "paid_amount"), 0);
  // A rule breach wins over the requested error: rejected at once.
  json::value breach = pay(server, tenant, attempt_body(1, key_of(collection),
                                                        R"(,"error":"tx_risk_control")"));
  EXPECT_EQ(text(breach, "attempt_state"), "rejected");
  EXPECT_EQ(text(breach, "attempt_state_reason"), "amount_out_of_range");
}

TEST(CollectionAttempts, KeyNotFoundForUnknownInactiveMalformedAndOtherTenantsKeys) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  json::value discarded = create_collection(server, tenant);
  ASSERT_EQ(server.send({"DELETE", "/api/v1/collections/" + text(discarded, "id"), "",
                         {tenant.bearer}})
                .status,
            204);
  Tenant other = other_tenant(server, "attempts-other");
  json::value theirs = create_collection(server, other);
  json::value mine = create_collection(server, tenant);
  const std::vector<std::string> bodies = {
      attempt_body(1'000, fresh_key()),
      attempt_body(1'000, key_of(discarded)),
      attempt_body(1'000, key_of(theirs)),
      attempt_body(1'000, "no at sign"),
      attempt_body(1'000, key_of(mine), R"(,"creditor_key_type":"email")"),
  };
  for (const std::string& body : bodies) {
    Reply reply = attempt(server, tenant, body);
    EXPECT_EQ(reply.status, 400) << body << " -> " << reply.body;
    EXPECT_EQ(reply.error_code(), "key_not_found") << body;
    EXPECT_EQ(reply.error_path(), "creditor_key_value") << body;
  }
  // Their own tenant pays their key.
  EXPECT_EQ(text(pay(server, other, attempt_body(1'000, key_of(theirs))), "attempt_state"),
            "successful");
  // The key is found whatever its case: keys are normalised.
  std::string lower = key_of(mine);
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  EXPECT_EQ(text(pay(server, tenant, attempt_body(1'000, lower)), "attempt_state"), "successful");
}

TEST(CollectionAttempts, TheRequestIsValidatedWithEveryProblemListed) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  json::value collection = create_collection(server, tenant);
  const std::string key = key_of(collection);
  Reply empty = attempt(server, tenant, "{}");
  EXPECT_EQ(empty.status, 422) << empty.body;
  EXPECT_EQ(empty.error_code(), "missing_field");
  EXPECT_NE(empty.body.find("\"path\":\"amount\""), std::string::npos);
  EXPECT_NE(empty.body.find("\"path\":\"creditor_key_value\""), std::string::npos);
  struct Case {
    std::string body;
    std::string path;
  };
  const std::vector<Case> cases = {
      {attempt_body(1'000, key, with_payment_id(std::string(37, 'P'))), "payment_id"},
      {attempt_body(1'000, key, with_payment_id("")), "payment_id"},
      {attempt_body(1'000, key, R"(,"error":"tx_other")"), "error"},
      {attempt_body(1'000, key, R"(,"creditor_key_type":"iban")"), "creditor_key_type"},
      {attempt_body(1'000, key, R"(,"tip":1)"), "tip"},
      {attempt_body(0, key), "amount.amount"},
      {R"({"amount":{"amount":10,"currency":"USD"},"creditor_key_value":")" + key + "\"}",
       "amount.currency"},
  };
  for (const Case& c : cases) {
    Reply reply = attempt(server, tenant, c.body);
    EXPECT_EQ(reply.status, 400) << c.body << " -> " << reply.body;
    EXPECT_EQ(reply.error_code(), "validation_error") << c.body;
    EXPECT_EQ(reply.error_path(), c.path) << c.body;
  }
  // 36 characters are allowed (a payment_id that names no code is rejected, not refused).
  json::value longest = pay(server, tenant, attempt_body(1'000, key, with_payment_id(std::string(36, 'P'))));
  EXPECT_EQ(text(longest, "attempt_state_reason"), "qr_not_found");
}

TEST(CollectionAttempts, ListsArePagedNewestFirstAndFilteredByState) {
  Server& server = Server::shared();
  Tenant tenant = other_tenant(server, "attempt-lists");  // a tenant with no attempts yet
  json::value collection = create_collection(server, tenant);
  json::value second = create_collection(server, tenant);
  const std::string id = text(collection, "id");
  std::vector<std::string> made;
  for (int i = 0; i < 12; ++i) {
    made.push_back(text(pay(server, tenant, attempt_body(1'000 + i, key_of(collection))), "attempt_id"));
  }
  for (int i = 0; i < 3; ++i) pay(server, tenant, attempt_body(1, key_of(collection)));
  pay(server, tenant, attempt_body(1'000, key_of(second)));

  Reply all = server.get("/api/v1/collections/attempts", {tenant.bearer});
  ASSERT_EQ(all.status, 200) << all.body;
  json::value page = all.json();
  EXPECT_EQ(page.at("attempts").as_array().size(), 10u);
  EXPECT_EQ(page.at("pagination").at("total_items").as_int64(), 16);
  EXPECT_EQ(page.at("pagination").at("total_pages").as_int64(), 2);
  EXPECT_EQ(page.at("pagination").at("page_number").as_int64(), 1);
  EXPECT_EQ(page.at("pagination").at("page_size").as_int64(), 10);
  EXPECT_EQ(text(page.at("attempts").at(0), "collection_id"), text(second, "id"));  // newest

  Reply of_collection =
      server.get("/api/v1/collections/" + id + "/attempts?page_size=10&page_number=2",
                 {tenant.bearer});
  ASSERT_EQ(of_collection.status, 200) << of_collection.body;
  json::value second_page = of_collection.json();
  EXPECT_EQ(second_page.at("pagination").at("total_items").as_int64(), 15);
  ASSERT_EQ(second_page.at("attempts").as_array().size(), 5u);
  // Newest first: the oldest attempt ends the last page.
  EXPECT_EQ(text(second_page.at("attempts").at(4), "id"), made.front());

  Reply rejected = server.get("/api/v1/collections/" + id + "/attempts?state=rejected",
                              {tenant.bearer});
  ASSERT_EQ(rejected.status, 200);
  const json::value rejected_page = rejected.json();  // alive while its array is walked
  EXPECT_EQ(rejected_page.at("pagination").at("total_items").as_int64(), 3);
  for (const json::value& item : rejected_page.at("attempts").as_array()) {
    EXPECT_EQ(text(item, "state"), "rejected");
    EXPECT_EQ(text(item, "state_reason"), "amount_out_of_range");
  }
  Reply successful = server.get("/api/v1/collections/attempts?state=successful&page_size=500",
                                {tenant.bearer});
  EXPECT_EQ(successful.json().at("attempts").as_array().size(), 13u);
  Reply past = server.get("/api/v1/collections/attempts?page_number=9", {tenant.bearer});
  EXPECT_EQ(past.status, 200);
  EXPECT_TRUE(past.json().at("attempts").as_array().empty());

  for (const std::string query : {"?state=done", "?page_size=9", "?page_size=501",
                                  "?page_number=0", "?colour=red"}) {
    Reply bad = server.get("/api/v1/collections/attempts" + query, {tenant.bearer});
    EXPECT_EQ(bad.status, 400) << query;
    EXPECT_EQ(bad.error_code(), "validation_error") << query;
  }
  // One attempt: under its own collection only.
  EXPECT_EQ(server.get("/api/v1/collections/" + text(second, "id") + "/attempts/" + made[0],
                       {tenant.bearer})
                .error_code(),
            "item_not_found");
  EXPECT_EQ(server.get("/api/v1/collections/bbcol_AAAAAAAAAAAAAAAAAAAAAA/attempts/" + made[0],
                       {tenant.bearer})
                .error_code(),
            "collection_not_found");
  EXPECT_EQ(server.get("/api/v1/collections/bbcol_AAAAAAAAAAAAAAAAAAAAAA/attempts",
                       {tenant.bearer})
                .error_code(),
            "collection_not_found");
  EXPECT_EQ(server.get("/api/v1/collections/" + id + "/attempts/bbcolat_AAAAAAAAAAAAAAAAAAAAAA",
                       {tenant.bearer})
                .error_code(),
            "item_not_found");
  Reply malformed = server.get("/api/v1/collections/" + id + "/attempts/at_1", {tenant.bearer});
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(malformed.error_path(), "id");
  // Another tenant sees none of them.
  Tenant stranger = init_tenant(server);
  EXPECT_EQ(server.get("/api/v1/collections/" + id + "/attempts/" + made[0], {stranger.bearer})
                .error_code(),
            "collection_not_found");
}

TEST(CollectionAttempts, ScopesGuardAttemptsAndLists) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  json::value collection = create_collection(server, tenant);
  Tenant reader = init_tenant(server, "collections:readonly");
  Reply refused = attempt(server, reader, attempt_body(1'000, key_of(collection)));
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(refused.error_code(), "not_authorized");
  EXPECT_EQ(server.get("/api/v1/collections/attempts", {reader.bearer}).status, 200);
  EXPECT_EQ(server.get("/api/v1/collections/" + text(collection, "id") + "/attempts",
                       {reader.bearer})
                .status,
            200);
  Tenant transfers = init_tenant(server, "outgoing_transfers");
  EXPECT_EQ(server.get("/api/v1/collections/attempts", {transfers.bearer}).status, 403);
}

TEST(CollectionAttempts, AReplayWithTheSameIdempotencyKeyPaysOnce) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  json::value collection = create_collection(server, tenant);
  const long long before = tenant_account_balance(server, tenant);
  const std::string key = "x-idempotency-key: " + harness::new_uuid();
  const std::string body = attempt_body(4'200, key_of(collection));
  Reply first = server.post("/api/v1/sandbox/collections/attempts", body, {tenant.bearer, key});
  ASSERT_EQ(first.status, 202) << first.body;
  Reply again = server.post("/api/v1/sandbox/collections/attempts", body, {tenant.bearer, key});
  EXPECT_EQ(again.status, 202);
  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(again.header("idempotent-replayed"), "true");
  EXPECT_EQ(tenant_account_balance(server, tenant), before + 4'200);
  Reply listed = server.get("/api/v1/collections/" + text(collection, "id") + "/attempts",
                            {tenant.bearer});
  EXPECT_EQ(listed.json().at("pagination").at("total_items").as_int64(), 1);
}

TEST(CollectionAttempts, TheSimulationIsAbsentInProduction) {
  Server server({{"--environment", "production"}});
  Reply reply = server.post("/api/v1/sandbox/collections/attempts", attempt_body(1'000, "@X"));
  EXPECT_EQ(reply.status, 404);
  EXPECT_EQ(reply.error_code(), "route_not_found");
}

TEST(CollectionAttempts, MutatedBodiesNeverEarnA5xx) {
  Server& server = Server::shared();
  Tenant tenant = init_tenant(server);
  json::value collection = create_collection(server, tenant);
  std::mt19937 random(20261124);
  const std::string valid = attempt_body(
      1'000, key_of(collection),
      R"(,"payer":{"name":"Ana","document_type":"CC","document_number":"1"},"payment_id":"P")");
  for (int i = 0; i < 120; ++i) {
    std::string body = harness::mutate_body(valid, random);
    Reply reply = attempt(server, tenant, body);
    ASSERT_GT(reply.status, 0) << body;
    EXPECT_LT(reply.status, 500) << body << " -> " << reply.body;
  }
}
