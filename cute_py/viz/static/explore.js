// cute_py layout explorer: the front end of cute_py.viz.explore (anywidget) and of the standalone page.
//
// One self-contained ES module, no dependencies. The default export is anywidget's contract,
// render({model, el}); the model holds text, dtype, view, access, swizzle (what the user picks), and scene and
// error (what Python computed: cute_py/viz/explore_scene.py says what a scene holds). In a notebook Python
// recomputes the scene when an input changes; the standalone page passes localModel(state) instead, whose
// save_changes re-evaluates the layout here (evaluate / jsScene: int-stride layouts, Sw<B,M,S> o O o L, TV
// layouts over a tile) and keeps the page's precomputed scene for what it cannot redo.

const CSS = `
.cpx{font:12px ui-monospace,Menlo,Consolas,monospace;color:#111}
.cpx .cpx-bar{display:flex;flex-wrap:wrap;gap:6px;align-items:center;margin-bottom:4px}
.cpx input.cpx-text{min-width:24em;flex:1;font:inherit;padding:2px 4px}
.cpx input,.cpx select,.cpx button{font:inherit}
.cpx .cpx-error{color:#b00020;white-space:pre-wrap;margin:2px 0}
.cpx .cpx-note{color:#555;margin:2px 0}
.cpx .cpx-main{display:flex;gap:12px;align-items:flex-start}
.cpx .cpx-pic{overflow:auto;max-width:100%;max-height:640px;border:1px solid #ddd}
.cpx .cpx-side{min-width:18em;max-width:36em}.cpx td:first-child{white-space:nowrap;text-align:left}
.cpx .cpx-cell dt{color:#555;float:left;clear:left;width:8em}
.cpx .cpx-cell dd{margin:0 0 0 8.5em}
.cpx table{border-collapse:collapse;margin:4px 0}.cpx td,.cpx th{border:1px solid #ccc;padding:1px 4px;text-align:right}
.cpx pre{white-space:pre-wrap;margin:2px 0;background:#f7f7f7;padding:4px}
.cpx rect.cpx-c{stroke:#555;stroke-width:.5;cursor:pointer}.cpx rect.cpx-c.cf{stroke:#d00;stroke-width:2}
.cpx rect.cpx-c.hot{stroke:#06f;stroke-width:2.5}
`;

// ---------------------------------------------------------------------------------------------------------------
// The evaluator: CuTe text -> layout, and the cells of a scene (checked against Python in tests/test_explore_browser.py)

export function parse(text) {
  const split = [...text.matchAll(/\s*(?<![A-Za-z_])o(?![A-Za-z_])\s*/g)];   // a lone o, spaced or not, as cute_py.parse
  if (/^\s*Sw</.test(text)) {
    if (split.length !== 2) throw new Error(`parse: a composed layout has three parts (outer o offset o inner), got ${split.length + 1}`);
    const at = [0, split[0].index + split[0][0].length, split[1].index + split[1][0].length];
    const sw = parsePart(text.slice(0, split[0].index), 0, "swizzle");
    const offset = parsePart(text.slice(at[1], split[1].index), at[1], "int");
    return { ...parsePart(text.slice(at[2]), at[2], "layout"), swizzle: sw, offset };
  }
  return parsePart(text, 0, "layout");
}

function parsePart(s, base, what) {                                // one part of CuTe text; errors count from base
  let pos = 0;
  const fail = (why) => { throw new Error(`parse: ${why} at position ${base + pos}`); };
  const ws = () => { while (pos < s.length && /\s/.test(s[pos])) pos++; };
  const found = () => (pos < s.length ? `'${s[pos]}'` : "end of input");
  const expect = (ch) => { ws(); if (s[pos] !== ch) fail(`expected '${ch}', found ${found()}`); pos++; };
  const int = () => {
    ws();
    const m = /^-?\d+/.exec(s.slice(pos));
    if (!m) {
      if (/^[A-Za-z_]/.test(s.slice(pos))) throw new Error(`symbolic extent at position ${base + pos}: this page evaluates integer layouts only; retyping it needs the notebook`);
      fail(`expected an integer or '(', found ${found()}`);
    }
    pos += m[0].length;
    return BigInt(m[0]);
  };
  const tuple = () => {
    ws();
    if (s[pos] !== "(") return int();
    pos++;
    const out = [tuple()];
    for (;;) {
      ws();
      if (s[pos] === ",") { pos++; out.push(tuple()); continue; }
      if (s[pos] === ")") { pos++; return out; }
      fail(`expected ')', found ${found()}`);
    }
  };
  let out;
  ws();
  if (what === "swizzle") {
    if (!s.startsWith("Sw<", pos)) fail("expected Sw<B,M,S>");
    pos += 3;
    const b = int(); expect(","); const m = int(); expect(","); const sh = int(); expect(">");
    out = [Number(b), Number(m), Number(sh)];
  } else if (what === "int") {
    out = int();
  } else {
    const shape = tuple();
    ws();
    if (s[pos] !== ":") {
      out = { shape, stride: compactLeft(shape) };
    } else {
      pos++;
      const stride = tuple();
      if (!congruent(shape, stride)) throw new Error(`parse: shape ${fmt(shape)} and stride ${fmt(stride)} are not congruent`);
      out = { shape, stride };
    }
  }
  ws();
  if (pos < s.length) fail(`unexpected ${found()}`);
  return out;
}

