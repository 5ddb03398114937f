// The published contract as a checker: reads openapi/tesoro.yaml and says whether one HTTP
// exchange (method, path, status, headers, body) conforms to it: a documented operation (or one
// of the answers the description gives every path), a documented status, a documented content
// type, every required header, and the body against its JSON Schema 2020-12 (Ajv).
"use strict";

const fs = require("fs");
const YAML = require("yaml");
const Ajv2020 = require("ajv/dist/2020");
const addFormats = require("ajv-formats");

// Where the description's component schemas live for Ajv: `#/components/schemas/X` becomes
// `<k_schemas_id>#/$defs/X`, so that any schema of the document compiles on its own.
const k_schemas_id = "https://tesoro.invalid/components.json";

function rewrite_refs(value) {
  if (Array.isArray(value)) return value.map(rewrite_refs);
  if (value === null || typeof value !== "object") return value;
  const out = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === "$ref" && typeof item === "string" && item.startsWith("#/components/schemas/")) {
      out[key] = `${k_schemas_id}#/$defs/${item.slice("#/components/schemas/".length)}`;
    } else {
      out[key] = rewrite_refs(item);
    }
  }
  return out;
}

function make_ajv(doc) {
  // Strict: a keyword Ajv does not know (a typo such as `minimun`) is an error, not ignored.
  // The OpenAPI 3.1 vocabulary's keywords are annotations here.
  const ajv = new Ajv2020({ strict: true, strictTypes: false, allErrors: true });
  addFormats(ajv);
  ajv.addVocabulary(["example", "discriminator", "xml", "externalDocs"]);
  // OpenAPI's format names that JSON Schema does not define: int64 says the integer fits 64 bits
  // (the schema's own bounds say more); binary is any bytes.
  ajv.addFormat("int64", { type: "number", validate: (n) => Number.isInteger(n) });
  ajv.addFormat("int32", { type: "number", validate: (n) => Number.isInteger(n) && Math.abs(n) < 2 ** 31 });
  ajv.addFormat("binary", true);
  ajv.addSchema({ $id: k_schemas_id, $defs: rewrite_refs(doc.components.schemas || {}) });
  return ajv;
}

function load(file) {
  return YAML.parse(fs.readFileSync(file, "utf8"), { intAsBigInt: false });
}

// `#/components/responses/X` and the like, followed until a non-reference.
function resolve(doc, value) {
  let seen = 0;
  while (value && typeof value.$ref === "string" && value.$ref.startsWith("#/")) {
    value = value.$ref
      .slice(2)
      .split("/")
      .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
      .reduce((node, key) => (node ? node[key] : undefined), doc);
    if (++seen > 20) throw new Error("reference loop");
  }
  return value;
}

function media_type_of(header) {
  return String(header || "").split(";")[0].trim().toLowerCase();
}

function matches_media(documented, actual) {
  if (documented === "*/*" || documented === actual) return true;
  if (documented.endsWith("/*")) return actual.startsWith(documented.slice(0, -1));
  return false;
}

function is_json_media(type) {
  return type === "application/json" || type.endsWith("+json");
}

class Contract {
  constructor(doc) {
    this.doc = doc;
    this.ajv = make_ajv(doc);
    this.validators = new Map();
    // Paths as patterns, most literal first: `/api/v1/collections/attempts` is tried before
    // `/api/v1/collections/{id}`, as OpenAPI resolves concrete paths before templated ones.
    this.paths = Object.keys(doc.paths).map((template) => {
      const segments = template.split("/");
      const pattern = segments
        .map((segment) =>
          /^\{[^}]+\}$/.test(segment) ? "([^/]+)" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
        .join("/");
      return { template, segments, regex: new RegExp(`^${pattern}$`) };
    });
    this.paths.sort((a, b) => {
      const length = Math.min(a.segments.length, b.segments.length);
      for (let i = 0; i < length; ++i) {
        const a_param = a.segments[i].startsWith("{");
        const b_param = b.segments[i].startsWith("{");
        if (a_param !== b_param) return a_param ? 1 : -1;
      }
      return 0;
    });
  }

  // The path template a request path belongs to, or null.
  template_of(path) {
    for (const entry of this.paths) if (entry.regex.test(path)) return entry.template;
    return null;
  }

