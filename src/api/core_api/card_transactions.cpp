// Card transactions: POST /v1/sandbox/cards/{card_id}/authorizations, POST
// /v1/sandbox/card_transactions/{id}/capture|increment|reverse|refund, GET
// /v1/cards/{card_id}/transactions, GET /v1/cards/{card_id}/transactions/{id}.
#include "api/context.hpp"
#include "api/lists.hpp"
#include "api/validation/fields.hpp"
#include "api/validation/readers.hpp"
#include "core/ids.hpp"
#include "core/json_writer.hpp"
#include "core/limits.hpp"
#include "domain/cards/authorization_decisions.hpp"
#include "domain/cards/card_transactions.hpp"
#include "http/later.hpp"

namespace tesoro::api {
namespace {

const std::vector<std::string> k_channels = {"online_purchase", "physical_purchase",
                                             "atm_withdrawal"};

bool is_digits(std::string_view text) {
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// ASCII letters and digits only (std::isalnum would follow the locale).
bool is_alphanumeric(std::string_view text) {
  for (char c : text) {
    const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!ok) return false;
  }
  return true;
}

// Written as text: the same bytes the Boost.JSON object of these keys serialised to, at a
// fraction of the cost (the authorization is the busiest write of the sandbox).
std::string card_transaction_text(const cards::CardTransaction& t) {
  json_text::Writer out(1024);  // an authorization's body is about 800 bytes
  auto money = [&](std::string_view key, std::int64_t amount_minor) {
    out.key(key);
    money_text(out, amount_minor, t.currency);
  };
  out.begin_object().key("id").string(t.id).key("card_id").string(t.card_id);
  out.key("type").string(t.type).key("state").string(t.state);
  money("amount", t.amount_minor);
  money("held_amount", t.held_minor);
  money("captured_amount", t.captured_minor);
  money("reversed_amount", t.reversed_minor);
  money("released_amount", t.released_minor);
  money("expired_amount", t.expired_minor);
  money("refunded_amount", t.refunded_minor);
  out.key("channel").string(t.purchase.channel);
  const spending_controls::Merchant& m = t.purchase.merchant;
  out.key("merchant").begin_object().key("name").string(m.name).key("mcc").string(m.mcc);
  out.key("mid").string(m.mid).key("country").string(m.country).end_object();
  out.key("decline_reason");
  optional_text(out, t.decline_reason);
  out.key("decline_reason_detail");
  optional_text(out, t.decline_reason_detail);
  out.key("iso8583_code").string(t.iso8583_code).key("declined_by");
  if (t.declined_by) {
    out.begin_object().key("spending_control_id").string(t.declined_by->spending_control_id);
    out.key("rule_type").string(t.declined_by->rule_type).end_object();
  } else {
    out.null();
  }
  const cards::Decision& d = t.decision;
  out.key("decision").begin_object().key("by").string(d.by).key("webhook_endpoint_id");
  optional_text(out, d.webhook_endpoint_id);
  out.key("reason").string(d.reason).key("duration_ms");
  if (d.duration_ms) {
    out.integer(*d.duration_ms);
  } else {
    out.null();
  }
  out.end_object();
  out.key("history").begin_array();
  for (const cards::TransactionStep& step : t.history) {
    out.begin_object().key("type").string(step.type);
    money("amount", step.amount_minor);
    out.key("performed_at").string(step.performed_at).end_object();
  }
  out.end_array().key("expires_at");
  optional_text(out, t.expires_at);
  out.key("inserted_at").string(t.inserted_at).key("updated_at").string(t.updated_at);
  out.end_object();
  return out.take();
}

spending_controls::Merchant read_merchant(ObjectReader& parent, Problems& problems) {
  spending_controls::Merchant merchant;
  const json::object* object = parent.object("merchant", Need::required);
  if (!object) return merchant;
  ObjectReader reader(*object, parent.path("merchant"), problems);
  merchant.name = required_text(reader, "name", limits::k_name_max_chars, problems);
  auto mcc = reader.string("mcc", Need::required, 4);
  if (mcc && (mcc->size() != 4 || !is_digits(*mcc))) {
    problems.invalid(reader.path("mcc"), "must be four digits");
  }
  merchant.mcc = mcc.value_or("");
  auto mid = reader.string("mid", Need::required, limits::k_merchant_id_max_chars);
  if (mid && (mid->empty() || !is_alphanumeric(*mid))) {
    problems.invalid(reader.path("mid"), "must be 1 to " +
                                             std::to_string(limits::k_merchant_id_max_chars) +
                                             " letters or digits");
  }
  merchant.mid = mid.value_or("");
  merchant.country = required_country(reader, "country", problems);
  reader.reject_unknown();
  return merchant;
}

Result<cards::AuthorizationRequest> decode_authorization(std::string_view body,
                                                         const std::vector<std::string>& currencies,
                                                         Problems& problems) {
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  ObjectReader reader(parsed.value(), "", problems);
  cards::AuthorizationRequest request;
  auto amount = read_money(reader, "amount", Need::required, currencies, problems);
  if (amount) {
    request.amount_minor = amount->amount_minor;
    request.currency = amount->currency;
  }
  request.purchase.merchant = read_merchant(reader, problems);
  request.purchase.channel = reader.one_of("channel", Need::required, k_channels).value_or("");
  reader.reject_unknown();
  if (!problems.empty()) return problems.to_error();
  return request;
}

// ---- Decisions by the tenant's endpoint (domain/cards/authorization_decisions.hpp) ----------

struct Asking {
  cards::decisions::Asked asked;
  cards::decisions::Question question;
};

// The write of an authorization or a step: `decision` is the tenant's when its endpoint was
// asked (with `transaction_id`, the id it was told; empty: a new one), else null; `unasked` as
// for cards::authorize.
using DecidedUnit = std::function<Result<http::Response>(
    store::Tx&, Context&, const cards::TenantDecision* decision,
    const std::string& transaction_id, bool* unasked)>;

// A decision to write: what the endpoint answered, what it was asked, and the step to write.
struct Decided {
  std::shared_ptr<DetachedContext> detached;
  std::shared_ptr<const cards::decisions::Sent> sent;
  std::shared_ptr<const webhooks::Endpoint> endpoint;
  std::string transaction_id;  // the id the endpoint was told
  DecidedUnit unit;
  cards::decisions::Answer answer;
  cards::TenantDecision decision;

