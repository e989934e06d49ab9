#!/usr/bin/env node
// Browser tests of the WebAssembly build: serves the build dir (and the conformance fixtures) on
// 127.0.0.1, drives Debian's headless Chromium (WebGPU on its bundled SwiftShader) with
// playwright-core, and runs inside the page: the WebGPU surface checks, the embedded example
// model against its float64 reference, example.html and index.html end to end, the public module
// etwebgpu.js (tests/web/module_api_tests.mjs: URL/bytes, run, dispose, errors, device, worker,
// README snippet, npm package), every conformance case with the manifest's tolerances, and last a
// device-loss check. Each case's outcome is checked against tests/conformance/expected_status.txt:
// a case expected to pass that fails, turns unsupported or does not finish within --case-timeout
// seconds (then the page is reloaded) is a failure; so is an expected-unsupported case that now
// passes (update its line). With --require-fixtures, missing fixtures are a failure instead of a
// note. Exit code 1 on any failure.
//
//   node tests/web/run_web_tests.mjs [--build build-web] [--conformance ../shared/conformance]
//        [--filter SUBSTR] [--case-timeout 30] [--chromium /usr/bin/chromium] [--require-fixtures] [--verbose]
// Needs: bash scripts/web_build.sh; npm ci in tests/web (scripts/setup.sh --web does it).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import {chromium} from 'playwright-core';
import {startServer} from '../../scripts/web_serve.mjs';
import {moduleApiTests} from './module_api_tests.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const argv = process.argv.slice(2);
const arg = (k, d) => { const i = argv.indexOf(k); return i >= 0 ? argv[i + 1] : d; };
const build = path.resolve(root, arg('--build', 'build-web'));
const conformance = path.resolve(root, arg('--conformance', path.join('..', 'shared', 'conformance')));
const filter = arg('--filter', '');
const caseTimeoutS = Number(arg('--case-timeout', 30));
const exe = arg('--chromium', '/usr/bin/chromium');
const verbose = argv.includes('--verbose');
const requireFixtures = argv.includes('--require-fixtures');
const statusFile = path.join(root, 'tests', 'conformance', 'expected_status.txt');

function die(msg) {
  console.error('web tests: ' + msg);
  process.exit(2);
}
for (const f of ['etwebgpu_web.js', 'etwebgpu_web.wasm', 'tests.html', 'etw.js', 'etwebgpu.js', 'tests_worker.js'])
  if (!fs.existsSync(path.join(build, f))) die(`${build}/${f} missing: run bash scripts/web_build.sh`);
