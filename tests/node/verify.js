// Verifies one delivery with the official Standard Webhooks library, as an integrator would:
// reads {"secret", "body", "headers"} as JSON on stdin, prints the verified payload's id and
// exits 0, or prints why not and exits 1. Run by tests/api/webhook_deliveries_test.cpp.
const { Webhook } = require("standardwebhooks");

let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const { secret, body, headers } = JSON.parse(input);
  try {
    const payload = new Webhook(secret).verify(body, headers);
    console.log(payload.id);
  } catch (error) {
    console.log(String(error));
    process.exit(1);
  }
});