  // A compiled validator for `schema` (a schema object of the description), kept by `key`.
  validator(key, schema) {
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(rewrite_refs(schema));
      this.validators.set(key, validate);
    }
    return validate;
  }

  // Checks the schema part of a value, returning "" or the problems found.
  check_value(key, schema, value) {
    const validate = this.validator(key, schema);
    if (validate(value)) return "";
    return validate.errors
      .slice(0, 8)
      .map((error) => `${error.instancePath || "(body)"} ${error.message}` +
        (error.params && Object.keys(error.params).length ? ` ${JSON.stringify(error.params)}` : ""))
      .join("; ");
  }

  // The operation object and its template for a request, following the console's proxy
  // (`/console/api/v1/...` and `/console/api/api/v1/...` answer as the public route after the
  // prefix) and HEAD (answered as GET). Returns {template, operation} (either may be null).
  operation_of(method, raw_path) {
    // The router ignores empty segments: `/v1//accounts/` is `/v1/accounts` (the description's
    // info says so). The console's paths are read as written (`/console//api/...` is no file).
    let path = raw_path.split("?")[0];
    if (!path.startsWith("/console")) {
      path = path.replace(/\/{2,}/g, "/");
      if (path.length > 1 && path.endsWith("/")) path = path.slice(0, -1);
    }
    const proxied = path.startsWith("/console/api/v1/") || path.startsWith("/console/api/api/v1/");
    if (proxied) path = path.slice("/console/api".length);
    let template = this.template_of(path);
    // `/console/{file}` may hold slashes (`components/keys.js`): the console's files.
    if (!template && path.startsWith("/console/") && !path.startsWith("/console/api/")) {
      template = "/console/{file}";
    }
    if (!template) return { template: null, operation: null };
    const item = this.doc.paths[template];
    const verb = method.toLowerCase();
    const operation = item[verb] || (verb === "head" ? item.get : undefined) || null;
    // The console proxies only routes that need a credential (not the token endpoint, whose
    // security allows none: an empty requirement).
    const open = (requirements) => !requirements || requirements.length === 0 ||
      requirements.some((requirement) => Object.keys(requirement).length === 0);
    if (proxied && operation && open(operation.security)) {
      return { template: null, operation: null };
    }
    return { template, operation, proxied };
  }

  // Returns "" when the exchange conforms, or what does not.
  check(exchange) {
    if (!exchange.method) {
      // Bytes that are not an HTTP request (the API tests' raw connections): the envelope's 400.
      if (String(exchange.status) !== "400") return `a request that is not HTTP answered ${exchange.status}, not 400`;
      return this.check_value("malformed", this.doc.components.schemas.ErrorEnvelope,
        (() => { try { return JSON.parse(exchange.body); } catch { return null; } })());
    }
    const method = exchange.method.toUpperCase();
    const status = String(exchange.status);
    const headers = exchange.headers || {};
    const { template, operation, proxied } = this.operation_of(method, exchange.path);
    const where = `${method} ${template || exchange.path} ${status}`;
    let response;
    let response_key;
    // What a request that reaches no operation may be answered (the description's info): the
    // HTTP layer's refusals before routing, the client address's bucket, and the route's absence.
    const unrouted = { 400: "BadRequest", 413: "PayloadTooLarge", 429: "TooManyRequests",
      431: "HeadersTooLarge" };
    if (!template || !operation) {
      const absent = template ? ["405", "MethodNotAllowed"] : ["404", "RouteNotFound"];
      const name = status === absent[0] ? absent[1] : unrouted[status];
      if (!name) {
        return template ? `${where}: the path has no ${method} and the answer is not 405`
          : `${where}: no path of the description matches`;
      }
      response = this.doc.components.responses[name];
      response_key = `unrouted ${status}`;
    } else {
      const responses = operation.responses || {};
      response = responses[status] || responses[`${status[0]}XX`] || responses.default;
      response_key = `${method} ${template} ${status}`;
      // Through the console the session stands for the credential: its 401 and 403 are the
      // console's (the tag `console` says so).
      if (proxied && (status === "401" || status === "403")) {
        response = this.doc.components.responses[status === "401" ? "ConsoleUnauthorized" : "ConsoleForbidden"];
        response_key = `console ${status}`;
      }
      // On a raw connection (bytes a client library would not send) the HTTP layer may refuse
      // the request before its route sees it, on any path.
      if (!response && exchange.raw && unrouted[status] && status !== "429") {
        response = this.doc.components.responses[unrouted[status]];
        response_key = `unrouted ${status}`;
      }
      if (!response) return `${where}: status not documented on the operation`;
    }
    response = resolve(this.doc, response);
    if (!response) return `${where}: the response's reference does not resolve`;

    for (const [name, header] of Object.entries(response.headers || {})) {
      const documented = resolve(this.doc, header);
      if (documented && documented.required && headers[name.toLowerCase()] === undefined) {
        return `${where}: required header ${name} absent`;
      }
    }

    const body = exchange.body || "";
    const content = response.content;
    const actual_type = media_type_of(headers["content-type"]);
    if (!content) {
      if (body.length > 0) return `${where}: a body was answered where none is documented`;
      return "";
    }
    if (method === "HEAD" || status === "304") return "";
    const documented_type = Object.keys(content).find((type) => matches_media(type, actual_type));
    if (documented_type === undefined) {
      return `${where}: content type '${actual_type}' not among ${Object.keys(content).join(", ")}`;
    }
    const schema = content[documented_type].schema;
    if (!schema) return "";
    if (is_json_media(actual_type)) {
      let value;
      try {
        value = JSON.parse(body);
      } catch (error) {
        return `${where}: the body is not JSON (${error.message})`;
      }
      const problems = this.check_value(`${response_key} ${documented_type}`, schema, value);
      return problems ? `${where}: ${problems}` : "";
    }
    return "";
  }
}

module.exports = { Contract, load, resolve };
