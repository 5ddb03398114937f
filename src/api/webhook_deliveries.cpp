// The delivery log of a webhook endpoint and manual replays, on both surfaces:
// GET /v1/webhook_endpoints/{id}/deliveries, POST /v1/webhook_endpoints/{id}/deliveries/
// {event_id}/replay, and the same under /api/v1. Core: scope group `webhooks` (read for the log,
// write for a replay); participant: scope `webhooks`.
#include "api/context.hpp"
#include "api/lists.hpp"
#include "api/validation/readers.hpp"
#include "domain/webhooks/dispatcher.hpp"

namespace tesoro::api {
namespace {

json::object attempt_json(const webhooks::Attempt& attempt) {
  json::value status_code = nullptr;
  if (attempt.status_code) status_code = *attempt.status_code;
  return json::object{{"id", attempt.id},
                      {"event_id", attempt.event_id},
                      {"event_type", attempt.event_type},
                      {"attempt", attempt.attempt},
                      {"replay", attempt.replay},
                      {"delivered", attempt.delivered},
                      {"status_code", status_code},
                      {"latency_ms", attempt.latency_ms},
                      {"error", optional_json(attempt.error)},
                      {"next_attempt_at", optional_json(attempt.next_attempt_at)},
                      {"attempted_at", attempt.attempted_at},
                      {"outcome", optional_json(attempt.outcome)}};
}

json::object replay_json(const webhooks::Replay& replay) {
  return json::object{{"delivery_id", replay.delivery_id},
                      {"endpoint_id", replay.endpoint_id},
                      {"event_id", replay.event_id},
                      {"state", replay.state},
                      {"next_attempt_at", replay.next_attempt_at}};
}

std::string endpoint_id_of(Context& context, Problems& problems) {
  return check_path_id(context.param("id"), "whe", "a webhook endpoint", problems);
}

http::Response list(Context& context) {
  Problems problems;
  const std::string endpoint_id = endpoint_id_of(context, problems);
  if (!problems.empty()) return context.error(problems.to_error());
  return paginated_list(
      context, "deliveries",
      [&](store::Tx& tx, const Page& page) {
        return webhooks::list_attempts(tx, context.tenant_id(), endpoint_id, page.offset(),
                                       page.size);
      },
      attempt_json);
}

http::Response replay(Context& context) {
  Problems problems;
  const std::string endpoint_id = endpoint_id_of(context, problems);
  const std::string event_id =
      check_path_id(context.param("event_id"), "evt", "an event", problems, "event_id");
  if (auto not_object = read_no_body(context.request.body, problems)) {
    return context.error(*not_object);
  }
  if (!problems.empty()) return context.error(problems.to_error());
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto made = webhooks::replay(tx, context.tenant_id(), endpoint_id, event_id, context.now());
    if (!made) return std::move(made).error();
    return json_response(202, replay_json(made.value()));
  });
}

}  // namespace

void add_webhook_delivery_routes(Routes& routes) {
  for (auto [prefix, auth] : {std::pair{"/v1", AuthKind::core},
                              std::pair{"/api/v1", AuthKind::participant}}) {
    const std::string base = std::string(prefix) + "/webhook_endpoints/{id}/deliveries";
    routes.push_back({"GET", base, auth, "webhooks", list});
    routes.push_back({"POST", base + "/{event_id}/replay", auth, "webhooks", replay});
  }
}

}  // namespace tesoro::api
