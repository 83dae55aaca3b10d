// The checked-in src/schema.ts must be what openapi-typescript makes now
// from openapi.json; scripts/generate (or go generate ./...) rewrites it
// along with every other derived file. dist/ is not checked in: the prepare
// and pretest scripts build it from src/, so it cannot be stale here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = (name) => join(pkg, "node_modules", ".bin", name);

test("src/schema.ts is what openapi-typescript makes from openapi.json (run scripts/generate)", () => {
  const tmp = mkdtempSync(join(tmpdir(), "ratchet-schema-"));
  try {
    const out = join(tmp, "schema.ts");
    execFileSync(bin("openapi-typescript"), ["../../openapi.json", "-o", out], { cwd: pkg, stdio: "pipe" });
    assert.ok(
      readFileSync(out, "utf8") === readFileSync(join(pkg, "src", "schema.ts"), "utf8"),
      "sdk/typescript/src/schema.ts is stale: openapi.json changed; run scripts/generate (or go generate ./...) from the repository root and commit the result",
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
