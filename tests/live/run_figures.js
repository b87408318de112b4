// Runs every live figure's settings natively: the defaults, each `checks` entry and each
// `program` entry of the chapters' live.js files, through live-reference (the compute
// functions of chapters/*/live.cpp). In the ASan build this puts the figures' C++ under the
// sanitizers and Eigen's index checks; the page test (site.live) runs the same settings in
// the browser.
//
//   node run_figures.js LIVE_REFERENCE chapters/*/live.js
//
// Fails on a figure that errs (an exercise not done yet is fine in a student copy: pass
// --student-copy) or on live-reference failing (a sanitizer report aborts it).
"use strict";
const fs = require("fs");
const vm = require("vm");
const {execFileSync} = require("child_process");

const args = process.argv.slice(2);
const studentCopy = args[0] === "--student-copy";
if (studentCopy) args.shift();
const [reference, ...scripts] = args;
const specs = [];
const context = vm.createContext({BookLive: {define: (name, spec) => specs.push([name, spec])}});
for (const file of scripts) vm.runInContext(fs.readFileSync(file, "utf8"), context, {filename: file});

// The query the page sends: every control in the spec's order (code/live/live.js).
const query = (values) => Object.keys(values).map((k) => k + "=" + values[k]).join("&");
const runs = [];
for (const [name, spec] of specs) {
  const defaults = Object.fromEntries(spec.controls.map((c) => [c.name, c.value]));
  const settings = [defaults, ...(spec.checks || []), ...(spec.program || []).map((p) => p.values)];
  for (const s of settings) runs.push([name, spec.compute, query(Object.assign({}, defaults, s))]);
}
const out = execFileSync(reference, runs.flatMap((r) => [r[1], r[2]]), {encoding: "utf8",
                                                                        maxBuffer: 1 << 28});
let failed = 0;
out.trimEnd().split("\n").forEach((line, i) => {
  const result = JSON.parse(line);
  if (result.error && !(studentCopy && result.exercise)) {
    console.log(`FAIL ${runs[i][0]} (${runs[i][2]}): ${result.error}`);
    failed++;
  }
});
console.log(`${runs.length} settings of ${specs.length} live figures computed natively, ${failed} failed`);
process.exit(failed ? 1 : 0);
