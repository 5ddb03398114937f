// The console's pages and assets: the files of console/ compiled into the binary
// (api/console_assets.hpp), served at /console/<path>, index.html at /console and /console/.
// Revalidated on every load (Cache-Control: no-cache with an ETag), so a new binary's files are
// picked up at once and an unchanged file costs a 304.
#include <vector>

#include "api/console.hpp"
#include "api/console_assets.hpp"
#include "core/crypto.hpp"

namespace tesoro::api {
namespace {

struct Served {
  const ConsoleAsset* asset;
  std::string etag;
};

// Each file with its ETag, hashed once.
const std::vector<Served>& served_files() {
  static const std::vector<Served> k_files = [] {
    std::vector<Served> files;
    for (const ConsoleAsset& asset : console_assets()) {
      files.push_back({&asset, "\"" + crypto::sha256_hex(asset.content).substr(0, 32) + "\""});
    }
    return files;
  }();
  return k_files;
}

std::string_view content_type(std::string_view path) {
  struct Type {
    std::string_view extension;
    std::string_view type;
  };
  static constexpr Type k_types[] = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
      {".woff2", "font/woff2"},
      {".txt", "text/plain; charset=utf-8"},
      {".webmanifest", "application/manifest+json"},
  };
  for (const Type& type : k_types) {
    if (path.ends_with(type.extension)) return type.type;
  }
  return "application/octet-stream";
}

}  // namespace

http::Response console_page(Context& context) {
  if (context.request.method != "GET" && context.request.method != "HEAD") {
    http::Response refused = context.error(errors::method_not_allowed());
    refused.set_header("Allow", "GET, HEAD");
    return refused;
  }
  std::string_view rest =
      std::string_view(context.path).substr(std::string_view("/console").size());
  std::string_view wanted = rest.empty() || rest == "/" ? "index.html" : rest.substr(1);
  for (const Served& file : served_files()) {
    if (file.asset->path != wanted) continue;
    http::Response response;
    const std::string* known = context.request.header("if-none-match");
    if (known && *known == file.etag) {
      response.status = 304;
    } else {
      response.body = std::string(file.asset->content);
    }
    response.content_type = std::string(content_type(wanted));
    response.set_header("ETag", file.etag);
    response.set_header("Cache-Control", "no-cache");
    return response;
  }
  return context.error(errors::route_not_found());
}

}  // namespace tesoro::api
