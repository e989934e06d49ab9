// Small DOM helpers shared by index.html (app.js) and example.html (example.js).
import {formatNs} from './etw.js';

export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) if (c != null) e.append(c instanceof Node ? c : String(c));
  return e;
}

export const shapeStr = (s) => '[' + s.join(', ') + ']';
export function num(x) {
  if (x === null || x === undefined) return '–';
  if (typeof x === 'string') return x;
  if (Number.isInteger(x) && Math.abs(x) < 1e9) return String(x);
  const a = Math.abs(x);
  return a !== 0 && (a < 1e-3 || a >= 1e5) ? x.toExponential(4) : x.toFixed(5);
}

export function table(head, rows) {
  return el('table', {}, el('tr', {}, head.map((h) => el('th', {}, h))),
            rows.map((r) => el('tr', {}, r.map((c) => (c instanceof Node && c.tagName === 'TD') ? c : el('td', {}, c)))));
}
const tdNum = (x) => el('td', {class: 'num'}, x);

// Statistics of tensors: [{dtype, shape, min, max, mean, nan, first}], optional action per row.
export function statsTable(list, label = 'output', action = null) {
  return table([label, 'dtype', 'shape', 'min', 'max', 'mean', 'NaN', 'first values', ''],
               list.map((t, i) => [String(i), t.dtype, shapeStr(t.shape), tdNum(num(t.min)), tdNum(num(t.max)),
                                   tdNum(num(t.mean)), tdNum(String(t.nan)), el('span', {class: 'mono'}, t.first.map(num).join('  ')),
                                   action ? action(i) : '']));
}

// Per-dispatch GPU times: totals per op (sorted) and the dispatches in order.
export function timingsView(profile, wallMs) {
  const box = el('div');
  if (wallMs !== undefined) box.append(el('p', {}, `Wall time of the run (host, includes waiting for the GPU): ${wallMs.toFixed(1)} ms`));
  if (!profile) return box;
  if (!profile.has_gpu_times) {
    box.append(el('p', {class: 'hint'}, 'This adapter has no timestamp-query feature: no GPU times.'));
    return box;
  }
  const d = profile.dispatches;
  const total = d.reduce((s, x) => s + x.gpu_ns, 0);
  const byOp = new Map();
  for (const x of d) {
    const k = x.op + (x.variant ? ' (' + x.variant + ')' : '');
    const v = byOp.get(k) || {n: 0, ns: 0};
    v.n += 1;
    v.ns += x.gpu_ns;
    byOp.set(k, v);
  }
  const ops = [...byOp.entries()].sort((a, b) => b[1].ns - a[1].ns);
  box.append(el('p', {}, `${d.length} dispatches, ${formatNs(total)} of GPU time in total.`));
  box.append(table(['op (variant)', 'dispatches', 'GPU time', 'share'],
                   ops.map(([k, v]) => [k, tdNum(String(v.n)), tdNum(formatNs(v.ns)),
                                        el('td', {}, el('span', {class: 'bar', style: `width:${total ? (120 * v.ns / total).toFixed(0) : 0}px`}),
                                           ' ' + (total ? (100 * v.ns / total).toFixed(1) : '0') + '%')])));
  const details = el('details', {}, el('summary', {}, 'every dispatch in order'),
                     table(['#', 'op', 'variant', 'GPU time'], d.map((x, i) => [String(i), x.op, x.variant, tdNum(formatNs(x.gpu_ns))])));
  box.append(details);
  return box;
}

export function setStatus(node, text, cls = '') {
  node.textContent = text;
  node.className = 'status ' + cls;
}
