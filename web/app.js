// index.html: load a .pte (file picker, URL, ?model=URL or a served conformance fixture), list
// its inputs and outputs, run it with random or uploaded .npy inputs, show output statistics
// and per-op GPU timings. Built on the public module (etwebgpu.js).
import {Model, deviceInfo, readNpy, writeNpy} from './etwebgpu.js';
import {el, shapeStr, statsTable, timingsView, setStatus, table} from './ui.js';

const $ = (id) => document.getElementById(id);
const logEl = $('log');
const log = (t) => { logEl.textContent += t + '\n'; logEl.scrollTop = logEl.scrollHeight; };
const status = (t, cls) => setStatus($('status'), t, cls);

let model = null;        // a Model, plus .name
let inputSources = [];   // per input: {kind: 'random'} | {kind: 'npy', name, tensor}
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
                `${(m.gpuBytes / 1024).toFixed(1)} KiB on the GPU; plan: ` +
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
      try {
        inputSources[i] = {kind: 'npy', name: f.name, tensor: readNpy(await f.arrayBuffer())};
      } catch (e) {
        status(`${f.name}: ${e.message}`, 'bad');
      }
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
    if (model) await model.dispose();
    model = null;
    status(`loading ${name} (${bytes.length} bytes): compiling pipelines…`);
    const t0 = performance.now();
    const m = await Model.load(bytes);
    model = Object.assign(m, {name});
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

// Seeded pseudo-random values of an input's dtype and shape: normal floats, integers 0..9, bools.
function randomTensor({dtype, shape}, seed) {
  let state = seed >>> 0;
  const uniform = () => {  // mulberry32
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const n = shape.reduce((a, b) => a * b, 1);
  const make = {float32: Float32Array, float64: Float64Array, int32: Int32Array, int64: BigInt64Array,
                bool: Uint8Array, uint8: Uint8Array, int8: Int8Array}[dtype];
  if (!make) throw new Error(`random values of dtype ${dtype} are not offered: upload a .npy`);
  const data = new make(n);
  for (let i = 0; i < n; ++i) {
    if (dtype.startsWith('float')) data[i] = Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
    else if (dtype === 'int64') data[i] = BigInt(Math.floor(uniform() * 10));
    else data[i] = Math.floor(uniform() * (dtype === 'bool' ? 2 : 10));
  }
  return {data, dtype, shape};
}

// {dtype, shape, min, max, mean, nan, first} of a tensor, for statsTable.
function tensorStats({data, dtype, shape}) {
  let min = Infinity, max = -Infinity, sum = 0, finite = 0, nan = 0;
  const first = [];
  for (let i = 0; i < data.length; ++i) {
    const x = Number(data[i]);
    if (i < 8) first.push(Number.isFinite(x) ? x : String(x));
    if (Number.isNaN(x)) { ++nan; continue; }
    min = Math.min(min, x);
    max = Math.max(max, x);
    if (Number.isFinite(x)) { sum += x; ++finite; }
  }
  const any = nan < data.length;
  return {dtype, shape, min: any ? min : null, max: any ? max : null, mean: finite ? sum / finite : null, nan, first};
}

async function run() {
  await guard('run', async () => {
    const seed = Number($('seed').value) >>> 0;
    const ins = model.inputs.map((io, i) => (inputSources[i].kind === 'npy' ? inputSources[i].tensor : randomTensor(io, seed + i)));
    status('running…');
    const t0 = performance.now();
    const outs = await model.run(ins, {profile: $('profile').checked});
    const wallMs = performance.now() - t0;
    const save = (i) => el('button', {onclick: () => {
      const a = el('a', {href: URL.createObjectURL(new Blob([writeNpy(outs[i])])), download: `output_${i}.npy`});
      a.click();
      URL.revokeObjectURL(a.href);
    }}, 'save .npy');
    $('outputs').replaceChildren(statsTable(outs.map(tensorStats), 'output', save),
                                 el('details', {}, el('summary', {}, 'input statistics'), statsTable(ins.map(tensorStats), 'input')));
    $('timings').replaceChildren(timingsView($('profile').checked ? model.lastProfile : null, wallMs));
    status(`ran ${model.name} in ${wallMs.toFixed(1)} ms`, 'ok');
    log(`run: ${outs.map((o) => `${o.dtype}${shapeStr(o.shape)}`).join(', ')} in ${wallMs.toFixed(1)} ms`);
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
        inputSources[i] = {kind: 'npy', name: `${name}/${f}`, tensor: readNpy(await fetchBytes(`conformance/${name}/${f}`))};
      }
      if (model) renderInputs();
    };
  } catch {
    // no fixtures served: fine
  }
}

async function main() {
  status('loading the WebAssembly runtime…');
  const {adapter} = await deviceInfo({log});
  status('adapter: ' + adapter, 'ok');
  log('adapter: ' + adapter);
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
