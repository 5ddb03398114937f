#include "api/context.hpp"

#include <algorithm>
#include <cctype>

#include "store/idempotency.hpp"

namespace tesoro::api {

bool InFlightKeys::try_claim(const std::string& key) {
  std::lock_guard lock(mutex_);
  return keys_.insert(key).second;
}

void InFlightKeys::release(const std::string& key) {
  std::lock_guard lock(mutex_);
  keys_.erase(key);
}

std::string_view Context::param(std::string_view name) const {
  for (const auto& [key, value] : params) {
    if (key == name) return value;
  }
  return {};
}

DetachedContext::DetachedContext(const Context& from)
    : request(from.request),
      context(request, from.path, from.query, from.params, from.services, from.request_id) {
  context.principal = from.principal;
  context.idempotency = from.idempotency;
  context.via_console = from.via_console;
  context.console_session = from.console_session;
  context.console_csrf_token = from.console_csrf_token;
  context.response_has_secret = from.response_has_secret;
}

http::Response Context::error(const Error& error) const {
  return render_error(error, {request_id, request.method, request.target, tenant_id()});
}

namespace {

// A sealed record's content type: the real one after this marker, which no media type has.
constexpr std::string_view k_sealed_marker = "sealed:";

std::string idempotency_aad(const std::string& tenant_id) { return "idempotency:" + tenant_id; }

}  // namespace

http::Response Context::answer_stored(const idempotency::Found& found) const {
  if (!found.same_request) return error(errors::idempotency_key_reused());
  http::Response replayed;
  replayed.status = found.response.status;
  replayed.content_type = found.response.content_type;
  replayed.body = found.response.body;
  if (replayed.content_type.starts_with(k_sealed_marker)) {
    replayed.content_type.erase(0, k_sealed_marker.size());
    auto opened = services.secrets.open(replayed.body, idempotency_aad(tenant_id()));
    if (!opened) return error(errors::internal());  // sealed under another key
    replayed.body = std::move(*opened);
  }
  replayed.set_header("Idempotent-Replayed", "true");
  return replayed;
}

http::Response Context::read(const std::function<Result<http::Response>(store::Tx&)>& fn) {
  auto result = services.store.read<http::Response>(fn);
  return result.ok() ? std::move(result).value() : error(result.error());
}

http::Response Context::read_single(
    const std::function<Result<http::Response>(store::Tx&)>& fn) {
  auto result = services.store.read_single<http::Response>(fn);
  return result.ok() ? std::move(result).value() : error(result.error());
}

bool Context::write_queued(std::function<Result<http::Response>(store::Tx&)> fn,
                           std::function<void(std::function<http::Response()>)> then) {
  if (idempotency) return false;  // its record and its races: write()'s
  return services.store.write_queued<http::Response>(
      std::move(fn),
      [this, then = std::move(then)](store::Store::Outcome<http::Response> outcome) {
        then([this, outcome = std::move(outcome)] {
          auto made = outcome();
          return made.ok() ? std::move(made).value() : error(made.error());
        });
      });
}

http::Response Context::write(const std::function<Result<http::Response>(store::Tx&)>& fn) {
  // No savepoint around the effect (on PostgreSQL two round trips each): when it fails, its
  // error rolls the whole unit back, and the error, when a key asks for it to be kept, is
  // recorded by a unit of its own; nothing of the effect is left to record it with.
  if (!idempotency) {
    auto outcome = services.store.write<http::Response>(fn);
    return outcome.ok() ? std::move(outcome).value() : error(outcome.error());
  }
  std::optional<http::Response> response;
  std::string first_code;
  bool effect_failed = false;
  bool lost_race = false;
  const time::Micros now = services.clock.now();
  // Records the response with the key (when it is one to keep); false when another node
  // committed this key first.
  auto record = [&](store::Tx& tx) {
    if (!idempotency::is_storable(response->status, first_code)) return true;
    idempotency::StoredResponse stored{response->status, response->content_type, response->body};
    if (response_has_secret) {
      stored.content_type = std::string(k_sealed_marker) + stored.content_type;
      stored.body = services.secrets.seal(stored.body, idempotency_aad(tenant_id()));
    }
    return idempotency::record(tx, tenant_id(), idempotency->key, idempotency->fingerprint,
                               stored, now);
  };
  // A unit may run again (a PostgreSQL retry): each run starts from nothing.
  static_cast<void>(services.store.write<Unit>([&](store::Tx& tx) -> Status {
    effect_failed = false;
    lost_race = false;
    auto outcome = fn(tx);
    if (!outcome) {
      effect_failed = true;
      first_code = outcome.error().first_code();
      response = error(outcome.error());
      return outcome.error();  // rolls the effect back
    }
    first_code.clear();
    response = std::move(outcome).value();
    if (!record(tx)) {
      lost_race = true;  // another node committed this key first: undo ours, answer theirs
      return errors::idempotency_key_in_use();
    }
    return ok_status();
  }));
  if (effect_failed && idempotency::is_storable(response->status, first_code)) {
    static_cast<void>(services.store.write<Unit>([&](store::Tx& tx) -> Status {
      lost_race = false;
      if (record(tx)) return ok_status();
      lost_race = true;
      return errors::idempotency_key_in_use();
    }));
  }
  if (!lost_race) return std::move(*response);
  // A unit that waits for the standbys: the other request's commit may not be on them yet.
  auto found = services.store.write<std::optional<idempotency::Found>>(
      [&](store::Tx& tx) -> Result<std::optional<idempotency::Found>> {
        return idempotency::find_for_replay(tx, tenant_id(), idempotency->key,
                                            idempotency->fingerprint, services.clock.now());
      });
  if (!found.ok() || !found.value()) return error(errors::idempotency_key_in_use());
  return answer_stored(*found.value());
}

Result<std::string> bearer_credential(const std::string* header, auth::Surface surface) {
  if (!header) return auth::unauthenticated(surface, auth::Refusal::no_header, "");
  std::string_view text = *header;
  std::size_t space = text.find(' ');
  std::string scheme(text.substr(0, std::min(space, text.size())));
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme != "bearer") {
    // The scheme's name is no secret (what follows it may be).
    return auth::unauthenticated(
        surface, auth::Refusal::other_scheme,
        "scheme " + auth::printable(std::string_view(scheme).substr(
                        0, limits::k_refused_scheme_shown_bytes)));
  }
  std::string_view token = space == std::string_view::npos ? "" : text.substr(space + 1);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  if (token.empty() || token.size() > limits::k_credential_max_bytes) {
    return auth::unauthenticated(surface, auth::Refusal::malformed, auth::credential_hint(token));
  }
  return std::string(token);
}

}  // namespace tesoro::api
