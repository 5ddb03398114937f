// Where webhook deliveries may go: check_url (when an endpoint is registered or changed) and
// check_address (when the dispatcher connects). The rules are on destinations.hpp.
#include <algorithm>
#include <boost/url/ipv4_address.hpp>
#include <boost/url/ipv6_address.hpp>
#include <boost/url/parse.hpp>
#include <cctype>
#include <cstdint>
#include <optional>

#include "core/limits.hpp"
#include "core/result.hpp"
#include "domain/webhooks/destinations.hpp"

namespace tesoro::webhooks {
namespace {

namespace urls = boost::urls;

// What an address (or a name that can only mean one) reaches.
enum class Reach {
  public_internet,
  loopback,    // this machine: only in the sandbox
  restricted,  // private, link-local, shared (CGNAT), multicast, unspecified, reserved, broadcast
};

bool in_ipv4_block(std::uint32_t address, std::uint32_t block, int prefix_bits) {
  const std::uint32_t mask = prefix_bits == 0 ? 0 : ~std::uint32_t{0} << (32 - prefix_bits);
  return (address & mask) == block;
}

Reach ipv4_reach(std::uint32_t address) {
  if (in_ipv4_block(address, 0x7f000000, 8)) return Reach::loopback;  // 127.0.0.0/8
  struct Block {
    std::uint32_t block;
    int prefix_bits;
  };
  static constexpr Block k_restricted[] = {
      {0x00000000, 8},   // 0.0.0.0/8 "this network", the unspecified address among them
      {0x0a000000, 8},   // 10.0.0.0/8 private
      {0x64400000, 10},  // 100.64.0.0/10 shared address space (carrier-grade NAT)
      {0xa9fe0000, 16},  // 169.254.0.0/16 link-local (cloud metadata services live here)
      {0xac100000, 12},  // 172.16.0.0/12 private
      {0xc0a80000, 16},  // 192.168.0.0/16 private
      {0xe0000000, 4},   // 224.0.0.0/4 multicast
      {0xf0000000, 4},   // 240.0.0.0/4 reserved, 255.255.255.255 broadcast among them
  };
  for (const Block& restricted : k_restricted) {
    if (in_ipv4_block(address, restricted.block, restricted.prefix_bits)) return Reach::restricted;
  }
  return Reach::public_internet;
}

std::uint32_t embedded_ipv4(const urls::ipv6_address::bytes_type& bytes) {
  return std::uint32_t{bytes[12]} << 24 | std::uint32_t{bytes[13]} << 16 |
         std::uint32_t{bytes[14]} << 8 | std::uint32_t{bytes[15]};
}

bool starts_with_bytes(const urls::ipv6_address::bytes_type& bytes,
                       std::initializer_list<unsigned char> prefix) {
  return std::equal(prefix.begin(), prefix.end(), bytes.begin());
}

Reach ipv6_reach(const urls::ipv6_address& address) {
  const urls::ipv6_address::bytes_type bytes = address.to_bytes();
  if (address.is_loopback()) return Reach::loopback;       // ::1
  if (address.is_unspecified()) return Reach::restricted;  // ::
  // ::ffff:a.b.c.d (IPv4-mapped) and 64:ff9b::a.b.c.d (NAT64) reach the IPv4 address inside.
  if (address.is_v4_mapped() ||
      starts_with_bytes(bytes, {0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0})) {
    return ipv4_reach(embedded_ipv4(bytes));
  }
  if ((bytes[0] & 0xfe) == 0xfc) return Reach::restricted;  // fc00::/7 unique local
  if (bytes[0] == 0xfe && (bytes[1] & 0xc0) == 0x80) return Reach::restricted;  // fe80::/10
  if (bytes[0] == 0xfe && (bytes[1] & 0xc0) == 0xc0) return Reach::restricted;  // fec0::/10
  if (bytes[0] == 0xff) return Reach::restricted;  // ff00::/8 multicast
  return Reach::public_internet;
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// A host as written in a URL or an allow-list entry, in one comparable form: lower case,
// without the brackets of an IPv6 literal or a trailing dot, and an IP literal in its
// canonical text (so `[::FFFF:10.0.0.1]` and `::ffff:a00:1` are the same entry).
std::string normalized_host(std::string_view host) {
  // An operator's list may come as "a.example, b.example": spaces around entries do not count.
  while (!host.empty() && host.front() == ' ') host.remove_prefix(1);
  while (!host.empty() && host.back() == ' ') host.remove_suffix(1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (auto v6 = urls::parse_ipv6_address(host)) return v6->to_string();
  if (auto v4 = urls::parse_ipv4_address(host)) return v4->to_string();
  if (!host.empty() && host.back() == '.') host.remove_suffix(1);
  return lower(host);
}

std::optional<Reach> literal_reach(std::string_view normalized) {
  if (auto v4 = urls::parse_ipv4_address(normalized)) return ipv4_reach(v4->to_uint());
  if (auto v6 = urls::parse_ipv6_address(normalized)) return ipv6_reach(*v6);
  return std::nullopt;
}

bool is_literal(std::string_view normalized) { return literal_reach(normalized).has_value(); }

// RFC 6761: `localhost` and every name under it are this machine.
bool is_loopback_name(std::string_view name) {
  return name == "localhost" || name.ends_with(".localhost");
}

// The allow-list names this host exactly (no pattern).
bool named_exactly(std::string_view normalized, const Destinations& destinations) {
  return std::any_of(
      destinations.allowed_hosts.begin(), destinations.allowed_hosts.end(),
      [&](const std::string& entry) { return normalized_host(entry) == normalized; });
}

// An entry matches: `*` any host; `*.example.com` any name under example.com (not example.com
// itself, nor an IP literal); else the exact host.
bool host_listed(std::string_view normalized, const Destinations& destinations) {
  for (const std::string& raw : destinations.allowed_hosts) {
    const std::string entry = normalized_host(raw);
    if (entry == "*") return true;
    if (entry.starts_with("*.")) {
      const std::string_view suffix = std::string_view(entry).substr(1);  // ".example.com"
      if (!is_literal(normalized) && normalized.size() > suffix.size() &&
          normalized.ends_with(suffix)) {
        return true;
      }
      continue;
    }
    if (entry == normalized) return true;
  }
  return false;
}

// Why a host may not receive deliveries, or nullopt: the rules shared by both checks.
std::optional<std::string> host_refusal(std::string_view normalized,
                                        const Destinations& destinations) {
  std::optional<Reach> reach = literal_reach(normalized);
  if (!reach && is_loopback_name(normalized)) reach = Reach::loopback;
  if (reach == Reach::loopback && !destinations.sandbox) {
    return "must not point at a loopback host (localhost, 127.0.0.0/8, ::1) outside the sandbox";
  }
  if (reach == Reach::restricted) {
    if (named_exactly(normalized, destinations)) return std::nullopt;
    return "must not point at a private, link-local, shared, multicast or unspecified address "
           "unless the server's allowed hosts name it";
  }
  if (!host_listed(normalized, destinations)) {
    return "must point at a host the server allows (--webhook-allowed-hosts)";
  }
  return std::nullopt;
}

// A DNS name of letters, digits and hyphens in labels of 1 to 63, whose last label starts with
// a letter: a name some resolvers would read as an address (`127.1`, `0x7f.1`, `2130706433`)
// is refused rather than guessed at.
bool is_dns_name(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  std::string_view last_label;
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t dot = name.find('.', start);
    if (dot == std::string_view::npos) dot = name.size();
    std::string_view label = name.substr(start, dot - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
      return false;
    }
    for (char c : label) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
    }
    last_label = label;
    start = dot + 1;
  }
  return std::isalpha(static_cast<unsigned char>(last_label.front())) != 0;
}

bool is_valid_port(std::string_view port) {
  if (port.empty() || port.size() > 5) return false;
  int value = 0;
  for (char c : port) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  return value >= 1 && value <= 65535;
}

// A percent-encoded control character (%00-%1F, %7F) anywhere: no request line may carry one
// (the HTTP client refuses such a URL at every delivery), so it is refused at registration.
bool has_encoded_control(std::string_view text) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (std::size_t i = 0; i + 2 < text.size(); ++i) {
    if (text[i] != '%') continue;
    const int high = hex(text[i + 1]);
    const int low = hex(text[i + 2]);
    if (high < 0 || low < 0) continue;
    const int byte = high * 16 + low;
    if (byte < 0x20 || byte == 0x7f) return true;
  }
  return false;
}

// The URL's host in normalized form, or what is wrong with its shape.
Result<std::string> url_host(const urls::url_view& url) {
  switch (url.host_type()) {
    case urls::host_type::ipv4:
    case urls::host_type::ipv6:
      return normalized_host(url.encoded_host());
    case urls::host_type::name: {
      std::string name = normalized_host(url.host_name());
      if (name.empty()) return errors::validation("must have a host", std::nullopt);
      if (!is_dns_name(name)) {
        return errors::validation("the host must be a DNS name or an IP address", std::nullopt);
      }
      return name;
    }
    case urls::host_type::none:
      return errors::validation("must have a host", std::nullopt);
    default:  // IPvFuture
      return errors::validation("the host must be a DNS name or an IP address", std::nullopt);
  }
}

}  // namespace