const isT = Array.isArray;
const congruent = (a, b) => (isT(a) ? isT(b) && a.length === b.length && a.every((x, i) => congruent(x, b[i])) : !isT(b));
const size = (s) => (isT(s) ? s.reduce((p, x) => p * size(x), 1n) : s);
const flat = (s) => (isT(s) ? s.flatMap(flat) : [s]);
export const fmt = (s) => (isT(s) ? `(${s.map(fmt).join(",")})` : String(s));

function compactLeft(shape, start = { v: 1n }) {                    // CuTe's default (column-major) strides
  if (isT(shape)) return shape.map((x) => compactLeft(x, start));
  const d = shape === 1n ? 0n : start.v;
  start.v *= shape;
  return d;
}

function idx2crd(i, shape) {                                       // colexicographic, as int_tuple.idx2crd
  if (!isT(shape)) return i;
  const out = [];
  shape.forEach((s, k) => {
    const n = size(s);
    out.push(idx2crd(k === shape.length - 1 ? i : i % n, s));
    i /= n;
  });
  return out;
}

const dot = (c, d) => (isT(c) ? c.reduce((a, x, k) => a + dot(x, d[k]), 0n) : c * d);

export function swizzle(sw, x) {                                  // Sw<B,M,S>: x ^ shiftr(x & yyy_msk, S)
  const [b, m, sh] = sw.map(BigInt);
  if (b === 0n) return x;
  const mask = ((1n << b) - 1n) << (m + (sh > 0n ? sh : 0n));
  const y = x & mask;
  return x ^ (sh >= 0n ? y >> sh : y << -sh);
}

export function evaluate(lay, i) {                                 // {crd, off, swz} of domain index i
  const crd = idx2crd(i, lay.shape);
  const off = dot(crd, lay.stride) + (lay.offset || 0n);
  return { crd, off, swz: lay.swizzle ? swizzle(lay.swizzle, off) : off };
}

export function shown(extent) {                                    // the text views' elision: 8 ... 8 past 64
  const e = Number(extent);
  if (e <= 64) return [...Array(e).keys()];
  return [...Array(8).keys(), null, ...[...Array(8).keys()].map((k) => e - 8 + k)];
}

const num = (x) => (x >= -(2n ** 53n) && x < 2n ** 53n ? Number(x) : String(x));

function gridOf(lay) {
  const r = isT(lay.shape) ? lay.shape.length : 1;
  const total = size(lay.shape);
  const rows = r >= 2 ? size(lay.shape[0]) : 1n;
  return { rows, cols: total / rows };
}

export function layoutCells(lay, bits) {
  const { rows, cols } = gridOf(lay);
  const ms = shown(rows), ns = shown(cols), cells = [];
  for (const n of ns) for (const m of ms) {
    if (m === null || n === null) continue;
    const i = BigInt(m) + rows * BigInt(n);
    const e = evaluate(lay, i);
    const cell = { m, n, i: num(i), crd: fmt(e.crd), off: num(e.off), swz: num(e.swz) };
    if (e.swz >= 0n) cell.bank = Number(((e.swz * BigInt(bits)) / 8n / 4n) % 32n);   // a negative offset has no bank
    cells.push(cell);
  }
  return { name: "", rows: num(rows), cols: num(cols), ms, ns, cells };
}

