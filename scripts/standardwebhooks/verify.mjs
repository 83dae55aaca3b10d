// Verifies deliveries signed by Ratchet with the official Standard
// Webhooks library (npm "standardwebhooks"). Reads one JSON document on
// stdin, {"secret": "whsec_...", "deliveries": [{"headers": {...},
// "body": "..."}]}, verifies each, and prints one line per delivery:
// "ok <webhook-id> <type>" or "FAIL <reason>". Exits 1 when any fails.
// Also checks that a tampered body is refused.
import { Webhook } from "standardwebhooks";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const { secret, deliveries } = JSON.parse(input);
const wh = new Webhook(secret);
let failed = false;
for (const d of deliveries) {
  try {
    const msg = wh.verify(d.body, d.headers);
    console.log(`ok ${d.headers["webhook-id"]} ${msg.type}`);
  } catch (e) {
    failed = true;
    console.log(`FAIL ${e.message}`);
  }
  try {
    wh.verify(d.body + " ", d.headers);
    failed = true;
    console.log("FAIL a tampered body verified");
  } catch {
    console.log("ok tampered body refused");
  }
}
process.exit(failed ? 1 : 0);
