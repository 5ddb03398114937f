#pragma once
// Every answer the API tests receive is checked against the published description,
// openapi/tesoro.yaml: its operation, status, content type, required headers and body schema
// (tests/contract/contract.js, with Ajv). A mismatch fails the test that received the answer.
#include <map>
#include <string>
#include <vector>

namespace harness {

struct Request;
struct Reply;

// "" when the exchange conforms to the description; otherwise what does not. Thread-safe: the
// checker is one `node tests/contract/serve.js` process, started on first use.
std::string contract_violation(const Request& request, const Reply& reply);

// The same for the bytes of a raw connection (Server::raw): each complete answer is paired with
// the request it answers, in order. A request that is not HTTP (`GARBAGE`) has an empty method,
// and its answer must be the envelope's 400.
std::vector<std::string> raw_contract_violations(const std::string& sent,
                                                 const std::string& received);

}  // namespace harness
