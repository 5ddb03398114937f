// Account statements: GET /v1/accounts/{id}/entries, GET /api/v1/tenant/accounts/{id}/entries
// (JSON and CSV) and GET /v1/accounts/{id}?as_of=, for every kind of posting the ledger makes.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "payment_fixtures.hpp"

using harness::Reply;
using harness::Server;
using harness::text;
using payment_fixtures::amount_of;
using payment_fixtures::money;
namespace json = boost::json;

namespace {

std::string open_account(const Server& server) {
  Reply opened = server.post("/v1/ledger/accounts",
                             R"({"name":"statement","type":"savings_account","currency":"COP"})",
                             {server.bearer_core()});
  EXPECT_EQ(opened.status, 201) << opened.body;
  return text(opened.json(), "id");
}

void fund(const Server& server, const std::string& account, long long amount,
          const std::string& description = "") {
  std::string body = R"({"amount":)" + money(amount);
  if (!description.empty()) body += R"(,"description":)" + json::serialize(json::value(description));
  Reply funded = server.post("/v1/sandbox/accounts/" + account + "/fund", body + "}",
                             {server.bearer_core()});
  ASSERT_EQ(funded.status, 201) << funded.body;
}

json::value entries_of(const Server& server, const std::string& path,
                       const std::string& header) {
  Reply reply = server.get(path, {header});
  EXPECT_EQ(reply.status, 200) << path << ": " << reply.body;
  return reply.status == 200 ? reply.json() : json::value(json::object{});
}

// The page's items, newest first.
json::array items_of(const Server& server, const std::string& path, const std::string& header) {
  json::value page = entries_of(server, path, header);
  return page.as_object().contains("entries") ? page.at("entries").as_array() : json::array{};
}

json::array core_entries(const Server& server, const std::string& account,
                         const std::string& query = "") {
  return items_of(server, "/v1/accounts/" + account + "/entries" + query, server.bearer_core());
}

long long current_balance(const Server& server, const std::string& account) {
  Reply reply = server.get("/v1/accounts/" + account, {server.bearer_core()});
  EXPECT_EQ(reply.status, 200) << reply.body;
  return amount_of(reply.json().at("balance"), "current");
}

// The statement's promise: the newest balance_after is the current balance, and each item's is
// the one below it plus (credit) or minus (debit) its amount, down to 0 below the oldest; every
// instant is no earlier than the one below it.
void expect_chain(const json::array& entries, long long current) {
  ASSERT_FALSE(entries.empty());
  EXPECT_EQ(amount_of(entries.at(0), "balance_after"), current);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const json::value& entry = entries.at(i);
    const long long below = i + 1 < entries.size() ? amount_of(entries.at(i + 1), "balance_after") : 0;
    const long long amount = amount_of(entry, "amount");
    EXPECT_GT(amount, 0) << entry;
    const long long expected = text(entry, "direction") == "credit" ? below + amount : below - amount;
    EXPECT_EQ(amount_of(entry, "balance_after"), expected) << "item " << i << ": " << entry;
    if (i + 1 < entries.size()) {
      EXPECT_GE(text(entry, "created_at"), text(entries.at(i + 1), "created_at")) << i;
    }
    EXPECT_EQ(text(entry, "journal_entry_id").substr(0, 4), "jen_");
    EXPECT_EQ(text(entry, "id").substr(0, 4), "pst_");
  }
}

struct Expected {
  std::string direction;
  long long amount;
  std::string reference_type;
  std::string reference_id;  // "" when it is the entry's own id (a sandbox funding)
};

void expect_items(const json::array& entries, const std::vector<Expected>& expected) {
  ASSERT_EQ(entries.size(), expected.size()) << json::serialize(entries);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const json::value& entry = entries.at(i);
    EXPECT_EQ(text(entry, "direction"), expected[i].direction) << i << ": " << entry;
    EXPECT_EQ(amount_of(entry, "amount"), expected[i].amount) << i << ": " << entry;
    EXPECT_EQ(text(entry.at("reference"), "type"), expected[i].reference_type) << i;
    const std::string id = expected[i].reference_id.empty() ? text(entry, "journal_entry_id")
                                                            : expected[i].reference_id;
    EXPECT_EQ(text(entry.at("reference"), "id"), id) << i << ": " << entry;
  }
}