if (!fs.existsSync(exe)) die(`${exe} missing: run bash scripts/setup.sh --web`);
const haveConformance = fs.existsSync(path.join(conformance, 'manifest.json'));
if (!haveConformance && requireFixtures) die(`no conformance fixtures at ${conformance} (--require-fixtures)`);
if (!haveConformance) console.log(`web tests: no conformance fixtures at ${conformance}; running the other checks only`);
// case name -> 'passed' | 'unsupported' ('#' starts a comment)
const expectedStatus = new Map();
for (const line of fs.readFileSync(statusFile, 'utf8').split('\n')) {
  const [name, status] = line.replace(/#.*/, '').trim().split(/\s+/);
  if (name && status) expectedStatus.set(name, status);
}

const t0 = Date.now();
// The repository's own real exports (int8 CNNs and linears, 8da4w and 4-bit Llamas with steps):
// every case must pass in the browser too.
const repoFixtures = path.join(root, 'tests', 'fixtures', 'exports');
const {server, url} = await startServer({dir: build, conformance: haveConformance ? conformance : null,
                                         fixtures: repoFixtures});
const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'etwebgpu-chromium-'));
const flags = ['--enable-unsafe-webgpu', '--headless', '--no-sandbox', '--disable-gpu-sandbox', '--disable-quic',
               '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
let context;
try {
  // launchPersistentContext: the fresh profile directory is Chromium's --user-data-dir.
  context = await chromium.launchPersistentContext(userDataDir, {executablePath: exe, headless: true, args: flags});
} catch (e) {
  server.close();
  die('could not start Chromium: ' + e.message);
}

let failures = 0;
const results = {checks: [], example: null, cases: []};
let page = null;

async function openPage() {
  if (page) await page.close().catch(() => {});
  page = await context.newPage();
  page.on('pageerror', (e) => console.log('  [page error] ' + e.message));
  page.on('console', (m) => { if (verbose || m.type() === 'error') console.log(`  [console.${m.type()}] ${m.text()}`); });
  await page.goto(`${url}/tests.html`);
  await page.waitForFunction(() => window.etwTestReady === true, null, {timeout: 30000});
  return page.evaluate(() => window.etwTest.init());
}
// page.evaluate with a time limit; {timeout: true} when it ran out.
async function evaluateWithin(seconds, fn, ...args) {
  let timer;
  const limit = new Promise((resolve) => { timer = setTimeout(() => resolve({timeout: true}), seconds * 1000); });
  try {
    return await Promise.race([page.evaluate(fn, ...args).then((v) => ({value: v})), limit]);
  } finally {
    clearTimeout(timer);
  }
}

try {
  const adapter = await openPage();
  console.log(`adapter: ${adapter}`);
  console.log(`chromium: ${context.browser() ? context.browser().version() : exe}`);

  console.log('== WebGPU surface checks');
  const g = await evaluateWithin(120, () => window.etwTest.gpuChecks());
  if (g.timeout) {
    console.log('FAIL  surface checks did not finish within 120 s');
    ++failures;
  } else {
    for (const c of g.value.checks) {
      console.log(`${c.pass ? 'ok  ' : 'FAIL'}  ${c.name}: ${c.message}`);
      if (!c.pass) ++failures;
    }
    results.checks = g.value.checks;
  }

  console.log('== embedded example model');
  const ex = await evaluateWithin(120, () => window.etwTest.example());
  if (ex.timeout) {
    console.log('FAIL  example model did not finish within 120 s');
    ++failures;
  } else if (!ex.value.ok) {
    console.log(`FAIL  example model: ${ex.value.error}`);
    ++failures;
  } else {
    const e = ex.value;
    const timed = e.profile.has_gpu_times ? `${e.profile.dispatches.length} dispatches timed` : 'no GPU timings';
    console.log(`${e.pass ? 'ok  ' : 'FAIL'}  example (${e.description}): class ${e.class}, ${e.check}; ` +
                `load ${e.load_ms.toFixed(0)} ms, run ${e.run_ms.toFixed(0)} ms, ${timed}`);
    if (!e.pass) ++failures;
    results.example = e;
  }

  console.log('== pages');
  results.pages = [];
  // example.html runs the embedded model by itself and marks <body data-result>.
  {
    const p = await context.newPage();
    const errors = [];
    p.on('pageerror', (e) => errors.push(e.message));
    let msg, pass = false;
    try {
      await p.goto(`${url}/example.html`);
      await p.waitForSelector('body[data-result]', {timeout: 120000});
      const res = await p.getAttribute('body', 'data-result');
      msg = (await p.textContent('#status')).trim();
      pass = res === 'pass' && !errors.length;
    } catch (e) {
      msg = e.message.split('\n')[0];
    }
    if (errors.length) msg += '; page errors: ' + errors.join('; ');
    console.log(`${pass ? 'ok  ' : 'FAIL'}  example.html: ${msg}`);
    results.pages.push({page: 'example.html', pass, message: msg});
    if (!pass) ++failures;
    await p.close();
  }
  // index.html loads a fixture by URL, runs it with random inputs and shows outputs and timings.
  if (haveConformance) {
    const p = await context.newPage();
    const errors = [];
    p.on('pageerror', (e) => errors.push(e.message));
    let msg, pass = false;
    try {
      await p.goto(`${url}/index.html?model=conformance/add_bcast/model.pte`);
      await p.waitForFunction(() => !document.getElementById('run').disabled, null, {timeout: 120000});
      await p.click('#run');
      await p.waitForFunction(() => /^ran /.test(document.getElementById('status').textContent) ||
                                    document.getElementById('status').classList.contains('bad'), null, {timeout: 120000});
      msg = (await p.textContent('#status')).trim();
      const outRows = await p.locator('#outputs > table tr').count();
      const timingRows = await p.locator('#timings table tr').count();
      pass = msg.startsWith('ran ') && outRows >= 2 && timingRows >= 2 && !errors.length;
      msg += `; ${outRows - 1} output row(s), ${Math.max(0, timingRows - 1)} timing row(s)`;
    } catch (e) {
      msg = e.message.split('\n')[0];
    }
    if (errors.length) msg += '; page errors: ' + errors.join('; ');
    console.log(`${pass ? 'ok  ' : 'FAIL'}  index.html (add_bcast by URL, random inputs): ${msg}`);
    results.pages.push({page: 'index.html', pass, message: msg});
    if (!pass) ++failures;
    await p.close();
  }

  // The public module (web/etwebgpu.js): module_api_tests.mjs.
  if (haveConformance) {
    console.log('== module API (etwebgpu.js)');
    results.module = await moduleApiTests({context, url, build, root, conformance});
    for (const c of results.module) {
      console.log(`${c.pass ? 'ok  ' : 'FAIL'}  ${c.name}: ${c.message}`);
      if (!c.pass) ++failures;
    }
  } else {
    console.log('== module API (etwebgpu.js): skipped, it runs the add_bcast fixture');
  }

  const counts = {passed: 0, failed: 0, unsupported: 0, timeout: 0};
  if (haveConformance) {
    const manifest = JSON.parse(fs.readFileSync(path.join(conformance, 'manifest.json'), 'utf8'));
    const names = Object.keys(manifest.cases).filter((n) => n.includes(filter));
    console.log(`== conformance (${names.length} cases, ${caseTimeoutS} s limit each)`);
    for (const name of names) {
      const entry = manifest.cases[name];
      const r = await evaluateWithin(caseTimeoutS, (a) => window.etwTest.runCase('conformance', a.name, a.entry),
                                     {name, entry});
      let status, message, ms;
      if (r.timeout) {
        status = 'timeout';
        message = `did not finish within ${caseTimeoutS} s on this adapter`;
        ms = caseTimeoutS * 1000;
        await openPage();  // the wasm is still busy with it: start over with a fresh page
      } else {
        ({status, message, ms} = r.value);
      }
      ++counts[status];
      const want = expectedStatus.get(name);
      let verdict = '';
      if (!want) verdict = `no line in ${statusFile}: add '${name} passed' (or 'unsupported')`;
      else if (status !== want && want === 'unsupported' && status === 'passed')
        verdict = `now passes: change its line in ${statusFile} to 'passed'`;
      else if (status !== want) verdict = `REGRESSION: expected ${want}, got ${status}`;
      if (verdict) ++failures;
      results.cases.push({name, status, expected: want || null, message, ms});
      console.log(`${(verdict ? 'FAIL ' : '') + status.padEnd(11)} ${name.padEnd(28)} ` +
                  `${String(Math.round(ms || 0)).padStart(6)} ms  ${message}${verdict ? '  <- ' + verdict : ''}`);
      if (verbose && !r.timeout && r.value.gpu) console.log('            ' + JSON.stringify(r.value.gpu));
    }
    console.log(`conformance (browser): ${counts.passed} passed, ${counts.failed} failed, ` +
                `${counts.unsupported} unsupported, ${counts.timeout} timed out (${names.length} cases)`);
  }
  {
    const manifest = JSON.parse(fs.readFileSync(path.join(repoFixtures, 'manifest.json'), 'utf8'));
    const names = Object.keys(manifest.cases).filter((n) => n.includes(filter));
    console.log(`== repository fixtures (tests/fixtures/exports: ${names.length} cases, all must pass)`);
    let passed = 0;
    for (const name of names) {
      const r = await evaluateWithin(caseTimeoutS, (a) => window.etwTest.runCase('fixtures', a.name, a.entry),
                                     {name, entry: manifest.cases[name]});
      const v = r.timeout ? {status: 'timeout', message: `did not finish within ${caseTimeoutS} s`, ms: caseTimeoutS * 1000}
                          : r.value;
      if (r.timeout) await openPage();
      if (v.status === 'passed') ++passed;
      else ++failures;
      results.cases.push({name: 'fixtures/' + name, status: v.status, expected: 'passed', message: v.message, ms: v.ms});
      console.log(`${(v.status === 'passed' ? '' : 'FAIL ') + v.status.padEnd(11)} ${name.padEnd(28)} ` +
                  `${String(Math.round(v.ms || 0)).padStart(6)} ms  ${v.message}`);
    }
    console.log(`repository fixtures (browser): ${passed} of ${names.length} passed`);
    counts.fixtures = `${passed}/${names.length}`;
  }
  // Last (it leaves the page's device lost): a lost device must surface as an error.
  console.log('== device loss');
  await openPage();
  const dl = await evaluateWithin(120, () => window.etwTest.deviceLossCheck());
  const dlPass = !dl.timeout && dl.value.pass;
  const dlMsg = dl.timeout ? 'did not finish within 120 s' : (dl.value.message || dl.value.error);
  console.log(`${dlPass ? 'ok  ' : 'FAIL'}  run after device loss fails with: ${dlMsg.split('\n')[0]}`);
  results.checks.push({name: 'device loss', pass: dlPass, message: dlMsg});
  if (!dlPass) ++failures;

  const out = path.join(build, 'web_test_results.json');
  fs.writeFileSync(out, JSON.stringify({adapter, ...results}, null, 1));
  const checksFailed = results.checks.filter((c) => !c.pass).length;
  console.log(`== web tests: ${failures ? 'FAILED' : 'passed'} (surface checks ${results.checks.length - checksFailed}/` +
              `${results.checks.length}, example ${results.example && results.example.pass ? 'ok' : 'FAIL'}, ` +
              `conformance ${counts.passed} passed / ${counts.failed} failed / ${counts.unsupported} unsupported / ` +
              `${counts.timeout} timed out, repository fixtures ${counts.fixtures}) in ` +
              `${((Date.now() - t0) / 1000).toFixed(0)} s; details in ${out}`);
} catch (e) {
  console.log('FAIL  ' + (e.stack || e.message || e));
  ++failures;
} finally {
  await context.close().catch(() => {});
  server.close();
  fs.rmSync(userDataDir, {recursive: true, force: true});
}
process.exit(failures ? 1 : 0);
