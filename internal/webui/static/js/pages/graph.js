// The metrics explorer: PromQL queries with completion, drawn as a graph
// (/api/v1/query_range) or listed as a table (/api/v1/query), over a time
// range with a step. Several panels; the URL holds them as Prometheus'
// own UI does (g0.expr, g0.tab, g0.range_input, g0.end_input,
// g0.step_input, g0.stacked), so its links open here too.
import { get, latest } from "../api.js";
import { attachCompletion } from "../autocomplete.js";
import { timeChart, legend, palette } from "../chart.js";
import { h, clear, alertBox, markReady } from "../dom.js";
import { labelsText, num, dateTime } from "../format.js";
import { complete, loadNames } from "../promql.js";
import { rangePicker, autoStep } from "../timerange.js";

const MAX_SERIES = 200;

// readPanels reads the panels of the URL (at least one).
function readPanels() {
  const q = new URLSearchParams(location.search);
  const out = [];
  for (let i = 0; i < 20; i++) {
    const p = (k) => q.get(`g${i}.${k}`);
    if (p("expr") == null) continue;
    let tab = p("tab") || "graph";
    if (tab === "0") tab = "graph";
    if (tab === "1") tab = "table";
    const end = p("end_input") ? Date.parse(p("end_input")) : NaN;
    out.push({
      expr: p("expr") || "", tab, range: p("range_input") || "1h", end: Number.isNaN(end) ? "" : end,
      step: p("step_input") || "", stacked: p("stacked") === "1",
    });
  }
  return out.length ? out : [{ expr: "", tab: "graph", range: "1h", end: "", step: "", stacked: false }];
}

export async function render(main) {
  const panels = [];
  const list = h("div");
  const writeURL = () => {
    const q = new URLSearchParams();
    panels.forEach((p, i) => {
      const s = p.state();
      q.set(`g${i}.expr`, s.expr);
      q.set(`g${i}.tab`, s.tab);
      q.set(`g${i}.range_input`, s.range);
      if (s.end) q.set(`g${i}.end_input`, new Date(s.end).toISOString());
      if (s.step) q.set(`g${i}.step_input`, s.step);
      if (s.stacked) q.set(`g${i}.stacked`, "1");
    });
    const url = "/graph?" + q;
    if (url !== location.pathname + location.search) history.replaceState(null, "", url);
  };
  const add = (init) => {
    const p = queryPanel(init, writeURL, () => {
      panels.splice(panels.indexOf(p), 1);
      p.el.remove();
      writeURL();
    });
    panels.push(p);
    list.append(p.el);
    return p;
  };
  clear(main, h("h1", null, "Metrics"), list,
    h("button", { onclick: () => add({ expr: "", tab: "graph", range: "1h", end: "", step: "" }).focus() }, "Add query"));
  loadNames().catch(() => {}); // warm the completion list
  const runs = readPanels().map((init) => add(init)).map((p) => p.run());
  await Promise.all(runs);
}

