// etwebgpu for JavaScript: run ExecuTorch .pte programs (VulkanPartitioner exports) on WebGPU.
// An ES module (no bundler needed); works in pages and in Web Workers.
//
//   import {Model} from './etwebgpu.js';
//   const m = await Model.load('model.pte', {device});  // URL, ArrayBuffer or typed array; device optional
//   Model.load(src, {precision: 'fp16', fuse: false, forceRoute: {conv: 'direct'}, onProgress})
//                                                        // the runtime's load options (the CLI's flags)
//   m.inputs, m.outputs                                  // [{dtype, shape, dynamic}]
//   const [y] = await m.run([new Float32Array(n), {data, shape, dtype}]);   // -> [{data, dtype, shape}]
//   for await (const token of m.generate([1, 2, 3], {maxNewTokens: 16})) ...  // decoders with a KV cache
//   m.dispose();
//   await deviceInfo()                -> {adapter}
//   readNpy(bytes) / writeNpy(tensor) -> .npy bytes <-> {data, dtype, shape}
//   await runtime()                   -> the low-level runtime of etw.js (the demo and test pages)
//
// One WebAssembly runtime (and one GPUDevice) per page or worker: the first load decides the
// device (the given one, shared with the page's other WebGPU code, or a new one). Failures reject
// with an Error whose .kind is the runtime's error kind ("Format", "InvalidArgument", ...).
import {loadRuntime} from './etw.js';

// dtype name <-> TypedArray class; bool is carried in a Uint8Array, float16 as raw Uint16Array bits.
// (uint8 before bool: a bare Uint8Array is uint8 unless the input is bool.)
const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int32: Int32Array, int64: BigInt64Array,
  uint8: Uint8Array, int8: Int8Array, bool: Uint8Array, float16: Uint16Array,
};
const NPY_DESCR = {
  float32: '<f4', float64: '<f8', int32: '<i4', int64: '<i8', bool: '|b1', uint8: '|u1', int8: '|i1', float16: '<f2',
};
const DTYPE_OF_DESCR = Object.fromEntries(Object.entries(NPY_DESCR).map(([k, v]) => [v, k]));

function runtimeError(message, kind) {
  const e = new Error(message);
  e.kind = kind;
  return e;
}

let runtimePromise = null;
let runtimeDevice = null;

// The page's (or worker's) runtime, created on first use; `device` must match across calls.
export async function runtime({device = null, log = () => {}} = {}) {
  if (runtimePromise) {
    if (device && device !== runtimeDevice)
      throw runtimeError('etwebgpu already runs on another GPUDevice in this page; ' +
                         'pass the same device to every Model.load (or none)', 'InvalidArgument');
    return runtimePromise;
  }
  runtimeDevice = device;
  runtimePromise = (async () => {
    const rt = await loadRuntime({log, device});
    rt.adapter = (await rt.init()).adapter;
    return rt;
  })();
  runtimePromise.catch(() => { runtimePromise = null; runtimeDevice = null; });
  return runtimePromise;
}

// The adapter line of the device etwebgpu runs on.
export async function deviceInfo(options = {}) {
  return {adapter: (await runtime(options)).adapter};
}

// Fetches a URL's bytes, reporting {stage: 'read', done, total} as they arrive (total: the
// Content-Length, else the bytes so far).
async function fetchBytes(url, onProgress = null) {
  let r;
  try {
    r = await fetch(url);
  } catch (e) {
    throw runtimeError(`cannot fetch ${url}: ${e.message}`, 'Io');
  }
  if (!r.ok) throw runtimeError(`cannot fetch ${url}: HTTP ${r.status}`, 'Io');
  if (!onProgress || !r.body) return new Uint8Array(await r.arrayBuffer());
  const total = Number(r.headers.get('Content-Length')) || 0;
  const parts = [];
  let done = 0;
  for (const reader = r.body.getReader();;) {
    const {value, done: end} = await reader.read();
    if (end) break;
    parts.push(value);
    done += value.length;
    onProgress({stage: 'read', done, total: Math.max(total, done)});
  }
  const bytes = new Uint8Array(done);
  let at = 0;
  for (const p of parts) { bytes.set(p, at); at += p.length; }
  onProgress({stage: 'read', done, total: done});
  return bytes;
}

