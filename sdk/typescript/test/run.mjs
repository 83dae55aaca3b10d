// npm test: builds the ratchet binary once (unless RATCHET_BIN is set),
// then runs every test file with node's test runner.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ratchetBin } from "./support/server.mjs";

const here = dirname(fileURLToPath(import.meta.url));
ratchetBin();
const files = process.argv.slice(2).length > 0
  ? process.argv.slice(2)
  : readdirSync(here).filter((f) => f.endsWith(".test.mjs")).sort().map((f) => join(here, f));
const r = spawnSync(process.execPath, ["--test", "--test-concurrency=2", ...files], { stdio: "inherit", env: process.env });
process.exit(r.status ?? 1);
