// Trace search over Jaeger's HTTP API (/jaeger/api/...): service,
// operation, tags, durations, time range and limit; or, when the TraceQL
// box holds a query, over Tempo's (/tempo/api/search), with completion
// of scopes, attribute names and values. The traces found as a
// duration-over-time scatter and a list, each opening /trace/{id}; above
// them, for a search by service, the service's RED panels from the span
// metrics (red.js) with a link to the service map. The search's
// parameters are the URL's: service, operation, tags, lookback (any
// duration, or custom with start and end in µs), min/maxDuration, limit,
// q (TraceQL).
import { get, latest } from "../api.js";
import { attachCompletion } from "../autocomplete.js";
import * as traceql from "../traceql.js";
import { timeChart, colorOf } from "../chart.js";
import { h, clear, alertBox, markReady, params } from "../dom.js";
import { micros, dateTime, ago, parseDuration, formatDuration, int } from "../format.js";
import { summarize } from "../jaeger.js";
import { redPanels } from "../red.js";

const lookbacks = [["5m", "Last 5 minutes"], ["15m", "Last 15 minutes"], ["1h", "Last hour"], ["2h", "Last 2 hours"],
  ["6h", "Last 6 hours"], ["12h", "Last 12 hours"], ["24h", "Last 24 hours"], ["2d", "Last 2 days"], ["custom", "Custom range"]];
const LAST = "wirehouse.traces.service";

// parseTags reads "k=v k2=\"v w\"" (logfmt, as Jaeger's UI) into an object.
export function parseTags(s) {
  const out = {};
  const re = /\s*([^\s=]+)=(?:"((?:[^"\\]|\\.)*)"|(\S*))/gy;
  let m, at = 0;
  while ((m = re.exec(s))) {
    out[m[1]] = m[2] != null ? m[2].replace(/\\(.)/g, "$1") : m[3];
    at = re.lastIndex;
  }
  if (s.slice(at).trim()) throw new Error(`tags: cannot read "${s.slice(at).trim()}": write key=value, quoting values with spaces`);
  return out;
}

