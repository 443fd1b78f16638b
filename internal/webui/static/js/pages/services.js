// The service map: the services and the calls between them over a time
// range, from the service graph the server makes of the spans it receives
// (traces_service_graph_*, named as the Collector's servicegraph
// connector names them), through Prometheus' /api/v1/query at the range's
// end with rate() over the whole range: per edge (client → server) its
// call rate, failed share and p50/p95 latency (the server's, the
// client's for an uninstrumented peer); per node the rate and failed
// share of the requests it serves, the sums over its incoming edges.
// Nodes are services and virtual nodes (a database, an uninstrumented
// peer, "user" for a root span's caller). Drawn as an SVG graph in layers
// from left to right (layout), nodes colored by their error ratio, edges
// as thick as their rate, and as a table of the edges. A service links to
// the traces page's search for it, which shows its RED panels. The URL
// holds range, end and focus (a node whose edges are highlighted).
import { get, latest } from "../api.js";
import { h, clear, alertBox, markReady, params } from "../dom.js";
import { micros, formatDuration } from "../format.js";
import { pct, rateText } from "../red.js";
import { rangePicker } from "../timerange.js";

const G = "traces_service_graph_request";
const TYPES = { "": "request", database: "database", messaging_system: "messaging", virtual_node: "virtual node" };
const KINDS = { database: "database", user: "user", peer: "not instrumented" };

// queries are the PromQL of the map over a window r ("3600s").
export function queries(r) {
  const by = "client, server, connection_type";
  const lat = (q) => `histogram_quantile(${q}, sum by (client, server, le) (` +
    `rate(${G}_server_seconds_bucket{connection_type!="virtual_node"}[${r}]) or ` +
    `rate(${G}_server_seconds_bucket{connection_type="virtual_node", client="user"}[${r}]) or ` +
    `rate(${G}_client_seconds_bucket{connection_type="virtual_node", client!="user"}[${r}])))`;
  return {
    total: `sum by (${by}) (rate(${G}_total[${r}]))`,
    failed: `sum by (${by}) (rate(${G}_failed_total[${r}]))`,
    p50: lat(0.5),
    p95: lat(0.95),
  };
}

const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
const valueOf = (s) => parseFloat(s.value ? s.value[1] : NaN);
const secs = (v) => (Number.isFinite(v) ? micros(v * 1e6) : "–");

// model reads the answers into edges (sorted by client, server; those
// without calls in the range left out) and nodes by name. A node is a
// service when an edge has its spans: both ends of a request or
// messaging edge, a database edge's client, a virtual-node edge's end
// other than the virtual one ("user" as a client, else the server).
function model(ans) {
  const key = (m) => m.client + "\u0000" + m.server;
  const edges = new Map();
  for (const s of ans.total) {
    const m = s.metric, v = valueOf(s);
    if (!m.client || !m.server || !(v > 0)) continue;
    let e = edges.get(key(m));
    if (!e) edges.set(key(m), (e = { client: m.client, server: m.server, types: new Set(), rate: 0, failed: 0, p50: NaN, p95: NaN }));
    e.rate += v;
    e.types.add(m.connection_type || "");
  }
  for (const s of ans.failed) {
    const e = edges.get(key(s.metric)), v = valueOf(s);
    if (e && Number.isFinite(v)) e.failed += v;
  }
  for (const q of ["p50", "p95"]) {
    for (const s of ans[q]) {
      const e = edges.get(key(s.metric));
      if (e) e[q] = valueOf(s);
    }
  }
  const nodes = new Map();
  const node = (name) => {
    let n = nodes.get(name);
    if (!n) nodes.set(name, (n = { name, in: 0, out: 0, failed: 0, service: false, db: false, user: false }));
    return n;
  };
  const list = [...edges.values()].sort((a, b) => cmp(a.client, b.client) || cmp(a.server, b.server));
  for (const e of list) {
    const c = node(e.client), s = node(e.server);
    c.out += e.rate;
    s.in += e.rate;
    s.failed += Math.min(e.failed, e.rate);
    for (const t of e.types) {
      if (t === "database") {
        c.service = s.db = true;
      } else if (t === "virtual_node") {
        if (e.client === "user") s.service = c.user = true;
        else c.service = true;
      } else {
        c.service = s.service = true;
      }
    }
  }
  for (const n of nodes.values()) {
    n.kind = n.service ? "service" : n.db ? "database" : n.user ? "user" : "peer";
    n.ratio = n.in > 0 ? n.failed / n.in : NaN;
  }
  return { edges: list, nodes };
}

