#include "domain/cards/authorization_decisions.hpp"

#include <boost/json.hpp>

#include "core/ids.hpp"
#include "core/json_writer.hpp"
#include "core/limits.hpp"
#include "domain/webhooks/dispatcher.hpp"
#include "domain/webhooks/secrets.hpp"

namespace tesoro::cards::decisions {
namespace {

namespace json = boost::json;

// `text` cut to at most `max_chars` characters (code points) of UTF-8, without control
// characters: it is shown by the API and the console.
std::string reason_text(std::string_view text, std::size_t max_chars) {
  const std::string clean = outbound_http::printable_text(text, text.size() * 3);
  std::size_t chars = 0;
  std::size_t end = 0;
  while (end < clean.size() && chars < max_chars) {
    ++end;
    while (end < clean.size() && (static_cast<unsigned char>(clean[end]) & 0xC0) == 0x80) ++end;
    ++chars;
  }
  return clean.substr(0, end);
}

Answer error_answer(std::optional<int> status, std::string error, std::int64_t duration_ms) {
  Answer answer;
  answer.status_code = status;
  answer.outcome = "webhook_error";
  answer.error = std::move(error);
  answer.duration_ms = duration_ms;
  return answer;
}

}  // namespace

Sent request_for(const Asked& asked, const Question& question, time::Micros tenant_now,
                 time::Micros real_now, std::vector<std::string> pinned_addresses) {
  Sent sent;
  sent.request_id = ids::generate(k_request_id_prefix);
  sent.webhook_timestamp = real_now / time::k_micros_per_second;
  json_text::Writer out(768);
  out.begin_object().key("id").string(sent.request_id);
  out.key("type").string(webhooks::k_authorization_request_type);
  out.key("timestamp").string(time::iso(tenant_now));
  out.key("data").begin_object();
  out.key("card_transaction_id").string(question.card_transaction_id);
  out.key("card_id").string(question.card_id).key("account_id").string(question.account_id);
  out.key("kind").string(question.kind);
  out.key("amount").begin_object().key("amount").integer(question.amount_minor);
  out.key("currency").string(question.currency).end_object();
  const spending_controls::Merchant& m = question.purchase.merchant;
  out.key("merchant").begin_object().key("name").string(m.name).key("mcc").string(m.mcc);
  out.key("mid").string(m.mid).key("country").string(m.country).end_object();
  out.key("channel").string(question.purchase.channel);
  out.end_object().end_object();

  outbound_http::Request& request = sent.request;
  request.url = asked.endpoint.url;
  request.body = out.take();
  request.headers = {
      "content-type: application/json",
      "user-agent: Tesoro-Webhooks/1",
      "webhook-id: " + sent.request_id,
      "webhook-timestamp: " + std::to_string(sent.webhook_timestamp),
  };
  if (!asked.secrets.empty()) {
    request.headers.push_back("webhook-signature: " +
                              webhooks::signature_header(asked.secrets, sent.request_id,
                                                         sent.webhook_timestamp, request.body));
  }
  request.pinned_addresses = std::move(pinned_addresses);
  request.timeout_ms = asked.endpoint.authorization_timeout_ms;
  request.body_max_bytes = limits::k_authorization_answer_max_bytes;
  return sent;
}

Answer answer_of(const outbound_http::Response& response, std::int64_t timeout_ms,
                 std::int64_t duration_ms) {
  if (response.timed_out) {
    Answer answer;
    answer.outcome = "webhook_timeout";
    answer.error = "no answer within " + std::to_string(timeout_ms) +
                   " ms (authorization_timeout_ms); an answer after it is ignored";
    answer.duration_ms = duration_ms;
    return answer;
  }
  if (!response.status) {
    return error_answer(std::nullopt, response.error.value_or("no response"), duration_ms);
  }
  const int status = *response.status;
  const std::string shown = outbound_http::printable_text(
      response.body, static_cast<std::size_t>(limits::k_webhook_response_body_max_bytes));
  if (status < 200 || status > 299) {
    std::string error = "HTTP " + std::to_string(status);
    if (!shown.empty()) error += ": " + shown;
    return error_answer(status, std::move(error), duration_ms);
  }
  const std::string expected =
      "the answer must be a JSON object with a boolean `approved` and an optional string "
      "`reason`";
  boost::system::error_code ec;
  json::value parsed = json::parse(response.body, ec);
  const json::object* object = ec ? nullptr : parsed.if_object();
  const json::value* approved = object ? object->if_contains("approved") : nullptr;
  const json::value* reason = object ? object->if_contains("reason") : nullptr;
  if (!approved || !approved->is_bool() || (reason && !reason->is_string() && !reason->is_null())) {
    return error_answer(status, expected + "; got: " + (shown.empty() ? "an empty body" : shown),
                        duration_ms);
  }
  Answer answer;
  answer.status_code = status;
  answer.outcome = approved->get_bool() ? "webhook_approved" : "webhook_declined";
  if (reason && reason->is_string()) {
    answer.detail = reason_text(reason->get_string(), limits::k_authorization_reason_max_chars);
  }
  answer.duration_ms = duration_ms;
  return answer;
}

Answer refused_answer(const std::string& why) {
  return error_answer(std::nullopt, "not sent: " + why, 0);
}

TenantDecision decide(const Answer& answer, const webhooks::Endpoint& endpoint) {
  TenantDecision decision;
  decision.webhook_endpoint_id = endpoint.id;
  decision.reason = answer.outcome;
  decision.duration_ms = answer.duration_ms;
  if (answer.outcome == "webhook_approved" || answer.outcome == "webhook_declined") {
    decision.by = "endpoint";
    decision.approved = answer.outcome == "webhook_approved";
    if (!decision.approved) decision.detail = answer.detail;
  } else {
    decision.by = "fallback";
    decision.approved = endpoint.authorization_fallback == "approve";
  }
  return decision;
}

void record(store::Tx& tx, const std::string& tenant_id, const std::string& endpoint_id,
            const Sent& sent, const Answer& answer, time::Micros tenant_now) {
  const bool decided = answer.outcome == "webhook_approved" || answer.outcome == "webhook_declined";
  webhooks::log_attempt(tx, tenant_id,
                        {sent.request_id, endpoint_id, sent.request_id,
                         std::string(webhooks::k_authorization_request_type), 1, false, decided,
                         answer.status_code, answer.duration_ms, answer.error, std::nullopt,
                         sent.webhook_timestamp, time::iso(tenant_now), answer.outcome});
}

}  // namespace tesoro::cards::decisions