export function tvCells(lay, M, N, name = "TV") {
  const T = size(isT(lay.shape) ? lay.shape[0] : lay.shape), V = isT(lay.shape) ? size(lay.shape[1]) : 1n;
  if (!isT(lay.shape) || lay.shape.length !== 2) throw new Error(`a TV layout must be a rank-2 layout (thread, value), got ${fmt(lay.shape)}`);
  const total = BigInt(M * N), owner = new Map();
  if (T * V > 1n << 20n) throw new Error(`TV layout of ${T * V} elements is too large for this page`);
  for (let t = 0n; t < T; t++) for (let v = 0n; v < V; v++) {
    const idx = evaluate(lay, t + T * v).swz;
    if (idx < 0n || idx >= total) throw new Error(`TV layout sends (T${t},V${v}) to ${idx}, outside the ${M}x${N} tile`);
    if (!owner.has(idx)) owner.set(idx, [Number(t), Number(v)]);
  }
  const ms = shown(M), ns = shown(N), cells = [];
  for (const n of ns) for (const m of ms) {
    if (m === null || n === null) continue;
    const cell = { m, n, i: m + M * n }, o = owner.get(BigInt(m + M * n));
    if (o) [cell.t, cell.v] = o;
    cells.push(cell);
  }
  return { name, rows: M, cols: N, ms, ns, cells };
}

const layoutText = (lay) => (lay.swizzle ? `Sw<${lay.swizzle.join(",")}> o ${lay.offset} o ` : "") + `${fmt(lay.shape)}:${fmt(lay.stride)}`;

export function applySwizzle(lay, text) {                           // the swizzle picker: replace the outer swizzle
  if (!text) return lay;
  const m = /^Sw<(\d+),(\d+),(-?\d+)>$/.exec(text.trim());
  if (!m) throw new Error(`swizzle ${JSON.stringify(text)} is not Sw<B,M,S>`);
  return { ...lay, swizzle: [+m[1], +m[2], +m[3]], offset: lay.offset || 0n };
}

// The scene of retyped text, as far as this page can compute it (no reports: those need Python).
export function jsScene(base, st) {
  const bits = base.dtypes[st.dtype];
  if (!bits) throw new Error(`unknown dtype ${JSON.stringify(st.dtype)}`);
  const sc = { ...base, text: st.text, dtype: st.dtype, bits, view: st.view, access: st.access, report: null,
               facts: [], report_error: "", python: "" };
  const lay = applySwizzle(parse(st.text), st.swizzle);
  if (base.kind === "tv") {
    const [M, N] = base.tile;
    sc.panels = [tvCells(lay, M, N)];
    sc.title = `TV layout ${layoutText(lay)} over the ${M}\u00d7${N} tile`;
  } else {
    sc.panels = [layoutCells(lay, bits)];
    sc.title = layoutText(lay);
  }
  if (st.view !== "offsets") sc.report_error = `the ${st.view} view's per-warp numbers come from Python: this page recomputed offsets, swizzle, banks${base.kind === "tv" ? " and threads" : ""}; open the layout in the notebook (cute_py.viz.explore) for the ${st.view} report`;
  sc.python = `import cute_py as cp\nobj = cp.parse(${JSON.stringify(layoutText(lay))})\ncp.viz.explore(obj${base.kind === "tv" ? `, tile=(${base.tile.join(", ")})` : `, dtype='${st.dtype}', view='${st.view}', access='${st.access}'`})`;
  return sc;
}

const INPUTS = ["text", "dtype", "view", "access", "swizzle"];