  // The step with the tenant's decision and, when the step is written, the request's line in
  // the endpoint's delivery log, in one unit; `recorded` says whether the line is in it. No
  // savepoint around the step: a decision that writes pays no round trips for the rare one that
  // fails. The unit may run again (a PostgreSQL retry).
  Result<http::Response> write_step(store::Tx& tx, bool& recorded) const {
    recorded = false;
    auto made = unit(tx, detached->context, &decision, transaction_id, nullptr);
    if (!made) return made;  // undone whole; the line is recorded on its own (record_alone)
    record_line(tx);
    recorded = true;
    return made;
  }
  void record_line(store::Tx& tx) const {
    cards::decisions::record(tx, detached->context.tenant_id(), endpoint->id, *sent, answer,
                             detached->context.now());
  }
  // The line in a unit of its own, when the step failed (an increment the endpoint declined)
  // or was not written. Blocks: on a worker.
  void record_alone() const {
    static_cast<void>(detached->context.services.store.write<Unit>([&](store::Tx& tx) -> Status {
      record_line(tx);
      return ok_status();
    }));
  }
};

// Writes the decision and gives the request its answer. Where the store queues its writes
// (SQLite) and no idempotency key is kept, the unit is queued from the calling thread (the
// client's that heard the endpoint) and the common end, the step written, is answered from the
// writer's: no worker is woken for it. Everything else runs on a worker, as write() would.
void write_decision(const std::shared_ptr<http::Later>& later,
                    const std::shared_ptr<const Decided>& decided) {
  auto recorded = std::make_shared<bool>(false);
  const bool queued = decided->detached->context.write_queued(
      [decided, recorded](store::Tx& tx) { return decided->write_step(tx, *recorded); },
      [later, decided, recorded](std::function<http::Response()> answered) {
        std::optional<http::Response> response;
        std::exception_ptr failure;
        try {
          response.emplace(answered());
        } catch (...) {
          failure = std::current_exception();  // the request's guard answers it, on a worker
        }
        if (response && *recorded) return later->finish(std::move(*response));
        later->resume([decided, failure, response = std::move(response)]() mutable {
          if (failure) std::rethrow_exception(failure);
          decided->record_alone();
          return std::move(*response);
        });
      });
  if (queued) return;
  later->resume([decided] {
    bool recorded = false;
    http::Response response = decided->detached->context.write(
        [&](store::Tx& tx) { return decided->write_step(tx, recorded); });
    if (!recorded) decided->record_alone();
    return response;
  });
}

// Puts the question to the tenant's endpoint and answers later (http::Later): no transaction is
// open and no thread waits while it decides. The answer (or the timeout) is recorded in one
// write unit with the request's line in the delivery log (write_decision).
// `unit` runs later: it must own what it uses (capture by value).
http::Response answer_after_decision(Context& context, Asking asking, const DecidedUnit& unit) {
  const webhooks::Pinned pinned = webhooks::pin_destination(
      asking.asked.endpoint.url, context.services.settings.webhook_destinations,
      context.services.transport);
  auto sent = std::make_shared<const cards::decisions::Sent>(cards::decisions::request_for(
      asking.asked, asking.question, context.now(), context.services.clock.now(),
      pinned.addresses));
  auto detached = std::make_shared<DetachedContext>(context);
  auto endpoint = std::make_shared<const webhooks::Endpoint>(std::move(asking.asked.endpoint));
  http::Response response;
  response.later = std::make_shared<http::Later>(
      [detached, sent, endpoint, transaction_id = std::move(asking.question.card_transaction_id),
       unit, refused = pinned.refused](http::Later& later) {
        auto conclude = [later = later.shared_from_this(), detached, sent, endpoint,
                         transaction_id, unit](cards::decisions::Answer answer) {
          const cards::TenantDecision decision = cards::decisions::decide(answer, *endpoint);
          write_decision(later, std::make_shared<const Decided>(
                                    Decided{detached, sent, endpoint, transaction_id, unit,
                                            std::move(answer), decision}));
        };
        if (refused) return conclude(cards::decisions::refused_answer(*refused));
        const auto asked_at = std::chrono::steady_clock::now();
        const std::int64_t timeout_ms = endpoint->authorization_timeout_ms;
        detached->context.services.authorization_requests.submit(
            sent->request, [conclude, asked_at, timeout_ms](outbound_http::Response answered) {
              const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                                      std::chrono::steady_clock::now() - asked_at)
                                      .count();
              conclude(cards::decisions::answer_of(answered, timeout_ms, waited));
            });
      });
  return response;
}

// What to ask the tenant's authorization endpoint, when it has one and Tesoro's own checks pass
// (`question` makes the question from what they read; the write checks everything again).
struct ToAsk {
  bool has_endpoint = false;
  std::optional<Asking> asking;  // when Tesoro's checks pass
};
ToAsk to_ask(Context& context,
             const std::function<std::optional<cards::decisions::Question>(store::Tx&)>& question) {
  // Read with the credential: most tenants have no such endpoint, and pay nothing more here.
  if (context.principal && !context.principal->may_have_authorization_endpoint) return {};
  // The endpoint, its secrets and Tesoro's checks, each statement its own snapshot (no
  // transaction around them: two round trips fewer on PostgreSQL). They need not agree: the
  // endpoint may change after any read of it, and the write checks the card and its money again.
  auto found = context.services.store.read_single<ToAsk>([&](store::Tx& tx) -> Result<ToAsk> {
    auto endpoint = webhooks::authorization_endpoint(tx, context.services.secrets,
                                                     context.tenant_id(),
                                                     context.services.clock.now());
    if (!endpoint) return ToAsk{};
    std::optional<cards::decisions::Question> asked = question(tx);
    if (!asked) return ToAsk{true, std::nullopt};
    return ToAsk{true, Asking{{std::move(endpoint->endpoint), std::move(endpoint->secrets)},
                              std::move(*asked)}};
  });
  return found.ok() ? std::move(found).value() : ToAsk{};
}

// An authorization or step, decided by the tenant's endpoint when it has one and `question`
// (empty: a step it is never asked about) makes a question; else written with Tesoro's own
// decision. For a tenant with an endpoint whose checks declined in the read, the write refuses
// to approve what the endpoint was not asked about (`unasked`, a 503 no idempotency record
// keeps): the request then goes back to ask.
http::Response decided_write(
    Context& context,
    const std::function<std::optional<cards::decisions::Question>(store::Tx&)>& question,
    const DecidedUnit& unit) {
  for (int round = 1;; ++round) {
    ToAsk ask = question ? to_ask(context, question) : ToAsk{};
    if (ask.asking) return answer_after_decision(context, std::move(*ask.asking), unit);
    bool unasked = false;
    http::Response response = context.write([&](store::Tx& tx) -> Result<http::Response> {
      unasked = false;  // the unit may run again (a PostgreSQL retry)
      return unit(tx, context, nullptr, "", ask.has_endpoint ? &unasked : nullptr);
    });
    if (!unasked) return response;
    if (round == limits::k_authorization_ask_rounds) return context.error(errors::unavailable());
  }
}

http::Response authorize(Context& context) {
  Problems problems;
  std::string card_id =
      check_path_id(context.param("card_id"), "car", "a card", problems, "card_id");
  auto request = decode_authorization(context.request.body,
                                      context.services.settings.card_currencies, problems);
  if (!request) return context.error(request.error());
  const auto question = [&](store::Tx& tx) -> std::optional<cards::decisions::Question> {
    auto card = cards::approvable_authorization(tx, context.tenant_id(), card_id, request.value(),
                                                context.now());
    if (!card) return std::nullopt;
    return cards::decisions::Question{"authorization",
                                      ids::generate("ctx"),
                                      card_id,
                                      card->account_id,
                                      request->amount_minor,
                                      request->currency,
                                      request->purchase};
  };
  return decided_write(
      context, question,
      // By value: a decided authorization is written after this call has returned.
      [card_id, request = request.value()](store::Tx& tx, Context& at,
                                           const cards::TenantDecision* decision,
                                           const std::string& transaction_id,
                                           bool* unasked) -> Result<http::Response> {
        auto made = cards::authorize(tx, at.tenant_id(), card_id, request, at.now(), decision,
                                     transaction_id, unasked);
        if (!made) return std::move(made).error();
        return json_text_response(201, card_transaction_text(made.value()));
      });
}

// A step's body: `amount`, required for increment, else optional (the whole open amount). An
// empty body is an empty object: `capture` needs nothing more.
http::Response step(Context& context, cards::Step step, Need amount_need) {
  Problems problems;
  std::string id = check_path_id(context.param("id"), "ctx", "a card transaction", problems);
  std::string_view body = context.request.body;
  auto parsed = body.find_first_not_of(" \t\r\n") == std::string_view::npos
                    ? Result<json::object>(json::object{})
                    : parse_object(body);
  if (!parsed) return context.error(parsed.error());
  ObjectReader reader(parsed.value(), "", problems);
  auto amount = read_money(reader, "amount", amount_need,
                           context.services.settings.card_currencies, problems);
  reader.reject_unknown();
  if (!problems.empty()) return context.error(problems.to_error());
  std::optional<std::int64_t> amount_minor;
  std::optional<std::string> currency;
  if (amount) {
    amount_minor = amount->amount_minor;
    currency = amount->currency;
  }
  const auto question = [&](store::Tx& tx) -> std::optional<cards::decisions::Question> {
    auto found = cards::incrementable(tx, context.tenant_id(), id, amount_minor.value_or(0),
                                      currency, context.now());
    if (!found) return std::nullopt;
    const cards::CardTransaction& t = found->transaction;
    return cards::decisions::Question{"increment", t.id,       t.card_id, found->card.account_id,
                                      *amount_minor, t.currency, t.purchase};
  };
  const bool asks = step == cards::Step::increment && amount_minor;
  return decided_write(
      context,
      asks ? std::function<std::optional<cards::decisions::Question>(store::Tx&)>(question)
           : nullptr,
      // By value: a decided increment is written after this call has returned.
      [id, step, amount_minor, currency](store::Tx& tx, Context& at,
                                         const cards::TenantDecision* decision,
                                         const std::string&, bool* unasked)
          -> Result<http::Response> {
        auto done = cards::apply_step(tx, at.tenant_id(), id, step, amount_minor, currency,
                                      at.now(), decision, unasked);
        if (!done) return std::move(done).error();
        return json_text_response(200, card_transaction_text(done.value()));
      });
}

http::Response capture(Context& context) { return step(context, cards::Step::capture, Need::optional); }
http::Response increment(Context& context) {
  return step(context, cards::Step::increment, Need::required);
}
http::Response reverse(Context& context) { return step(context, cards::Step::reverse, Need::optional); }
http::Response refund(Context& context) { return step(context, cards::Step::refund, Need::optional); }

http::Response list(Context& context) {
  Problems problems;
  std::string card_id =
      check_path_id(context.param("card_id"), "car", "a card", problems, "card_id");
  QueryReader query(context.query, problems);
  Page page = read_page(query);
  query.reject_unknown();
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto found = cards::list_card_transactions(tx, context.tenant_id(), card_id, page.offset(),
                                               page.size);
    if (!found) return std::move(found).error();
    json_text::Writer out;
    out.begin_object().key("card_id").string(card_id).key("transactions").begin_array();
    for (const auto& item : found->items) out.raw(card_transaction_text(item));
    out.end_array().key("pagination");
    pagination_text(out, page, found->total_items);
    out.end_object();
    return json_text_response(200, out.take());
  });
}

