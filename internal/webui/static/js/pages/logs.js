// The log browser: a LogQL query over Loki's API
// (/loki/api/v1/query_range), a volume histogram by level above the
// lines, lines that open to their stream labels and structured metadata
// (with filters to add, and a link to the trace of a line that has one).
// Beside the lines, the tabs Logs Drilldown has: the services by volume
// (/index/volume), the query's detected fields and their values
// (/detected_fields, /detected_field/{name}/values) and its patterns
// (/patterns), each with filters to add. A metric query is drawn as a
// graph.
import { get, latest } from "../api.js";
import { attachCompletion } from "../autocomplete.js";
import { timeChart, legend, colorOf, palette } from "../chart.js";
import { h, clear, alertBox, markReady, params } from "../dom.js";
import { labelsText, int, dateTime, bytes } from "../format.js";
import { complete, isMetricQuery, labelNames, labelValues, setContext } from "../logql.js";
import { rangePicker, autoStep } from "../timerange.js";

const LEVEL_COLORS = { fatal: "#8f1f2e", critical: "#8f1f2e", error: "#e02f44", warn: "#ff9830", warning: "#ff9830", info: "#73bf69", debug: "#5794f2", trace: "#b877d9", unknown: "#8e8e8e" };
const levelOf = (l) => {
  const v = String(l.detected_level || l.level || l.severity_text || "unknown").toLowerCase();
  return v === "warning" ? "warn" : v === "err" ? "error" : v;
};

