// Transport bench: the client's own CPU per call and calls/s, through the
// default transport (node:http with keep-alive) and through the platform
// fetch (ClientOptions.fetch), alternated, against one server.
//
//   RATCHET_SERVER=http://127.0.0.1:8080 RATCHET_KEY=rk_... node bench/transport.mjs [--calls 4000 --at-once 8 --rounds 5]
//
// Each round sends the same number of GET /v1/me calls through each client,
// `--at-once` in flight; CPU is process.cpuUsage() of this process (user +
// system) divided by the calls. Prints the median of the rounds for each.
import { parseArgs } from "node:util";
import { Client } from "../dist/index.js";

const { values: f } = parseArgs({
  options: {
    calls: { type: "string", default: "4000" },
    "at-once": { type: "string", default: "8" },
    rounds: { type: "string", default: "5" },
  },
});
const n = Number(f.calls), atOnce = Number(f["at-once"]), rounds = Number(f.rounds);
for (const [name, v] of [["calls", n], ["at-once", atOnce], ["rounds", rounds]]) {
  if (!Number.isInteger(v) || v < 1 || v > 1_000_000) {
    console.error(`--${name} ${v}: must be an integer from 1 through 1000000`);
    process.exit(2);
  }
}
const url = process.env.RATCHET_SERVER, key = process.env.RATCHET_KEY;
if (!url || !key) {
  console.error("set RATCHET_SERVER and RATCHET_KEY");
  process.exit(2);
}

async function round(c) {
  let left = n;
  const t0 = performance.now(), u0 = process.cpuUsage();
  await Promise.all(Array.from({ length: atOnce }, async () => { while (left-- > 0) await c.me(); }));
  const u = process.cpuUsage(u0), wall = performance.now() - t0;
  return { cpuUs: (u.user + u.system) / n, perSec: n / (wall / 1000) };
}

const clients = { "node:http (default)": new Client(url, key), "fetch": new Client(url, key, { fetch: globalThis.fetch }) };
const seen = Object.fromEntries(Object.keys(clients).map((k) => [k, []]));
for (const c of Object.values(clients)) await round(c); // warm up: connections, JIT
for (let r = 0; r < rounds; r++) for (const [k, c] of Object.entries(clients)) seen[k].push(await round(c));
const median = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
console.log(`median of ${rounds} rounds of ${n} GET /v1/me, ${atOnce} at once, against ${url}:`);
for (const [k, v] of Object.entries(seen)) {
  console.log(`  ${k.padEnd(20)} client CPU ${median(v.map((x) => x.cpuUs)).toFixed(0)} µs/call, ${median(v.map((x) => x.perSec)).toFixed(0)} calls/s`);
}
for (const c of Object.values(clients)) c.close();
