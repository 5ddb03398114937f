#pragma once
// Where a webhook endpoint, or an endpoint that decides card authorizations, may point.
//
// Destinations. A tenant must not be able to point Tesoro at the operator's internal services,
// so a URL is checked twice:
// - when registered (check_url): absolute http(s) URL without user info or fragment, at most
//   limits::k_webhook_url_max_bytes; `https` required in production (http allowed in the
//   sandbox); its host must match the operator's allow-list (Destinations::allowed_hosts:
//   exact host names, `*.example.com` suffix patterns, or `*` for any host); a loopback host
//   (localhost, 127.0.0.0/8, ::1) only in the sandbox; an IP literal in a private, link-local,
//   multicast or unspecified range is refused unless the allow-list names it exactly;
// - when delivered (check_address, by the dispatcher on every address the host resolves to,
//   which it then pins for the connection so that DNS cannot change its answer in between):
//   the same address rules, so a public name resolving to 10.0.0.1 is refused too.
// A host name must be a DNS name (letters, digits, hyphens; an internationalised name in its
// xn-- form) whose last label starts with a letter, so that `127.1` or `0x7f.1`, which some
// resolvers read as addresses, cannot slip past the literal checks. IPv4-mapped (::ffff:a.b.c.d)
// and NAT64 (64:ff9b::a.b.c.d) IPv6 addresses are judged by the IPv4 address inside. When the
// allow-list is not `*`, a loopback host must be listed too (`localhost`, `127.0.0.1`).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/outbound_http.hpp"

namespace tesoro::webhooks {

struct Destinations {
  bool sandbox = true;
  std::vector<std::string> allowed_hosts = {"*"};  // --webhook-allowed-hosts
};

// validation_error at `path` when the URL may not be registered.
std::optional<Error> check_url(std::string_view url, const Destinations& destinations,
                               std::string_view path = "url");
// Whether the dispatcher may connect to `address` (an IPv4 or IPv6 literal) resolved for `host`.
bool check_address(std::string_view host, std::string_view address,
                   const Destinations& destinations);

// Where a request to `url` may connect, checked as the dispatcher checks (check_address): the
// addresses its host resolves to through `transport` that are allowed, to pin the connection to
// (none for an IP literal, connected to as it is), or why it may not be connected to. Blocks on
// the transport's resolver.
struct Pinned {
  std::vector<std::string> addresses;
  std::optional<std::string> refused;
};
Pinned pin_destination(std::string_view url, const Destinations& destinations,
                       const outbound_http::Transport& transport);

}  // namespace tesoro::webhooks
