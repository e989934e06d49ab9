// The browser implementation of src/gpu/surface.h over navigator.gpu: an emscripten
// --js-library for the web build (scripts/web_build.sh). It mirrors src/gpu/dawn_surface.cpp:
// objects are small integer handles into JS tables (0 = none); every failure writes a message
// into `err` and returns 0 / nonzero status; pipeline and bind group creation (and buffer
// creation, submission) run inside validation + out-of-memory error scopes; a lost device turns
// every later call into an error. The asynchronous steps (requestAdapter/requestDevice,
// popErrorScope, onSubmittedWorkDone, mapAsync) suspend the wasm through ASYNCIFY: those
// functions are listed in -sASYNCIFY_IMPORTS. wasm32 without WASM_BIGINT: every uint64_t
// argument arrives as two i32 halves (low, high); size_t and pointers are one i32.
//
// Struct layouts (checked by static_asserts in web/etwebgpu_web.cpp):
//   EwAdapterInfo (352 bytes): description[256] @0, u32 backend_type @256, adapter_type @260,
//     vendor_id @264, subgroup_min @268, subgroup_max @272, has_timestamp_query @276,
//     has_subgroups @280, has_shader_f16 @284, u64 max_buffer_size @288,
//     max_storage_buffer_binding_size @296, max_uniform_buffer_binding_size @304,
//     u32 max_storage_buffers_per_stage @312, max_compute_workgroup_storage_size @316,
//     max_compute_invocations_per_workgroup @320, max_compute_workgroup_size_x/y/z @324/328/332,
//     max_compute_workgroups_per_dimension @336, min_storage_buffer_offset_alignment @340,
//     has_packed_dot4 @344
//   EwConstant (16): const char* key @0, double value @8
//   EwPipelineDesc (24): const char* wgsl @0, size_t wgsl_len @4, const char* entry @8,
//     const EwConstant* constants @12, size_t n_constants @16, const char* label @20
//   EwBinding (24): u32 binding @0, u32 buffer @4, u64 offset @8, u64 size @16
//   EwCommand (56): u32 kind @0, pipeline @4, bind_group @8, groups_x/y/z @12/16/20, src @24,
//     dst @28, u64 src_offset @32, dst_offset @40, size @48
//   EwRead (32): u32 buffer @0, u64 offset @8, u64 size @16, void* dst @24

