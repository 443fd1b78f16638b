// The trace view: a trace from Jaeger's HTTP API as a span waterfall
// (nested by parent, bars on the trace's time line), each span opening
// to its tags, process (resource), events (logs) and links (references).
import { get } from "../api.js";
import { colorOf } from "../chart.js";
import { h, clear, alertBox, markReady, debounce, params } from "../dom.js";
import { micros, dateTime, int } from "../format.js";
import { summarize, tree, tagValue } from "../jaeger.js";

export async function render(main, id) {
  clear(main, h("p.muted", null, "Loading trace ", h("code", null, id), "…"));
  let trace;
  try {
    const r = await get(`/jaeger/api/traces/${encodeURIComponent(id)}`);
    trace = (r.data || [])[0];
  } catch (e) {
    clear(main, h("h1", null, "Trace ", h("code", null, id)), alertBox(e), h("p", null, h("a", { href: "/traces" }, "Search traces")));
    markReady();
    return;
  }
  if (!trace || !(trace.spans || []).length) {
    clear(main, h("h1", null, "Trace ", h("code", null, id)), h("p.empty", null, "Trace not found."));
    markReady();
    return;
  }
  const sum = summarize(trace);
  const rows = tree(trace);
  const t0 = sum.start, total = Math.max(1, sum.duration);
  const depth = rows.reduce((m, r) => Math.max(m, r.depth + 1), 0);
  document.title = `${sum.rootService}: ${sum.rootName} · wirehouse`;

  const collapsed = new Set(); // row indexes
  const byId = new Map(); // span id → its first row's index
  rows.forEach((r, i) => byId.has(r.span.spanID) || byId.set(r.span.spanID, i));
  const rowEls = [];
  const find = h("input", { type: "search", placeholder: "Find spans (service, operation, tag value, span id)", size: 40, "aria-label": "Find spans" });
  const found = h("span.muted");
  const download = () => {
    const a = h("a", { href: URL.createObjectURL(new Blob([JSON.stringify({ data: [trace] }, null, 2)], { type: "application/json" })), download: `trace-${trace.traceID}.json` });
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  };
  const wf = h("div.waterfall");
  clear(main,
    h("div.trace-head", null,
      h("h1", null, h("span.dot", { style: { background: colorOf(sum.rootService) } }), `${sum.rootService}: ${sum.rootName}`),
      h("span.mono.muted", null, trace.traceID)),
    h("div.stat", null,
      h("div", null, h("b", null, dateTime(t0 / 1000)), h("span", null, "start")),
      h("div", null, h("b", null, micros(sum.duration)), h("span", null, "duration")),
      h("div", null, h("b", null, int(sum.spans)), h("span", null, "spans")),
      h("div", null, h("b", null, String(depth)), h("span", null, "depth")),
      h("div", null, h("b", null, String(sum.services.length)), h("span", null, "services")),
      h("div", null, h("b", { class: sum.errors ? "error" : "" }, String(sum.errors)), h("span", null, "errors"))),
    h("div.trace-tools", null,
      h("button", { onclick: () => { collapsed.clear(); applyCollapse(); } }, "Expand all"),
      h("button", { onclick: () => { rows.forEach((r, i) => r.children.length && r.depth > 0 && collapsed.add(i)); applyCollapse(); } }, "Collapse all"),
      find, found, h("span.spacer"),
      h("button", { onclick: download }, "Download JSON"),
      h("a", { href: "/traces?service=" + encodeURIComponent(sum.rootService) }, "Search")),
    wf);

  // The time line.
  const ticks = [0, 0.25, 0.5, 0.75, 1];
  wf.append(h("div.wf-head", null, h("div", null, "Service and operation"),
    h("div.ticks", null, ticks.map((f) => h("span", { style: { left: f * 100 + "%" } }, micros(f * total))))));

  rows.forEach((r, i) => {
    const s = r.span;
    const left = ((s.startTime - t0) / total) * 100;
    const width = Math.max((s.duration / total) * 100, 0.05);
    const color = colorOf(r.service);
    const toggle = h("span.toggle", null, r.children.length ? "▾" : "");
    const el = h("div.span-row", { dataset: { spanId: s.spanID }, role: "button", tabindex: 0, "aria-expanded": "false" },
      h("div.span-name", { style: { paddingLeft: 4 + r.depth * 14 + "px" }, title: `${r.service}: ${s.operationName}` },
        toggle, h("span.svc-chip", { style: { background: color } }),
        r.error ? h("span.err", { title: "error" }, "!") : null,
        h("span.svc", null, r.service), h("span.op", null, s.operationName)),
      h("div.span-bar", null,
        h("div.bar", { class: r.error ? "error" : "", style: { left: left + "%", width: width + "%", background: color } }),
        (s.logs || []).map((l) => h("div.evt", { style: { left: ((l.timestamp - t0) / total) * 100 + "%" }, title: eventName(l) })),
        h("span.dur", { style: left + width > 80 ? { right: 100 - left + 0.5 + "%" } : { left: left + width + 0.5 + "%" } }, micros(s.duration))));
    toggle.addEventListener("click", (e) => {
      e.stopPropagation();
      if (!r.children.length) return;
      if (collapsed.has(i)) collapsed.delete(i);
      else collapsed.add(i);
      applyCollapse();
    });
    el.addEventListener("click", () => openDetail(i));
    el.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        openDetail(i);
      }
    });
    rowEls.push(el);
    wf.append(el);
  });

  function applyCollapse() {
    rows.forEach((r, i) => {
      let hidden = false;
      for (let p = r.parent; p >= 0; p = rows[p].parent) {
        if (collapsed.has(p)) {
          hidden = true;
          break;
        }
      }
      const el = rowEls[i];
      el.hidden = hidden;
      if (hidden && el.detail) closeDetail(el);
      const tg = el.querySelector(".toggle");
      if (r.children.length) tg.textContent = collapsed.has(i) ? "▸" : "▾";
    });
  }

  function closeDetail(el) {
    el.detail.remove();
    el.detail = null;
    el.classList.remove("open");
    el.setAttribute("aria-expanded", "false");
  }

  function openDetail(i, scroll) {
    const el = rowEls[i];
    if (el.detail) return closeDetail(el);
    el.detail = detail(rows[i]);
    el.after(el.detail);
    el.classList.add("open");
    el.setAttribute("aria-expanded", "true");
    if (scroll) el.scrollIntoView({ block: "center" });
  }

  function detail(r) {
    const s = r.span;
    const proc = trace.processes?.[s.processID] || { serviceName: r.service, tags: [] };
    const tag = (k) => (s.tags || []).find((t) => t.key === k);
    const kv = (pairs) => h("table.kv", null, h("tbody", null, pairs.map(([k, v]) => h("tr", null, h("td", null, k), h("td", null, v)))));
    const tagRows = (tags) => [...(tags || [])].sort((a, b) => (a.key < b.key ? -1 : 1)).map((t) => [t.key, tagValue(t)]);
    const status = tag("otel.status_code");
    const refs = (s.references || []).map((ref) => {
      const here = ref.traceID === trace.traceID && byId.has(ref.spanID);
      const target = here
        ? h("a", { href: "#", onclick: (e) => { e.preventDefault(); expandTo(ref.spanID); } }, ref.spanID)
        : h("a", { href: `/trace/${ref.traceID}` }, `${ref.traceID} / ${ref.spanID}`);
      return [ref.refType, target];
    });
    return h("div.span-detail", { dataset: { detailOf: s.spanID } },
      h("div.stat", null,
        h("div", null, h("b", null, s.operationName), h("span", null, r.service)),
        h("div", null, h("b", null, micros(s.duration)), h("span", null, "duration")),
        h("div", null, h("b", null, "+" + micros(s.startTime - t0)), h("span", null, "start in trace")),
        tag("span.kind") ? h("div", null, h("b", null, tagValue(tag("span.kind"))), h("span", null, "kind")) : null,
        status ? h("div", null, h("b", { class: status.value === "ERROR" ? "error" : "" }, tagValue(status)), h("span", null, "status")) : null,
        h("div", null, h("b.mono", null, s.spanID), h("span", null, "span id"))),
      h("div.cols", null,
        h("div", null, h("h3", null, `Tags (${(s.tags || []).length})`), s.tags?.length ? kv(tagRows(s.tags)) : h("p.note", null, "none")),
        h("div", null, h("h3", null, `Process: ${proc.serviceName}`), proc.tags?.length ? kv(tagRows(proc.tags)) : h("p.note", null, "no resource attributes"))),
      h("h3", null, `Events (${(s.logs || []).length})`),
      (s.logs || []).length ? s.logs.map((l) => h("div.event", null,
        h("div", null, h("b", null, eventName(l)), h("span.muted", null, ` at +${micros(l.timestamp - t0)} (${dateTime(l.timestamp / 1000)})`)),
        kv(l.fields.filter((f) => f.key !== "event").map((f) => [f.key, tagValue(f)])))) : h("p.note", null, "none"),
      h("h3", null, `Links (${refs.length})`),
      refs.length ? kv(refs) : h("p.note", null, "none"),
      (s.warnings || []).length ? [h("h3", null, "Warnings"), h("ul", null, s.warnings.map((w) => h("li.muted", null, w)))] : null);
  }

  // expandTo uncollapses a span's ancestors and opens it.
  function expandTo(spanID) {
    const i = byId.get(spanID);
    if (i == null) return;
    for (let p = rows[i].parent; p >= 0; p = rows[p].parent) collapsed.delete(p);
    applyCollapse();
    if (!rowEls[i].detail) openDetail(i, true);
    else rowEls[i].scrollIntoView({ block: "center" });
  }

  const search = debounce(() => {
    const q = find.value.trim().toLowerCase();
    let n = 0;
    rows.forEach((r, i) => {
      const s = r.span;
      const hit = q && (r.service.toLowerCase().includes(q) || s.operationName.toLowerCase().includes(q) || s.spanID.includes(q) ||
        (s.tags || []).some((t) => t.key.toLowerCase().includes(q) || tagValue(t).toLowerCase().includes(q)));
      rowEls[i].classList.toggle("match", Boolean(hit));
      if (hit) n++;
    });
    found.textContent = q ? `${n} match${n === 1 ? "" : "es"}` : "";
  }, 150);
  find.addEventListener("input", search);

  const want = params.get("span");
  if (want && byId.has(want)) expandTo(want);
  markReady();
}

function eventName(l) {
  const f = (l.fields || []).find((x) => x.key === "event");
  return f ? String(f.value) : "event";
}
