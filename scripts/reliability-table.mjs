// Renders docs/reliability-results.json (written by `npm run test:reliability`) as the table in
// docs/reliability.md, between its `<!-- results -->` and `<!-- /results -->` markers.
import { readFileSync, writeFileSync } from "node:fs";

const RESULTS = "docs/reliability-results.json";
const DOC = "docs/reliability.md";

/**
 * @typedef {object} ReliabilityResults What test/node/reliability-reporter.ts writes.
 * @property {string} finished_at
 * @property {number} seconds
 * @property {{ passed: number, failed: number }} tests
 * @property {string[]} failures
 * @property {Record<string, Record<string, number>>} counts
 */
/** @type {ReliabilityResults} */
const results = JSON.parse(readFileSync(RESULTS, "utf8"));
const rows = [];
for (const [category, entries] of Object.entries(results.counts).sort()) {
  for (const [name, value] of Object.entries(entries).sort()) rows.push(`| ${category} | ${name.replaceAll("_", " ")} | ${value} |`);
}
const table = [
  `Last run: ${results.finished_at}, ${results.seconds} s on this machine, ${results.tests.passed} tests passed, ${results.tests.failed} failed.`,
  "",
  "| Category | Count | Value |",
  "| --- | --- | --- |",
  ...rows,
  "",
  results.failures.length ? `Failing tests: ${results.failures.map((f) => `\`${f}\``).join(", ")}.` : "Failing tests: none.",
].join("\n");

const doc = readFileSync(DOC, "utf8");
const rendered = doc.replace(/<!-- results -->[\s\S]*<!-- \/results -->/, `<!-- results -->\n${table}\n<!-- /results -->`);
if (rendered === doc && !doc.includes(table)) throw new Error(`${DOC} has no <!-- results --> … <!-- /results --> markers`);
writeFileSync(DOC, rendered);
console.log(table);
