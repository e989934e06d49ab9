// Browser tests of the public module (web/etwebgpu.js), called by run_web_tests.mjs: load from a
// URL and from bytes, run (typed arrays and tensor-likes), dispose, errors, a page-given
// GPUDevice, a module Web Worker, the README's "From JavaScript" snippet and the npm package
// (npm pack ./web, installed from the tarball, then imported by a page). Each check returns
// {name, pass, message}.
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Runs in the page: compares outputs [{data, dtype, shape}] with .npy goldens by the manifest's rule.
const PAGE_HELPERS = `
  window.etwModuleTest = {
    async fixture(name, entry) {
      const {readNpy} = await import('./etwebgpu.js');
      const get = async (f) => readNpy(await (await fetch('conformance/' + name + '/' + f)).arrayBuffer());
      return {inputs: await Promise.all(entry.inputs.map((i) => get(i.file))),
              expected: await Promise.all(entry.outputs.map((o) => get(o.file)))};
    },
    compare(outs, expected, atol, rtol) {
      if (outs.length !== expected.length) return 'got ' + outs.length + ' outputs, expected ' + expected.length;
      for (let k = 0; k < outs.length; ++k) {
        const g = outs[k], e = expected[k];
        if (g.dtype !== e.dtype || g.shape.join() !== e.shape.join())
          return 'output ' + k + ': ' + g.dtype + '[' + g.shape + '] vs ' + e.dtype + '[' + e.shape + ']';
        for (let i = 0; i < e.data.length; ++i) {
          const d = Math.abs(Number(g.data[i]) - Number(e.data[i]));
          if (!(d <= atol + rtol * Math.abs(Number(e.data[i])))) return 'output ' + k + ' element ' + i + ' differs by ' + d;
        }
      }
      return '';
    },
  };`;