http::Response show(Context& context) {
  Problems problems;
  std::string card_id =
      check_path_id(context.param("card_id"), "car", "a card", problems, "card_id");
  std::string id = check_path_id(context.param("id"), "ctx", "a card transaction", problems);
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto found = cards::get_card_transaction(tx, context.tenant_id(), id);
    // Under another card it is not found either: the path names both.
    if (found && found->card_id != card_id) return errors::item_not_found("card transaction");
    if (!found) return std::move(found).error();
    return json_text_response(200, card_transaction_text(found.value()));
  });
}

}  // namespace

void add_card_transaction_routes(Routes& routes) {
  const std::string sandbox = "/v1/sandbox/card_transactions/{id}";
  routes.push_back({"POST", "/v1/sandbox/cards/{card_id}/authorizations", AuthKind::core, "cards",
                    authorize, true});
  routes.push_back({"POST", sandbox + "/capture", AuthKind::core, "cards", capture, true});
  routes.push_back({"POST", sandbox + "/increment", AuthKind::core, "cards", increment, true});
  routes.push_back({"POST", sandbox + "/reverse", AuthKind::core, "cards", reverse, true});
  routes.push_back({"POST", sandbox + "/refund", AuthKind::core, "cards", refund, true});
  routes.push_back({"GET", "/v1/cards/{card_id}/transactions", AuthKind::core, "cards", list});
  routes.push_back(
      {"GET", "/v1/cards/{card_id}/transactions/{id}", AuthKind::core, "cards", show});
}

}  // namespace tesoro::api
