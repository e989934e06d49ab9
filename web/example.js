// example.html: runs the embedded example model (etw_example) and shows its check against the
// float64 CPU reference, its class probabilities and the per-op GPU timings.
import {runtime} from './etwebgpu.js';
import {el, num, table, timingsView, setStatus} from './ui.js';

const $ = (id) => document.getElementById(id);
const log = (t) => { $('log').textContent += t + '\n'; };
const status = (t, cls) => setStatus($('status'), t, cls);
let rt = null;

async function runExample() {
  $('again').disabled = true;
  try {
    status('loading and running the example model…');
    const r = await rt.example();
    $('model').replaceChildren(
      el('p', {}, r.description),
      el('p', {}, `${r.pte_bytes} bytes of .pte; load ${r.load_ms.toFixed(0)} ms (pipelines compile on the first load), ` +
                  `run ${r.run_ms.toFixed(1)} ms`));
    const rows = r.probs.map((p, i) => {
      const e = r.expected[i];
      const err = Math.abs(p - e);
      const ok = err <= r.atol + r.rtol * Math.abs(e);
      return [String(i) + (i === r.class ? ' ◀ class' : ''), el('td', {class: 'num'}, num(p)), el('td', {class: 'num'}, num(e)),
              el('td', {class: 'num ' + (ok ? 'ok' : 'bad')}, err.toExponential(2))];
    });
    $('check').replaceChildren(
      el('p', {class: r.pass ? 'ok' : 'bad'}, `${r.pass ? 'PASS' : 'FAIL'}: ${r.check} (atol ${r.atol}, rtol ${r.rtol})`),
      table(['class', 'GPU (float32)', 'reference (float64)', '|error|'], rows));
    $('timings').replaceChildren(timingsView(r.profile, r.run_ms));
    status(`${r.pass ? 'PASS' : 'FAIL'}: ${r.check}`, r.pass ? 'ok' : 'bad');
    log(`example: ${r.pass ? 'pass' : 'FAIL'}: ${r.check}`);
    document.body.dataset.result = r.pass ? 'pass' : 'fail';
  } catch (e) {
    status('example failed: ' + e.message, 'bad');
    log(String(e.stack || e));
    document.body.dataset.result = 'error';
  } finally {
    $('again').disabled = false;
  }
}

async function main() {
  status('loading the WebAssembly runtime…');
  rt = await runtime({log});
  log('adapter: ' + rt.adapter);
  $('again').onclick = runExample;
  await runExample();
}
main().catch((e) => { status('WebGPU runtime unavailable: ' + e.message, 'bad'); log(String(e.stack || e)); });