export async function moduleApiTests({context, url, build, root, conformance}) {
  const results = [];
  const manifest = JSON.parse(fs.readFileSync(path.join(conformance, 'manifest.json'), 'utf8'));
  const entry = manifest.cases.add_bcast;
  const newPage = async () => {
    const p = await context.newPage();
    p.errors = [];
    p.logs = [];
    p.on('pageerror', (e) => p.errors.push(e.message));
    p.on('console', (m) => p.logs.push(m.text()));
    await p.goto(`${url}/tests.html`);
    await p.waitForFunction(() => window.etwTestReady === true, null, {timeout: 30000});
    await p.addScriptTag({content: PAGE_HELPERS});
    return p;
  };
  const check = async (name, fn) => {
    let pass = false, message;
    try {
      message = await fn();
      pass = true;
    } catch (e) {
      message = (e.message || String(e)).split('\n')[0];
    }
    results.push({name, pass, message});
  };

  const page = await newPage();
  await check('load from URL, run typed arrays, outputs match the golden', () => page.evaluate(async (entry) => {
    const {Model} = await import('./etwebgpu.js');
    const {inputs, expected} = await window.etwModuleTest.fixture('add_bcast', entry);
    const m = await Model.load('conformance/add_bcast/model.pte');
    if (JSON.stringify(m.inputs.map((i) => [i.dtype, i.shape])) !== JSON.stringify(entry.inputs.map((i) => [i.dtype, i.shape])))
      throw new Error('inputs ' + JSON.stringify(m.inputs));
    const bad = window.etwModuleTest.compare(await m.run(inputs.map((t) => t.data)), expected, entry.atol, entry.rtol);
    if (bad) throw new Error(bad);
    await m.dispose();
    return `${m.outputs.length} output(s) within atol ${entry.atol}`;
  }, entry));
  await check('load from an ArrayBuffer and a Uint8Array, run tensor-likes', () => page.evaluate(async (entry) => {
    const {Model} = await import('./etwebgpu.js');
    const {inputs, expected} = await window.etwModuleTest.fixture('add_bcast', entry);
    const buf = await (await fetch('conformance/add_bcast/model.pte')).arrayBuffer();
    for (const src of [buf, new Uint8Array(buf)]) {
      const m = await Model.load(src);
      const bad = window.etwModuleTest.compare(await m.run(inputs.map(({data, shape}) => ({data, shape}))), expected,
                                               entry.atol, entry.rtol);
      if (bad) throw new Error(bad);
      await m.dispose();
    }
    return 'both match';
  }, entry));
  await check('dispose: a later run rejects', () => page.evaluate(async (entry) => {
    const {Model} = await import('./etwebgpu.js');
    const {inputs} = await window.etwModuleTest.fixture('add_bcast', entry);
    const m = await Model.load('conformance/add_bcast/model.pte');
    await m.dispose();
    try {
      await m.run(inputs.map((t) => t.data));
    } catch (e) {
      if (!/disposed/.test(e.message)) throw new Error('unexpected message: ' + e.message);
      return e.message;
    }
    throw new Error('run after dispose resolved');
  }, entry));
  await check('errors carry the runtime kind and name the problem', () => page.evaluate(async (entry) => {
    const {Model} = await import('./etwebgpu.js');
    const {inputs} = await window.etwModuleTest.fixture('add_bcast', entry);
    const expectReject = async (what, p, kind, re) => {
      try {
        await p;
      } catch (e) {
        if (e.kind !== kind || !re.test(e.message)) throw new Error(`${what}: kind ${e.kind}, message ${e.message}`);
        return `${what}: ${e.kind}`;
      }
      throw new Error(what + ' resolved');
    };
    const m = await Model.load('conformance/add_bcast/model.pte');
    const msgs = [
      await expectReject('garbage bytes', Model.load(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8])), 'Format', /./),
      await expectReject('missing URL', Model.load('conformance/no_such_case/model.pte'), 'Io', /HTTP 404/),
      await expectReject('input count', m.run([inputs[0].data]), 'InvalidArgument', /expected 2 inputs, got 1/),
      await expectReject('input dtype', m.run([new Int32Array(inputs[0].data.length), inputs[1].data]), 'InvalidArgument',
                         /input 0 has dtype int32/),
      await expectReject('element count', m.run([new Float32Array(1), inputs[1].data]), 'InvalidArgument', /input 0: 1 elements/),
    ];
    await m.dispose();
    return msgs.join('; ');
  }, entry));
  await check('load options (the CLI\'s flags, camelCase or snake_case) reach the runtime; bad ones reject naming them',
              () => page.evaluate(async (entry) => {
    const {Model} = await import('./etwebgpu.js');
    const {inputs, expected} = await window.etwModuleTest.fixture('add_bcast', entry);
    const m = await Model.load('conformance/add_bcast/model.pte',
                               {precision: 'auto', fuse: false, plan_memory: false, maxGpuBytes: '1G',
                                forceRoute: {binary: 'general'}});
    // At fp16 the documented tolerance: rtol 2e-2, atol 2e-2 x max|expected|.
    const maxAbs = Math.max(...expected.map((e) => Math.max(...Array.from(e.data, Math.abs))));
    const [atol, rtol] = m.precision === 'fp16' ? [2e-2 * maxAbs, 2e-2] : [entry.atol, entry.rtol];
    const bad = window.etwModuleTest.compare(await m.run(inputs.map((t) => t.data)), expected, atol, rtol);
    if (bad) throw new Error(bad);
    await m.dispose();
    const reject = async (opts, re) => {
      try {
        await Model.load('conformance/add_bcast/model.pte', opts);
      } catch (e) {
        if (e.kind !== 'InvalidArgument' && e.kind !== 'Limit') throw new Error(`kind ${e.kind}: ${e.message}`);
        if (!re.test(e.message)) throw new Error('message: ' + e.message);
        return e.message;
      }
      throw new Error(JSON.stringify(opts) + ' resolved');
    };
    await reject({fusion: false}, /unknown load option 'fusion'/);
    await reject({precision: 'fp8'}, /precision 'fp8'/);
    await reject({planMemory: 'maybe'}, /plan_memory: 'maybe'/);
    await reject({maxGpuBytes: 64}, /max_gpu_bytes/);
    return `precision ${m.precision}; unknown/bad options rejected`;
  }, entry));
  await check('onProgress reports read, upload and compile, each ending done === total', () => page.evaluate(async () => {
    const {Model} = await import('./etwebgpu.js');
    const seen = [];
    const m = await Model.load('conformance/add_bcast/model.pte', {onProgress: (p) => seen.push(p)});
    await m.dispose();
    for (const stage of ['read', 'upload', 'compile']) {
      const mine = seen.filter((p) => p.stage === stage);
      if (!mine.length) throw new Error('no ' + stage + ' progress: ' + JSON.stringify(seen));
      const last = mine[mine.length - 1];
      if (last.done !== last.total) throw new Error(stage + ' ends at ' + JSON.stringify(last));
      for (let i = 1; i < mine.length; ++i) if (mine[i].done < mine[i - 1].done) throw new Error(stage + ' went back');
    }
    if (seen[0].stage !== 'read' || seen[seen.length - 1].stage !== 'compile') throw new Error('order ' + JSON.stringify(seen));
    return seen.length + ' reports';
  }));
  await check('generate: an async iterator of tokens equal to a greedy loop over run(); break stops it', () => page.evaluate(async () => {
    const {Model} = await import('./etwebgpu.js');
    const m = await Model.load('conformance/llama_kv_cache_decode_steps/model.pte');
    const prompt = [1, 5, 9];
    const argmax = (a) => a.reduce((best, x, i) => (x > a[best] ? i : best), 0);
    const step = async (tok, pos) => (await m.run([new BigInt64Array([BigInt(tok)]), new BigInt64Array([BigInt(pos)])]))[0].data;
    let logits;
    for (const [pos, t] of prompt.entries()) logits = await step(t, pos);
    const byHand = [];
    for (let pos = prompt.length; byHand.length < 6; ++pos) {
      byHand.push(argmax(logits));
      logits = await step(byHand[byHand.length - 1], pos);
    }
    const got = [], prefill = [];
    const it = m.generate(prompt, {maxNewTokens: 6, onPrefill: (done, total) => prefill.push([done, total])});
    let r;
    while (!(r = await it.next()).done) got.push(r.value);
    if (got.join() !== byHand.join()) throw new Error(`generate ${got} vs by hand ${byHand}`);
    if (r.value.tokens.join() !== got.join() || r.value.stopReason !== 'max_new_tokens') throw new Error(JSON.stringify(r.value));
    const lastPrefill = prefill[prefill.length - 1];
    if (!lastPrefill || lastPrefill[0] !== prompt.length || lastPrefill[1] !== prompt.length)
      throw new Error('prefill progress ' + JSON.stringify(prefill));
    const early = [];
    for await (const t of m.generate(prompt, {maxNewTokens: 6})) {
      early.push(t);
      if (early.length === 2) break;
    }
    if (early.join() !== byHand.slice(0, 2).join()) throw new Error('after break: ' + early);
    const again = [];
    for await (const t of m.generate(prompt, {maxNewTokens: 3, temperature: 0.8, topK: 5, seed: 7})) again.push(t);
    await m.dispose();
    return `tokens ${got.join(' ')}; break after 2; sampled ${again.join(' ')}`;
  }));
  await page.close();

  // A fresh page: the runtime adopts the page's own device, which stays usable by the page.
  const devicePage = await newPage();
  await check('Model.load with the page\'s GPUDevice shares it', () => devicePage.evaluate(async (entry) => {
    const {Model} = await import('./etwebgpu.js');
    const {inputs, expected} = await window.etwModuleTest.fixture('add_bcast', entry);
    const adapter = await navigator.gpu.requestAdapter();
    const device = await adapter.requestDevice();
    const m = await Model.load('conformance/add_bcast/model.pte', {device});
    const bad = window.etwModuleTest.compare(await m.run(inputs.map((t) => t.data)), expected, entry.atol, entry.rtol);
    if (bad) throw new Error(bad);
    await m.dispose();
    // The page's device still works for its own code after etwebgpu used it.
    const b = device.createBuffer({size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST});
    await b.mapAsync(GPUMapMode.READ);
    b.unmap();
    const other = await (await navigator.gpu.requestAdapter()).requestDevice();
    let refused = '';
    try {
      await Model.load('conformance/add_bcast/model.pte', {device: other});
    } catch (e) {
      refused = e.message;
    }
    if (!refused) throw new Error('a second device was accepted');
    // The models really run on the page's device: destroying it makes the next run fail.
    const m2 = await Model.load('conformance/add_bcast/model.pte');
    device.destroy();
    try {
      await m2.run(inputs.map((t) => t.data));
    } catch (e) {
      if (!/lost/.test(e.message)) throw new Error('unexpected message after destroying the page device: ' + e.message);
      return 'shared (destroying it fails the next run: ' + e.message.slice(0, 80) + '); a second device is refused: ' + refused;
    }
    throw new Error('a run after the page destroyed its device succeeded');
  }, entry));
  await devicePage.close();

  const workerPage = await newPage();
  await check('module Web Worker loads and runs a model', () => workerPage.evaluate(async (entry) => {
    const {inputs, expected} = await window.etwModuleTest.fixture('add_bcast', entry);
    const w = new Worker('tests_worker.js', {type: 'module'});
    const reply = await new Promise((resolve, reject) => {
      w.onmessage = (ev) => resolve(ev.data);
      w.onerror = (ev) => reject(new Error('worker error: ' + ev.message));
      w.postMessage({url: 'conformance/add_bcast/model.pte', inputs: inputs.map((t) => t.data)});
    });
    w.terminate();
    if (reply.error) throw new Error(`${reply.kind}: ${reply.error}`);
    if (!reply.inWorker) throw new Error('the reply did not come from a worker scope');
    const bad = window.etwModuleTest.compare(reply.outputs, expected, entry.atol, entry.rtol);
    if (bad) throw new Error(bad);
    return 'outputs match';
  }, entry));
  await workerPage.close();

  // The README's "From JavaScript" snippet, verbatim, as a module beside the pages (model.pte:
  // the add_bcast fixture; llama.pte: the KV-cache decoder).
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const section = (readme.split('## From JavaScript')[1] || '').split('\n## ')[0];
  const snippet = (/```js\n([\s\S]*?)```/.exec(section) || [])[1];
  await check('README "From JavaScript" snippet runs', async () => {
    if (!snippet) throw new Error('no ```js snippet in the README section');
    fs.writeFileSync(path.join(build, 'readme_snippet.mjs'), snippet);
    fs.copyFileSync(path.join(conformance, 'add_bcast', 'model.pte'), path.join(build, 'model.pte'));
    fs.copyFileSync(path.join(conformance, 'llama_kv_cache_decode_steps', 'model.pte'), path.join(build, 'llama.pte'));
    const p = await newPage();
    try {
      await p.evaluate(() => import('./readme_snippet.mjs'));
      if (p.errors.length) throw new Error(p.errors.join('; '));
      const want = `float32 [${entry.outputs[0].shape.join(', ')}]`;  // console.log(y.dtype, y.shape, ...)
      const printed = p.logs.find((l) => l.startsWith(want));
      if (!printed) throw new Error(`no "${want} ..." line in the snippet's output: ` + p.logs.join(' | '));
      return printed;
    } finally {
      await p.close();
    }
  });

  await check('npm pack ./web, install the tarball, import the installed package', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'etwebgpu-npm-'));
    try {
      const npm = (args, cwd) => execFileSync('npm', args, {cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']});
      const tgz = npm(['pack', path.join(root, 'web'), '--pack-destination', tmp, '--silent'], tmp).trim().split('\n').pop();
      fs.writeFileSync(path.join(tmp, 'package.json'), '{"name": "consumer", "private": true}');
      npm(['install', '--offline', '--no-audit', '--no-fund', '--silent', path.join(tmp, tgz)], tmp);
      const installed = path.join(tmp, 'node_modules', 'etwebgpu');
      const files = fs.readdirSync(installed).sort();
      for (const f of ['etwebgpu.js', 'etwebgpu_web.js', 'etwebgpu_web.wasm', 'package.json'])
        if (!files.includes(f)) throw new Error(`installed package lacks ${f}: ${files.join(', ')}`);
      const served = path.join(build, 'npm_installed');
      fs.rmSync(served, {recursive: true, force: true});
      fs.cpSync(installed, served, {recursive: true});
      const p = await newPage();
      try {
        return await p.evaluate(async (entry) => {
          const {Model} = await import('./npm_installed/etwebgpu.js');
          const {inputs, expected} = await window.etwModuleTest.fixture('add_bcast', entry);
          const m = await Model.load('conformance/add_bcast/model.pte');
          const bad = window.etwModuleTest.compare(await m.run(inputs.map((t) => t.data)), expected, entry.atol, entry.rtol);
          if (bad) throw new Error(bad);
          return 'installed package runs add_bcast';
        }, entry) + ` (${tgz}: ${files.join(', ')})`;
      } finally {
        await p.close();
      }
    } finally {
      fs.rmSync(tmp, {recursive: true, force: true});
    }
  });
  return results;
}