// Load options as [name, text] pairs for the runtime's parser: camelCase keys become snake_case,
// booleans on/off, forceRoute {op: route} one 'op=route' each.
function optionItems(options) {
  const items = [];
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined || value === null) continue;
    const name = key.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
    if (name === 'force_route') {
      if (typeof value !== 'object') throw new TypeError('forceRoute must be an object {op: route}');
      for (const [op, route] of Object.entries(value)) items.push([name, `${op}=${route}`]);
    } else if (typeof value === 'boolean') {
      items.push([name, value ? 'on' : 'off']);
    } else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint') {
      items.push([name, String(value)]);
    } else {
      throw new TypeError(`load option ${key} takes a string, number or boolean`);
    }
  }
  return items;
}

function toBytes(source) {
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  return null;
}

function dtypeOfArray(a) {
  for (const [name, C] of Object.entries(ARRAYS)) if (a instanceof C) return name;
  return null;
}

// .npy (format 1.0) of one tensor: how inputs enter the wasm runtime.
export function writeNpy({data, dtype, shape}) {
  return encodeNpy(dtype, shape, data);
}
function encodeNpy(dtype, shape, data) {
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let header = `{'descr': '${NPY_DESCR[dtype]}', 'fortran_order': False, 'shape': ${shapeText}, }`;
  const unpadded = 10 + header.length + 1;
  header += ' '.repeat((64 - (unpadded % 64)) % 64) + '\n';
  const bytes = new Uint8Array(10 + header.length + data.byteLength);
  bytes.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, header.length & 0xff, header.length >> 8]);
  for (let i = 0; i < header.length; ++i) bytes[10 + i] = header.charCodeAt(i);
  bytes.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), 10 + header.length);
  return bytes;
}

// {data, dtype, shape} of .npy bytes (1.0, little-endian, C order: what the runtime writes).
export function readNpy(bytes) {
  const u8 = toBytes(bytes);
  const magic = u8 && u8.length >= 10 && u8[0] === 0x93 && String.fromCharCode(...u8.subarray(1, 6)) === 'NUMPY';
  if (!magic) throw runtimeError('not a .npy file', 'Format');
  return decodeNpy(u8);
}
function decodeNpy(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLen = view.getUint16(8, true);
  const header = new TextDecoder().decode(bytes.subarray(10, 10 + headerLen));
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const dims = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim()).filter((s) => s);
  const dtype = DTYPE_OF_DESCR[descr];
  if (!dtype) throw runtimeError(`unsupported .npy dtype ${descr}`, 'Format');
  if (/'fortran_order':\s*True/.test(header)) throw runtimeError('Fortran-order .npy is not supported', 'Format');
  const shape = dims.map(Number);
  const body = bytes.slice(10 + headerLen);  // a copy: aligned, and independent of wasm memory
  return {data: new ARRAYS[dtype](body.buffer, 0, body.byteLength / ARRAYS[dtype].BYTES_PER_ELEMENT), dtype, shape};
}

export class Model {
  // Use Model.load.
  constructor(rt, info) {
    this._rt = rt;
    this._id = info.id;
    this.inputs = info.inputs;
    this.outputs = info.outputs;
    this.plan = info.plan;            // where each instruction of the execution plan runs
    this.gpuBytes = info.gpu_bytes;   // device memory the model holds
    this.precision = info.precision;  // 'fp32' or 'fp16': what the precision option resolved to
    this.lastProfile = null;
  }

  // source: a URL (string or URL), an ArrayBuffer or a typed array holding the .pte.
  // options.device: the GPUDevice to run on (shared with the caller's other WebGPU code).
  // options.onProgress({stage, done, total}): stage 'read' (bytes fetched), 'upload' (bytes of
  // constants), 'compile' (kernels).
  // Every other key is a load option of the runtime, as the CLI's flags and Python's load()
  // keywords (camelCase or snake_case): precision ('fp32' | 'fp16' | 'auto'), method, fuse,
  // planMemory, poisonStorage (booleans), maxGpuBytes (a number or '8G'), sdpaOccupancyFloor,
  // forceRoute ({op: route}). An unknown option or a bad value rejects with kind 'InvalidArgument'.
  static async load(source, {device = null, log, onProgress = null, ...options} = {}) {
    if (onProgress !== null && typeof onProgress !== 'function') throw new TypeError('onProgress must be a function');
    const items = optionItems(options);
    let bytes = toBytes(source);
    if (!bytes) {
      if (typeof source !== 'string' && !(source instanceof URL))
        throw new TypeError('Model.load takes a URL, an ArrayBuffer or a typed array');
      bytes = await fetchBytes(source, onProgress);
    }
    const rt = await runtime({device, log});
    const report = onProgress && ((stage, done, total) => onProgress({stage, done, total}));
    return new Model(rt, await rt.load(bytes, {options: items, onProgress: report}));
  }