std::optional<Error> check_url(std::string_view text, const Destinations& destinations,
                               std::string_view path) {
  auto refuse = [&](std::string message) {
    return errors::validation(std::move(message), std::string(path));
  };
  if (text.size() > limits::k_webhook_url_max_bytes) {
    return refuse("must be at most " + std::to_string(limits::k_webhook_url_max_bytes) + " bytes");
  }
  auto parsed = urls::parse_absolute_uri(text);
  if (!parsed) return refuse("must be an absolute http or https URL");
  const urls::url_view& url = *parsed;
  if (url.scheme_id() != urls::scheme::https && url.scheme_id() != urls::scheme::http) {
    return refuse("must be an http or https URL");
  }
  if (url.scheme_id() == urls::scheme::http && !destinations.sandbox) {
    return refuse("must use https outside the sandbox");
  }
  if (!url.has_authority()) return refuse("must have a host");
  if (url.has_userinfo()) return refuse("must not contain user information (user:password@)");
  if (url.has_fragment()) return refuse("must not have a fragment (#...)");
  if (url.has_port() && !is_valid_port(url.port())) return refuse("the port must be 1 to 65535");
  if (has_encoded_control(text)) {
    return refuse("must not contain an encoded control character (%00 to %1F, %7F)");
  }
  auto host = url_host(url);
  if (!host) return refuse(host.error().errors.front().message);
  if (auto refusal = host_refusal(host.value(), destinations)) return refuse(*refusal);
  return std::nullopt;
}

