// GET and POST /activate/{token}: the page a cardholder opens from an activation link, served
// without authentication (the token is the credential; the url names no tenant). GET shows the
// card (last four digits, cardholder) and one button; POST activates the card and confirms.
//
// Pages are plain HTML: no script, no style, no external asset, every inserted text escaped, and
// headers that forbid anything else (CSP), framing, sniffing, referrers and caching. The token is
// never written to the page nor to a log (the access and error logs redact /activate/ paths).
#include <string>
#include <string_view>

#include "api/context.hpp"
#include "core/crypto.hpp"
#include "core/limits.hpp"
#include "core/log.hpp"
#include "domain/cards/activation_links.hpp"

namespace tesoro::api {
namespace {

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// `title` and `body_html` are ours; anything taken from a record is escaped by the caller.
http::Response page(int status, std::string_view title, const std::string& body_html) {
  http::Response response;
  response.status = status;
  response.content_type = "text/html; charset=utf-8";
  response.body = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                  "<meta name=\"referrer\" content=\"no-referrer\">\n<title>" +
                  html_escape(title) + "</title>\n</head>\n<body>\n<main>\n<h1>" +
                  html_escape(title) + "</h1>\n" + body_html + "</main>\n</body>\n</html>\n";
  response.set_header("Content-Security-Policy",
                      "default-src 'none'; form-action 'self'; base-uri 'none'; "
                      "frame-ancestors 'none'");
  response.set_header("X-Content-Type-Options", "nosniff");
  response.set_header("Referrer-Policy", "no-referrer");
  response.set_header("Cache-Control", "no-store");
  return response;
}

std::string card_lines(const cards::TokenLookup& lookup) {
  std::string html = "<p>Card ending in <strong>" + html_escape(lookup.card.last_four) +
                     "</strong></p>\n";
  if (lookup.cardholder_name) {
    html += "<p>Cardholder: <strong>" + html_escape(*lookup.cardholder_name) + "</strong></p>\n";
  }
  return html;
}

// The page of every outcome but ready (GET's offer) and activated (POST's confirmation).
http::Response refusal_page(const cards::TokenLookup& lookup) {
  switch (lookup.outcome) {
    case cards::TokenOutcome::used:
      return page(410, "Activation link already used",
                  "<p>This activation link has already been used.</p>\n" + card_lines(lookup));
    case cards::TokenOutcome::expired:
      return page(410, "Activation link expired",
                  "<p>This activation link has expired. Ask your card issuer for a new "
                  "one.</p>\n");
    case cards::TokenOutcome::card_not_pending:
      return page(409, "Card cannot be activated",
                  "<p>This card is not waiting for activation (it is " +
                      html_escape(lookup.card.state == "pending_activation"
                                      ? std::string("pending activation")
                                      : lookup.card.state) +
                      ").</p>\n" + card_lines(lookup));
    default:
      return page(404, "Activation link not found",
                  "<p>This activation link does not exist. Check that the address is "
                  "complete.</p>\n");
  }
}

// A token is the base64url text of k_activation_token_bytes random bytes; anything else cannot
// be one, and is answered without a database read.
bool well_formed(std::string_view token) {
  return crypto::is_random_token(token, limits::k_activation_token_bytes);
}

http::Response not_found() { return refusal_page(cards::TokenLookup{}); }

// An Error from the domain here is a failure of ours (the expected outcomes are values): logged
// with the request id, answered with a page that says nothing of it.
http::Response failure_page(const Context& context, const Error& error) {
  log::write(log::Level::error, "activation_page.failed",
             {{"request_id", context.request_id}, {"error_codes", error.first_code()}});
  return page(500, "Something went wrong", "<p>Please try again later.</p>\n");
}

http::Response show(Context& context) {
  std::string token(context.param("token"));
  if (!well_formed(token)) return not_found();
  const time::Micros real_now = context.services.clock.now();
  auto lookup = context.services.store.read<cards::TokenLookup>(
      [&](store::Tx& tx) { return cards::look_up_token(tx, token, real_now); });
  if (!lookup) return failure_page(context, lookup.error());
  if (lookup->outcome != cards::TokenOutcome::ready) return refusal_page(*lookup);
  return page(200, "Activate your card",
              card_lines(*lookup) +
                  "<form method=\"post\">\n<button type=\"submit\">Activate card</button>\n"
                  "</form>\n");
}

// A browser's form post: empty, or form-encoded (fields are ignored; the button may have one).
bool acceptable_body(const http::Request& request) {
  if (request.body.empty()) return true;
  const std::string* type = request.header("content-type");
  return type && type->starts_with("application/x-www-form-urlencoded");
}

http::Response activate(Context& context) {
  if (!acceptable_body(context.request)) {
    return page(400, "Request not understood",
                "<p>Use the button of the activation page to activate the card.</p>\n");
  }
  std::string token(context.param("token"));
  if (!well_formed(token)) return not_found();
  const time::Micros real_now = context.services.clock.now();
  auto used = context.services.store.write<cards::TokenLookup>(
      [&](store::Tx& tx) { return cards::use_activation_link(tx, token, real_now); });
  if (!used) return failure_page(context, used.error());
  if (used->outcome != cards::TokenOutcome::activated) return refusal_page(*used);
  return page(200, "Card activated",
              "<p>Your card is active and ready to use.</p>\n" + card_lines(*used));
}

}  // namespace

void add_activation_page_routes(Routes& routes) {
  // No credential: the token is one. Rate limited by the caller's address, like every route
  // without a credential, so tokens cannot be guessed at speed (they are 256-bit anyway).
  routes.push_back({"GET", "/activate/{token}", AuthKind::none, "", show});
  routes.push_back({"POST", "/activate/{token}", AuthKind::none, "", activate});
}

}  // namespace tesoro::api