// queryPanel is one query with its controls and result.
function queryPanel(init, changed, remove) {
  const ta = h("textarea", { rows: 1, spellcheck: false, placeholder: "PromQL expression, e.g. rate(http_requests_total[5m])  (Ctrl+Space completes)", "aria-label": "PromQL expression" });
  ta.value = init.expr;
  const grow = () => {
    ta.style.height = "auto";
    ta.style.height = Math.min(ta.scrollHeight + 2, 300) + "px";
  };
  ta.addEventListener("input", grow);
  const runBtn = h("button.primary", { onclick: () => run() }, "Execute");
  const range = rangePicker({ range: init.range, end: init.end, onChange: () => run() });
  const step = h("input", { type: "text", size: 6, placeholder: "auto", value: init.step, title: "Resolution: seconds or a duration (empty: about 250 points)", "aria-label": "Step" });
  step.addEventListener("change", () => run());
  const stacked = h("input", { type: "checkbox", checked: init.stacked, onchange: () => run() });
  let tab = init.tab === "table" ? "table" : "graph";
  const tabs = h("div.tabs", null, ["graph", "table"].map((t) => h("button", {
    class: t === tab ? "active" : "", dataset: { tab: t },
    onclick: () => {
      tab = t;
      for (const b of tabs.children) b.classList.toggle("active", b.dataset.tab === t);
      graphOpts.hidden = t !== "graph";
      run();
    },
  }, t === "graph" ? "Graph" : "Table")));
  const graphOpts = h("span.row", { hidden: tab !== "graph" },
    h("label", null, "Step", step),
    h("label", { style: { flexDirection: "row", alignItems: "center", gap: "4px", paddingBottom: "6px" } }, stacked, "stacked"));
  const info = h("div.result-info");
  const out = h("div");
  const el = h("section.panel.query-panel", null,
    h("div.row", null,
      h("div.editor", null, ta), runBtn, h("button", { title: "Remove this query", onclick: remove }, "✕")),
    tabs,
    h("div.row", null, range.el, graphOpts),
    info, out);
  attachCompletion(ta, complete);
  ta.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      run();
    }
  });
  requestAnimationFrame(grow);
  const once = latest();
  let chart = null;

  async function run() {
    changed();
    const expr = ta.value.trim();
    if (!expr) {
      clear(out, h("p.empty", null, "Enter an expression and press Enter."));
      clear(info);
      markReady();
      return;
    }
    const began = performance.now();
    clear(info, "Running…");
    try {
      await once(async (signal) => {
        if (tab === "graph") await drawGraph(expr, signal, began);
        else await drawTable(expr, signal, began);
      });
    } catch (e) {
      if (chart) chart.destroy();
      chart = null;
      clear(info);
      clear(out, alertBox(e));
    }
    markReady();
  }

  async function drawGraph(expr, signal, began) {
    const w = range.window();
    let stepS = step.value.trim() ? step.value.trim() : String(autoStep(w.end - w.start));
    const r = await get("/api/v1/query_range", { query: expr, start: w.start / 1000, end: w.end / 1000, step: stepS }, { signal });
    const data = r.data;
    if (data.resultType !== "matrix") throw new Error("expected a range vector, got " + data.resultType);
    const all = data.result;
    const res = all.slice(0, MAX_SERIES);
    const stepSec = Number(stepS) || parseFloat(stepS);
    // One x per step over the range: every series aligned on it.
    const stepMs = Number.isFinite(Number(stepS)) ? Number(stepS) * 1000 : null;
    const xsSet = new Set();
    for (const s of res) for (const [t] of s.values) xsSet.add(t);
    let xs = [...xsSet].sort((a, b) => a - b);
    if (!xs.length && stepMs) xs = [w.start / 1000, w.end / 1000];
    const idx = new Map(xs.map((x, i) => [x, i]));
    const ys = res.map((s) => {
      const row = new Array(xs.length).fill(null);
      for (const [t, v] of s.values) row[idx.get(t)] = parseFloat(v);
      return row;
    });
    const points = res.reduce((a, s) => a + s.values.length, 0);
    clear(info, `${all.length} series, ${points} points, step ${stepS}${Number.isFinite(stepSec) ? "s" : ""}, ${Math.round(performance.now() - began)} ms`,
      all.length > MAX_SERIES ? h("span.error", null, ` — drawing the first ${MAX_SERIES}`) : null);
    if (!res.length) {
      if (chart) chart.destroy();
      chart = null;
      clear(out, h("p.empty", null, "No data in this range."));
      return;
    }
    const labels = res.map((s) => labelsText(s.metric));
    const series = labels.map((l, i) => ({ label: l, color: palette[i % palette.length] }));
    if (chart) chart.destroy();
    const holder = h("div.chart");
    clear(out, holder);
    chart = timeChart(holder, {
      height: 320, series, data: [xs, ...ys], stacked: stacked.checked, xRange: [w.start / 1000, w.end / 1000],
      onSelect: (from, to) => {
        range.set((to - from) * 1000, to * 1000);
        run();
      },
    });
    out.append(legend(chart, labels));
  }

  async function drawTable(expr, signal, began) {
    const w = range.window();
    const params = { query: expr };
    if (range.end()) params.time = w.end / 1000;
    const r = await get("/api/v1/query", params, { signal });
    const d = r.data;
    if (chart) chart.destroy();
    chart = null;
    let rows = [];
    switch (d.resultType) {
      case "vector":
        rows = d.result.map((s) => [labelsText(s.metric), s.value ? s.value[1] : histText(s.histogram)]);
        break;
      case "matrix":
        rows = d.result.map((s) => [labelsText(s.metric), (s.values || []).map(([t, v]) => `${v} @${t}`).join("\n")]);
        break;
      case "scalar":
      case "string":
        rows = [["scalar", d.result[1]]];
        break;
    }
    clear(info, `${rows.length} result${rows.length === 1 ? "" : "s"} at ${dateTime(w.end)}, ${Math.round(performance.now() - began)} ms`);
    clear(out, rows.length
      ? h("div.scroll", { style: { maxHeight: "640px" } }, h("table.series-table", null,
        h("thead", null, h("tr", null, h("th", null, "series"), h("th.num", null, "value"))),
        h("tbody", null, rows.slice(0, 10000).map(([l, v]) => h("tr", null, h("td", null, l), h("td.num.mono", { style: { whiteSpace: "pre" } }, fmtValue(v)))))))
      : h("p.empty", null, "Empty result."));
  }

  return {
    el, run,
    focus() {
      ta.focus();
      return this;
    },
    state: () => ({ expr: ta.value.trim(), tab, range: range.rangeText(), end: range.end() || "", step: step.value.trim(), stacked: stacked.checked }),
  };
}

function fmtValue(v) {
  const f = Number(v);
  return typeof v === "string" && v !== "" && Number.isFinite(f) && !v.includes("\n") ? (Math.abs(f) >= 1e6 ? `${v} (${num(f)})` : v) : v;
}

function histText(hist) {
  if (!hist) return "";
  const [, hv] = hist;
  return `histogram: count ${hv.count}, sum ${hv.sum}`;
}
