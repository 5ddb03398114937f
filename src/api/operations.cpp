// Operations endpoints: liveness, readiness, metrics and the API description. No credentials.
#include "api/context.hpp"
#include "core/metrics.hpp"

namespace tesoro::api {

extern const char* const k_openapi_yaml;  // generated from openapi/tesoro.yaml at build time

namespace {

http::Response healthz(Context&) {
  return json_response(200, json::object{{"status", "ok"}});
}

http::Response readyz(Context& context) {
  if (!context.services.store.ready()) return context.error(errors::unavailable());
  return json_response(200, json::object{{"status", "ready"}});
}

http::Response metrics_text(Context&) {
  http::Response response;
  response.content_type = "text/plain; version=0.0.4; charset=utf-8";
  response.body = metrics::render_prometheus();
  return response;
}

http::Response openapi(Context&) {
  http::Response response;
  response.content_type = "application/yaml";
  response.body = k_openapi_yaml;
  return response;
}

}  // namespace

void add_operations_routes(Routes& routes) {
  struct Entry {
    const char* pattern;
    Handler handler;
    bool touches_store;
  };
  for (const Entry& entry :
       {Entry{"/healthz", healthz, false}, Entry{"/readyz", readyz, true},
        Entry{"/metrics", metrics_text, false}, Entry{"/openapi.yaml", openapi, false}}) {
    routes.push_back({"GET", entry.pattern, AuthKind::none, "", entry.handler, false, false,
                      entry.touches_store});
  }
}

}  // namespace tesoro::api
