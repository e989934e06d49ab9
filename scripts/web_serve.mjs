#!/usr/bin/env node
// A tiny static server for the web build: serves DIR (default build-web) at / and the
// conformance fixtures (default ../shared/conformance) at /conformance/, on 127.0.0.1 only.
//   node scripts/web_serve.mjs [--dir build-web] [--conformance DIR] [--port 8000]
// then open http://127.0.0.1:8000/ (WebGPU needs a secure context: localhost/127.0.0.1 is one).
// The browser test runner (tests/web/run_web_tests.mjs) imports startServer from here.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json', '.wasm': 'application/wasm',
  '.pte': 'application/octet-stream', '.npy': 'application/octet-stream', '.md': 'text/plain; charset=utf-8',
};

// Resolves url path p under root; null when it escapes root.
function under(root, p) {
  const f = path.resolve(root, '.' + path.posix.normalize('/' + p));
  return f === root || f.startsWith(root + path.sep) ? f : null;
}

// `fixtures`: another conformance tree, served at /fixtures/ (the repository's own exports).
export function startServer({dir, conformance, fixtures, port = 0, host = '127.0.0.1', quiet = true}) {
  const root = path.resolve(dir);
  const conf = conformance ? path.resolve(conformance) : null;
  const fix = fixtures ? path.resolve(fixtures) : null;
  const server = http.createServer((req, res) => {
    let p;
    try {
      p = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    } catch {
      res.writeHead(400).end();
      return;
    }
    let file = null;
    if (conf && (p === '/conformance' || p.startsWith('/conformance/'))) file = under(conf, p.slice('/conformance'.length));
    else if (fix && (p === '/fixtures' || p.startsWith('/fixtures/'))) file = under(fix, p.slice('/fixtures'.length));
    else file = under(root, p);
    if (file && fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
    if (!file || !fs.existsSync(file)) {
      if (!quiet) console.log(`404 ${p}`);
      res.writeHead(404, {'content-type': 'text/plain'}).end('not found: ' + p);
      return;
    }
    const body = fs.readFileSync(file);
    res.writeHead(200, {'content-type': TYPES[path.extname(file)] || 'application/octet-stream',
                        'content-length': body.length, 'cache-control': 'no-store'});
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve({server, url: `http://${host}:${server.address().port}`}));
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const here = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
  const arg = (k, d) => { const i = process.argv.indexOf(k); return i > 0 ? process.argv[i + 1] : d; };
  const dir = arg('--dir', path.join(here, 'build-web'));
  const conformance = arg('--conformance', path.join(here, '..', 'shared', 'conformance'));
  const {url} = await startServer({dir, conformance: fs.existsSync(conformance) ? conformance : null,
                                   port: Number(arg('--port', 8000)), quiet: false});
  console.log(`serving ${dir} at ${url}/  (conformance fixtures at ${url}/conformance/)`);
  console.log(`  ${url}/index.html    load a .pte, run it, GPU timings per op`);
  console.log(`  ${url}/example.html  the embedded example model and its check`);
  console.log(`  ${url}/tests.html    the conformance cases in this browser`);
}