// layout places the nodes in layers, left to right, the same way for the
// same graph: a node's layer is the longest path to it from a root (a
// node no one calls, such as "user") over the edges that close no cycle
// (those a depth-first search from the roots, in name order, finds going
// back); then sweeps order each layer by the mean position of the nodes'
// callers, then of their callees (ties by name).
export function layout(names, edges) {
  const succ = new Map(names.map((n) => [n, []])), pred = new Map(names.map((n) => [n, []]));
  for (const e of edges) {
    if (e.client === e.server) continue;
    succ.get(e.client).push(e.server);
    pred.get(e.server).push(e.client);
  }
  for (const l of succ.values()) l.sort(cmp);
  const state = new Map(), back = new Set();
  const dfs = (n) => {
    state.set(n, 1);
    for (const m of succ.get(n)) {
      if (state.get(m) === 1) back.add(n + "\u0000" + m);
      else if (!state.has(m)) dfs(m);
    }
    state.set(n, 2);
  };
  for (const n of [...names.filter((n) => !pred.get(n).length), ...names]) if (!state.has(n)) dfs(n);
  const fwd = (a, b) => !back.has(a + "\u0000" + b);
  const indeg = new Map(names.map((n) => [n, pred.get(n).filter((p) => fwd(p, n)).length]));
  const layer = new Map();
  const queue = names.filter((n) => indeg.get(n) === 0);
  for (const n of queue) layer.set(n, 0);
  for (let i = 0; i < queue.length; i++) {
    const n = queue[i];
    for (const m of succ.get(n)) {
      if (!fwd(n, m)) continue;
      layer.set(m, Math.max(layer.get(m) ?? 0, layer.get(n) + 1));
      indeg.set(m, indeg.get(m) - 1);
      if (indeg.get(m) === 0) queue.push(m);
    }
  }
  const layers = Array.from({ length: Math.max(0, ...layer.values()) + 1 }, () => []);
  for (const n of names) layers[layer.get(n)].push(n);
  const pos = new Map();
  const place = (l) => l.forEach((n, i) => pos.set(n, (i + 0.5) / l.length));
  layers.forEach(place);
  const mean = (ns) => (ns.length ? ns.reduce((a, n) => a + pos.get(n), 0) / ns.length : null);
  for (let pass = 0; pass < 4; pass++) {
    const down = pass % 2 === 0;
    for (const l of down ? layers.slice(1) : layers.slice(0, -1).reverse()) {
      const k = new Map(l.map((n) => [n, mean((down ? pred : succ).get(n)) ?? pos.get(n)]));
      l.sort((a, b) => k.get(a) - k.get(b) || cmp(a, b));
      place(l);
    }
  }
  return { layers, layer, back };
}

// The drawing's sizes: node width and height, the distance between
// layers and between the nodes of a layer.
const W = 190, H = 46, COL = 300, ROW = 74;

const NS = "http://www.w3.org/2000/svg";

// s builds an SVG element: attributes, then children (nodes or text).
function s(tag, attrs, ...kids) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v != null && v !== false) el.setAttribute(k, v);
  for (const c of kids.flat()) if (c != null && c !== false) el.append(c instanceof Node ? c : String(c));
  return el;
}

// fitText shortens the nodes' texts (with "…") to their box.
function fitText(svg) {
  for (const t of svg.querySelectorAll(".node text")) {
    while (t.getComputedTextLength() > W - 22 && t.textContent.length > 2) t.textContent = t.textContent.slice(0, -2) + "…";
  }
}

