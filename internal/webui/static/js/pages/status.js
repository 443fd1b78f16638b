// The status page: what comes in, by signal and service; refusals; the
// spool, the lake, the metric store, forwarding, the process; build and
// settings. It draws /api/wirehouse/status (the server's own metrics,
// sampled every few seconds and kept 15 minutes) and refreshes itself.
import { get } from "../api.js";
import { timeChart, colorOf } from "../chart.js";
import { h, clear, alertBox, markReady, autoRefresh } from "../dom.js";
import { num, int, bytes, seconds, ago } from "../format.js";

const SIGNALS = ["logs", "traces", "metrics"];
const SIGNAL_COLORS = { logs: "#73bf69", traces: "#5794f2", metrics: "#ff9830" };
const TOP = 5;

const perSec = (v) => num(v) + "/s";
const lastOf = (vals) => {
  if (!vals) return NaN;
  for (let i = vals.length - 1; i >= 0; i--) if (vals[i] != null) return vals[i];
  return NaN;
};
const sum = (xs) => xs.reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0);
const nz = (v) => (v == null || Number.isNaN(v) ? 0 : v);

// sumSeries adds series' values point by point (null where all are null).
function sumSeries(list, n) {
  const out = new Array(n).fill(null);
  for (const s of list) {
    (s.values || []).forEach((v, i) => {
      if (v != null) out[i] = (out[i] || 0) + v;
    });
  }
  return out;
}