export async function render(main) {
  const f = {
    q: h("textarea", { name: "q", rows: 3, spellcheck: false, "aria-label": "TraceQL",
      placeholder: '{ resource.service.name = "frontend" } >> { status = error }' }, params.get("q")),
    service: h("select", { "aria-label": "Service", name: "service" }),
    operation: h("select", { "aria-label": "Operation", name: "operation" }, h("option", { value: "" }, "all")),
    tags: h("input", { type: "text", name: "tags", placeholder: 'http.response.status_code=500 error=true', value: params.get("tags") }),
    lookback: h("select", { name: "lookback" }, lookbacks.map(([v, t]) => h("option", { value: v }, t))),
    start: h("input", { type: "datetime-local", step: 1, name: "start" }),
    end: h("input", { type: "datetime-local", step: 1, name: "end" }),
    minDuration: h("input", { type: "text", name: "minDuration", placeholder: "e.g. 100ms", value: params.get("minDuration") }),
    maxDuration: h("input", { type: "text", name: "maxDuration", placeholder: "e.g. 2s", value: params.get("maxDuration") }),
    limit: h("input", { type: "number", name: "limit", min: 1, max: 1500, value: params.get("limit", "20") }),
  };
  // A lookback of the URL not offered (the service map's range) is added.
  const lb = params.get("lookback", "1h");
  if (!lookbacks.some(([v]) => v === lb) && parseDuration(lb) > 0) f.lookback.insertBefore(h("option", { value: lb }, "Last " + lb), f.lookback.lastChild);
  f.lookback.value = lb;
  if (!f.lookback.value) f.lookback.value = "1h";
  const custom = h("div.two", { hidden: f.lookback.value !== "custom" }, h("label", null, "From", f.start), h("label", null, "To", f.end));
  f.lookback.addEventListener("change", () => (custom.hidden = f.lookback.value !== "custom"));
  for (const k of ["start", "end"]) {
    const v = Number(params.get(k));
    if (v) f[k].value = localInput(v / 1000);
  }
  const idIn = h("input", { type: "text", placeholder: "trace id", "aria-label": "Trace ID", size: 34 });
  const form = h("form.panel.search-form", {
    onsubmit: (e) => {
      e.preventDefault();
      search(true);
    },
  },
  h("h2", null, "Search"),
  h("label.traceql", null, "TraceQL (empty: the fields below)", h("div.editor", null, f.q)),
  h("label", null, "Service", f.service),
  h("label", null, "Operation", f.operation),
  h("label", null, "Tags", f.tags),
  h("label", null, "Lookback", f.lookback), custom,
  h("div.two", null, h("label", null, "Min duration", f.minDuration), h("label", null, "Max duration", f.maxDuration)),
  h("label", null, "Limit results", f.limit),
  h("button.primary", { type: "submit" }, "Find traces"),
  h("hr", { style: { border: "none", borderTop: "1px solid var(--border)", width: "100%" } }),
  h("label", null, "Trace ID", h("span.row", { style: { gap: "6px", flexWrap: "nowrap" } }, idIn,
    h("button", { type: "button", onclick: () => idIn.value.trim() && (location.href = "/trace/" + encodeURIComponent(idIn.value.trim())) }, "Open"))));
  const sortSel = h("select", { "aria-label": "Sort" },
    [["recent", "Most recent"], ["longest", "Longest first"], ["shortest", "Shortest first"], ["spans", "Most spans"], ["errors", "Most errors"]]
      .map(([v, t]) => h("option", { value: v }, t)));
  const info = h("span.muted.results-info");
  const plot = h("div.chart");
  const results = h("div");
  const red = redPanels();
  clear(main, h("h1", null, "Traces"), h("div.traces-layout", null, form,
    h("div", null, red.el, h("div.panel", null, h("div.panel-head", null, h("h2", null, "Results"), info, h("span.spacer"), sortSel), plot), results)));

  const once = latest();
  let found = [];
  let chart = null;

  // Services and operations.
  let services = [];
  try {
    services = ((await get("/jaeger/api/services")).data || []).sort();
  } catch (e) {
    clear(results, alertBox(e));
    markReady();
    return;
  }
  if (!services.length) {
    clear(results, h("p.empty", null, "No traces yet: send spans over OTLP and they show here within a second."));
    markReady();
    return;
  }
  clear(f.service, services.map((s) => h("option", { value: s }, s)));
  const want = params.get("service") || localStorage.getItem(LAST) || services[0];
  f.service.value = services.includes(want) ? want : services[0];
  const loadOps = async () => {
    const svc = f.service.value;
    const ops = ((await get(`/jaeger/api/services/${encodeURIComponent(svc)}/operations`).catch(() => ({ data: [] }))).data || []).sort();
    clear(f.operation, h("option", { value: "" }, "all"), ops.map((o) => h("option", { value: o }, o)));
  };
  f.service.addEventListener("change", async () => {
    await loadOps();
    search(true);
  });
  await loadOps();
  f.operation.value = params.get("operation");
  sortSel.addEventListener("change", () => drawList());
  attachCompletion(f.q, traceql.complete);
  f.q.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      search(true);
    }
  });

  async function search(push) {
    const q = new URLSearchParams({ service: f.service.value, limit: f.limit.value || "20" });
    const state = { service: f.service.value, operation: f.operation.value, tags: f.tags.value.trim(), lookback: f.lookback.value,
      minDuration: f.minDuration.value.trim(), maxDuration: f.maxDuration.value.trim(), limit: f.limit.value, q: f.q.value.trim() };
    try {
      if (state.operation) q.set("operation", state.operation);
      if (state.tags) q.set("tags", JSON.stringify(parseTags(state.tags)));
      for (const k of ["minDuration", "maxDuration"]) {
        if (!state[k]) continue;
        if (Number.isNaN(parseDuration(state[k]))) throw new Error(`${k}: "${state[k]}" is not a duration such as 100ms or 1.5s`);
        q.set(k, state[k]);
      }
      let start, end = Date.now();
      if (state.lookback === "custom") {
        start = f.start.value ? new Date(f.start.value).getTime() : end - 3.6e6;
        if (f.end.value) end = new Date(f.end.value).getTime();
        state.start = start * 1000;
        state.end = end * 1000;
      } else {
        start = end - parseDuration(state.lookback);
      }
      q.set("start", String(Math.floor(start * 1000)));
      q.set("end", String(Math.ceil(end * 1000)));
      params.set(state, push);
      localStorage.setItem(LAST, state.service);
      // The service's RED panels over the same range (not for TraceQL,
      // which the service field does not narrow).
      const map = new URLSearchParams({ focus: state.service });
      if (state.lookback === "custom") {
        map.set("range", formatDuration(Math.max(1000, end - start)));
        map.set("end", String(Math.round(end)));
      } else map.set("range", state.lookback);
      const redDrawn = red.show(state.q ? "" : state.service, start, end, "/services?" + map);
      clear(info, "Searching…");
      const began = performance.now();
      if (state.q) {
        // TraceQL, through Tempo's API: times in seconds.
        const tq = new URLSearchParams({ q: state.q, limit: state.limit || "20", start: String(Math.floor(start / 1000)), end: String(Math.ceil(end / 1000)) });
        for (const k of ["minDuration", "maxDuration"]) if (state[k]) tq.set(k, state[k]);
        const r = await once((signal) => get("/tempo/api/search", tq, { signal }));
        if (!r) return;
        found = traceql.summaries(r);
      } else {
        const r = await once((signal) => get("/jaeger/api/traces", q, { signal }));
        if (!r) return;
        found = (r.data || []).map(summarize);
      }
      clear(info, `${found.length} trace${found.length === 1 ? "" : "s"} in ${Math.round(performance.now() - began)} ms`);
      drawPlot(start, end);
      drawList();
      await redDrawn;
    } catch (e) {
      clear(info);
      clear(results, alertBox(e));
    }
    markReady();
  }

  function drawPlot(start, end) {
    const pts = [...found].sort((a, b) => a.start - b.start);
    const data = [pts.map((t) => t.start / 1e6), pts.map((t) => t.duration / 1000)];
    const opts = {
      height: 160, points: true, tooltip: true, series: [{ label: "duration", color: "#5794f2" }], data,
      yFmt: (v) => micros(v * 1000), xRange: [start / 1000, end / 1000],
      xFmt: (x) => {
        const t = pts.find((p) => p.start / 1e6 === x);
        return t ? `${t.rootService}: ${t.rootName}` : dateTime(x * 1000);
      },
      onClick: (i) => pts[i] && (location.href = "/trace/" + pts[i].traceID),
    };
    if (chart) chart.destroy();
    chart = timeChart(plot, opts);
  }

  function drawList() {
    const by = {
      recent: (a, b) => b.start - a.start, longest: (a, b) => b.duration - a.duration, shortest: (a, b) => a.duration - b.duration,
      spans: (a, b) => b.spans - a.spans, errors: (a, b) => b.errors - a.errors,
    }[sortSel.value];
    const list = [...found].sort(by);
    const longest = Math.max(1, ...list.map((t) => t.duration));
    clear(results, list.length ? list.map((t) => h("a.trace-item", { href: "/trace/" + t.traceID, dataset: { traceId: t.traceID, spans: String(t.spans), duration: String(t.duration) } },
      h("div.title", null, h("span.dot", { style: { background: colorOf(t.rootService) } }),
        h("b", null, `${t.rootService}: ${t.rootName}`), h("span.muted.mono", null, t.traceID.slice(0, 12)),
        h("span.spacer"), h("b", null, micros(t.duration))),
      h("div.meta", null,
        h("span.badge", null, `${int(t.spans)} span${t.spans === 1 ? "" : "s"}`),
        t.errors ? h("span.badge.error", null, `${t.errors} error${t.errors === 1 ? "" : "s"}`) : null,
        [...t.services].map(([s, n]) => h("span.badge", null, h("span.dot", { style: { background: colorOf(s) } }), `${s} (${n})`)),
        h("span.spacer"), h("span.muted", { title: dateTime(t.start / 1000) }, `${dateTime(t.start / 1000, false)} · ${ago(t.start / 1000)}`)),
      h("div.bar", null, h("div", { style: { width: (100 * t.duration) / longest + "%" } })))) : h("p.empty", null, "No trace found: widen the time range or loosen the filters."));
  }

  await search(false);
}

function localInput(ms) {
  const d = new Date(ms);
  const p = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}
