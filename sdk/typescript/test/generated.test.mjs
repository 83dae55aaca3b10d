// The checked-in generated files must be what the commands make now:
// src/schema.ts from openapi.json (npm run generate) and dist/ from src/
// (npm run build). A change to either source without regenerating fails.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = (name) => join(pkg, "node_modules", ".bin", name);

function files(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => relative(dir, join(d.parentPath ?? d.path, d.name)))
    .sort();
}

test("src/schema.ts is what openapi-typescript makes from openapi.json (run npm run generate)", () => {
  const tmp = mkdtempSync(join(tmpdir(), "ratchet-schema-"));
  try {
    const out = join(tmp, "schema.ts");
    execFileSync(bin("openapi-typescript"), ["../../openapi.json", "-o", out], { cwd: pkg, stdio: "pipe" });
    assert.ok(readFileSync(out, "utf8") === readFileSync(join(pkg, "src", "schema.ts"), "utf8"), "src/schema.ts is stale: run `npm run generate` and `npm run build` in sdk/typescript");
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test("dist/ is what tsc makes from src/ (run npm run build)", () => {
  const tmp = mkdtempSync(join(tmpdir(), "ratchet-dist-"));
  try {
    execFileSync(bin("tsc"), ["-p", ".", "--outDir", tmp], { cwd: pkg, stdio: "pipe" });
    const want = files(tmp);
    assert.deepEqual(files(join(pkg, "dist")), want, "dist/ has other files than a fresh build: run `npm run build`");
    for (const f of want) {
      assert.ok(readFileSync(join(tmp, f), "utf8") === readFileSync(join(pkg, "dist", f), "utf8"), `dist/${f} is stale: run \`npm run build\``);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
