// A module Web Worker for the browser tests (tests/web/run_web_tests.mjs): loads a model by URL
// with etwebgpu.js and runs it on the inputs posted to it; replies {outputs} or {error, kind}.
import {Model} from './etwebgpu.js';

self.onmessage = async ({data: {url, inputs}}) => {
  try {
    const m = await Model.load(url);
    const outputs = await m.run(inputs);
    await m.dispose();
    self.postMessage({outputs, inWorker: typeof WorkerGlobalScope !== 'undefined' && self instanceof WorkerGlobalScope});
  } catch (e) {
    self.postMessage({error: e.message, kind: e.kind});
  }
};