json::value step(const Server& server, const std::string& id, const std::string& name,
                 const std::string& body = "") {
  Reply reply = server.post("/v1/sandbox/card_transactions/" + id + "/" + name, body,
                            {server.bearer_core()});
  EXPECT_EQ(reply.status, 200) << reply.body;
  return reply.json();
}

// Moves the clock past every step of the network and waits for `path` to show a final state.
json::value settled(const Server& server, const std::string& path, const std::string& header) {
  Reply advanced = server.post(path.find("/api/") == 0 ? "/api/v1/sandbox/clock/advance"
                                                       : "/v1/sandbox/clock/advance",
                               R"({"seconds":30})", {header});
  EXPECT_EQ(advanced.status, 200) << advanced.body;
  json::value found;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  do {
    Reply reply = server.get(path, {header});
    EXPECT_EQ(reply.status, 200) << reply.body;
    found = reply.json();
    const std::string state = text(found, "state");
    if (state == "settled" || state == "failed" || state == "successful" || state == "rejected") {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  } while (std::chrono::steady_clock::now() < deadline);
  return found;
}

// A synthetic directory key nobody registered (a cellphone ending in 5).
std::string fresh_cellphone() {
  static std::atomic<int> next{0};
  static const int base = static_cast<int>(std::random_device{}() % 4'000'000);
  return "31" + std::to_string(1'000'000 + (base + next++) % 9'000'000) + "5";
}

// RFC 4180 rows (quoted fields, doubled quotes, CRLF line ends).
std::vector<std::vector<std::string>> parse_csv(const std::string& body) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (quoted) {
      if (c == '"' && i + 1 < body.size() && body[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field);
      field.clear();
    } else if (c == '\r' && i + 1 < body.size() && body[i + 1] == '\n') {
      rows.back().push_back(field);
      field.clear();
      rows.emplace_back();
      ++i;
    } else {
      field += c;
    }
  }
  if (rows.back().empty() && field.empty()) rows.pop_back();
  return rows;
}

}  // namespace