// A model with anywidget's interface (get/set/on/off/save_changes) that evaluates here instead of in Python.
export function localModel(state) {
  const data = { ...state }, handlers = {}, initial = { ...state };
  const emit = (k) => (handlers[`change:${k}`] || []).forEach((cb) => cb());
  const put = (k, v) => { data[k] = v; emit(k); };
  return {
    get: (k) => data[k],
    set: (k, v) => { data[k] = v; },
    on: (ev, cb) => { (handlers[ev] ||= []).push(cb); },
    off: (ev, cb) => { handlers[ev] = (handlers[ev] || []).filter((f) => f !== cb); },
    save_changes: () => {
      if (INPUTS.every((k) => data[k] === initial[k])) { put("error", ""); put("scene", initial.scene); return; }
      if (!initial.scene.js) { put("error", `this page holds the precomputed picture of ${initial.scene.title}; retyping it needs the notebook (cute_py.viz.explore)`); return; }
      const last = data.scene;                                    // kept if the new scene cannot be drawn
      try { const sc = jsScene(initial.scene, data); put("error", ""); put("scene", sc); }
      catch (e) { data.scene = last; put("error", String(e.message || e)); }
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The picture

const rgb = (c) => `rgb(${c[0]},${c[1]},${c[2]})`;
const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const CW = 38, CH = 24, PAD = 30;

function cellLook(sc, c) {                                          // [fill, label lines] in the scene's view
  const p = sc.palette, tv = c.t !== undefined;
  if (tv || sc.view === "threads") {
    const t = tv ? c.t : c.thr, v = tv ? c.v : c.val;
    return t === undefined ? ["#fff", []] : [rgb(p.tv8[t % 8]), [`T${t}`, `V${v}`]];
  }
  if (sc.view === "banks") return c.bank === undefined ? ["#fff", ["?"]] : [rgb(p.bank32[c.bank]), [String(c.bank)]];
  if (sc.view === "coalescing") return c.req === undefined ? ["#fff", []] : [rgb(p.tv8[c.req % 8]), [`W${c.req}`]];
  const label = c.elem !== undefined ? c.elem : String(c.swz);
  return [typeof c.swz === "number" ? rgb(p.bw8[((c.swz % 8) + 8) % 8]) : "#fff", [label]];
}

function axisPos(list, k) { return list.indexOf(k); }

export function sceneSvg(sc) {
  const parts = [], blocks = [];
  let x0 = 8, height = 0;
  sc.panels.forEach((pn, p) => {
    const w = pn.ns.length * CW, h = pn.ms.length * CH, top = pn.name ? 18 : 0;
    blocks.push(`<g transform="translate(${x0},${top})">`);
    if (pn.name) blocks.push(`<text x="${PAD + w / 2}" y="-4" class="hdr">${esc(pn.name)}</text>`);
    pn.ns.forEach((n, k) => blocks.push(`<text class="ix" x="${PAD + k * CW + CW / 2}" y="${PAD - 10}">${n === null ? "\u22ef" : n}</text>`));
    pn.ms.forEach((m, k) => blocks.push(`<text class="ix" x="${PAD / 2}" y="${PAD + k * CH + CH / 2}">${m === null ? "\u22ee" : m}</text>`));
    for (const c of pn.cells) {
      const [fill, lines] = cellLook(sc, c);
      const x = PAD + axisPos(pn.ns, c.n) * CW, y = PAD + axisPos(pn.ms, c.m) * CH;
      blocks.push(`<rect class="cpx-c${c.cf ? " cf" : ""}" x="${x}" y="${y}" width="${CW}" height="${CH}" fill="${fill}" data-p="${p}" data-m="${c.m}" data-n="${c.n}"/>`);
      if (lines.length === 1) blocks.push(`<text x="${x + CW / 2}" y="${y + CH / 2}">${esc(lines[0])}</text>`);
      if (lines.length === 2) blocks.push(`<text class="s" x="${x + CW / 2}" y="${y + CH * 0.3}">${esc(lines[0])}</text><text class="s" x="${x + CW / 2}" y="${y + CH * 0.75}">${esc(lines[1])}</text>`);
    }
    blocks.push(`<rect x="${PAD}" y="${PAD}" width="${w}" height="${h}" fill="none" stroke="#000" stroke-width="1.5"/></g>`);
    x0 += PAD + w + 24;
    height = Math.max(height, top + PAD + h + 8);
  });
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" class="cutepy" width="${x0}" height="${height}" viewBox="0 0 ${x0} ${height}">`,
    `<title>${esc(sc.title)}</title>`,
    `<style>.cutepy text{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:10px;text-anchor:middle;dominant-baseline:central;pointer-events:none}.cutepy .s{font-size:8px}.cutepy .ix{fill:#555}.cutepy .hdr{font-size:12px;font-weight:bold}</style>`,
    `<rect x="0" y="0" width="${x0}" height="${height}" fill="#fff"/>`, ...blocks, "</svg>");
  return parts.join("\n");
}

// ---------------------------------------------------------------------------------------------------------------
// The widget

function cellFacts(sc, p, c) {                                     // [key, label, value] rows of the hover panel
  const rows = [];
  const pn = sc.panels[p];
  if (c.t !== undefined || sc.kind === "tv" || sc.kind === "mma" || sc.kind === "copy") {
    rows.push(["panel", "operand", pn.name || "TV"], ["mn", "(m, n)", `(${c.m},${c.n})`], ["i", "tile index", c.i],
              ["t", "thread", c.t === undefined ? "none" : c.t], ["v", "value", c.v === undefined ? "none" : c.v]);
    return rows;
  }
  rows.push(["crd", "coordinate", c.crd], ["mn", "(row, col)", `(${c.m},${c.n})`], ["i", "index", c.i],
            ["off", "offset", c.off], ["swz", "swizzled", c.swz], ["bank", "bank", c.bank === undefined ? "?" : c.bank]);
  if (c.elem !== undefined) rows.push(["elem", "element", c.elem]);
  if (c.req !== undefined) {
    const label = sc.report && sc.report.labels ? sc.report.labels[c.req] : `request ${c.req}`;
    rows.push(["req", "warp request", label], ["lane", "lane", c.lane], ["thr", "thread", c.thr], ["val", "value", c.val]);
    if (sc.view === "banks") rows.push(["cf", "conflict", c.cf ? "yes" : "no"]);
  }
  return rows;
}

function reportHtml(sc) {
  const r = sc.report;
  if (!r) return "";
  const head = r.kind === "banks" ? ["request", "wavefronts", "ideal", "max ways"] : ["request", "bytes", "sectors", "min", "lines", "efficiency"];
  const body = r.requests.map((q) => (r.kind === "banks" ? [q.label, q.wavefronts, q.ideal, q.max_ways]
    : [q.label, q.useful, q.sectors, q.min_sectors, q.lines, `${(q.efficiency * 100).toFixed(1)}%`]));
  const more = r.count > r.requests.length ? `<div class="cpx-note">${r.count - r.requests.length} more requests</div>` : "";
  return `<div class="cpx-summary">${esc(r.access)}: ${esc(r.summary)}</div><table class="cpx-requests"><tr>${head.map((h) => `<th>${h}</th>`).join("")}</tr>` +
    body.map((row) => `<tr>${row.map((x) => `<td>${esc(x)}</td>`).join("")}</tr>`).join("") + `</table>${more}`;
}

const SWIZZLE_BYTES = [32, 64, 128];

function swizzleText(bytes, bits) {                                // the TMA / GMMA swizzles in element units
  const b = { 32: 1, 64: 2, 128: 3 }[bytes], m = 4 - Math.log2(bits / 8);
  return m < 0 || !Number.isInteger(m) ? "" : `Sw<${b},${m},3>`;
}

const bare = (sw) => (sw || "").replace(/\s+/g, "");

// The swizzle picker's options for `bits`-bit elements, the model's swizzle selected: none, the byte widths in
// element units, and the model's own swizzle when it is none of those.
function swizzleOptions(sw, bits) {
  const opts = [["", "none"], ...SWIZZLE_BYTES.map((k) => [swizzleText(k, bits), `${k}B`]).filter(([v]) => v)];
  if (!opts.some(([v]) => v === bare(sw))) opts.push([sw, sw]);
  return opts.map(([v, label]) => `<option value="${esc(v)}"${v === bare(sw) || v === sw ? " selected" : ""}>${esc(label)}</option>`).join("");
}

function render({ model, el }) {
  if (!document.getElementById("cpx-style")) {
    const st = document.createElement("style");
    st.id = "cpx-style"; st.textContent = CSS;
    document.head.appendChild(st);
  }
  const sc0 = model.get("scene");
  const root = document.createElement("div");
  root.className = "cpx";
  const options = (xs, cur) => xs.map((x) => `<option value="${esc(x)}"${x === cur ? " selected" : ""}>${esc(x)}</option>`).join("");
  root.innerHTML = `<div class="cpx-bar">
    <input class="cpx-text" spellcheck="false" title="CuTe layout: (4,8):(8,1), Sw<3,3,3> o 0 o (8,64):(64,1)">
    <label>dtype <select class="cpx-dtype">${options(Object.keys(sc0.dtypes), model.get("dtype"))}</select></label>
    <label>swizzle <select class="cpx-swizzle"></select></label>
    <label>view <select class="cpx-view"></select></label>
    <label>access <input class="cpx-access" list="cpx-accesses" size="14"><datalist id="cpx-accesses">${options(sc0.accesses, "")}</datalist></label>
    <button class="cpx-export-svg">SVG</button><button class="cpx-export-py">Python</button></div>
    <div class="cpx-error"></div><div class="cpx-title"></div><div class="cpx-note cpx-report-error"></div>
    <div class="cpx-main"><div class="cpx-pic"></div><div class="cpx-side"><dl class="cpx-cell"></dl><div class="cpx-report"></div></div></div>
    <div class="cpx-facts"></div><pre class="cpx-python" hidden></pre>`;
  el.appendChild(root);
  const $ = (q) => root.querySelector(q);
  const text = $(".cpx-text"), pic = $(".cpx-pic");
  text.value = model.get("text");
  $(".cpx-access").value = model.get("access");
  let pinned = null, timer = null;

  const push = (k, v) => { model.set(k, v); model.save_changes(); };
  text.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => push("text", text.value), 150); });
  text.addEventListener("keydown", (e) => { if (e.key === "Enter") { clearTimeout(timer); push("text", text.value); } });
  $(".cpx-dtype").addEventListener("change", (e) => {              // a byte-width swizzle keeps its width
    const sc = model.get("scene"), sw = bare(model.get("swizzle")), bits = sc.dtypes[e.target.value];
    const bytes = SWIZZLE_BYTES.find((k) => sw && swizzleText(k, sc.bits) === sw);
    model.set("dtype", e.target.value);
    if (bytes && bits) model.set("swizzle", swizzleText(bytes, bits));
    model.save_changes();
  });
  $(".cpx-view").addEventListener("change", (e) => push("view", e.target.value));
  $(".cpx-access").addEventListener("change", (e) => push("access", e.target.value));
  $(".cpx-swizzle").addEventListener("change", (e) => push("swizzle", e.target.value));

  const show = (p, m, n) => {
    const sc = model.get("scene"), c = sc.panels[p] && sc.panels[p].cells.find((x) => x.m === m && x.n === n);
    if (!c) return;
    $(".cpx-cell").innerHTML = cellFacts(sc, p, c).map(([k, label, v]) => `<dt>${label}</dt><dd data-k="${k}">${esc(v)}</dd>`).join("");
    pic.querySelectorAll("rect.hot").forEach((r) => r.classList.remove("hot"));
    const r = pic.querySelector(`rect[data-p="${p}"][data-m="${m}"][data-n="${n}"]`);
    if (r) r.classList.add("hot");
  };
  const at = (e) => { const r = e.target.closest && e.target.closest("rect.cpx-c"); return r ? [+r.dataset.p, +r.dataset.m, +r.dataset.n] : null; };
  pic.addEventListener("mouseover", (e) => { const a = at(e); if (a && !pinned) show(...a); });
  pic.addEventListener("click", (e) => { const a = at(e); pinned = a && !(pinned && pinned.join() === a.join()) ? a : null; if (a) show(...a); });

  $(".cpx-export-svg").addEventListener("click", () => {
    const a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([sceneSvg(model.get("scene"))], { type: "image/svg+xml" }));
    a.download = "layout.svg"; document.body.appendChild(a); a.click(); a.remove();
  });
  $(".cpx-export-py").addEventListener("click", () => { const p = $(".cpx-python"); p.hidden = !p.hidden; });

  const redraw = () => {
    const sc = model.get("scene"), err = model.get("error") || "";
    $(".cpx-error").textContent = err;
    text.readOnly = !sc.editable;
    if (document.activeElement !== text && !err) text.value = model.get("text");
    $(".cpx-view").innerHTML = options(sc.views, sc.view);
    $(".cpx-swizzle").innerHTML = swizzleOptions(model.get("swizzle") || "", sc.bits);
    $(".cpx-dtype").value = model.get("dtype");
    $(".cpx-title").textContent = sc.title + (sc.notes.length ? ` \u2014 ${sc.notes.join("; ")}` : "");
    $(".cpx-report-error").textContent = sc.report_error || "";
    pic.innerHTML = sceneSvg(sc);
    $(".cpx-report").innerHTML = reportHtml(sc);
    $(".cpx-facts").innerHTML = sc.facts.map((f) => `<details${f.ok ? " open" : ""}><summary>${esc(f.title)}</summary><pre>${esc(f.text)}</pre></details>`).join("");
    $(".cpx-python").textContent = sc.python;
    if (pinned) show(...pinned); else $(".cpx-cell").innerHTML = `<dd class="cpx-note">hover or click a cell</dd>`;
  };
  model.on("change:scene", redraw);
  model.on("change:error", redraw);
  redraw();
  return () => { model.off("change:scene", redraw); model.off("change:error", redraw); };
}

export default { render };