export async function render(main) {
  const ta = h("textarea", { rows: 1, spellcheck: false, placeholder: '{service_name="checkout"} |= "timeout"  (Ctrl+Space completes)', "aria-label": "LogQL query" });
  ta.value = params.get("query");
  const grow = () => {
    ta.style.height = "auto";
    ta.style.height = Math.min(ta.scrollHeight + 2, 300) + "px";
  };
  ta.addEventListener("input", grow);
  const range = rangePicker({ range: params.get("range", "1h"), end: params.get("end"), onChange: () => run(true) });
  const limit = h("select", { "aria-label": "Line limit" }, [100, 500, 1000, 5000].map((n) => h("option", { value: n }, n + " lines")));
  limit.value = params.get("limit", "500");
  const direction = h("select", { "aria-label": "Order" }, h("option", { value: "backward" }, "newest first"), h("option", { value: "forward" }, "oldest first"));
  direction.value = params.get("direction", "backward");
  const wrap = h("input", { type: "checkbox", checked: params.get("wrap", "1") === "1" });
  const info = h("div.result-info");
  const volume = h("div.chart.volume");
  const insight = h("div.insight");
  const insightTabs = h("div.tabs");
  let insightTab = params.get("tab", "fields");
  let insightGen = 0; // the latest drawing of the insight panel
  let insightOf = null; // the query the insight panel is drawn for
  const out = h("div");
  const lines = h("div.log-lines");
  limit.addEventListener("change", () => run(true));
  direction.addEventListener("change", () => run(true));
  wrap.addEventListener("change", () => {
    lines.classList.toggle("nowrap", !wrap.checked);
    writeURL(false);
  });
  lines.classList.toggle("nowrap", !wrap.checked);
  clear(main, h("h1", null, "Logs"),
    h("section.panel.query-panel", null,
      h("div.row", null, h("div.editor", null, ta), h("button.primary", { onclick: () => run(true) }, "Run query")),
      h("div.row", null, range.el, h("label", null, "Limit", limit), h("label", null, "Order", direction),
        h("label", { style: { flexDirection: "row", alignItems: "center", gap: "4px", paddingBottom: "6px" } }, wrap, "wrap lines"))),
    h("section.panel", null, info, volume, insightTabs, insight, out));
  setContext(() => {
    const w = range.window();
    return { start: String(w.start * 1e6), end: String(w.end * 1e6) };
  });
  attachCompletion(ta, complete);
  ta.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      run(true);
    }
  });
  requestAnimationFrame(grow);

  const writeURL = (push) => params.set({
    query: ta.value.trim(), range: range.rangeText(), end: range.end() || "", limit: limit.value, direction: direction.value, wrap: wrap.checked ? "" : "0",
    tab: insightTab === "fields" ? "" : insightTab,
  }, push);
  const once = latest();
  let charts = [];
  let streamLabels = new Set();

  // A first query when none is given: the first service's lines.
  if (!ta.value.trim()) {
    try {
      const svcs = await labelValues("service_name");
      ta.value = svcs.length ? `{service_name=${JSON.stringify(svcs[0])}}` : "";
    } catch (e) {
      clear(out, alertBox(e));
    }
  }

  async function run(push) {
    const q = ta.value.trim();
    delete insight.dataset.query; // the panel is the last query's until this one draws it
    writeURL(push);
    for (const c of charts) c.destroy();
    charts = [];
    if (!q) {
      clear(info);
      clear(volume);
      clear(insight);
      clear(insightTabs);
      clear(out, h("p.empty", null, "No logs yet: send log records over OTLP, or write a query such as {service_name=\"api\"}."));
      markReady();
      return;
    }
    const w = range.window();
    const startNs = String(Math.floor(w.start) * 1e6), endNs = String(Math.ceil(w.end) * 1e6);
    clear(info, "Running…");
    const began = performance.now();
    try {
      await once(async (signal) => {
        if (isMetricQuery(q)) {
          const step = autoStep(w.end - w.start);
          const r = await get("/loki/api/v1/query_range", { query: q, start: startNs, end: endNs, step }, { signal });
          drawMetric(r.data, w, began);
          return;
        }
        const step = autoStep(w.end - w.start, 80);
        const [logs, vol, names] = await Promise.all([
          get("/loki/api/v1/query_range", { query: q, start: startNs, end: endNs, limit: limit.value, direction: direction.value }, { signal }),
          get("/loki/api/v1/query_range", { query: `sum by (detected_level) (count_over_time(${q} [${step}s]))`, start: startNs, end: endNs, step }, { signal })
            .catch((e) => ({ error: e })),
          labelNames().catch(() => []),
        ]);
        streamLabels = new Set(names);
        drawVolume(vol, w, step);
        drawLines(logs.data, began);
        drawInsight(q, startNs, endNs, w, signal);
      });
    } catch (e) {
      clear(info);
      clear(volume);
      clear(out, alertBox(e));
    }
    markReady();
  }

  function drawVolume(vol, w, step) {
    clear(volume);
    if (vol.error || !vol.data || !vol.data.result.length) return;
    const start = Math.floor(w.start / 1000 / step) * step;
    const xs = [];
    for (let t = start; t <= w.end / 1000; t += step) xs.push(t);
    const idx = new Map(xs.map((x, i) => [x, i]));
    const order = ["fatal", "critical", "error", "warn", "info", "debug", "trace", "unknown"];
    const res = [...vol.data.result].sort((a, b) => {
      const ia = order.indexOf(levelOf(a.metric)), ib = order.indexOf(levelOf(b.metric));
      return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib);
    });
    const ys = res.map((s) => {
      const row = new Array(xs.length).fill(null);
      for (const [t, v] of s.values) {
        const i = idx.get(Math.round(t / step) * step) ?? idx.get(Math.floor(t / step) * step);
        if (i != null) row[i] = (row[i] || 0) + parseFloat(v);
      }
      return row;
    });
    charts.push(timeChart(volume, {
      height: 140, bars: true, stacked: true, xRange: [w.start / 1000, w.end / 1000], yFmt: (v) => int(v),
      series: res.map((s) => ({ label: levelOf(s.metric), color: LEVEL_COLORS[levelOf(s.metric)] || colorOf(levelOf(s.metric)) })),
      data: [xs, ...ys],
      onSelect: (from, to) => {
        range.set((to - from) * 1000, to * 1000);
        run(true);
      },
    }));
  }

  function drawMetric(data, w, began) {
    clear(volume);
    clear(insight);
    clear(insightTabs);
    const res = data.result || [];
    clear(info, `${res.length} series, ${Math.round(performance.now() - began)} ms`);
    if (data.resultType !== "matrix" || !res.length) {
      clear(out, h("p.empty", null, "No data in this range."));
      return;
    }
    const xsSet = new Set();
    for (const s of res) for (const [t] of s.values) xsSet.add(t);
    const xs = [...xsSet].sort((a, b) => a - b);
    const idx = new Map(xs.map((x, i) => [x, i]));
    const labels = res.map((s) => labelsText(s.metric));
    const holder = h("div.chart");
    clear(out, holder);
    const c = timeChart(holder, {
      height: 320, xRange: [w.start / 1000, w.end / 1000],
      series: labels.map((l, i) => ({ label: l, color: palette[i % palette.length] })),
      data: [xs, ...res.map((s) => {
        const row = new Array(xs.length).fill(null);
        for (const [t, v] of s.values) row[idx.get(t)] = parseFloat(v);
        return row;
      })],
      onSelect: (from, to) => {
        range.set((to - from) * 1000, to * 1000);
        run(true);
      },
    });
    charts.push(c);
    out.append(legend(c, labels));
  }

  function drawLines(data, began) {
    const entries = [];
    for (const s of data.result || []) {
      for (const [ts, line] of s.values) entries.push({ ts, line, labels: s.stream });
    }
    // Nanosecond strings: by length, then as text, is by value.
    const byTime = (a, b) => a.ts.length - b.ts.length || (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0);
    const fwd = direction.value === "forward";
    entries.sort((a, b) => (fwd ? byTime(a, b) : byTime(b, a)));
    const keys = new Set();
    for (const e of entries) for (const k of Object.keys(e.labels)) if (!streamLabels.has(k)) keys.add(k);
    setContext(null, [...keys].sort());
    const full = entries.length >= Number(limit.value);
    clear(info, `${int(entries.length)} line${entries.length === 1 ? "" : "s"}${full ? ` (the limit: narrow the range or raise the limit)` : ""}, ` +
      `${Math.round(performance.now() - began)} ms`);
    clear(lines, entries.map(lineRow));
    clear(out, entries.length ? lines : h("p.empty", null, "No lines in this range."));
  }

  // addStage appends a pipeline stage to the query and runs it.
  function addStage(stage) {
    ta.value = `${ta.value.trim()} ${stage}`;
    grow();
    run(true);
  }

  // drawInsight fills the tabs beside the lines: services by volume, the
  // query's fields, its patterns. Each loads when its tab opens.
  function drawInsight(q, startNs, endNs, w, signal) {
    insightOf = { q, startNs, endNs, w, signal };
    if (!insightTabs.children.length) {
      // The tabs, made once: a click draws the tab for the latest query.
      const tabs = [["fields", "Fields"], ["patterns", "Patterns"], ["services", "Services"]];
      clear(insightTabs, tabs.map(([name, label]) => h("button", { dataset: { tab: name }, onclick: () => showInsight(name) }, label)));
    }
    showInsight(insightTab);
  }

  async function showInsight(name) {
    const { q, startNs, endNs, w, signal } = insightOf;
    insightTab = name;
    writeURL(false);
    const gen = ++insightGen;
    delete insight.dataset.query;
    for (const b of insightTabs.children) b.classList.toggle("active", b.dataset.tab === name);
    clear(insight, h("p.note", null, "Loading…"));
    let content;
    try {
      if (name === "fields") content = await drawFields(q, startNs, endNs, signal);
      else if (name === "patterns") content = await drawPatterns(q, startNs, endNs, w, signal);
      else content = await drawServices(startNs, endNs, signal);
    } catch (e) {
      content = e.name === "AbortError" ? null : alertBox(e);
    }
    // A newer tab or query has the panel now.
    if (content && gen === insightGen && !signal.aborted) {
      clear(insight, content);
      insight.dataset.query = q;
      insight.dataset.tab = name;
    }
  }

  async function drawFields(q, startNs, endNs, signal) {
    const r = await get("/loki/api/v1/detected_fields", { query: q, start: startNs, end: endNs, line_limit: 1000 }, { signal });
    const fields = r.fields || [];
    if (!fields.length) return h("p.empty", null, "No fields in these lines.");
    const values = h("div.field-values");
    const pick = async (f) => {
      let v;
      try {
        v = await get(`/loki/api/v1/detected_field/${encodeURIComponent(f.label)}/values`, { query: q, start: startNs, end: endNs, line_limit: 1000 }, { signal });
      } catch (e) {
        if (e.name !== "AbortError") clear(values, alertBox(e)); // else a newer query replaced this one
        return;
      }
      // A parsed field needs its parser in the query before the filter.
      const ps = f.parsers || [];
      const parser = ps.some((p) => new RegExp(`\\|\\s*${p}\\b`).test(ta.value)) ? "" : ps[0] || "";
      const filter = (val, op) => addStage(`${parser ? "| " + parser + " " : ""}| ${f.label}${op}${JSON.stringify(val)}`);
      clear(values, h("h3", null, `${f.label} (${int(f.cardinality)} value${f.cardinality === 1 ? "" : "s"})`),
        h("table.kv", null, h("tbody", null, (v.values || []).slice(0, 50).map((val) => h("tr.field-value", null, h("td", null, val),
          h("td", null, h("button", { title: `Only lines with ${f.label}=${val}`, onclick: () => filter(val, "=") }, "+"),
            h("button", { title: `Leave out lines with ${f.label}=${val}`, onclick: () => filter(val, "!=") }, "−")))))));
    };
    return h("div.fields", { style: { display: "grid", gridTemplateColumns: "minmax(260px, 1fr) 2fr", gap: "0 24px" } },
      h("table.kv", null, h("tbody", null, fields.map((f) => h("tr.field", { dataset: { field: f.label }, style: { cursor: "pointer" }, onclick: () => pick(f) },
        h("td", null, f.label), h("td", null, `${f.type} · ${int(f.cardinality)} · ${(f.parsers || ["metadata"]).join(", ")}`))))),
      values);
  }

  async function drawPatterns(q, startNs, endNs, w, signal) {
    const step = autoStep(w.end - w.start, 40);
    const r = await get("/loki/api/v1/patterns", { query: q, start: startNs, end: endNs, step: step + "s" }, { signal });
    const pats = (r.data || []).slice(0, 100);
    if (!pats.length) return h("p.empty", null, "No patterns in these lines.");
    const total = (p) => p.samples.reduce((n, [, c]) => n + c, 0);
    return h("table.kv.patterns", null, h("tbody", null, pats.map((p) => h("tr.pattern", { dataset: { pattern: p.pattern } },
      h("td", null, int(total(p))),
      h("td", null, p.pattern,
        h("button", { title: "Only lines of this pattern", onclick: () => addStage(`|> ${JSON.stringify(p.pattern)}`) }, "+"),
        h("button", { title: "Leave out lines of this pattern", onclick: () => addStage(`!> ${JSON.stringify(p.pattern)}`) }, "−"))))));
  }

  async function drawServices(startNs, endNs, signal) {
    const r = await get("/loki/api/v1/index/volume", { query: '{service_name=~".+"}', start: startNs, end: endNs, limit: 50, targetLabels: "service_name" }, { signal });
    const res = (r.data && r.data.result) || [];
    if (!res.length) return h("p.empty", null, "No services in this range.");
    const most = Math.max(...res.map((s) => parseFloat(s.value[1])));
    return h("table.kv.services", null, h("tbody", null, res.map((s) => {
      const svc = s.metric.service_name || "";
      const v = parseFloat(s.value[1]);
      return h("tr.service", { dataset: { service: svc }, style: { cursor: "pointer" }, onclick: () => {
        ta.value = `{service_name=${JSON.stringify(svc)}}`;
        grow();
        run(true);
      } }, h("td", null, svc), h("td", null, h("span", { style: { display: "inline-block", width: Math.max(2, 200 * v / most) + "px", height: "8px", background: "var(--accent)", marginRight: "8px" } }), bytes(v)));
    })));
  }

  function lineRow(e) {
    const lvl = levelOf(e.labels);
    const ms = Number(BigInt(e.ts) / 1000000n);
    const traceID = e.labels.trace_id || e.labels.traceid || e.labels.traceID;
    const row = h("div.log-line", { dataset: traceID ? { ts: e.ts, traceId: traceID } : { ts: e.ts } },
      h("span.lvl.lvl-" + (LEVEL_COLORS[lvl] ? lvl : "unknown")),
      h("span.ts", { title: e.ts + " ns" }, dateTime(ms)),
      h("span.lvl-text.lvl-" + (LEVEL_COLORS[lvl] ? lvl : "unknown"), null, lvl),
      h("span.svc", { title: e.labels.service_name || "" }, e.labels.service_name || ""),
      h("span.msg", null, e.line));
    row.addEventListener("click", () => {
      if (row.detail) {
        row.detail.remove();
        row.detail = null;
        row.classList.remove("open");
        return;
      }
      row.detail = lineDetail(e);
      row.after(row.detail);
      row.classList.add("open");
    });
    return row;
  }

  function lineDetail(e) {
    const entries = Object.entries(e.labels).sort(([a], [b]) => (a < b ? -1 : 1));
    const stream = entries.filter(([k]) => streamLabels.has(k));
    const meta = entries.filter(([k]) => !streamLabels.has(k));
    const traceID = e.labels.trace_id || e.labels.traceid || e.labels.traceID;
    const filter = (k, v, op) => {
      ta.value = `${ta.value.trim()} | ${k}${op}${JSON.stringify(v)}`;
      grow();
      run(true);
    };
    const table = (rows) => h("table.kv", null, h("tbody", null, rows.map(([k, v]) => h("tr", null, h("td", null, k),
      h("td", null, v, h("button", { title: `Only lines with ${k}=${v}`, onclick: () => filter(k, v, "=") }, "+"),
        h("button", { title: `Leave out lines with ${k}=${v}`, onclick: () => filter(k, v, "!=") }, "−"))))));
    return h("div.log-detail", null,
      traceID ? h("p", null, h("a.trace-link", { href: "/trace/" + encodeURIComponent(traceID) }, "View trace ", h("code", null, traceID))) : null,
      h("div", { class: "cols", style: { display: "grid", gridTemplateColumns: "repeat(auto-fill, minmax(420px, 1fr))", gap: "0 24px" } },
        h("div", null, h("h3", null, `Stream labels (${stream.length})`), table(stream)),
        h("div", null, h("h3", null, `Structured metadata (${meta.length})`), table(meta))),
      h("p.note", null, "Timestamp ", h("code", null, e.ts), " ns · ", new Date(Number(BigInt(e.ts) / 1000000n)).toISOString()));
  }

  await run(false);
}
