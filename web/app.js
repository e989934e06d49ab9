// index.html: load a .pte (file picker, URL, ?model=URL or a served conformance fixture), list
// its inputs and outputs, run it with random or uploaded .npy inputs, show output statistics
// and per-op GPU timings.
import {loadRuntime} from './etw.js';
import {el, shapeStr, statsTable, timingsView, setStatus, table} from './ui.js';

const $ = (id) => document.getElementById(id);
const logEl = $('log');
const log = (t) => { logEl.textContent += t + '\n'; logEl.scrollTop = logEl.scrollHeight; };
const status = (t, cls) => setStatus($('status'), t, cls);

let rt = null;
let model = null;        // {id, inputs, outputs, plan, gpu_bytes, name}
let inputSources = [];   // per input: {kind: 'random'} | {kind: 'npy', name, bytes}
let busy = false;

async function guard(what, fn) {
  if (busy) return;
  busy = true;
  $('run').disabled = true;
  try {
    await fn();
  } catch (e) {
    status(`${what} failed: ${e.message}`, 'bad');
    log(`${what} failed: ${e.message}`);
  } finally {
    busy = false;
    $('run').disabled = !model;
  }
}

function renderModel() {
  const m = model;
  const kinds = {};
  for (const p of m.plan) kinds[p.kind] = (kinds[p.kind] || 0) + 1;
  const unsupported = m.plan.filter((p) => !p.supported);
  $('model').replaceChildren(
    el('p', {}, `${m.name}: ${m.inputs.length} input(s), ${m.outputs.length} output(s), ` +
                `${(m.gpu_bytes / 1024).toFixed(1)} KiB on the GPU; plan: ` +
                Object.entries(kinds).map(([k, n]) => `${n} ${k}`).join(', ')),
    table(['output', 'dtype', 'shape', 'dynamic'], m.outputs.map((o, i) => [String(i), o.dtype, shapeStr(o.shape), o.dynamic ? 'yes (upper bound)' : ''])),
    unsupported.length ? el('p', {class: 'bad'}, 'unsupported: ' + unsupported.map((p) => p.what).join(', ')) : '',
    el('details', {}, el('summary', {}, 'execution plan'),
       table(['#', 'kind', 'what'], m.plan.map((p, i) => [String(i), p.kind, p.what]))));
  renderInputs();
}

function renderInputs() {
  const rows = model.inputs.map((io, i) => {
    const src = inputSources[i];
    const file = el('input', {type: 'file', accept: '.npy', onchange: async (ev) => {
      const f = ev.target.files[0];
      if (!f) return;
      inputSources[i] = {kind: 'npy', name: f.name, bytes: new Uint8Array(await f.arrayBuffer())};
      renderInputs();
    }});
    const reset = el('button', {onclick: () => { inputSources[i] = {kind: 'random'}; renderInputs(); }}, 'random');
    return [String(i), io.dtype, shapeStr(io.shape) + (io.dynamic ? ' (upper bound)' : ''),
            src.kind === 'npy' ? `.npy: ${src.name}` : 'random (seeded)', el('span', {}, file, ' ', reset)];
  });
  $('inputs').replaceChildren(table(['input', 'dtype', 'shape', 'values', 'upload .npy'], rows));
}

async function load(bytes, name) {
  await guard('loading ' + name, async () => {
    if (model) await rt.free(model.id);
    model = null;
    status(`loading ${name} (${bytes.length} bytes): compiling pipelines…`);
    const t0 = performance.now();
    const m = await rt.load(bytes);
    model = {...m, name};
    inputSources = m.inputs.map(() => ({kind: 'random'}));
    renderModel();
    $('outputs').replaceChildren(el('p', {class: 'hint'}, 'No run yet.'));
    $('timings').replaceChildren(el('p', {class: 'hint'}, 'No profiled run yet.'));
    const ms = performance.now() - t0;
    status(`loaded ${name} in ${ms.toFixed(0)} ms`, 'ok');
    log(`loaded ${name}: ${m.inputs.length} inputs, ${m.outputs.length} outputs (${ms.toFixed(0)} ms)`);
  });
}

async function fetchBytes(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`HTTP ${r.status} for ${url}`);
  return new Uint8Array(await r.arrayBuffer());
}

async function run() {
  await guard('run', async () => {
    const seed = Number($('seed').value) >>> 0;
    const ins = [];
    for (let i = 0; i < model.inputs.length; ++i) {
      const s = inputSources[i];
      const r = s.kind === 'npy' ? await rt.setInputNpy(model.id, i, s.bytes) : await rt.setInputRandom(model.id, i, seed + i);
      ins.push(r.input);
    }
    status('running…');
    const r = await rt.run(model.id, {profile: $('profile').checked});
    const save = (i) => el('button', {onclick: async () => {
      const bytes = await rt.outputNpy(model.id, i);
      const a = el('a', {href: URL.createObjectURL(new Blob([bytes])), download: `output_${i}.npy`});
      a.click();
      URL.revokeObjectURL(a.href);
    }}, 'save .npy');
    $('outputs').replaceChildren(statsTable(r.outputs, 'output', save),
                                 el('details', {}, el('summary', {}, 'input statistics'), statsTable(ins, 'input')));
    $('timings').replaceChildren(timingsView(r.profile, r.wall_ms));
    status(`ran ${model.name} in ${r.wall_ms.toFixed(1)} ms`, 'ok');
    log(`run: ${r.outputs.map((o) => `${o.dtype}${shapeStr(o.shape)}`).join(', ')} in ${r.wall_ms.toFixed(1)} ms`);
  });
}

async function listFixtures() {
  try {
    const r = await fetch('conformance/manifest.json');
    if (!r.ok) return;
    const m = await r.json();
    const sel = $('cases');
    for (const name of Object.keys(m.cases)) sel.append(el('option', {value: name}, name));
    sel.hidden = false;
    sel.onchange = async () => {
      const name = sel.value;
      if (!name) return;
      $('url').value = `conformance/${name}/model.pte`;
      await load(await fetchBytes($('url').value), name);
      // The fixture's own inputs instead of random ones.
      for (let i = 0; i < m.cases[name].inputs.length && model; ++i) {
        const f = m.cases[name].inputs[i].file;
        inputSources[i] = {kind: 'npy', name: `${name}/${f}`, bytes: await fetchBytes(`conformance/${name}/${f}`)};
      }
      if (model) renderInputs();
    };
  } catch {
    // no fixtures served: fine
  }
}

async function main() {
  status('loading the WebAssembly runtime…');
  rt = await loadRuntime({log});
  const i = await rt.init();
  status('adapter: ' + i.adapter, 'ok');
  log('adapter: ' + i.adapter);
  $('file').onchange = async (ev) => {
    const f = ev.target.files[0];
    if (f) await load(new Uint8Array(await f.arrayBuffer()), f.name);
  };
  $('loadUrl').onclick = async () => {
    const url = $('url').value.trim();
    if (!url) return;
    try {
      await load(await fetchBytes(url), url);
    } catch (e) {
      status(`loading ${url} failed: ${e.message}`, 'bad');
    }
  };
  $('run').onclick = run;
  await listFixtures();
  const q = new URLSearchParams(location.search).get('model');
  if (q) {
    $('url').value = q;
    $('loadUrl').click();
  }
}

main().catch((e) => { status('WebGPU runtime unavailable: ' + e.message, 'bad'); log(String(e.stack || e)); });
