// The shared event-stream vectors (testdata/sse-vectors.json at the root of
// the repository) against both of Ratchet's JavaScript parsers: the SDK's
// EventStreamParser and the dashboard's EventParser
// (internal/web/assets/dashboard-api.js, a plain ES module the page loads,
// read here from its source). Each is fed as its caller feeds it: UTF-8
// bytes through one streaming TextDecoder, chunk by chunk.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { EventStreamParser } from "../dist/index.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const { vectors } = JSON.parse(readFileSync(join(root, "testdata", "sse-vectors.json"), "utf8"));

// The dashboard module has no imports and touches the browser only inside
// functions, so node can load it from its source text.
const dashboardSource = readFileSync(join(root, "internal", "web", "assets", "dashboard-api.js"), "utf8");
const { EventParser } = await import("data:text/javascript;base64," + Buffer.from(dashboardSource).toString("base64"));

function run(parser, chunks) {
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  const out = [];
  for (const c of chunks) out.push(...parser.push(dec.decode(enc.encode(c), { stream: true })));
  // The dashboard's parser also returns comments; the vectors list events only.
  return out.filter((e) => !("comment" in e)).map(({ event, data }) => ({ event, data }));
}

for (const [name, make] of [["sdk EventStreamParser", () => new EventStreamParser()], ["dashboard EventParser", () => new EventParser()]]) {
  test(`${name} passes the shared event-stream vectors`, () => {
    assert.ok(vectors.length > 0);
    for (const v of vectors) {
      assert.deepEqual(run(make(), v.chunks), v.events, v.name);
      assert.deepEqual(run(make(), [v.chunks.join("")]), v.events, v.name + " (whole text)");
    }
  });
}
