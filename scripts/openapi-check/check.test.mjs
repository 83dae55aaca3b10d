// Validates openapi.json with two validators written by other people, so
// the contract holds under the tools that read it (SDK generators, API
// gateways, documentation sites) and not only under Ratchet's own tests.
// Both are pinned in package.json.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { readFileSync } from "node:fs";
import { Validator } from "@seriousme/openapi-schema-validator";
import SwaggerParser from "@apidevtools/swagger-parser";

const docPath = fileURLToPath(new URL("../../openapi.json", import.meta.url));
const doc = () => JSON.parse(readFileSync(docPath, "utf8"));

test("openapi.json is valid under the official OpenAPI 3.1 JSON Schema", async () => {
  const validator = new Validator();
  const res = await validator.validate(doc());
  assert.equal(validator.version, "3.1", "the document's version");
  assert.deepEqual(res.errors ?? [], [], "schema errors");
  assert.ok(res.valid);
});

test("openapi.json is valid under swagger-parser, every $ref resolved", async () => {
  const api = await SwaggerParser.validate(doc());
  assert.equal(api.openapi, "3.1.0");
  assert.ok(Object.keys(api.paths).length > 30, "the document has its routes");
});