  // inputs: one per model input, each a typed array (shape: the input's exported shape) or a
  // tensor-like {data, shape, dtype?}. Resolves to [{data, dtype, shape}] (int64 as BigInt64Array,
  // bool as Uint8Array). options.profile: record per-dispatch GPU times in lastProfile.
  async run(inputs, {profile = false} = {}) {
    if (this._id === null) throw runtimeError('the model was disposed', 'InvalidArgument');
    if (!Array.isArray(inputs)) throw new TypeError('run takes an array of inputs');
    if (inputs.length !== this.inputs.length)
      throw runtimeError(`expected ${this.inputs.length} inputs, got ${inputs.length}`, 'InvalidArgument');
    const npys = inputs.map((x, i) => this._inputNpy(x, i));
    for (let i = 0; i < npys.length; ++i) await this._rt.setInputNpy(this._id, i, npys[i]);
    const r = await this._rt.run(this._id, {profile});
    if (profile) this.lastProfile = r.profile;
    const outs = [];
    for (let i = 0; i < r.outputs.length; ++i) outs.push(decodeNpy(await this._rt.outputNpy(this._id, i)));
    return outs;
  }

  _inputNpy(x, i) {
    const isArray = ArrayBuffer.isView(x) && !(x instanceof DataView);
    const data = isArray ? x : x && x.data;
    if (!ArrayBuffer.isView(data) || data instanceof DataView)
      throw new TypeError(`input ${i}: expected a typed array or {data: TypedArray, shape}`);
    const want = this.inputs[i];
    const shape = (!isArray && x.shape) ? Array.from(x.shape, Number) : want.shape;
    // A Uint8Array feeds a bool input as well as a uint8 one.
    let dtype = (!isArray && x.dtype) || dtypeOfArray(data);
    if (dtype === 'uint8' && want.dtype === 'bool') dtype = 'bool';
    if (!NPY_DESCR[dtype] || !(data instanceof ARRAYS[dtype]))
      throw runtimeError(`input ${i}: dtype ${dtype} does not match its ${data.constructor.name}`, 'InvalidArgument');
    const numel = shape.reduce((a, b) => a * b, 1);
    if (data.length !== numel)
      throw runtimeError(`input ${i}: ${data.length} elements for shape [${shape.join(', ')}] (${numel} needed)`,
                         'InvalidArgument');
    return encodeNpy(dtype, shape, data);
  }

  // Text generation (decoders exported with their KV cache: token ids and position in, logits
  // out). Starts a fresh sequence, runs the prompt (in chunks as large as the model allows),
  // then yields each new token as it is decoded. options: maxNewTokens (64), temperature (0:
  // greedy), topK, topP, seed, stopTokens, contextLength, onPrefill(done, total). Breaking out
  // of the loop stops the generation after the token being decoded; the generator's return value
  // (what the last next() resolves to) is {tokens, stopReason, contextLength, prefillTokS,
  // decodeTokS}.
  async *generate(prompt, {maxNewTokens = 64, temperature = 0, topK = 0, topP = 1, seed = 0, stopTokens = [],
                           contextLength = 0, onPrefill = null} = {}) {
    if (this._id === null) throw runtimeError('the model was disposed', 'InvalidArgument');
    const ids = Array.from(prompt, Number);
    const request = {prompt: ids, max_new_tokens: maxNewTokens, temperature, top_k: topK, top_p: topP, seed,
                     stop_tokens: Array.from(stopTokens, Number), context_length: contextLength};
    const queue = [];
    let wake = null, stopped = false;
    const onToken = (t) => {
      queue.push(t);
      if (wake) wake();
      return !stopped;
    };
    const done = this._rt.generate(this._id, request, {onToken, onPrefill});
    let finished = false;
    done.then(() => { finished = true; if (wake) wake(); }, () => { finished = true; if (wake) wake(); });
    try {
      for (;;) {
        while (queue.length) yield queue.shift();
        if (finished) break;
        await new Promise((resolve) => { wake = resolve; });
        wake = null;
      }
      const r = await done;
      return {tokens: r.tokens, stopReason: r.stop_reason, contextLength: r.context_length,
              prefillTokS: r.prefill_tok_s, decodeTokS: r.decode_tok_s};
    } finally {
      stopped = true;
      await done.catch(() => {});  // the runtime is free again before the caller goes on
    }
  }

  // Frees the model's GPU memory; later runs reject.
  async dispose() {
    if (this._id === null) return;
    const id = this._id;
    this._id = null;
    await this._rt.free(id);
  }
}
