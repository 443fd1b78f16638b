// A service's RED panels (rate, errors, duration) over a time range, from
// the span metrics the server makes of the spans it receives
// (traces_span_metrics_*, named as the Collector's spanmetrics connector
// names them), through Prometheus' /api/v1/query_range: the traces page
// shows them above a search's results. The requests a service serves are
// its server and consumer spans.
import { get, latest } from "./api.js";
import { timeChart } from "./chart.js";
import { h, clear, alertBox } from "./dom.js";
import { num, micros } from "./format.js";
import { autoStep } from "./timerange.js";

const CALLS = "traces_span_metrics_calls_total";
const KINDS = 'span_kind=~"SPAN_KIND_SERVER|SPAN_KIND_CONSUMER"';

// pct formats a ratio as a percentage: 0.0123 → "1.23%".
export function pct(r) {
  if (r == null || !Number.isFinite(r)) return "–";
  if (r === 0) return "0%";
  if (r < 0.001) return "<0.1%";
  return num(r * 100) + "%";
}

// perSec formats a rate a second.
export const perSec = (v) => (v == null || Number.isNaN(v) ? "–" : num(v) + "/s");

// rateText formats a rate a second in the unit that reads best: a
// second, a minute or an hour (a rate over a long range is often small).
export function rateText(v) {
  if (v == null || Number.isNaN(v) || v === 0 || v >= 1) return perSec(v);
  return v * 60 >= 1 ? num(v * 60) + "/min" : num(v * 3600) + "/h";
}

// ms formats a duration in milliseconds.
const ms = (v) => micros(v * 1000);

// redQueries are the PromQL of service's panels, rates over windows of w
// seconds: its requests a second; the share of them whose status is
// error (0 when none failed); the 95th percentile of their duration.
export function redQueries(service, w) {
  const sel = `service_name=${JSON.stringify(service)}, ${KINDS}`;
  const all = `sum(rate(${CALLS}{${sel}}[${w}s]))`;
  return {
    rate: all,
    errors: `(sum(rate(${CALLS}{${sel}, status_code="STATUS_CODE_ERROR"}[${w}s])) or vector(0)) / ${all}`,
    duration: `histogram_quantile(0.95, sum by (le) (rate(traces_span_metrics_duration_milliseconds_bucket{${sel}}[${w}s])))`,
  };
}

const PANELS = [
  { key: "rate", title: "Requests", color: "#5794f2", fmt: perSec },
  { key: "errors", title: "Errors", color: "#ff7383", fmt: pct },
  { key: "duration", title: "Duration p95", color: "#b877d9", fmt: ms },
];

// redPanels returns {el, show(service, startMs, endMs, mapHref)}: show
// draws service's panels over the range (the last call wins), with a
// link to the service map; the section stays hidden for no service or
// when the service has no span metrics (trace metrics off, or none in
// the range). It never throws: a failed query is shown in the section.
export function redPanels() {
  const title = h("h2");
  const mapLink = h("a.map-link", { title: "The services this one calls and is called by" }, "Service map");
  const err = h("div");
  const cells = PANELS.map((p) => ({ p, holder: h("div.chart"), chart: null }));
  const grid = h("div.red-grid", null, cells.map((c) => h("div.red-cell", { dataset: { panel: c.p.key } }, h("h3", null, c.p.title), c.holder)));
  const el = h("section.panel.red-panels", { hidden: true },
    h("div.panel-head", null, title, h("span.muted", null, "its server and consumer spans, from the span metrics"), h("span.spacer"), mapLink),
    err, grid);
  const once = latest();
  const drop = () => {
    for (const c of cells) {
      if (c.chart) c.chart.destroy();
      c.chart = null;
    }
  };

  async function show(service, start, end, mapHref) {
    if (!service) {
      once(async () => undefined); // abort a run under way
      drop();
      el.hidden = true;
      delete el.dataset.service;
      return;
    }
    const step = autoStep(end - start, 120);
    const w = Math.max(60, 2 * step); // a window spanning a few flushes (15 s by default) and steps
    const q = redQueries(service, w);
    const args = { start: start / 1000, end: end / 1000, step };
    let answers;
    try {
      answers = await once((signal) => Promise.all(PANELS.map((p) => get("/api/v1/query_range", { query: q[p.key], ...args }, { signal }))));
    } catch (e) {
      drop();
      clear(title, service);
      clear(err, alertBox(e));
      grid.hidden = true;
      el.hidden = false;
      return;
    }
    if (!answers) return; // a newer call replaced this one
    const results = answers.map((r) => (r && r.data && r.data.result) || []);
    if (!results[0].length) { // no span metrics for the service
      drop();
      el.hidden = true;
      delete el.dataset.service;
      return;
    }
    // One x per evaluation over the range, every panel aligned on it.
    const xs = [...new Set(results.flatMap((res) => res.flatMap((s) => s.values.map(([t]) => t))))].sort((a, b) => a - b);
    const at = new Map(xs.map((x, i) => [x, i]));
    clear(title, service);
    clear(err);
    mapLink.href = mapHref;
    grid.hidden = false;
    el.hidden = false; // before drawing: the charts take their container's width
    cells.forEach((c, i) => {
      const ys = new Array(xs.length).fill(null);
      for (const s of results[i].slice(0, 1)) {
        for (const [t, v] of s.values) {
          const f = parseFloat(v);
          if (Number.isFinite(f)) ys[at.get(t)] = f;
        }
      }
      if (c.chart) c.chart.destroy();
      c.chart = timeChart(c.holder, {
        height: 110, series: [{ label: c.p.title, color: c.p.color, fill: true }], data: [xs, ys],
        yFmt: c.p.fmt, ySize: 64, xRange: [args.start, args.end],
      });
    });
    el.dataset.service = service;
  }

  return { el, show };
}
