// The description itself (openapi/tesoro.yaml): Redocly's linter finds no error, every example
// in it validates against its schema, and the checker the API tests use refuses what breaks it.
"use strict";

const test = require("node:test");
const assert = require("node:assert");
const path = require("path");
const { execFileSync } = require("child_process");
const { Contract, load, resolve } = require("./contract");

const root = path.join(__dirname, "..", "..");
const file = path.join(root, "openapi", "tesoro.yaml");
const doc = load(file);
const contract = new Contract(doc);

test("Redocly's recommended rules report no error", () => {
  const cli = path.join(__dirname, "node_modules", "@redocly", "cli", "bin", "cli.js");
  let output;
  try {
    output = execFileSync(process.execPath, [cli, "lint", file, "--format=json",
      `--config=${path.join(root, "redocly.yaml")}`], {
      encoding: "utf8", stdio: ["ignore", "pipe", "pipe"],
      // Nothing leaves the machine: no usage report, no look for a newer version.
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
    });
  } catch (error) {
    output = error.stdout;  // lint exits 1 on errors; the report says which
  }
  const report = JSON.parse(output.slice(output.indexOf("{")));
  const errors = report.problems.filter((problem) => problem.severity === "error");
  assert.deepStrictEqual(errors.map((e) => `${e.ruleId}: ${e.message} at ${e.location[0].pointer}`), []);
});

// Every example of the description with the schema it illustrates: schema `example` and
// `examples`, media types' `example` and `examples.*.value`, parameters' likewise.
function examples_of(document) {
  const found = [];
  const visit_schema = (schema, where) => {
    if (!schema || typeof schema !== "object") return;
    if (schema.example !== undefined) found.push({ where: `${where}/example`, schema, value: schema.example });
    if (Array.isArray(schema.examples)) {
      schema.examples.forEach((value, i) => found.push({ where: `${where}/examples/${i}`, schema, value }));
    }
    for (const [key, value] of Object.entries(schema.properties || {})) visit_schema(value, `${where}/properties/${key}`);
    for (const key of ["items", "additionalProperties", "not"]) visit_schema(schema[key], `${where}/${key}`);
    for (const key of ["allOf", "oneOf", "anyOf", "prefixItems"]) {
      (schema[key] || []).forEach((value, i) => visit_schema(value, `${where}/${key}/${i}`));
    }
  };
  const visit_holder = (holder, where) => {  // a media type or a parameter
    holder = resolve(document, holder);
    if (!holder || !holder.schema) return;
    if (holder.example !== undefined) found.push({ where: `${where}/example`, schema: holder.schema, value: holder.example });
    for (const [name, example] of Object.entries(holder.examples || {})) {
      const resolved = resolve(document, example);
      if (resolved && resolved.value !== undefined) {
        found.push({ where: `${where}/examples/${name}`, schema: holder.schema, value: resolved.value });
      }
    }
    visit_schema(holder.schema, `${where}/schema`);
  };
  const visit_content = (content, where) => {
    for (const [type, media] of Object.entries(content || {})) visit_holder(media, `${where}/content/${type}`);
  };
  for (const [name, schema] of Object.entries(document.components.schemas || {})) {
    visit_schema(schema, `#/components/schemas/${name}`);
  }
  for (const [name, response] of Object.entries(document.components.responses || {})) {
    visit_content(response.content, `#/components/responses/${name}`);
  }
  for (const [name, parameter] of Object.entries(document.components.parameters || {})) {
    visit_holder(parameter, `#/components/parameters/${name}`);
  }
  for (const [template, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!operation || typeof operation !== "object" || !operation.responses) continue;
      const where = `#/paths/${template}/${method}`;
      (operation.parameters || []).forEach((parameter, i) => visit_holder(parameter, `${where}/parameters/${i}`));
      if (operation.requestBody) visit_content(resolve(document, operation.requestBody).content, `${where}/requestBody`);
      for (const [status, response] of Object.entries(operation.responses)) {
        if (!response.$ref) visit_content(response.content, `${where}/responses/${status}`);
      }
    }
  }
  return found;
}

test("every example of the description validates against its schema", () => {
  const examples = examples_of(doc);
  assert.ok(examples.length > 100, `only ${examples.length} examples found`);
  const failures = [];
  for (const { where, schema, value } of examples) {
    const problems = contract.check_value(`example ${where}`, schema, value);
    if (problems) failures.push(`${where}: ${problems}`);
  }
  assert.deepStrictEqual(failures, []);
});

// The checker must be able to fail: each answer below breaks the description one way.
const healthy = { method: "GET", path: "/healthz", status: 200,
  headers: { "content-type": "application/json" }, body: JSON.stringify({ status: "ok" }) };

test("the checker accepts a conforming answer", () => {
  assert.strictEqual(contract.check(healthy), "");
});

test("the checker refuses an undocumented status, content type, body or path", () => {
  assert.match(contract.check({ ...healthy, status: 418 }), /status not documented/);
  assert.match(contract.check({ ...healthy, headers: { "content-type": "text/plain" } }), /content type/);
  assert.match(contract.check({ ...healthy, body: "{" }), /not JSON/);
  assert.match(contract.check({ ...healthy, path: "/nowhere", status: 200 }), /no path of the description/);
  assert.match(contract.check({ ...healthy, method: "DELETE" }), /not 405/);
});

test("the checker refuses a body that breaks its schema", () => {
  const envelope = { code: "404 Not Found", message: "not found", id: "log_0123456789abcdefghijkl",
    errors: [{ error_code: "route_not_found", message: "no route", path: null }] };  // no url
  const verdict = contract.check({ method: "GET", path: "/nowhere", status: 404,
    headers: { "content-type": "application/json" }, body: JSON.stringify(envelope) });
  assert.match(verdict, /must have required property 'url'/);
  envelope.errors[0].url = null;
  assert.strictEqual(contract.check({ method: "GET", path: "/nowhere", status: 404,
    headers: { "content-type": "application/json" }, body: JSON.stringify(envelope) }), "");
});

test("amounts above 2^53 - 1 are outside the description", () => {
  const money = doc.components.schemas.Money;
  assert.strictEqual(contract.check_value("Money", money, { amount: 9007199254740991, currency: "COP" }), "");
  assert.notStrictEqual(contract.check_value("Money", money, { amount: 9007199254740992, currency: "COP" }), "");
});

test("a concrete path is matched before a templated one", () => {
  assert.strictEqual(contract.template_of("/api/v1/collections/attempts"), "/api/v1/collections/attempts");
  assert.strictEqual(contract.template_of("/api/v1/collections/bbcol_0123456789abcdefghijkl"), "/api/v1/collections/{id}");
});