bool check_address(std::string_view host, std::string_view address,
                   const Destinations& destinations) {
  std::string normalized_address = normalized_host(address);
  std::optional<Reach> reach = literal_reach(normalized_address);
  if (!reach) return false;
  // The host itself first: the allow-list may have changed since the endpoint was registered.
  std::string normalized = normalized_host(host);
  if (host_refusal(normalized, destinations)) return false;
  switch (*reach) {
    case Reach::public_internet:
      return true;
    case Reach::loopback:
      return destinations.sandbox;
    case Reach::restricted:
      return named_exactly(normalized_address, destinations) ||
             (!is_literal(normalized) && named_exactly(normalized, destinations));
  }
  return false;
}

Pinned pin_destination(std::string_view url, const Destinations& destinations,
                       const outbound_http::Transport& transport) {
  Pinned pinned;
  const std::optional<outbound_http::UrlParts> parts = outbound_http::parse_url(url);
  if (!parts) {
    pinned.refused = "invalid url";
  } else if (parts->ip_literal) {
    if (!check_address(parts->host, parts->host, destinations)) {
      pinned.refused = "address not allowed";
    }
  } else {
    const outbound_http::Resolved resolved = transport.resolve(parts->host, parts->port);
    for (const std::string& address : resolved.addresses) {
      if (check_address(parts->host, address, destinations)) pinned.addresses.push_back(address);
    }
    if (pinned.addresses.empty()) {
      pinned.refused = resolved.addresses.empty() ? resolved.error : "address not allowed";
    }
  }
  return pinned;
}

}  // namespace tesoro::webhooks
