#pragma once
// What the QR code and collection attempt tests share: a participant token, collections made
// through POST /api/v1/collections, QR codes, sandbox attempts, the tenant account's balance,
// and a look at the events a server wrote, read from its database (whatever the tenant, and
// before the sequencer positions them; the events API is tests/api/events_test.cpp's).
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "emitted_events.hpp"
#include "harness.hpp"

namespace payment_fixtures {

using harness::Reply;
using harness::Server;
namespace json = boost::json;

using harness::text;

inline std::string money(long long amount, const std::string& currency = "COP") {
  return R"({"amount":)" + std::to_string(amount) + R"(,"currency":")" + currency + R"("})";
}

inline long long amount_of(const json::value& value, std::string_view key) {
  return value.at(key).at("amount").as_int64();
}

// Microseconds since the epoch of one of the server's timestamps (2025-01-31T12:00:00.000000Z).
inline long long micros_of(const std::string& iso) {
  std::tm tm{};
  EXPECT_NE(::strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%S", &tm), nullptr) << iso;
  return static_cast<long long>(::timegm(&tm)) * 1'000'000 + std::stoll(iso.substr(20, 6));
}

// A tenant as the participant API sees it: a bearer header and its receptor tenant account.
struct Tenant {
  std::string bearer;
  std::string tenant_account_id;
};

inline Tenant init_tenant(const Server& server, const std::string& scope = "") {
  return {"Authorization: Bearer " + server.access_token(scope),
          std::string(server.credentials().at("tenant_account_ids").at(0).as_string())};
}

// Another sandbox tenant of the same server, with a token of its own client.
inline Tenant other_tenant(const Server& server, const std::string& name) {
  json::value made = json::parse(server.command({"tenant", "create", "--name", name, "--json"}));
  json::object body{{"grant_type", "client_credentials"},
                    {"client_id", made.at("client_id")},
                    {"client_secret", made.at("client_secret")}};
  Reply token = server.post("/api/v1/oauth/token", json::serialize(body));
  EXPECT_EQ(token.status, 200) << token.body;
  return {"Authorization: Bearer " + text(token.json(), "access_token"),
          std::string(made.at("tenant_account_ids").at(0).as_string())};
}

// An alphanumeric key nobody has: @ and 12 capitals or digits.
inline std::string fresh_key() {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  static const char k_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string key = "@";
  for (int i = 0; i < 12; ++i) key += k_chars[random() % 36];
  return key;
}

struct CollectionSpec {
  std::string usage_mode = "multiple_use";
  long long minimum_attempt = 100;
  long long maximum_attempt = 1'000'000;
  long long total_minimum = 1'000'000;
  long long total_maximum = 5'000'000;
  std::string key = fresh_key();
  std::string key_type = "alphanumeric";
  std::string currency = "COP";
};

// A multiple-use collection with these four limits and a fresh key.
inline CollectionSpec with_limits(long long minimum_attempt, long long maximum_attempt,
                                  long long total_minimum, long long total_maximum) {
  CollectionSpec spec;
  spec.minimum_attempt = minimum_attempt;
  spec.maximum_attempt = maximum_attempt;
  spec.total_minimum = total_minimum;
  spec.total_maximum = total_maximum;
  return spec;
}

inline std::string collection_body(const Tenant& tenant, const CollectionSpec& spec) {
  return R"({"collections":[{"external_id":")" + harness::new_uuid() +
         R"(","tenant_account_id":")" + tenant.tenant_account_id + R"(","usage_mode":")" +
         spec.usage_mode + R"(","minimum_attempt_amount":)" +
         money(spec.minimum_attempt, spec.currency) +
         R"(,"maximum_attempt_amount":)" + money(spec.maximum_attempt, spec.currency) +
         R"(,"total_minimum_amount":)" + money(spec.total_minimum, spec.currency) +
         R"(,"total_maximum_amount":)" + money(spec.total_maximum, spec.currency) +
         R"(,"key":{"type":")" + spec.key_type + R"(","value":")" + spec.key + R"("}}]})";
}

