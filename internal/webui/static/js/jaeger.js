// Jaeger's trace model (the JSON of /jaeger/api/traces): summaries for
// the search results and the span tree for the trace view.

// isError reports whether a span failed: error=true or an OTLP status
// of ERROR, as Jaeger shows it.
export function isError(span) {
  return (span.tags || []).some((t) => (t.key === "error" && (t.value === true || t.value === "true")) || (t.key === "otel.status_code" && t.value === "ERROR"));
}

// parentOf is the span's parent id in the trace: its CHILD_OF reference,
// else its first, if that span is in the trace; "" for a root.
export function parentOf(span, ids) {
  const refs = span.references || [];
  const ref = refs.find((r) => r.refType === "CHILD_OF" && ids.has(r.spanID)) || refs.find((r) => ids.has(r.spanID));
  return ref ? ref.spanID : "";
}

// summarize describes a trace for the result list: start and duration
// (µs), span and error counts, spans per service, the root span's
// service and operation.
export function summarize(trace) {
  const spans = trace.spans || [];
  const ids = new Set(spans.map((s) => s.spanID));
  let start = Infinity, end = -Infinity, errors = 0, root = null;
  const services = new Map();
  for (const s of spans) {
    start = Math.min(start, s.startTime);
    end = Math.max(end, s.startTime + s.duration);
    if (isError(s)) errors++;
    const svc = trace.processes?.[s.processID]?.serviceName || "unknown";
    services.set(svc, (services.get(svc) || 0) + 1);
    if (!parentOf(s, ids) && (!root || s.startTime < root.startTime)) root = s;
  }
  root ||= spans[0];
  return {
    traceID: trace.traceID, start: spans.length ? start : 0, duration: spans.length ? end - start : 0,
    spans: spans.length, errors, services: [...services].sort((a, b) => b[1] - a[1]),
    rootService: (root && trace.processes?.[root.processID]?.serviceName) || "unknown",
    rootName: root ? root.operationName : "(no spans)",
  };
}

// tree lays the trace's spans out in waterfall order: each root (no
// parent in the trace) then its descendants depth first, siblings by
// start time. Every span the API returned is a row, those sharing a span
// id (a client's retry) too; children hang under the first span of their
// parent's id. Rows are {span, depth, parent (row index or -1), children
// (row indexes), service, error}.
export function tree(trace) {
  const spans = trace.spans || [];
  const first = new Map(); // span id → its first span
  for (const s of spans) if (!first.has(s.spanID)) first.set(s.spanID, s);
  const ids = new Set(first.keys());
  const kids = new Map(); // span → child spans
  const roots = [];
  for (const s of spans) {
    const p = first.get(parentOf(s, ids));
    if (p && p !== s) {
      if (!kids.has(p)) kids.set(p, []);
      kids.get(p).push(s);
    } else roots.push(s);
  }
  const byStart = (a, b) => a.startTime - b.startTime || (a.spanID < b.spanID ? -1 : a.spanID > b.spanID ? 1 : 0);
  roots.sort(byStart);
  const rows = [];
  const seen = new Set();
  const walk = (s, depth, parent) => {
    if (seen.has(s)) return; // a cycle of references: each span once
    seen.add(s);
    const row = { span: s, depth, parent, children: [], service: trace.processes?.[s.processID]?.serviceName || "unknown", error: isError(s) };
    const at = rows.push(row) - 1;
    for (const c of (kids.get(s) || []).sort(byStart)) {
      row.children.push(rows.length);
      walk(c, depth + 1, at);
    }
  };
  for (const r of roots) walk(r, 0, -1);
  for (const s of spans) walk(s, 0, -1); // spans only in a cycle
  return rows;
}

// tagValue is a tag's value as text.
export function tagValue(t) {
  if (t.type === "binary" || typeof t.value === "object") return JSON.stringify(t.value);
  return String(t.value);
}
