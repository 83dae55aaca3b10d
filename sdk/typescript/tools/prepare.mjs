// npm's prepare script: builds dist/ (not committed) from src/ with tsc.
//
// npm runs it on `npm ci` / `npm install` in this folder, before `npm pack`
// and `npm publish`, and also when another package installs this folder
// (`npm install path/to/sdk/typescript`, or a `file:` dependency such as
// examples/worker-ts). In that last case npm links the folder but does not
// install its devDependencies, so tsc may be missing: then this installs
// them first with `npm ci` here (whose own prepare run builds dist/).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const tsc = join(pkg, "node_modules", ".bin", "tsc");

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: pkg, stdio: "inherit" });
  if (r.error) throw r.error;
  process.exit(r.status ?? 1);
}

if (existsSync(tsc)) {
  run(tsc, ["-b"]); // writes nothing when dist/ is current
} else if (process.env.RATCHET_SDK_PREPARE_INSTALLING) {
  console.error(`@ratchet/sdk: ${tsc} is still missing after npm ci`);
  process.exit(1);
} else {
  console.error("@ratchet/sdk: installing its build tools (npm ci in sdk/typescript) to build dist/");
  process.env.RATCHET_SDK_PREPARE_INSTALLING = "1";
  // npm_execpath is the npm that runs this script; --prefix overrides the
  // prefix an outer `npm ci --prefix elsewhere` passes down in the environment.
  const npm = process.env.npm_execpath;
  run(npm ? process.execPath : "npm", [...(npm ? [npm] : []), "ci", "--prefix", pkg, "--no-audit", "--no-fund", "--loglevel=error"]);
}