// Core accounts and a card's prepaid balance: fundings, balance operations (the initial balance,
// a withdrawal), a payout, card captures and refunds; an authorization's hold is no posting.
TEST(AccountStatements, CoreAccountsAndPrepaidBalancesChainEveryPostingKind) {
  Server server;  // a clock of its own to advance
  const std::string account = open_account(server);
  fund(server, account, 100'000);
  Reply card = server.post("/v1/cards",
                           R"({"account_id":")" + account + R"(","initial_balance":)" +
                               money(30'000) + "}",
                           {server.bearer_core()});
  ASSERT_EQ(card.status, 201) << card.body;
  const std::string card_id = text(card.json(), "id");
  const std::string prepaid = text(card.json(), "prepaid_account_id");
  ASSERT_EQ(prepaid.substr(0, 4), "acc_");
  Reply operations = server.get("/v1/cards/" + card_id + "/prepaid/operations",
                                {server.bearer_core()});
  ASSERT_EQ(operations.status, 200);
  const std::string topup = text(operations.json().at("balance_operations").at(0), "id");
  Reply withdrawal = server.post("/v1/cards/" + card_id + "/prepaid/operations",
                                 R"({"operation":"withdrawal","amount":)" + money(5'000) +
                                     R"(,"entity_id":")" + harness::new_uuid() + R"("})",
                                 {server.bearer_core()});
  ASSERT_EQ(withdrawal.status, 201) << withdrawal.body;
  const std::string withdrawal_id = text(withdrawal.json(), "id");

  Reply authorized = server.post(
      "/v1/sandbox/cards/" + card_id + "/authorizations",
      R"({"amount":)" + money(7'000) +
          R"(,"merchant":{"name":"Acme","mcc":"5812","mid":"M1","country":"CO"},"channel":"online_purchase"})",
      {server.bearer_core()});
  ASSERT_EQ(authorized.status, 201) << authorized.body;
  const std::string transaction = text(authorized.json(), "id");
  // Held, not posted: the prepaid statement still has its two operations.
  EXPECT_EQ(core_entries(server, prepaid).size(), 2u);
  step(server, transaction, "capture");
  step(server, transaction, "refund", R"({"amount":)" + money(2'000) + "}");

  Reply payout = server.post(
      "/v1/core/payouts",
      R"({"account_id":")" + account + R"(","external_id":")" + harness::new_uuid() +
          R"(","method":"co_breb","amount":)" + money(20'000) +
          R"(,"target":{"key_type":"cellphone","key_value":")" + fresh_cellphone() + R"("}})",
      {server.bearer_core()});
  ASSERT_EQ(payout.status, 201) << payout.body;
  const std::string payout_id = text(payout.json(), "id");
  ASSERT_EQ(text(settled(server, "/v1/core/payouts/" + payout_id, server.bearer_core()), "state"),
            "settled");

  const json::array core = core_entries(server, account);
  expect_items(core, {{"debit", 20'000, "payout", payout_id},
                      {"credit", 5'000, "card_balance_operation", withdrawal_id},
                      {"debit", 30'000, "card_balance_operation", topup},
                      {"credit", 100'000, "sandbox_funding", ""}});
  expect_chain(core, current_balance(server, account));
  EXPECT_EQ(current_balance(server, account), 55'000);

  const json::array card_entries = core_entries(server, prepaid);
  expect_items(card_entries, {{"credit", 2'000, "card_transaction", transaction},
                              {"debit", 7'000, "card_transaction", transaction},
                              {"debit", 5'000, "card_balance_operation", withdrawal_id},
                              {"credit", 30'000, "card_balance_operation", topup}});
  expect_chain(card_entries, current_balance(server, prepaid));
  Reply card_view = server.get("/v1/cards/" + card_id, {server.bearer_core()});
  EXPECT_EQ(amount_of(card_view.json().at("balance"), "posted"), 20'000);
  EXPECT_EQ(current_balance(server, prepaid), 20'000);
  EXPECT_EQ(text(card_entries.at(1), "description"), "card transaction " + transaction);
}

// Tenant accounts: fundings, an outgoing transfer's settlement, a collection's payment.
TEST(AccountStatements, TenantAccountsChainFundingsTransfersAndCollectionPayments) {
  Server server;  // a clock of its own to advance
  const payment_fixtures::Tenant tenant = payment_fixtures::init_tenant(server);
  Reply originators = server.get("/api/v1/tenant/accounts?role=originator", {tenant.bearer});
  ASSERT_EQ(originators.status, 200);
  const std::string originator = text(originators.json().at(0), "id");
  auto tenant_entries = [&](const std::string& id) {
    return items_of(server, "/api/v1/tenant/accounts/" + id + "/entries", tenant.bearer);
  };
  auto tenant_balance = [&](const std::string& id) {
    Reply reply = server.get("/api/v1/tenant/accounts", {tenant.bearer});
    const json::value accounts = reply.json();  // alive while its array is walked
    for (const json::value& item : accounts.as_array()) {
      if (text(item, "id") == id) return amount_of(item.at("balance"), "current");
    }
    ADD_FAILURE() << "no tenant account " << id;
    return -1LL;
  };
  const std::size_t originator_before = tenant_entries(originator).size();
  Reply funded = server.post("/api/v1/sandbox/tenant/accounts/" + originator + "/fund",
                             R"({"amount":)" + money(50'000) + "}", {tenant.bearer});
  ASSERT_EQ(funded.status, 201) << funded.body;
  json::object item{{"external_id", harness::new_uuid()},
                    {"amount", json::parse(money(12'000))},
                    {"query", json::object{{"format", "plain_key"}, {"value", fresh_cellphone()}}}};
  Reply batch = server.post("/api/v1/outgoing_transfers",
                            json::serialize(json::object{{"tenant_account_id", originator},
                                                         {"transfers", json::array{item}}}),
                            {tenant.bearer});
  ASSERT_EQ(batch.status, 201) << batch.body;
  const std::string transfer = text(batch.json().at("accepted_transfers").at(0), "id");
  ASSERT_EQ(text(settled(server, "/api/v1/outgoing_transfers/" + transfer, tenant.bearer),
                 "state"),
            "successful");
  const json::array out = tenant_entries(originator);
  ASSERT_EQ(out.size(), originator_before + 2);
  expect_items(json::array(out.begin(), out.begin() + 2),
               {{"debit", 12'000, "outgoing_transfer", transfer},
                {"credit", 50'000, "sandbox_funding", ""}});
  expect_chain(out, tenant_balance(originator));

  const json::value collection = payment_fixtures::create_collection(server, tenant);
  Reply attempt = payment_fixtures::attempt(
      server, tenant, payment_fixtures::attempt_body(3'000, payment_fixtures::key_of(collection)));
  ASSERT_EQ(attempt.status, 202) << attempt.body;
  const std::string attempt_id = text(attempt.json(), "attempt_id");
  ASSERT_EQ(text(attempt.json(), "attempt_state"), "successful") << attempt.body;
  const json::array in = tenant_entries(tenant.tenant_account_id);
  ASSERT_FALSE(in.empty());
  expect_items(json::array(in.begin(), in.begin() + 1),
               {{"credit", 3'000, "collection_attempt", attempt_id}});
  expect_chain(in, tenant_balance(tenant.tenant_account_id));
}

TEST(AccountStatements, PagesAndTimeFiltersOnTheTenantClock) {
  Server server;  // its own clock
  const std::string account = open_account(server);
  auto advance = [&](int seconds) {
    Reply advanced = server.post("/v1/sandbox/clock/advance",
                                 R"({"seconds":)" + std::to_string(seconds) + "}",
                                 {server.bearer_core()});
    EXPECT_EQ(advanced.status, 200) << advanced.body;
    return text(advanced.json(), "now");
  };
  for (int i = 1; i <= 12; ++i) fund(server, account, i);
  const std::string after_first = advance(3600);
  for (int i = 13; i <= 25; ++i) fund(server, account, i);
  const std::string after_second = advance(3600);
  fund(server, account, 26);

  // Pages of 10, newest first, none overlapping, the last partial, one past the end empty.
  std::vector<long long> seen;
  for (int page = 1; page <= 3; ++page) {
    json::value body = entries_of(server,
                                  "/v1/accounts/" + account + "/entries?page_size=10&page_number=" +
                                      std::to_string(page),
                                  server.bearer_core());
    EXPECT_EQ(body.at("pagination").at("total_items").as_int64(), 26);
    EXPECT_EQ(body.at("pagination").at("total_pages").as_int64(), 3);
    for (const json::value& entry : body.at("entries").as_array()) {
      seen.push_back(amount_of(entry, "amount"));
    }
  }
  ASSERT_EQ(seen.size(), 26u);
  for (int i = 0; i < 26; ++i) EXPECT_EQ(seen[i], 26 - i);
  EXPECT_TRUE(core_entries(server, account, "?page_number=4").empty());

  // The instants are the tenant clock's: the advances show between the fundings.
  const json::array all = core_entries(server, account, "?page_size=30");
  expect_chain(all, current_balance(server, account));
  EXPECT_GE(text(all.at(0), "created_at"), after_second);
  EXPECT_GE(text(all.at(1), "created_at"), after_first);
  EXPECT_GE(text(all.at(13), "created_at"), after_first);
  EXPECT_LT(text(all.at(14), "created_at"), after_first);

  // Both bounds inclusive; the total counts what matches.
  json::value middle = entries_of(server,
                                  "/v1/accounts/" + account + "/entries?created_at[gte]=" +
                                      after_first + "&created_at[lte]=" + after_second +
                                      "&page_size=10",
                                  server.bearer_core());
  EXPECT_EQ(middle.at("pagination").at("total_items").as_int64(), 13);
  EXPECT_EQ(amount_of(middle.at("entries").at(0), "amount"), 25);
  const json::array since = core_entries(server, account, "?created_at[gte]=" + after_second);
  ASSERT_EQ(since.size(), 1u);
  EXPECT_EQ(amount_of(since.at(0), "amount"), 26);
  const std::string exact = text(since.at(0), "created_at");
  EXPECT_EQ(core_entries(server, account, "?created_at[gte]=" + exact + "&created_at[lte]=" + exact)
                .size(),
            1u);
  json::value before = entries_of(server,
                                  "/v1/accounts/" + account + "/entries?created_at[lte]=" +
                                      after_first + "&page_size=50",
                                  server.bearer_core());
  EXPECT_EQ(before.at("pagination").at("total_items").as_int64(), 12);
  EXPECT_EQ(amount_of(before.at("entries").at(0), "balance_after"), 78);  // 1 + ... + 12
  json::value none = entries_of(server,
                                "/v1/accounts/" + account + "/entries?created_at[gte]=" +
                                    after_second + "&created_at[lte]=" + after_first,
                                server.bearer_core());
  EXPECT_EQ(none.at("pagination").at("total_items").as_int64(), 0);
  EXPECT_TRUE(none.at("entries").as_array().empty());

  // Bad queries: a 400 naming the parameter, whatever else is right.
  for (const auto& [query, path] :
       std::vector<std::pair<std::string, std::string>>{{"?created_at[gte]=yesterday", "created_at[gte]"},
                                                        {"?created_at[lte]=2026-13-01T00:00:00Z", "created_at[lte]"},
                                                        {"?page_size=501", "page_size"},
                                                        {"?page_number=0", "page_number"},
                                                        {"?colour=blue", "colour"}}) {
    Reply bad = server.get("/v1/accounts/" + account + "/entries" + query, {server.bearer_core()});
    EXPECT_EQ(bad.status, 400) << query << ": " << bad.body;
    EXPECT_EQ(bad.error_path(), path) << query;
  }
  server.check_ledger();
}

TEST(AccountStatements, CsvRowsAreTheJsonItems) {
  const Server& server = Server::shared();
  const std::string account = open_account(server);
  fund(server, account, 1'500, "plain");
  fund(server, account, 2'500, "a \"quoted\", comma; and more");
  fund(server, account, 700, "=SUM(A1)");
  const json::array items = core_entries(server, account);
  Reply csv = server.get("/v1/accounts/" + account + "/entries", {server.bearer_core(), "Accept: text/csv"});
  ASSERT_EQ(csv.status, 200) << csv.body;
  EXPECT_EQ(csv.header("content-type"), "text/csv; charset=utf-8");
  EXPECT_EQ(csv.header("content-disposition"),
            "attachment; filename=\"" + account + "-entries-page-1.csv\"");
  const auto rows = parse_csv(csv.body);
  ASSERT_EQ(rows.size(), items.size() + 1) << csv.body;
  EXPECT_EQ(rows[0], (std::vector<std::string>{"id", "created_at", "direction", "amount", "currency",
                                               "balance_after", "description", "reference_type",
                                               "reference_id", "journal_entry_id"}));
  for (std::size_t i = 0; i < items.size(); ++i) {
    const json::value& item = items.at(i);
    EXPECT_EQ(rows[i + 1], (std::vector<std::string>{
                               text(item, "id"), text(item, "created_at"), text(item, "direction"),
                               std::to_string(amount_of(item, "amount")),
                               text(item.at("amount"), "currency"),
                               std::to_string(amount_of(item, "balance_after")),
                               text(item, "description"), text(item.at("reference"), "type"),
                               text(item.at("reference"), "id"), text(item, "journal_entry_id")}))
        << i;
  }
  EXPECT_EQ(rows[2][6], "a \"quoted\", comma; and more");
  // The same page and filters as JSON; a preference by quality decides.
  Reply paged = server.get("/v1/accounts/" + account + "/entries?page_size=10&page_number=2",
                           {server.bearer_core(), "Accept: text/csv"});
  EXPECT_EQ(parse_csv(paged.body).size(), 1u) << "the header row alone past the last page";
  for (const auto& [accept, is_csv] : std::vector<std::pair<std::string, bool>>{
           {"text/csv", true},
           {"text/*", true},
           {"application/json;q=0.5, text/csv", true},
           {"TEXT/CSV", true},
           {"application/json", false},
           {"*/*", false},
           {"text/csv;q=0.5, application/json", false},
           {"text/csv;q=0", false},
           {"text/csv, application/json", false}}) {
    Reply reply = server.get("/v1/accounts/" + account + "/entries",
                             {server.bearer_core(), "Accept: " + accept});
    ASSERT_EQ(reply.status, 200) << accept;
    EXPECT_EQ(reply.header("content-type").rfind("text/csv", 0) == 0, is_csv) << accept;
  }
  // Errors stay JSON envelopes.
  Reply bad = server.get("/v1/accounts/" + account + "/entries?page_size=0",
                         {server.bearer_core(), "Accept: text/csv"});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.error_path(), "page_size");
}

TEST(AccountStatements, BalanceAsOfAnInstant) {
  Server server;  // its own clock
  const std::string account = open_account(server);
  auto now = [&] {
    Reply clock = server.get("/v1/sandbox/clock", {server.bearer_core()});
    EXPECT_EQ(clock.status, 200) << clock.body;
    return text(clock.json(), "now");
  };
  auto as_of = [&](const std::string& at) {
    Reply reply = server.get("/v1/accounts/" + account + "?as_of=" + at, {server.bearer_core()});
    EXPECT_EQ(reply.status, 200) << at << ": " << reply.body;
    return reply.json();
  };
  const std::string before_any = now();
  fund(server, account, 1'000);
  const std::string created_first = text(core_entries(server, account).at(0), "created_at");
  Reply advanced = server.post("/v1/sandbox/clock/advance", R"({"seconds":86400})",
                               {server.bearer_core()});
  ASSERT_EQ(advanced.status, 200);
  const std::string between = now();
  fund(server, account, 500);
  // A hold is no posting: as of now, the balance is the posted one and nothing is held.
  Reply card = server.post("/v1/cards",
                           R"({"account_id":")" + account + R"(","initial_balance":)" + money(300) + "}",
                           {server.bearer_core()});
  ASSERT_EQ(card.status, 201) << card.body;

  json::value first = as_of(before_any);
  EXPECT_EQ(amount_of(first.at("balance"), "current"), 0);
  EXPECT_EQ(amount_of(first.at("balance"), "available"), 0);
  json::value at_first = as_of(created_first);
  EXPECT_EQ(amount_of(at_first.at("balance"), "current"), 1'000);
  EXPECT_EQ(text(at_first.at("balance"), "updated_at"), created_first);
  json::value middle = as_of(between);
  EXPECT_EQ(amount_of(middle.at("balance"), "current"), 1'000);
  EXPECT_EQ(amount_of(middle.at("balance"), "available"), 1'000);
  EXPECT_EQ(amount_of(middle.at("balance"), "held"), 0);
  EXPECT_EQ(text(middle, "id"), account);
  json::value latest = as_of(now());
  EXPECT_EQ(amount_of(latest.at("balance"), "current"), 1'200);
  EXPECT_EQ(amount_of(latest.at("balance"), "current"), current_balance(server, account));
  // An instant with another zone names the same moment.
  EXPECT_EQ(amount_of(as_of("2000-01-01T05:00:00%2B05:00").at("balance"), "current"), 0);

  for (const std::string& bad : {std::string("yesterday"), std::string("2026-02-30T00:00:00Z"),
                                 std::string("2026-01-01T00:00:00"), std::string("2999-01-01T00:00:00Z")}) {
    Reply reply = server.get("/v1/accounts/" + account + "?as_of=" + bad, {server.bearer_core()});
    EXPECT_EQ(reply.status, 400) << bad << ": " << reply.body;
    EXPECT_EQ(reply.error_code(), "validation_error") << bad;
    EXPECT_EQ(reply.error_path(), "as_of") << bad;
  }
  // The future is the tenant clock's: a day ahead of real time is past for this tenant.
  Reply ahead = server.post("/v1/sandbox/clock/advance", R"({"seconds":86400})", {server.bearer_core()});
  ASSERT_EQ(ahead.status, 200);
  EXPECT_EQ(amount_of(as_of(text(advanced.json(), "now")).at("balance"), "current"), 1'000);
  server.check_ledger();
}

TEST(AccountStatements, OneTenantNeverReadsAnothersStatement) {
  const Server& server = Server::shared();
  const std::string mine = open_account(server);
  fund(server, mine, 900);
  json::value other = json::parse(server.command({"tenant", "create", "--name", "statements-other", "--json"}));
  const std::string other_key = "Authorization: Bearer " + text(other, "api_key");
  for (const std::string& path : {"/v1/accounts/" + mine + "/entries", "/v1/accounts/" + mine + "?as_of=2020-01-01T00:00:00Z"}) {
    Reply reply = server.get(path, {other_key});
    EXPECT_EQ(reply.status, 404) << path << ": " << reply.body;
    EXPECT_EQ(reply.error_code(), "item_not_found");
  }
  const payment_fixtures::Tenant tenant = payment_fixtures::init_tenant(server);
  const payment_fixtures::Tenant stranger = payment_fixtures::other_tenant(server, "statements-stranger");
  Reply foreign = server.get("/api/v1/tenant/accounts/" + tenant.tenant_account_id + "/entries",
                             {stranger.bearer});
  EXPECT_EQ(foreign.status, 404) << foreign.body;
  EXPECT_EQ(foreign.error_code(), "tenant_account_not_found");
  // Ids of the wrong kind are malformed on each surface.
  Reply tenant_id_on_core = server.get("/v1/accounts/" + tenant.tenant_account_id + "/entries",
                                       {server.bearer_core()});
  EXPECT_EQ(tenant_id_on_core.status, 400);
  EXPECT_EQ(tenant_id_on_core.error_path(), "id");
  Reply core_id_on_tenant = server.get("/api/v1/tenant/accounts/" + mine + "/entries", {tenant.bearer});
  EXPECT_EQ(core_id_on_tenant.status, 400);
  EXPECT_EQ(core_id_on_tenant.error_path(), "id");
  // A tenant account's statement needs the participant credential.
  Reply core_key = server.get("/api/v1/tenant/accounts/" + tenant.tenant_account_id + "/entries",
                              {server.bearer_core()});
  EXPECT_EQ(core_key.status, 401) << core_key.body;
}

// A data folder written by the release before statements (schema 28; tests/fixtures/
// release-schema-28, made by its make.sh with that release's binary after a tenant used every
// kind of posting), served by this binary: migrated at start, its history is whole. Every
// account's statement chains to its balance, each posting names what caused it, the held
// authorization is no posting, and `tesoro verify` (the harness runs it at the end) passes.
TEST(AccountStatements, ADataFolderOfTheReleaseBeforeMigratesWithItsHistory) {
  Server server;
  if (server.store_flags().at(0) != "--data") {
    GTEST_SKIP() << "a data folder is SQLite's; PostgreSQL's migration of schema 28 is "
                    "tests/unit/migration_test.cpp's";
  }
  const std::string data = server.store_flags().at(1);
  const std::string fixture = std::string(TESORO_SOURCE_DIR) + "/tests/fixtures/release-schema-28";
  server.stop();
  for (const char* file : {"/tesoro.db", "/tesoro.db-wal", "/tesoro.db-shm"}) {
    std::filesystem::remove(data + file);
  }
  int code = 0;
  harness::run_capture("sqlite3 " + harness::shell_quote(data + "/tesoro.db") + " < " +
                           harness::shell_quote(fixture + "/tesoro.sql") + " 2>&1",
                       &code);
  ASSERT_EQ(code, 0);
  ASSERT_EQ(server.sql("SELECT MAX(version) FROM schema_migrations"), "28\n");
  std::filesystem::copy_file(fixture + "/card-number.key", data + "/card-number.key",
                             std::filesystem::copy_options::overwrite_existing);
  server.start();
  EXPECT_NE(server.sql("SELECT MAX(version) FROM schema_migrations"), "28\n");

  std::string tenant = server.sql("SELECT id FROM tenants");
  ASSERT_FALSE(tenant.empty());
  tenant.pop_back();
  const json::value key = json::parse(
      server.command({"keys", "create", "--tenant", tenant, "--scopes", "ledger:read,cards:read", "--json"}));
  const std::string bearer = "Authorization: Bearer " + text(key, "api_key");
  auto balance_of = [&](const std::string& id) {
    Reply reply = server.get("/v1/accounts/" + id, {bearer});
    EXPECT_EQ(reply.status, 200) << reply.body;
    return amount_of(reply.json().at("balance"), "current");
  };
  auto statement = [&](const std::string& id) {
    return items_of(server, "/v1/accounts/" + id + "/entries?page_size=50", bearer);
  };
  auto types = [](const json::array& entries) {
    std::vector<std::string> out;
    for (const json::value& entry : entries) out.push_back(text(entry.at("reference"), "type"));
    return out;
  };

  // The tenant's own account: its opening deposit, the card's initial balance and withdrawal,
  // the payout; the holder's account: its funding.
  Reply accounts = server.get("/v1/accounts?page_size=50", {bearer});
  ASSERT_EQ(accounts.status, 200) << accounts.body;
  const json::value listed = accounts.json();
  ASSERT_EQ(listed.at("accounts").as_array().size(), 2u);
  for (const json::value& account : listed.at("accounts").as_array()) {
    const std::string id = text(account, "id");
    const json::array entries = statement(id);
    expect_chain(entries, balance_of(id));
    if (account.at("account_holder_id").is_null()) {
      EXPECT_EQ(types(entries), (std::vector<std::string>{"payout", "card_balance_operation",
                                                          "card_balance_operation", "sandbox_funding"}));
      EXPECT_EQ(text(entries.at(3), "description"), "opening deposit");
    } else {
      EXPECT_EQ(types(entries), (std::vector<std::string>{"sandbox_funding"}));
    }
  }
  // The card's prepaid balance: initial balance, withdrawal, capture, refund; the 5,000 still
  // held is no posting.
  Reply cards = server.get("/v1/cards", {bearer});
  ASSERT_EQ(cards.status, 200) << cards.body;
  const json::value card = cards.json().at("cards").at(0);
  const std::string prepaid = text(card, "prepaid_account_id");
  const json::array prepaid_entries = statement(prepaid);
  expect_chain(prepaid_entries, balance_of(prepaid));
  EXPECT_EQ(types(prepaid_entries), (std::vector<std::string>{"card_transaction", "card_transaction",
                                                              "card_balance_operation",
                                                              "card_balance_operation"}));
  EXPECT_EQ(amount_of(card.at("balance"), "posted"), 300'000 - 20'000 - 50'000 + 10'000);
  Reply transactions = server.get("/v1/cards/" + text(card, "id") + "/transactions", {bearer});
  ASSERT_EQ(transactions.status, 200);
  std::string captured;
  const json::value listed_transactions = transactions.json();  // alive while walked
  for (const json::value& t : listed_transactions.at("transactions").as_array()) {
    if (text(t, "state") != "pending") captured = text(t, "id");
  }
  EXPECT_EQ(text(prepaid_entries.at(0).at("reference"), "id"), captured);

  // Tenant accounts: the originator's funding and transfer, the receptor's payment.
  const json::value client = json::parse(server.command(
      {"clients", "create", "--tenant", tenant, "--scopes", "tenant_accounts:readonly", "--json"}));
  Reply token = server.post("/api/v1/oauth/token",
                            json::serialize(json::object{{"grant_type", "client_credentials"},
                                                         {"client_id", client.at("client_id")},
                                                         {"client_secret", client.at("client_secret")}}));
  ASSERT_EQ(token.status, 200) << token.body;
  const std::string participant = "Authorization: Bearer " + text(token.json(), "access_token");
  Reply tenant_accounts = server.get("/api/v1/tenant/accounts", {participant});
  ASSERT_EQ(tenant_accounts.status, 200);
  const json::value tenant_list = tenant_accounts.json();
  for (const json::value& account : tenant_list.as_array()) {
    const json::array entries =
        items_of(server, "/api/v1/tenant/accounts/" + text(account, "id") + "/entries", participant);
    expect_chain(entries, amount_of(account.at("balance"), "current"));
    EXPECT_EQ(types(entries), text(account, "role") == "originator"
                                  ? (std::vector<std::string>{"outgoing_transfer", "sandbox_funding"})
                                  : (std::vector<std::string>{"collection_attempt"}));
  }
}