var LibraryEwgpu = {
  $EW__deps: ['$Asyncify'],
  $EW: {
    // Adopts `device` (ours from `adapter`, or the page's when adapter is null) and fills the
    // EwAdapterInfo at `out`.
    initWith: function(device, info, adapter, out) {
      EW.device = device;
      EW.ownsDevice = !!adapter;
      EW.queue = device.queue;
      // A listener, not onuncapturederror: a device shared with the page keeps the page's handler.
      device.addEventListener('uncapturederror', function(ev) {
        var e = ev.error;
        var kind = (typeof GPUOutOfMemoryError !== 'undefined' && e instanceof GPUOutOfMemoryError) ? 'out of memory' :
                   (typeof GPUValidationError !== 'undefined' && e instanceof GPUValidationError) ? 'validation error' :
                   (typeof GPUInternalError !== 'undefined' && e instanceof GPUInternalError) ? 'internal error' : 'error';
        if (EW.pendingError) EW.pendingError += '; ';
        EW.pendingError += 'WebGPU ' + kind + ': ' + e.message;
      });
      device.lost.then(function(l) {
        if (EW.device !== device) return;  // a replaced device
        if (!EW.lostMessage) EW.lostMessage = 'reason ' + l.reason + ': ' + l.message;
      });

      var vendor = info.vendor || '', dev = info.device || info.architecture || '', desc = info.description || '';
      HEAPU8.fill(0, out, out + 344);
      stringToUTF8(vendor + ' / ' + dev + ' / ' + desc, out, 256);
      var cpu = info.isFallbackAdapter || (adapter && adapter.isFallbackAdapter) ||
                /swiftshader|llvmpipe|lavapipe|software/i.test(vendor + ' ' + dev + ' ' + desc);
      var p = out >> 2, dl = device.limits;
      HEAPU32[p + 64] = 0;            // backend_type: not known to a page
      HEAPU32[p + 65] = cpu ? 3 : 4;  // adapter_type: CPU or unknown
      HEAPU32[p + 66] = 0;            // vendor_id: browsers give a name only
      HEAPU32[p + 67] = info.subgroupMinSize || 0;
      HEAPU32[p + 68] = info.subgroupMaxSize || 0;
      HEAPU32[p + 69] = device.features.has('timestamp-query') ? 1 : 0;
      HEAPU32[p + 70] = device.features.has('subgroups') ? 1 : 0;
      HEAPU32[p + 71] = device.features.has('shader-f16') ? 1 : 0;
      EW.writeU64(out + 288, dl.maxBufferSize);
      EW.writeU64(out + 296, dl.maxStorageBufferBindingSize);
      EW.writeU64(out + 304, dl.maxUniformBufferBindingSize);
      HEAPU32[p + 78] = dl.maxStorageBuffersPerShaderStage;
      HEAPU32[p + 79] = dl.maxComputeWorkgroupStorageSize;
      HEAPU32[p + 80] = dl.maxComputeInvocationsPerWorkgroup;
      HEAPU32[p + 81] = dl.maxComputeWorkgroupSizeX;
      HEAPU32[p + 82] = dl.maxComputeWorkgroupSizeY;
      HEAPU32[p + 83] = dl.maxComputeWorkgroupSizeZ;
      HEAPU32[p + 84] = dl.maxComputeWorkgroupsPerDimension;
      HEAPU32[p + 85] = dl.minStorageBufferOffsetAlignment;
      var lf = navigator.gpu.wgslLanguageFeatures;
      HEAPU32[p + 86] = lf && lf.has('packed_4x8_integer_dot_product') ? 1 : 0;
      EW.hasTimestamps = device.features.has('timestamp-query');
      Module['ewgpuStats'] = EW.stats;
      EW.generation += 1;
      return 0;
    },
    adapter: null,
    device: null,
    ownsDevice: false,  // false for a device the page handed in (never destroyed here)
    queue: null,
    hasTimestamps: false,
    pendingError: '',   // uncaptured errors since the last check
    lostMessage: '',    // non-empty once the device is lost
    generation: 0,      // of the current device (ewgpu_device_generation)
    buffers: [null], freeBuffers: [],
    pipelines: [null], freePipelines: [],
    bindGroups: [null], freeBindGroups: [],
    staging: null,      // MAP_READ buffer reused by reads and timestamp readback
    stagingSize: 0,
    // ewgpu_submit_async's submits, by ticket - 1: each its own MAP_READ buffer, mapped (done)
    // once its work has completed.
    pending: [0, 1, 2, 3].map(function() { return {busy: false, buffer: null, size: 0, reads: [], need: 0, done: null}; }),
    // Counts and wall milliseconds of the asynchronous calls (Module.ewgpuStats, for the pages).
    stats: {pipelines: 0, pipelineMs: 0, bindGroups: 0, bindGroupMs: 0, buffers: 0, bufferMs: 0,
            submits: 0, submitMs: 0, reads: 0, readMs: 0},
    timed: async function(key, fn) {
      var t0 = performance.now();
      try { return await fn(); } finally {
        EW.stats[key] += 1;
        EW.stats[key.replace(/s$/, '') + 'Ms'] += performance.now() - t0;
      }
    },

    add: function(items, free, v) {
      if (free.length) { var h = free.pop(); items[h] = v; return h; }
      items.push(v);
      return items.length - 1;
    },
    get: function(items, h) { return (h > 0 && h < items.length) ? items[h] : null; },
    take: function(items, free, h) {
      var v = EW.get(items, h);
      if (v) { items[h] = null; free.push(h); }
      return v;
    },
    u64: function(lo, hi) { return (lo >>> 0) + (hi >>> 0) * 4294967296; },
    readU64: function(ptr) { return HEAPU32[ptr >> 2] + HEAPU32[(ptr >> 2) + 1] * 4294967296; },
    writeU64: function(ptr, v) {  // v: Number (< 2^53) or BigInt
      if (typeof v === 'bigint') {
        HEAPU32[ptr >> 2] = Number(BigInt.asUintN(32, v));
        HEAPU32[(ptr >> 2) + 1] = Number(BigInt.asUintN(32, v >> BigInt(32)));
      } else {
        HEAPU32[ptr >> 2] = v >>> 0;
        HEAPU32[(ptr >> 2) + 1] = Math.floor(v / 4294967296) >>> 0;
      }
    },
    setErr: function(err, len, msg) {
      if (err && len) stringToUTF8(String(msg), err, len);
    },
    str: function(ptr) { return ptr ? UTF8ToString(ptr) : ''; },
    message: function(e) { return (e && e.message) ? e.message : String(e); },

    // False (with the message) when the device reported an error or was lost.
    checkDevice: function(err, len, what) {
      if (EW.lostMessage) { EW.setErr(err, len, what + ': device lost: ' + EW.lostMessage); return false; }
      if (EW.pendingError) {
        EW.setErr(err, len, what + ': ' + EW.pendingError);
        EW.pendingError = '';
        return false;
      }
      return true;
    },
    pushScopes: function() {
      EW.device.pushErrorScope('out-of-memory');
      EW.device.pushErrorScope('validation');
    },
    // Pops the two scopes pushed by pushScopes; null when clean, else the message ("out of memory"
    // marks what the device could not allocate, as surface.h promises).
    popScopes: async function(what) {
      var msgs = [];
      for (var i = 0; i < 2; ++i) {
        try {
          var e = await EW.device.popErrorScope();
          var oom = e && typeof GPUOutOfMemoryError !== 'undefined' && e instanceof GPUOutOfMemoryError;
          if (e) msgs.push((oom ? 'out of memory: ' : '') + e.message);
        } catch (x) {
          msgs.push('could not pop error scope: ' + EW.message(x));
        }
      }
      if (!msgs.length) return null;
      return what + ': ' + msgs.join('; ');
    },
    // Runs fn() (synchronous WebGPU calls) inside the error scopes; returns {value, error}.
    scoped: async function(what, fn) {
      EW.pushScopes();
      var value = null, thrown = null;
      try { value = fn(); } catch (x) { thrown = what + ': ' + EW.message(x); }
      var scopeErr = await EW.popScopes(what);
      return {value: value, error: thrown || scopeErr};
    },
    // Grows a MAP_READ buffer held as holder[bufferKey] / holder[sizeKey] to at least `size` bytes
    // (powers of two); null or the message.
    growReadBuffer: async function(holder, bufferKey, sizeKey, size, label) {
      if (holder[bufferKey] && holder[sizeKey] >= size) return null;
      if (holder[bufferKey]) { holder[bufferKey].destroy(); holder[bufferKey] = null; holder[sizeKey] = 0; }
      var sz = 256;
      while (sz < size) sz *= 2;
      var r = await EW.scoped('creating read-back buffer', function() {
        return EW.device.createBuffer({label: label, size: sz, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST});
      });
      if (r.error) { if (r.value) r.value.destroy(); return r.error; }
      holder[bufferKey] = r.value;
      holder[sizeKey] = sz;
      return null;
    },
    ensureStaging: function(size) { return EW.growReadBuffer(EW, 'staging', 'stagingSize', size, 'etwebgpu.staging'); },
    // Submits the encoder's work and waits for the queue; null or the message.
    submitAndWait: async function(encoder, what) {
      var r = await EW.scoped(what, function() { EW.queue.submit([encoder.finish()]); });
      if (r.error) return r.error;
      try {
        await EW.queue.onSubmittedWorkDone();
      } catch (x) {
        return what + ': queue work failed: ' + EW.message(x);
      }
      if (EW.lostMessage) return what + ': device lost: ' + EW.lostMessage;
      if (EW.pendingError) { var m = what + ': ' + EW.pendingError; EW.pendingError = ''; return m; }
      return null;
    },
    // Submits the encoder's work, which ends by copying into the staging buffer, and returns a copy
    // of the staging buffer's first `size` bytes (Uint8Array) or a message. The map resolves once
    // the submitted work has completed, so one wait serves both (as in dawn_surface.cpp).
    submitAndRead: async function(encoder, what, size) {
      var r = await EW.scoped(what, function() { EW.queue.submit([encoder.finish()]); });
      if (r.error) return r.error;
      var bytes = await EW.readStaging(size);
      // A device error or loss during the work is the cause to report, also of a failed map.
      if (EW.lostMessage) return what + ': device lost: ' + EW.lostMessage;
      if (EW.pendingError) { var m = what + ': ' + EW.pendingError; EW.pendingError = ''; return m; }
      return bytes;
    },
    // Read-back layout: each read at an 8-byte aligned offset of a staging buffer; a message for a
    // bad region.
    readLayout: function(reads, nReads) {
      var rd = [], need = 0;
      for (var i = 0; i < nReads; ++i) {
        var rp = reads + 32 * i;
        var rb = EW.get(EW.buffers, HEAPU32[rp >> 2]);
        var ro = EW.readU64(rp + 8), rs = EW.readU64(rp + 16);
        if (!rb || ro % 4 || rs % 4) return 'read-back region names an unknown buffer or is not 4-byte aligned';
        rd.push({buffer: rb, offset: ro, size: rs, dst: HEAPU32[(rp + 24) >> 2], at: need});
        need += Math.ceil(rs / 8) * 8;
      }
      return {reads: rd, need: need};
    },
    // Encodes the commands (EwCommand, 56 bytes each) into `enc`; with `qs`, each dispatch of
    // `timed` (command indices) gets its own pass with begin/end timestamps. Null or a message.
    encodeRun: function(enc, cmds, count, qs, timed) {
      var pass = null, nextTimed = 0;
      function endPass() { if (pass) { pass.end(); pass = null; } }
      for (var i = 0; i < count; ++i) {
        var c = (cmds + 56 * i) >> 2;
        var kind = HEAPU32[c];
        if (kind == 1) {
          var p = EW.get(EW.pipelines, HEAPU32[c + 1]);
          var bg = EW.get(EW.bindGroups, HEAPU32[c + 2]);
          if (!p || !bg) return 'dispatch names an unknown pipeline or bind group';
          var isTimed = qs && nextTimed < timed.length && timed[nextTimed] == i;
          if (isTimed) {
            endPass();
            pass = enc.beginComputePass({timestampWrites: {querySet: qs, beginningOfPassWriteIndex: nextTimed * 2,
                                                          endOfPassWriteIndex: nextTimed * 2 + 1}});
            ++nextTimed;
          } else if (!pass) {
            pass = enc.beginComputePass();
          }
          pass.setPipeline(p);
          pass.setBindGroup(0, bg);
          pass.dispatchWorkgroups(HEAPU32[c + 3], HEAPU32[c + 4], HEAPU32[c + 5]);
          if (isTimed) endPass();
        } else if (kind == 2 || kind == 3) {
          endPass();
          var dst = EW.get(EW.buffers, HEAPU32[c + 7]);
          var src = kind == 2 ? EW.get(EW.buffers, HEAPU32[c + 6]) : null;
          if (!dst || (kind == 2 && !src)) return 'copy names an unknown buffer';
          var so = EW.readU64((c + 8) << 2), dof = EW.readU64((c + 10) << 2), sz = EW.readU64((c + 12) << 2);
          if (kind == 2) enc.copyBufferToBuffer(src, so, dst, dof, sz);
          else enc.clearBuffer(dst, dof, sz);
        } else {
          return 'unknown command kind ' + kind;
        }
      }
      endPass();
      return null;
    },
    // Maps the staging buffer and returns a copy of its first `size` bytes (Uint8Array) or a message.
    readStaging: async function(size) {
      var mapSize = Math.ceil(size / 4) * 4;
      try {
        await EW.staging.mapAsync(GPUMapMode.READ, 0, mapSize);
      } catch (x) {
        return 'mapping read-back buffer failed: ' + EW.message(x);
      }
      var out = new Uint8Array(size);
      try {
        out.set(new Uint8Array(EW.staging.getMappedRange(0, mapSize), 0, size));
      } catch (x) {
        EW.staging.unmap();
        return 'read-back buffer mapped range unavailable: ' + EW.message(x);
      }
      EW.staging.unmap();
      return out;
    },
  },

  ewgpu_init__deps: ['$EW'],
  ewgpu_init: function(out, err, errLen) {
    return Asyncify.handleAsync(async function() {
      try {
        if (EW.device && !EW.lostMessage) { EW.setErr(err, errLen, 'ewgpu_init called twice'); return 1; }
        if (EW.device) {
          // The lost device goes; objects made on it stay in the tables until their owners destroy them.
          EW.device = null; EW.queue = null; EW.adapter = null;
          EW.staging = null; EW.stagingSize = 0;
          EW.pending.forEach(function(p) { p.busy = false; p.buffer = null; p.size = 0; p.done = null; });
          EW.lostMessage = ''; EW.pendingError = '';
        }
        // A GPUDevice handed in by the page (etwebgpu.js Model.load(src, {device})): shared with
        // the page's own WebGPU code, so it is neither replaced nor destroyed here.
        var given = Module['etwebgpuDevice'];
        if (given) return EW.initWith(given, given.adapterInfo || {}, null, out);
        if (typeof navigator === 'undefined' || !navigator.gpu) {
          EW.setErr(err, errLen, 'WebGPU is not available in this browser (navigator.gpu is missing); ' +
                    'use a WebGPU-capable browser (Chromium: --enable-unsafe-webgpu on Linux) over http://localhost or https');
          return 1;
        }
        var adapter = await navigator.gpu.requestAdapter({powerPreference: 'high-performance'});
        if (!adapter) {
          EW.setErr(err, errLen, 'no WebGPU adapter (navigator.gpu.requestAdapter returned null)');
          return 1;
        }
        EW.adapter = adapter;
        var info = adapter.info;
        if (!info && adapter.requestAdapterInfo) info = await adapter.requestAdapterInfo();
        info = info || {};
        var features = [];
        ['timestamp-query', 'subgroups', 'shader-f16'].forEach(function(f) {
          if (adapter.features.has(f)) features.push(f);
        });
        // The adapter's full limits: the defaults would mean 256 invocations and 128 MiB bindings.
        var limits = {};
        for (var k in adapter.limits) {
          var v = adapter.limits[k];
          if (typeof v === 'number') limits[k] = v;
        }
        var device;
        try {
          device = await adapter.requestDevice({label: 'etwebgpu', requiredFeatures: features, requiredLimits: limits});
        } catch (x) {
          EW.setErr(err, errLen, 'device creation failed: ' + EW.message(x));
          return 1;
        }
        if (!device) { EW.setErr(err, errLen, 'device creation failed'); return 1; }
        return EW.initWith(device, info, adapter, out);
      } catch (x) {
        EW.setErr(err, errLen, 'WebGPU init failed: ' + EW.message(x));
        return 1;
      }
    });
  },

  ewgpu_device_generation__deps: ['$EW'],
  ewgpu_device_generation: function() {
    return (EW.device && !EW.lostMessage) ? EW.generation : 0;
  },

  // Browsers report no memory heaps: only the device's out-of-memory error stops an allocation.
  ewgpu_memory_budget: function(available, heap, why, whyLen) {
    return 1;
  },

  // WebGPU offers no pipeline cache to the page (the browser keeps its own of compiled shaders).
  ewgpu_cache_stats: function(out, dir, dirLen) {
    return 1;
  },

  // Destroys the device as a driver reset would: every later call reports the loss.
  ewgpu_debug_lose_device__deps: ['$EW'],
  ewgpu_debug_lose_device: function() {
    if (!EW.device) return;
    if (!EW.lostMessage) EW.lostMessage = 'reason destroyed: device destroyed (ewgpu_debug_lose_device)';
    EW.device.destroy();
  },

  ewgpu_buffer_create__deps: ['$EW'],
  ewgpu_buffer_create: function(sizeLo, sizeHi, kind, label, err, errLen) {
    return Asyncify.handleAsync(async function() {
      try {
        if (!EW.device) { EW.setErr(err, errLen, 'creating buffer: WebGPU is not initialised'); return 0; }
        if (!EW.checkDevice(err, errLen, 'creating buffer')) return 0;
        var size = EW.u64(sizeLo, sizeHi);
        var usage = kind == 2 ? (GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST)
                              : (GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST);
        var lbl = EW.str(label);
        var r = await EW.timed('buffers', () => EW.scoped('creating buffer', function() {
          return EW.device.createBuffer({label: lbl, size: size, usage: usage});
        }));
        if (r.error) { if (r.value) r.value.destroy(); EW.setErr(err, errLen, r.error); return 0; }
        return EW.add(EW.buffers, EW.freeBuffers, r.value);
      } catch (x) {
        EW.setErr(err, errLen, 'creating buffer: ' + EW.message(x));
        return 0;
      }
    });
  },

  ewgpu_buffer_destroy__deps: ['$EW'],
  ewgpu_buffer_destroy: function(h) {
    var b = EW.take(EW.buffers, EW.freeBuffers, h);
    if (b) b.destroy();
  },

  ewgpu_buffer_write__deps: ['$EW'],
  ewgpu_buffer_write: function(h, offLo, offHi, data, sizeLo, sizeHi, err, errLen) {
    var b = EW.get(EW.buffers, h);
    if (!b) { EW.setErr(err, errLen, 'write to an unknown buffer'); return 1; }
    try {
      EW.queue.writeBuffer(b, EW.u64(offLo, offHi), HEAPU8, data, EW.u64(sizeLo, sizeHi));
    } catch (x) {
      EW.setErr(err, errLen, 'writing buffer: ' + EW.message(x));
      return 1;
    }
    return EW.checkDevice(err, errLen, 'writing buffer') ? 0 : 1;
  },

  ewgpu_buffer_read__deps: ['$EW'],
  ewgpu_buffer_read: function(h, offLo, offHi, dst, sizeLo, sizeHi, err, errLen) {
    return Asyncify.handleAsync(async function() {
      try {
        var b = EW.get(EW.buffers, h);
        if (!b) { EW.setErr(err, errLen, 'read from an unknown buffer'); return 1; }
        var size = EW.u64(sizeLo, sizeHi), offset = EW.u64(offLo, offHi);
        if (size == 0) return 0;
        if (!EW.checkDevice(err, errLen, 'reading buffer')) return 1;
        var copy = Math.ceil(size / 4) * 4;
        var e = await EW.ensureStaging(copy);
        if (e) { EW.setErr(err, errLen, e); return 1; }
        var enc = EW.device.createCommandEncoder();
        enc.copyBufferToBuffer(b, offset, EW.staging, 0, copy);
        var bytes = await EW.timed('reads', () => EW.submitAndRead(enc, 'reading buffer', size));
        if (typeof bytes === 'string') { EW.setErr(err, errLen, bytes); return 1; }
        HEAPU8.set(bytes, dst);  // HEAPU8 as of now: memory may have grown while we waited
        return 0;
      } catch (x) {
        EW.setErr(err, errLen, 'reading buffer: ' + EW.message(x));
        return 1;
      }
    });
  },

  ewgpu_pipelines_create__deps: ['$EW'],
  ewgpu_pipelines_create: function(descs, count, out, failed, err, errLen) {
    return Asyncify.handleAsync(async function() {
      HEAPU32[failed >> 2] = 0;
      try {
        if (!EW.device) { EW.setErr(err, errLen, 'creating pipeline: WebGPU is not initialised'); return 1; }
        if (!EW.checkDevice(err, errLen, 'creating pipeline')) return 1;
        var t0 = performance.now();
        // Every compile is started before any is awaited, so the browser compiles them concurrently;
        // each in its own error scopes, so that a WGSL error names its pipeline.
        var jobs = [], scopes = [], labels = [];
        for (var i = 0; i < count; ++i) {
          var p = (descs + 24 * i) >> 2;
          var lbl = EW.str(HEAPU32[p + 5]) || 'pipeline';
          var code = new TextDecoder().decode(HEAPU8.subarray(HEAPU32[p], HEAPU32[p] + HEAPU32[p + 1]));
          var desc = {label: lbl, layout: 'auto', compute: {entryPoint: EW.str(HEAPU32[p + 2])}};
          if (HEAPU32[p + 4]) {
            desc.compute.constants = {};
            for (var k = 0; k < HEAPU32[p + 4]; ++k) {
              var c = HEAPU32[p + 3] + 16 * k;
              desc.compute.constants[EW.str(HEAPU32[c >> 2])] = HEAPF64[(c + 8) >> 3];
            }
          }
          labels.push(lbl);
          EW.pushScopes();
          try {
            desc.compute.module = EW.device.createShaderModule({label: lbl, code: code});
            jobs.push(EW.device.createComputePipelineAsync(desc).then(
                function(pipeline) { return {pipeline: pipeline}; },
                function(x) { return {error: EW.message(x)}; }));
          } catch (x) {
            jobs.push(Promise.resolve({error: EW.message(x)}));
          }
          scopes.push(EW.popScopes(lbl));
        }
        var scopeErrors = await Promise.all(scopes), results = await Promise.all(jobs);
        EW.stats.pipelines += count;
        EW.stats.pipelineMs += performance.now() - t0;
        for (i = 0; i < count; ++i) {
          var e = scopeErrors[i] || (results[i].error && labels[i] + ': ' + results[i].error);
          if (e) { HEAPU32[failed >> 2] = i; EW.setErr(err, errLen, e); return 1; }
        }
        if (!EW.checkDevice(err, errLen, 'creating pipeline')) return 1;
        for (i = 0; i < count; ++i) HEAPU32[(out >> 2) + i] = EW.add(EW.pipelines, EW.freePipelines, results[i].pipeline);
        return 0;
      } catch (x) {
        EW.setErr(err, errLen, 'creating pipeline: ' + EW.message(x));
        return 1;
      }
    });
  },

  ewgpu_pipeline_destroy__deps: ['$EW'],
  ewgpu_pipeline_destroy: function(h) {
    EW.take(EW.pipelines, EW.freePipelines, h);  // GPUComputePipeline has no destroy(): the GC frees it
  },

  ewgpu_bind_group_create__deps: ['$EW'],
  ewgpu_bind_group_create: function(pipeline, bindings, count, err, errLen) {
    return Asyncify.handleAsync(async function() {
      try {
        var p = EW.get(EW.pipelines, pipeline);
        if (!p) { EW.setErr(err, errLen, 'bind group for an unknown pipeline'); return 0; }
        var entries = [];
        for (var i = 0; i < count; ++i) {
          var e = bindings + 24 * i;
          var buf = EW.get(EW.buffers, HEAPU32[(e + 4) >> 2]);
          if (!buf) { EW.setErr(err, errLen, 'bind group entry names an unknown buffer'); return 0; }
          entries.push({binding: HEAPU32[e >> 2],
                        resource: {buffer: buf, offset: EW.readU64(e + 8), size: EW.readU64(e + 16)}});
        }
        var r = await EW.timed('bindGroups', () => EW.scoped('creating bind group', function() {
          return EW.device.createBindGroup({layout: p.getBindGroupLayout(0), entries: entries});
        }));
        if (r.error) { EW.setErr(err, errLen, r.error); return 0; }
        return EW.add(EW.bindGroups, EW.freeBindGroups, r.value);
      } catch (x) {
        EW.setErr(err, errLen, 'creating bind group: ' + EW.message(x));
        return 0;
      }
    });
  },

  ewgpu_bind_group_destroy__deps: ['$EW'],
  ewgpu_bind_group_destroy: function(h) {
    EW.take(EW.bindGroups, EW.freeBindGroups, h);
  },

  ewgpu_submit__deps: ['$EW'],
  ewgpu_submit: function(cmds, count, timestamps, durations, err, errLen, reads, nReads) {
    return Asyncify.handleAsync(async function() {
      var qs = null, resolve = null;
      function cleanup() {
        if (qs) { qs.destroy(); qs = null; }
        if (resolve) { resolve.destroy(); resolve = null; }
      }
      try {
        if (!EW.device) { EW.setErr(err, errLen, 'submitting work: WebGPU is not initialised'); return 1; }
        if (!EW.checkDevice(err, errLen, 'submitting work')) return 1;
        if (timestamps && !EW.hasTimestamps) {
          EW.setErr(err, errLen, 'timestamp queries are not supported by this device');
          return 1;
        }
        // Timed runs: each dispatch is its own pass with begin/end timestamps (4096 queries per set).
        var kMaxTimed = 2048;
        var timed = [];  // command index of each timed dispatch
        var i, c;
        if (timestamps) {
          for (i = 0; i < count && timed.length < kMaxTimed; ++i)
            if (HEAPU32[(cmds + 56 * i) >> 2] == 1) timed.push(i);
          if (timed.length) {
            var tr = await EW.scoped('creating timestamp queries', function() {
              return [EW.device.createQuerySet({type: 'timestamp', count: timed.length * 2}),
                      EW.device.createBuffer({size: timed.length * 16,
                                              usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC})];
            });
            if (tr.value) { qs = tr.value[0]; resolve = tr.value[1]; }
            if (tr.error) { cleanup(); EW.setErr(err, errLen, tr.error); return 1; }
          }
        }
        // Staging layout: the reads, then the resolved timestamps.
        var lay = EW.readLayout(reads, nReads);
        if (typeof lay === 'string') { cleanup(); EW.setErr(err, errLen, lay); return 1; }
        var rd = lay.reads, stagingNeed = lay.need;
        var tsAt = stagingNeed;
        stagingNeed += timed.length * 16;
        if (stagingNeed) {
          var se = await EW.ensureStaging(stagingNeed);
          if (se) { cleanup(); EW.setErr(err, errLen, se); return 1; }
        }
        var enc = EW.device.createCommandEncoder();
        var bad = null;
        EW.pushScopes();
        try {
          bad = EW.encodeRun(enc, cmds, count, qs, timed);
          if (!bad) {
            rd.forEach(function(r) {
              if (r.size) enc.copyBufferToBuffer(r.buffer, r.offset, EW.staging, r.at, r.size);
            });
          }
          if (qs && !bad) {
            enc.resolveQuerySet(qs, 0, timed.length * 2, resolve, 0);
            enc.copyBufferToBuffer(resolve, 0, EW.staging, tsAt, timed.length * 16);
          }
        } catch (x) {
          if (!bad) bad = 'recording GPU work: ' + EW.message(x);
        }
        var recErr = await EW.popScopes('recording GPU work');
        if (bad || recErr) { cleanup(); EW.setErr(err, errLen, bad || recErr); return 1; }
        if (!stagingNeed) {
          var e = await EW.timed('submits', () => EW.submitAndWait(enc, 'running GPU work'));
          if (e) { cleanup(); EW.setErr(err, errLen, e); return 1; }
        }
        if (durations) for (i = 0; i < count; ++i) EW.writeU64(durations + 8 * i, 0);
        if (stagingNeed) {
          var bytes = await EW.timed('submits', () => EW.submitAndRead(enc, 'running GPU work', stagingNeed));
          if (typeof bytes === 'string') { cleanup(); EW.setErr(err, errLen, bytes); return 1; }
          // HEAPU8 as of now: memory may have grown while we waited.
          rd.forEach(function(r) { HEAPU8.set(bytes.subarray(r.at, r.at + r.size), r.dst); });
          if (qs && durations) {
            var ts = new BigUint64Array(bytes.buffer, tsAt, timed.length * 2);
            for (var k = 0; k < timed.length; ++k) {
              var d = ts[2 * k + 1] >= ts[2 * k] ? ts[2 * k + 1] - ts[2 * k] : BigInt(0);
              EW.writeU64(durations + 8 * timed[k], d);
            }
          }
        }
        cleanup();
        return 0;
      } catch (x) {
        cleanup();
        EW.setErr(err, errLen, 'submitting work: ' + EW.message(x));
        return 1;
      }
    });
  },
  ewgpu_submit_async__deps: ['$EW'],
  ewgpu_submit_async: function(cmds, count, reads, nReads, ticketOut, err, errLen) {
    return Asyncify.handleAsync(async function() {
      HEAPU32[ticketOut >> 2] = 0;
      try {
        if (!EW.device) { EW.setErr(err, errLen, 'submitting work: WebGPU is not initialised'); return 1; }
        if (!EW.checkDevice(err, errLen, 'submitting work')) return 1;
        var slot = EW.pending.findIndex(function(p) { return !p.busy; });
        if (slot < 0) {
          EW.setErr(err, errLen, 'submitting work: ' + EW.pending.length + ' submits are already in flight (wait for one first)');
          return 1;
        }
        var p = EW.pending[slot];
        var lay = EW.readLayout(reads, nReads);
        if (typeof lay === 'string') { EW.setErr(err, errLen, lay); return 1; }
        var ge = lay.need ? await EW.growReadBuffer(p, 'buffer', 'size', lay.need, 'etwebgpu.pending_staging') : null;
        if (ge) { EW.setErr(err, errLen, ge); return 1; }
        var enc = EW.device.createCommandEncoder();
        var bad = null;
        EW.pushScopes();
        try {
          bad = EW.encodeRun(enc, cmds, count, null, []);
          if (!bad) lay.reads.forEach(function(r) { if (r.size) enc.copyBufferToBuffer(r.buffer, r.offset, p.buffer, r.at, r.size); });
        } catch (x) {
          if (!bad) bad = 'recording GPU work: ' + EW.message(x);
        }
        var recErr = await EW.popScopes('recording GPU work');
        if (bad || recErr) { EW.setErr(err, errLen, bad || recErr); return 1; }
        var sr = await EW.scoped('running GPU work', function() { EW.queue.submit([enc.finish()]); });
        if (sr.error) { EW.setErr(err, errLen, sr.error); return 1; }
        p.reads = lay.reads;
        p.need = lay.need;
        // Resolves (to null or a message) once the work has completed.
        p.done = lay.need
            ? p.buffer.mapAsync(GPUMapMode.READ, 0, Math.ceil(lay.need / 4) * 4).then(
                  function() { return null; }, function(x) { return 'mapping read-back buffer failed: ' + EW.message(x); })
            : EW.queue.onSubmittedWorkDone().then(
                  function() { return null; }, function(x) { return 'running GPU work: queue work failed: ' + EW.message(x); });
        p.busy = true;
        HEAPU32[ticketOut >> 2] = slot + 1;
        return 0;
      } catch (x) {
        EW.setErr(err, errLen, 'submitting work: ' + EW.message(x));
        return 1;
      }
    });
  },

  ewgpu_submit_wait__deps: ['$EW'],
  ewgpu_submit_wait: function(ticket, err, errLen) {
    return Asyncify.handleAsync(async function() {
      var p = ticket >= 1 && ticket <= EW.pending.length ? EW.pending[ticket - 1] : null;
      if (!p || !p.busy) { EW.setErr(err, errLen, 'waiting for work: unknown ticket ' + ticket); return 1; }
      p.busy = false;
      var e = await EW.timed('submits', function() { return p.done; });
      if (!e && p.need) {
        try {
          // HEAPU8 as of now: memory may have grown while we waited.
          var bytes = new Uint8Array(p.buffer.getMappedRange(0, Math.ceil(p.need / 4) * 4));
          p.reads.forEach(function(r) { HEAPU8.set(bytes.subarray(r.at, r.at + r.size), r.dst); });
        } catch (x) {
          e = 'read-back buffer mapped range unavailable: ' + EW.message(x);
        }
        p.buffer.unmap();
      }
      // A device error or loss during the work is the cause to report, also of a failed map.
      if (EW.lostMessage) e = 'running GPU work: device lost: ' + EW.lostMessage;
      else if (EW.pendingError) { e = 'running GPU work: ' + EW.pendingError; EW.pendingError = ''; }
      if (e) { EW.setErr(err, errLen, e); return 1; }
      return 0;
    });
  },
};

mergeInto(LibraryManager.library, LibraryEwgpu);
