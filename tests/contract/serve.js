// The contract checker for the API tests (tests/api/harness.cpp): reads one JSON exchange a line
// on stdin ({"method", "path", "status", "headers", "body"}) and answers each with one line on
// stdout, a JSON string: "" when the exchange conforms to the description, else what does not.
"use strict";

const path = require("path");
const readline = require("readline");
const { Contract, load } = require("./contract");

const file = process.argv[2] || path.join(__dirname, "..", "..", "openapi", "tesoro.yaml");
const contract = new Contract(load(file));

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  let verdict;
  try {
    verdict = contract.check(JSON.parse(line));
  } catch (error) {
    verdict = `the checker failed: ${error.stack || error}`;
  }
  process.stdout.write(JSON.stringify(verdict) + "\n");
});