// The collection as created (state ready).
inline json::value create_collection(const Server& server, const Tenant& tenant,
                                     const CollectionSpec& spec = {}) {
  Reply reply = server.post("/api/v1/collections", collection_body(tenant, spec), {tenant.bearer});
  EXPECT_EQ(reply.status, 201) << reply.body;
  const json::value body = reply.json();
  const json::array& created = body.at("created").as_array();
  EXPECT_EQ(created.size(), 1u) << reply.body;
  return created.empty() ? json::value() : created.at(0);
}

// The collection's (first) key value, as the directory normalised it.
inline std::string key_of(const json::value& collection) {
  return text(collection.at("keys").at(0), "value");
}

inline json::value get_collection(const Server& server, const Tenant& tenant,
                                  const std::string& id) {
  Reply reply = server.get("/api/v1/collections/" + id, {tenant.bearer});
  EXPECT_EQ(reply.status, 200) << reply.body;
  return reply.json();
}

inline Reply create_qr(const Server& server, const Tenant& tenant,
                       const std::string& collection_id, const std::string& body) {
  return server.post("/api/v1/collections/" + collection_id + "/qr", body, {tenant.bearer});
}

// `extra` is more members of the body, starting with a comma.
inline std::string attempt_body(long long amount, const std::string& key,
                                const std::string& extra = "", const std::string& currency = "COP") {
  return R"({"amount":)" + money(amount, currency) + R"(,"creditor_key_value":")" + key + "\"" +
         extra + "}";
}

inline Reply attempt(const Server& server, const Tenant& tenant, const std::string& body) {
  return server.post("/api/v1/sandbox/collections/attempts", body, {tenant.bearer});
}

inline long long tenant_account_balance(const Server& server, const Tenant& tenant) {
  Reply reply = server.get("/api/v1/tenant/accounts", {tenant.bearer});
  EXPECT_EQ(reply.status, 200) << reply.body;
  const json::value accounts = reply.json();
  for (const json::value& account : accounts.as_array()) {
    if (text(account, "id") == tenant.tenant_account_id) {
      return account.at("balance").at("available").at("amount").as_int64();
    }
  }
  ADD_FAILURE() << "no tenant account " << tenant.tenant_account_id;
  return -1;
}

// The attempt, once `done` says its state is final or after a bounded wait: the failure of a
// requested sandbox error is applied by a background worker on its own schedule.
template <class Done>
json::value wait_for_attempt(const Server& server, const Tenant& tenant,
                             const std::string& collection_id, const std::string& id, Done done) {
  json::value attempt;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    Reply reply = server.get("/api/v1/collections/" + collection_id + "/attempts/" + id,
                             {tenant.bearer});
    EXPECT_EQ(reply.status, 200) << reply.body;
    attempt = reply.json();
    if (done(attempt)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while (std::chrono::steady_clock::now() < deadline);
  return attempt;
}

// One text column of a query on the server's own database, one line per row.
inline std::vector<std::string> query_column(const Server& server, const std::string& sql) {
  std::vector<std::string> flags = server.store_flags();
  std::string command = flags.at(0) == "--data"
                            ? "sqlite3 " + harness::shell_quote(flags.at(1) + "/tesoro.db") + " "
                            : "psql " + harness::shell_quote(flags.at(1)) + " -qAtc ";
  std::string out = harness::run_capture(command + harness::shell_quote(sql) + " 2>/dev/null");
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < out.size()) {
    std::size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    lines.push_back(out.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// Every event the server wrote so far (emitted_events.hpp).
inline std::string all_events(const Server& server) {
  return emitted_events::table(server.store_flags().at(0) != "--data");
}

// The types of the events whose data mentions `id`, in the order they were emitted.
inline std::vector<std::string> event_types(const Server& server, const std::string& id) {
  return query_column(server, "SELECT type FROM " + all_events(server) + " WHERE data LIKE '%" +
                                  id + "%' ORDER BY emitted_seq");
}

}  // namespace payment_fixtures
