#pragma once
// Authorization decisioning by the tenant (decisions.md, "Authorization decisioning by the
// tenant"; docs/webhooks.md): an authorization or increment that passes every check of Tesoro's
// own is put to the tenant's authorization endpoint (webhooks::authorization_endpoint), whose
// answer decides it. The round trip, as the API runs it (api/core_api/card_transactions.cpp):
//
// 1. In reads on a worker (no transaction: the write checks again): the endpoint and its signing
//    secrets, and Tesoro's checks (cards::approvable_authorization, cards::incrementable).
//    Its host is resolved and checked as deliveries' are (webhooks::pin_destination).
// 2. No transaction open and no thread held: the signed POST (request_for()) goes out on the
//    server's asynchronous client (http_client::AsyncClient in http/client.hpp, one thread for
//    every request in flight), limited to the endpoint's authorization_timeout_ms; a late answer
//    is dropped.
// 3. In one write unit, on a worker: Tesoro's checks again (the money may have gone meanwhile),
//    then the tenant's decision (decide()), the transaction, and the request's line in the
//    endpoint's delivery log (record()), together; a step that fails then (an increment the
//    endpoint declined) is undone whole, and its line written by a unit of its own.
//
// The request is never retried or replayed: its log line has no delivery behind it, and its id
// (adr_) names no event. Answers: 2xx with the JSON object {"approved": true|false} and an
// optional "reason" (a string of up to limits::k_authorization_reason_max_chars characters,
// kept on a decline as decline_reason_detail); other members are ignored. Anything else (another
// status, a refused connection, a body that is not such an object) is webhook_error; no answer
// within the timeout is webhook_timeout; both are decided by the endpoint's
// authorization_fallback.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/crypto.hpp"
#include "core/outbound_http.hpp"
#include "core/time.hpp"
#include "domain/cards/card_transactions.hpp"
#include "domain/webhooks/endpoints.hpp"
#include "store/store.hpp"

namespace tesoro::cards::decisions {

inline constexpr std::string_view k_request_id_prefix = "adr";

// What the tenant is asked about: the request's `data`.
struct Question {
  std::string kind;  // authorization | increment
  std::string card_transaction_id;  // the id the transaction has, or will have
  std::string card_id;
  std::string account_id;  // the card's account
  std::int64_t amount_minor = 0;  // what this authorization or increment adds
  std::string currency;
  spending_controls::Purchase purchase;
};

// The endpoint to ask (webhooks::authorization_endpoint), and the secrets that sign the request
// (webhooks::signing_secrets). With none (its secret cannot be opened) it is asked unsigned, and
// its receiver's refusal is a webhook_error, decided by its fallback.
struct Asked {
  webhooks::Endpoint endpoint;
  std::vector<std::string> secrets;
};

// The POST, signed as every delivery is (webhook-id: the request's id; webhook-timestamp: real
// Unix seconds; webhook-signature), with the body {"id", "type": "card_authorization.request",
// "timestamp" (tenant time), "data"}.
struct Sent {
  std::string request_id;         // adr_
  long long webhook_timestamp = 0;  // real Unix seconds
  outbound_http::Request request;
};
Sent request_for(const Asked& asked, const Question& question, time::Micros tenant_now,
                 time::Micros real_now, std::vector<std::string> pinned_addresses);

// What came back, for the log and the decision.
struct Answer {
  std::optional<int> status_code;
  std::string outcome;  // webhook_approved | webhook_declined | webhook_timeout | webhook_error
  std::optional<std::string> detail;  // the endpoint's reason
  std::optional<std::string> error;   // what went wrong, for the log
  std::int64_t duration_ms = 0;       // asked to answered (or to the timeout)
};
// `refused`: the request was not sent (its destination is not allowed).
Answer answer_of(const outbound_http::Response& response, std::int64_t timeout_ms,
                 std::int64_t duration_ms);
Answer refused_answer(const std::string& why);

// The decision an answer makes with the endpoint's fallback.
TenantDecision decide(const Answer& answer, const webhooks::Endpoint& endpoint);

// The request's line in the endpoint's delivery log (GET .../deliveries): event_type
// card_authorization.request, never retried; `delivered` when the endpoint answered with a
// decision (approved or declined), its outcome, status and duration.
void record(store::Tx& tx, const std::string& tenant_id, const std::string& endpoint_id,
            const Sent& sent, const Answer& answer, time::Micros tenant_now);

}  // namespace tesoro::cards::decisions
