// The low-level promise API over the wasm runtime (etwebgpu_web.js, an ES module built by
// scripts/web_build.sh); the public API is etwebgpu.js. Every call is queued: the wasm may
// suspend on WebGPU (ASYNCIFY) and must not be re-entered while it waits. Works in pages and in
// Web Workers.
//
//   const rt = await loadRuntime({log, device});  // device: a GPUDevice to use instead of a new one
//   await rt.init()                   -> {adapter}
//   await rt.load(bytes, {options, onProgress}) -> {id, inputs, outputs, plan, gpu_bytes, precision}
//                                     (options: [[name, text]] for the runtime's option parser;
//                                     onProgress(stage, done, total))
//   await rt.generate(id, request, {onToken, onPrefill}) -> {tokens, stop_reason, ...}
//                                     (onToken(token) returning false stops the generation)
//   await rt.setInputRandom(id, i, seed) / rt.setInputNpy(id, i, bytes) -> {input: stats}
//   await rt.run(id, {profile})       -> {outputs: [stats], wall_ms, profile}
//   await rt.outputNpy(id, i)         -> Uint8Array (.npy)
//   await rt.example()                -> the embedded model's check against its reference
//   await rt.gpuChecks()              -> checks of the WebGPU surface (compute, copies, errors)
//   await rt.conformanceCase({pte, steps: [{inputs, expected}], atol, rtol}) -> {status, message, ms}
//                                     (the steps run in order on one loaded model, as the native runner)
// Failures reject with an Error whose message is the runtime's (e.g. "Unsupported error: ...").
import createEtwebgpu from './etwebgpu_web.js';

export async function loadRuntime({log = () => {}, device = null} = {}) {
  // surface_webgpu.js takes the device from here when one is given.
  const M = await createEtwebgpu({print: (t) => log(t), printErr: (t) => log(t), etwebgpuDevice: device});
  let queue = Promise.resolve();
  const serial = (fn) => {
    const p = queue.then(fn);
    queue = p.catch(() => {});
    return p;
  };
  const callRaw = (name, ret, types, args) => M.ccall(name, ret, types, args, {async: true});
  // Calls a function returning JSON; rejects when it reports {"ok": false}.
  const callJson = async (name, types, args) => {
    const text = await callRaw(name, 'string', types, args);
    const r = JSON.parse(text);
    if (!r.ok) {
      const e = new Error(r.error);
      e.kind = r.kind;
      throw e;
    }
    return r;
  };
  // Copies bytes into wasm memory for the duration of fn(ptr, len).
  const withBytes = async (bytes, fn) => {
    const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
    const ptr = M._malloc(Math.max(1, u8.length));
    if (!ptr) throw new Error('out of wasm memory for ' + u8.length + ' bytes');
    M.HEAPU8.set(u8, ptr);
    try {
      return await fn(ptr, u8.length);
    } finally {
      M._free(ptr);
    }
  };

  // The page's callbacks the wasm calls during fn (Module.etwOnProgress ...), removed after it.
  const withHooks = async (hooks, fn) => {
    Object.assign(M, hooks);
    try {
      return await fn();
    } finally {
      for (const k of Object.keys(hooks)) M[k] = null;
    }
  };

  return {
    module: M,
    init: () => serial(() => callJson('etw_init', [], [])),
    load: (bytes, {options = [], onProgress = null} = {}) => serial(() => withBytes(bytes, (p, n) =>
      withHooks({etwOnProgress: onProgress},
                () => callJson('etw_load', ['number', 'number', 'string'], [p, n, JSON.stringify(options)])))),
    generate: (id, request, {onToken = null, onPrefill = null} = {}) => serial(() =>
      withHooks({etwOnToken: onToken, etwOnPrefill: onPrefill},
                () => callJson('etw_generate', ['number', 'string'], [id, JSON.stringify(request)]))),
    free: (id) => serial(() => callRaw('etw_free', null, ['number'], [id])),
    setInputRandom: (id, idx, seed) =>
      serial(() => callJson('etw_set_input_random', ['number', 'number', 'number'], [id, idx, seed >>> 0])),
    setInputNpy: (id, idx, bytes) => serial(() => withBytes(bytes, (p, n) =>
      callJson('etw_set_input_npy', ['number', 'number', 'number', 'number'], [id, idx, p, n]))),
    run: (id, {profile = false} = {}) => serial(() => callJson('etw_run', ['number', 'number'], [id, profile ? 1 : 0])),
    outputNpy: (id, idx) => serial(async () => {
      const p = await callRaw('etw_output_npy', 'number', ['number', 'number'], [id, idx]);
      if (!p) throw new Error('no output ' + idx + ' (run the model first)');
      const n = await callRaw('etw_result_size', 'number', [], []);
      return M.HEAPU8.slice(p, p + n);
    }),
    example: () => serial(() => callJson('etw_example', [], [])),
    gpuChecks: () => serial(() => callJson('etw_gpu_checks', [], [])),
    deviceLossCheck: () => serial(() => callJson('etw_device_loss_check', [], [])),  // leaves the device lost
    conformanceCase: ({pte, steps, atol, rtol}) => serial(async () => {
      await callRaw('etw_case_begin', null, [], []);
      for (const [k, {inputs, expected}] of steps.entries()) {
        if (k) await callRaw('etw_case_step', null, [], []);
        for (const b of inputs) await withBytes(b, (p, n) => callJson('etw_case_add', ['number', 'number', 'number'], [0, p, n]));
        for (const b of expected) await withBytes(b, (p, n) => callJson('etw_case_add', ['number', 'number', 'number'], [1, p, n]));
      }
      return withBytes(pte, (p, n) =>
        callJson('etw_case_run', ['number', 'number', 'number', 'number'], [p, n, atol, rtol]));
    }),
  };
}

// Fetches one conformance case (manifest entry + files under base/name/, with its "steps") and
// runs it.
export async function runConformanceCase(rt, base, name, entry) {
  const get = async (f) => {
    const r = await fetch(`${base}/${name}/${f}`);
    if (!r.ok) throw new Error(`fetching ${base}/${name}/${f}: HTTP ${r.status}`);
    return new Uint8Array(await r.arrayBuffer());
  };
  const pte = await get('model.pte');
  const steps = [];
  for (const run of [entry, ...(entry.steps || [])]) {
    const inputs = [], expected = [];
    for (const i of run.inputs) inputs.push(await get(i.file));
    for (const o of run.outputs) expected.push(await get(o.file));
    steps.push({inputs, expected});
  }
  return rt.conformanceCase({pte, steps, atol: entry.atol, rtol: entry.rtol});
}

export function formatNs(ns) {
  if (ns >= 1e6) return (ns / 1e6).toFixed(2) + ' ms';
  if (ns >= 1e3) return (ns / 1e3).toFixed(1) + ' µs';
  return ns + ' ns';
}