export async function render(main) {
  const refreshSel = h("select", { "aria-label": "Refresh every" },
    ["5s", "15s", "60s", "off"].map((v) => h("option", { value: v, selected: v === "5s" }, v === "off" ? "no refresh" : "every " + v)));
  const info = h("span.muted");
  const err = h("div");
  const ui = {
    info, err,
    signals: h("div.grid"),
    refusals: h("div"),
    services: h("div"),
    storage: h("div.grid.wide"),
    forward: h("div"),
    process: null,
    about: h("div"),
  };
  clear(main,
    h("div.panel-head", null, h("h1", null, "Status"), info, h("span.spacer"), refreshSel),
    err, ui.signals, ui.refusals, ui.services, ui.storage, ui.forward, ui.about);
  ui.process = ui.storage;

  const charts = new Map(); // key → chart, kept across refreshes
  const chart = (key, parent, opts) => {
    let c = charts.get(key);
    if (c && c.el.isConnected) {
      c.opts.xRange = opts.xRange;
      c.update(opts.data, opts.series);
      return c.el;
    }
    const el = h("div.chart");
    parent.append(el);
    c = timeChart(el, opts);
    charts.set(key, c);
    return el;
  };
  const panels = new Map();
  // panel returns the panel key's {root, body} under parent, built once.
  const panel = (key, parent, title, note) => {
    let p = panels.get(key);
    if (!p) {
      const body = h("div");
      const root = h("section.panel", { dataset: { panel: key } }, h("div.panel-head", null, h("h2", null, title), note ? h("span.muted", null, note) : null), body);
      parent.append(root);
      p = { root, body, parts: {} };
      panels.set(key, p);
    }
    return p;
  };
  // part keeps one child of a panel by name: text parts are redrawn,
  // chart holders kept.
  const part = (p, name) => (p.parts[name] ||= p.body.appendChild(h("div")));

  let tsdb = null, tsdbAt = 0;
  async function refresh() {
    if (document.hidden && tsdbAt) return; // a tab in the background draws nothing
    let st;
    try {
      st = await get("/api/wirehouse/status");
      clear(err);
    } catch (e) {
      clear(err, alertBox(e));
      return;
    }
    if (Date.now() - tsdbAt > 30000) {
      tsdbAt = Date.now();
      tsdb = await get("/api/v1/status/tsdb", { limit: 8 }).then((r) => r.data).catch(() => null);
    }
    draw(st);
    markReady();
  }

  function draw(st) {
    const xs = st.times.map((t) => t / 1000);
    const n = xs.length;
    // The history held, at least two minutes, the newest sample at the
    // right edge.
    const xRange = n ? [Math.max(xs[n - 1] - st.window, Math.min(xs[0], xs[n - 1] - 120)), xs[n - 1]] : undefined;
    const V = (name) => st.views[name] || [];
    const started = lastOf(V("process_start")[0]?.values) * 1000;
    info.dataset.samples = String(n);
    clear(info, `${st.build.version} · up ${Number.isFinite(started) ? seconds((st.now - started) / 1000) : "–"} · ${n} samples every ${st.interval}s · updated ${ago(st.now)}`,
      st.tenant ? ` · tenant ${st.tenant}` : "");

    // Records in, by signal and service.
    for (const sig of SIGNALS) {
      const p = panel("sig-" + sig, ui.signals, sig[0].toUpperCase() + sig.slice(1), "records accepted per second");
      const acc = V("accepted").filter((s) => s.labels.signal === sig);
      const rate = sumSeries(acc, n);
      const now = lastOf(rate);
      const avg = sum(acc.map((s) => s.rate));
      const total = sum(acc.map((s) => s.last));
      const refused = sum(V("refused").filter((s) => s.labels.signal === sig).map((s) => s.rate));
      clear(part(p, "stat"), h("div.stat", null,
        h("div", { dataset: { signal: sig, rate: String(nz(now)) } }, h("b", null, perSec(nz(now))), h("span", null, "now")),
        h("div", null, h("b", null, perSec(nz(avg))), h("span", null, "last minute")),
        h("div", null, h("b", null, num(total)), h("span", null, "since start")),
        h("div", null, h("b", { class: refused > 0 ? "error" : "" }, perSec(nz(refused))), h("span", null, "refused"))));
      const svcs = V("services").filter((s) => s.labels.signal === sig);
      const top = svcs.filter((s) => s.values).sort((a, b) => nz(b.rate) - nz(a.rate)).slice(0, TOP);
      chart("sig-" + sig, part(p, "chart"), {
        height: 150, xRange,
        series: [{ label: "all services", color: SIGNAL_COLORS[sig], fill: true, width: 2 },
          ...top.map((s) => ({ label: s.labels.service, color: colorOf(s.labels.service), width: 1 }))],
        data: [xs, rate, ...top.map((s) => s.values)],
        yFmt: num,
      });
      clear(part(p, "top"), top.length
        ? h("table", null, h("tbody", null, top.map((s) => h("tr", null,
          h("td", null, h("span.dot", { style: { background: colorOf(s.labels.service) } }), s.labels.service),
          h("td.num", null, perSec(nz(s.rate))), h("td.num.muted", null, num(s.last))))))
        : h("p.note", null, "No records yet."));
    }

    // Refusals by reason.
    {
      const p = panel("refusals", ui.refusals, "Refusals", "records refused, by reason (since start and last minute)");
      const rows = V("refused").filter((s) => nz(s.last) > 0);
      const byReason = new Map();
      for (const s of rows) {
        const r = byReason.get(s.labels.reason) || { reason: s.labels.reason, values: [], list: [] };
        r.list.push(s);
        byReason.set(s.labels.reason, r);
      }
      const reasons = [...byReason.values()];
      if (!reasons.length) {
        clear(part(p, "body"), h("p.note", null, "No record refused since start."));
      } else {
        clear(part(p, "body"), h("table", null,
          h("thead", null, h("tr", null, h("th", null, "reason"), h("th", null, "signal"), h("th.num", null, "last minute"), h("th.num", null, "since start"))),
          h("tbody", null, rows.sort((a, b) => b.last - a.last).map((s) => h("tr", null,
            h("td", null, h("span.badge.error", null, s.labels.reason)), h("td", null, s.labels.signal),
            h("td.num", null, perSec(nz(s.rate))), h("td.num", null, int(s.last)))))));
        chart("refusals", part(p, "chart"), {
          height: 120, xRange,
          series: reasons.map((r) => ({ label: r.reason, color: colorOf(r.reason) })),
          data: [xs, ...reasons.map((r) => sumSeries(r.list, n))],
        });
      }
    }

    // Every service.
    {
      const p = panel("services", ui.services, "Services", "records accepted and stored, by service");
      const all = V("services");
      if (!p.filter) {
        p.filter = h("input", { type: "search", placeholder: "Filter services", "aria-label": "Filter services", oninput: () => p.redraw() });
        p.sort = { key: "rate", desc: true };
        part(p, "tools").append(p.filter);
      }
      const drawServices = () => {
        const f = p.filter.value.toLowerCase();
        const list = all.filter((s) => !f || s.labels.service.toLowerCase().includes(f) || s.labels.signal.includes(f));
        const key = p.sort.key, dir = p.sort.desc ? -1 : 1;
        list.sort((a, b) => {
          const va = key === "rate" ? nz(a.rate) : key === "last" ? nz(a.last) : a.labels[key];
          const vb = key === "rate" ? nz(b.rate) : key === "last" ? nz(b.last) : b.labels[key];
          return (va < vb ? -1 : va > vb ? 1 : 0) * dir;
        });
        const th = (k, label, cls = "") => h("th.sortable" + cls, {
          onclick: () => { p.sort = { key: k, desc: p.sort.key === k ? !p.sort.desc : k === "rate" || k === "last" }; drawServices(); },
        }, label, p.sort.key === k ? (p.sort.desc ? " ↓" : " ↑") : "");
        clear(part(p, "table"), list.length ? h("div.scroll", null, h("table", null,
          h("thead", null, h("tr", null, th("service", "service"), th("signal", "signal"), th("rate", "last minute", ".num"), th("last", "since start", ".num"))),
          h("tbody", null, list.slice(0, 500).map((s) => h("tr", null,
            h("td", null, h("span.dot", { style: { background: colorOf(s.labels.service) } }), s.labels.service || h("i.muted", null, "(no service.name)")),
            h("td", null, s.labels.signal), h("td.num", null, perSec(nz(s.rate))), h("td.num", null, int(s.last)))))))
          : h("p.note", null, all.length ? "No service matches." : "No records yet."),
        list.length > 500 ? h("p.note", null, `Showing 500 of ${list.length}.`) : null);
      };
      p.redraw = drawServices; // over the newest data
      drawServices();
    }

    // Spool and lake.
    {
      const p = panel("spool", ui.storage, "Spool", "logs and traces acknowledged, waiting for the lake");
      const lag = lastOf(V("lake_lag")[0]?.values);
      const age = st.spool_age;
      const full = V("spool_full")[0];
      clear(part(p, "stat"), h("div.stat", null,
        h("div", null, h("b", null, bytes(lastOf(V("spool_bytes")[0]?.values))), h("span", null, "on disk")),
        h("div", null, h("b", null, int(lastOf(V("spool_segments")[0]?.values))), h("span", null, "segments")),
        h("div", null, h("b", null, int(lag)), h("span", null, "requests not in the lake yet")),
        h("div", null, h("b", null, age ? (age.at_least ? "≥ " : age.seconds ? "≤ " : "") + seconds(age.seconds) : "–"), h("span", null, "oldest of them")),
        h("div", null, h("b", { class: nz(full?.last) > 0 ? "error" : "" }, int(full?.last ?? NaN)), h("span", null, "refused: spool full"))));
      chart("spool", part(p, "chart"), {
        height: 120, xRange, yFmt: bytes, ySize: 76,
        series: [{ label: "spool bytes", color: "#b877d9", fill: true }],
        data: [xs, V("spool_bytes")[0]?.values || new Array(n).fill(null)],
      });

      const q = panel("lake", ui.storage, "Lake", "Parquet files, measured every minute");
      const files = V("lake_files"), size = V("lake_bytes");
      const rows = V("lake_rows")[0];
      clear(part(q, "stat"), h("div.stat", null,
        h("div", null, h("b", null, bytes(sum(size.map((s) => s.last)))), h("span", null, "in the lake" + (st.tenant ? " (this tenant)" : ""))),
        h("div", null, h("b", null, int(sum(files.map((s) => s.last)))), h("span", null, "files")),
        h("div", null, h("b", null, perSec(nz(rows?.rate))), h("span", null, "rows written")),
        h("div", null, h("b", null, bytes(nz(V("lake_written_bytes")[0]?.rate)) + "/s"), h("span", null, "Parquet written"))));
      clear(part(q, "table"), files.length ? h("table", null,
        h("thead", null, h("tr", null, h("th", null, "signal"), h("th", null, "tenant"), h("th.num", null, "files"), h("th.num", null, "bytes"))),
        h("tbody", null, files.map((f) => {
          const b = size.find((s) => s.labels.signal === f.labels.signal && s.labels.tenant === f.labels.tenant);
          return h("tr", null, h("td", null, f.labels.signal), h("td", null, f.labels.tenant), h("td.num", null, int(f.last)), h("td.num", null, bytes(b?.last)));
        })))
        : h("p.note", null, "No Parquet file at the last measure (at start, then every minute)."));
      chart("lake", part(q, "chart"), {
        height: 120, xRange,
        series: [{ label: "rows written/s", color: "#73bf69", fill: true }],
        data: [xs, rows?.values || new Array(n).fill(null)],
      });
    }

    // Metric store.
    {
      const p = panel("tsdb", ui.storage, "Metric store", "Prometheus TSDB head");
      const samples = V("head_samples")[0];
      const rejected = V("metrics_rejected").filter((s) => nz(s.last) > 0);
      clear(part(p, "stat"), h("div.stat", null,
        h("div", null, h("b", null, int(lastOf(V("head_series")[0]?.values))), h("span", null, "head series (all tenants)")),
        tsdb && st.tenant ? h("div", null, h("b", null, int(tsdb.headStats.numSeries)), h("span", null, "series of this tenant")) : null,
        h("div", null, h("b", null, int(lastOf(V("head_chunks")[0]?.values))), h("span", null, "chunks")),
        h("div", null, h("b", null, perSec(nz(samples?.rate))), h("span", null, "samples appended")),
        h("div", null, h("b", null, perSec(nz(V("metrics_duplicates")[0]?.rate))), h("span", null, "duplicates"))));
      chart("tsdb", part(p, "chart"), {
        height: 120, xRange,
        series: [{ label: "samples appended/s", color: "#ff9830", fill: true }],
        data: [xs, samples?.values || new Array(n).fill(null)],
      });
      clear(part(p, "more"),
        rejected.length ? [h("h3", null, "Rejected points"), h("table", null, h("tbody", null, rejected.map((s) => h("tr", null,
          h("td", null, h("span.badge.error", null, s.labels.reason)), h("td.num", null, perSec(nz(s.rate))), h("td.num", null, int(s.last))))))] : null,
        tsdb && tsdb.seriesCountByMetricName.length ? [h("h3", null, "Most series"), h("table", null, h("tbody", null,
          tsdb.seriesCountByMetricName.map((m) => h("tr", null,
            h("td.mono", null, h("a", { href: "/graph?g0.expr=" + encodeURIComponent(m.name) }, m.name)), h("td.num", null, int(m.value))))))] : null);
    }

    // Forwarding, when configured.
    {
      const q = V("forward_queue");
      if (q.length) {
        const p = panel("forward", ui.forward, "Forwarding", "destinations read the spool with their own cursors");
        const rec = V("forward_records");
        const r = (d, o) => sum(rec.filter((s) => s.labels.destination === d && s.labels.outcome === o).map((s) => s.rate));
        const of = (view, d) => V(view).find((s) => s.labels.destination === d);
        clear(part(p, "table"), h("table", null,
          h("thead", null, h("tr", null, ["destination", "queue", "queue bytes", "oldest", "endpoints", "sent/s", "rejected/s", "refused/s"].map((t, i) => h(i ? "th.num" : "th", null, t)))),
          h("tbody", null, q.map((s) => {
            const d = s.labels.destination;
            return h("tr", null, h("td", null, d), h("td.num", null, int(s.last)), h("td.num", null, bytes(of("forward_queue_bytes", d)?.last)),
              h("td.num", null, seconds(nz(of("forward_age", d)?.last))), h("td.num", null, int(of("forward_members", d)?.last)),
              h("td.num", null, num(r(d, "sent"))), h("td.num", { class: r(d, "rejected") > 0 ? "error" : "" }, num(r(d, "rejected"))),
              h("td.num", { class: r(d, "refused") > 0 ? "error" : "" }, num(r(d, "refused"))));
          }))));
        chart("forward", part(p, "chart"), {
          height: 120, xRange,
          series: q.map((s) => ({ label: s.labels.destination, color: colorOf(s.labels.destination) })),
          data: [xs, ...q.map((s) => s.values)],
        });
      }
    }

    // The process.
    {
      const mem = V("memory")[0], cpu = V("cpu")[0];
      const inflight = V("inflight_bytes")[0], limit = lastOf(V("inflight_limit")[0]?.values);
      const p = panel("memory", ui.process, "Memory", "resident set size");
      clear(part(p, "stat"), h("div.stat", null,
        h("div", null, h("b", null, bytes(lastOf(mem?.values))), h("span", null, "resident")),
        h("div", null, h("b", null, bytes(lastOf(inflight?.values))), h("span", null, `in flight (limit ${bytes(limit)})`)),
        h("div", null, h("b", null, int(lastOf(V("goroutines")[0]?.values))), h("span", null, "goroutines"))));
      chart("memory", part(p, "chart"), {
        height: 110, xRange, yFmt: bytes, ySize: 76,
        series: [{ label: "resident", color: "#5ab4c4", fill: true }], data: [xs, mem?.values || new Array(n).fill(null)],
      });
      const c = panel("cpu", ui.process, "CPU", "cores used");
      clear(part(c, "stat"), h("div.stat", null,
        h("div", null, h("b", null, num(lastOf(cpu?.values))), h("span", null, "now")),
        h("div", null, h("b", null, num(nz(cpu?.rate))), h("span", null, "last minute"))));
      chart("cpu", part(c, "chart"), {
        height: 110, xRange,
        series: [{ label: "cores", color: "#f2cc0c", fill: true }], data: [xs, cpu?.values || new Array(n).fill(null)],
      });
    }

    // Build and settings.
    {
      const p = panel("about", ui.about, "Build and configuration");
      const b = st.build;
      clear(part(p, "table"), h("table.kv", null, h("tbody", null,
        [["version", b.version], ["revision", b.revision || "unknown"], ["Go", b.go_version], ["platform", b.platform]]
          .concat((st.settings || []).map((s) => [s.name, s.value]))
          .map(([k, v]) => h("tr", null, h("td", null, k), h("td", null, v))))),
        st.dropped_series ? h("p.note.error", null, `${st.dropped_series} series left out of the history (over its 5,000 series).`) : null);
    }
  }

  await autoRefresh(refreshSel, refresh);
}