// errClass is a node's or edge's color class by its error ratio.
const errClass = (r) => (!Number.isFinite(r) ? "e-none" : r === 0 ? "e-ok" : r < 0.05 ? "e-warn" : "e-err");

export async function render(main) {
  const range = rangePicker({ range: params.get("range", "1h"), end: params.get("end"), onChange: () => run(true) });
  let focus = params.get("focus");
  const info = h("span.muted.map-info");
  const err = h("div");
  const graph = h("div.map-wrap");
  const legendEl = h("div.map-legend", null,
    [["e-ok", "no errors"], ["e-warn", "errors under 5%"], ["e-err", "errors 5% or more"], ["e-none", "no requests served"]]
      .map(([c, t]) => h("span", null, h("span.swatch", { class: c }), t)),
    h("span", null, h("span.swatch.virtual"), "virtual node: a database, an uninstrumented peer, the user"),
    h("span", null, "edge width: call rate; labels: calls a second, minute or hour, and the failed share"));
  const table = h("div");
  const focusChip = focus ? h("span.label-chip.focus-chip", null, "focus: " + focus, " ", h("button.link", {
    title: "Highlight no service", "aria-label": "Clear the focus",
    onclick: () => {
      focus = "";
      focusChip.remove();
      run(false);
    },
  }, "✕")) : null;
  clear(main,
    h("div.panel-head", null, h("h1", null, "Service map"), info, h("span.spacer"), focusChip),
    h("section.panel.query-panel", null, h("div.row", null, range.el)),
    err,
    h("section.panel.map-panel", null, graph, legendEl),
    h("section.panel", null, h("div.panel-head", null, h("h2", null, "Calls"),
      h("span.muted", null, "p50 and p95: the server's latency (the client's for an uninstrumented peer)")), table));
  const once = latest();

  // tracesURL is the traces page's search for service over the range.
  const tracesURL = (service) => {
    const q = { service };
    if (range.end()) {
      const w = range.window();
      Object.assign(q, { lookback: "custom", start: String(Math.floor(w.start * 1000)), end: String(Math.ceil(w.end * 1000)) });
    } else {
      q.lookback = formatDuration(range.range());
    }
    return "/traces?" + new URLSearchParams(q);
  };
  const writeURL = (push) => params.set({ range: range.rangeText(), end: range.end() || "", focus }, push);

  async function run(push) {
    writeURL(push);
    const w = range.window();
    const r = Math.max(1, Math.round((w.end - w.start) / 1000)) + "s";
    const q = queries(r);
    const keys = Object.keys(q);
    clear(info, "Loading…");
    const began = performance.now();
    try {
      const answers = await once((signal) => Promise.all(keys.map((k) => get("/api/v1/query", { query: q[k], time: w.end / 1000 }, { signal }))));
      if (!answers) return;
      const ans = {};
      keys.forEach((k, i) => (ans[k] = (answers[i].data && answers[i].data.result) || []));
      clear(err);
      draw(model(ans), w, Math.round(performance.now() - began));
    } catch (e) {
      clear(info);
      clear(err, alertBox(e));
      clear(graph);
      clear(table);
    }
    markReady();
  }

  function draw(m, w, took) {
    const names = [...m.nodes.keys()].sort(cmp);
    const services = [...m.nodes.values()].filter((n) => n.kind === "service").length;
    clear(info, `${services} service${services === 1 ? "" : "s"}, ${names.length - services} virtual node${names.length - services === 1 ? "" : "s"}, ` +
      `${m.edges.length} edge${m.edges.length === 1 ? "" : "s"} · rates over ${formatDuration(w.end - w.start)} · ${took} ms`);
    if (!m.edges.length) {
      clear(graph, h("p.empty.map-empty", null, "No calls between services in this range. The service graph is made from spans as they arrive " +
        "(trace_metrics in the configuration, on by default where traces and metrics are stored): a client span and the server span it calls make an edge."));
      clear(table);
      return;
    }
    const svg = svgOf(m, names);
    clear(graph, svg);
    fitText(svg);
    clear(table, h("table.edge-table", null,
      h("thead", null, h("tr", null, h("th", null, "client"), h("th", null, "server"), h("th", null, "type"),
        h("th.num", null, "rate"), h("th.num", null, "errors"), h("th.num", null, "p50"), h("th.num", null, "p95"))),
      h("tbody", null, m.edges.map((e) => {
        const ratio = e.rate > 0 ? Math.min(1, e.failed / e.rate) : NaN;
        const types = [...e.types].sort(cmp);
        return h("tr.edge-row", { dataset: { client: e.client, server: e.server, type: types.join(","), rate: String(e.rate), error: String(ratio) } },
          h("td", null, nodeName(m.nodes.get(e.client))), h("td", null, nodeName(m.nodes.get(e.server))),
          h("td", null, types.map((t) => TYPES[t] || t).join(", ")),
          h("td.num", null, rateText(e.rate)), h("td.num", { class: ratio > 0 ? "error" : "" }, pct(ratio)),
          h("td.num", null, secs(e.p50)), h("td.num", null, secs(e.p95)));
      }))));
  }

  // nodeName is a node's name in the table: a service's a link to its traces.
  const nodeName = (n) => n.kind === "service"
    ? h("a", { href: tracesURL(n.name), title: `Search ${n.name}'s traces` }, n.name)
    : [n.name, " ", h("span.badge", null, KINDS[n.kind])];

  function svgOf(m, names) {
    const { layers, back } = layout(names, m.edges);
    const most = Math.max(...layers.map((l) => l.length));
    const xy = new Map();
    layers.forEach((l, li) => l.forEach((n, i) => xy.set(n, { x: li * COL, y: ((most - l.length) * ROW) / 2 + i * ROW })));
    // The drawing's bounds: the nodes' boxes and the edges' control points.
    let x0 = 0, y0 = 0, x1 = (layers.length - 1) * COL + W, y1 = (most - 1) * ROW + H;
    const grow = (...pts) => {
      for (let i = 0; i < pts.length; i += 2) {
        x0 = Math.min(x0, pts[i]), x1 = Math.max(x1, pts[i]);
        y0 = Math.min(y0, pts[i + 1]), y1 = Math.max(y1, pts[i + 1]);
      }
    };
    const maxRate = Math.max(...m.edges.map((e) => e.rate));
    const edgeEls = [];
    const edgeGroup = s("g", { class: "edges" }), labelGroup = s("g", { class: "edge-labels" });
    for (const e of m.edges) {
      const a = xy.get(e.client), b = xy.get(e.server);
      let p; // the cubic's points
      if (e.client === e.server) {
        const x = a.x + W / 2;
        p = [x + 18, a.y, x + 46, a.y - 34, x - 46, a.y - 34, x - 18, a.y];
      } else if (!back.has(e.client + "\u0000" + e.server) && b.x > a.x) {
        const dx = (b.x - a.x - W) / 2;
        p = [a.x + W, a.y + H / 2, a.x + W + dx, a.y + H / 2, b.x - dx, b.y + H / 2, b.x, b.y + H / 2];
      } else { // backwards: out of the client's right, around below, into the server's left
        const y = Math.max(a.y, b.y) + H + ROW / 2;
        p = [a.x + W, a.y + H / 2, a.x + W + COL / 3, y, b.x - COL / 3, y, b.x, b.y + H / 2];
      }
      grow(...p);
      const ratio = Math.min(1, e.failed / e.rate);
      const failing = ratio > 0;
      const width = 1.5 + 4.5 * Math.sqrt(e.rate / maxRate);
      const types = [...e.types].map((t) => TYPES[t] || t).join(", ");
      const text = `${e.client} → ${e.server} (${types}): ${rateText(e.rate)}, ${pct(ratio)} failed, p50 ${secs(e.p50)}, p95 ${secs(e.p95)}`;
      const path = s("path", {
        class: "edge" + (failing ? " err" : ""), d: `M${p[0]},${p[1]} C${p[2]},${p[3]} ${p[4]},${p[5]} ${p[6]},${p[7]}`,
        "stroke-width": width.toFixed(2), "marker-end": `url(#wh-arrow${failing ? "-err" : ""})`, "data-client": e.client, "data-server": e.server,
      }, s("title", null, text));
      // The label at the curve's middle (t = 1/2).
      const mx = (p[0] + 3 * p[2] + 3 * p[4] + p[6]) / 8, my = (p[1] + 3 * p[3] + 3 * p[5] + p[7]) / 8;
      const label = s("text", { class: "edge-label", x: mx.toFixed(1), y: (my - 6).toFixed(1) }, rateText(e.rate),
        failing ? s("tspan", { class: "err", x: mx.toFixed(1), dy: 18 }, `${pct(ratio)} failed`) : null);
      edgeGroup.append(path);
      labelGroup.append(label);
      edgeEls.push({ e, els: [path, label] });
    }
    const nodeEls = new Map();
    const nodeGroup = s("g", { class: "nodes" });
    for (const name of names) {
      const n = m.nodes.get(name), { x, y } = xy.get(name);
      const kind = KINDS[n.kind];
      const stats = (n.in > 0 ? `${rateText(n.in)} · ${pct(n.ratio)} err` : `${rateText(n.out)} out`) + (kind && n.kind !== "user" ? ` · ${kind}` : "");
      const text = `${name}${kind ? ` (${kind})` : ""}: ` + (n.in > 0 ? `serves ${rateText(n.in)}, ${pct(n.ratio)} failed` : `calls ${rateText(n.out)}`) +
        (n.kind === "service" ? "; open its traces" : "");
      const attrs = { class: `node ${errClass(n.ratio)}${n.kind === "service" ? "" : " virtual"}`, "data-node": name, "data-kind": n.kind,
        "data-rate": String(n.in), "data-error": String(n.ratio) };
      const kids = [s("title", null, text), s("rect", { x, y, width: W, height: H, rx: 7 }),
        s("text", { class: "name", x: x + 12, y: y + 19 }, name),
        s("text", { class: "stats", x: x + 12, y: y + 36 }, stats)];
      const el = n.kind === "service" ? s("a", { ...attrs, href: tracesURL(name), "aria-label": text }, kids) : s("g", attrs, kids);
      el.addEventListener("mouseenter", () => mark(name));
      el.addEventListener("mouseleave", () => mark(focus));
      el.addEventListener("focus", () => mark(name));
      el.addEventListener("blur", () => mark(focus));
      nodeGroup.append(el);
      nodeEls.set(name, el);
    }
    const pad = 8;
    x0 -= pad, y0 -= pad, x1 += pad, y1 += pad;
    const svg = s("svg", {
      class: "service-map", viewBox: `${x0} ${y0} ${x1 - x0} ${y1 - y0}`, width: Math.ceil(x1 - x0), height: Math.ceil(y1 - y0),
      role: "group", "aria-label": `Service map: ${names.length} nodes and ${m.edges.length} edges, listed in the table below`,
    },
    s("defs", null, ["", "-err"].map((sfx) => s("marker", {
      id: "wh-arrow" + sfx, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 9, markerHeight: 9, markerUnits: "userSpaceOnUse", orient: "auto",
    }, s("path", { class: "arrow" + (sfx ? " err" : ""), d: "M0,0 L10,5 L0,10 z" })))),
    edgeGroup, nodeGroup, labelGroup);

    // mark highlights a node, its edges and its neighbours (none: all).
    function mark(name) {
      const on = Boolean(name && nodeEls.has(name));
      svg.classList.toggle("dim", on);
      for (const el of svg.querySelectorAll(".hi")) el.classList.remove("hi");
      if (!on) return;
      nodeEls.get(name).classList.add("hi");
      for (const { e, els } of edgeEls) {
        if (e.client !== name && e.server !== name) continue;
        for (const el of els) el.classList.add("hi");
        nodeEls.get(e.client).classList.add("hi");
        nodeEls.get(e.server).classList.add("hi");
      }
    }
    mark(focus);
    return svg;
  }

  await run(false);
}
