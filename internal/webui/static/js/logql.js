// LogQL completion: stream label names and values in a selector
// (/loki/api/v1/labels, /loki/api/v1/label/{name}/values), pipeline
// stages after "|", the range functions and aggregations, and the
// structured metadata keys of the lines last shown.
import { get } from "./api.js";
import { rank } from "./autocomplete.js";

const stages = ["json", "logfmt", "regexp", "pattern", "unpack", "line_format", "label_format", "drop", "keep", "decolorize", "unwrap"];
const rangeFns = ["count_over_time", "rate", "bytes_over_time", "bytes_rate", "absent_over_time", "sum_over_time", "avg_over_time",
  "min_over_time", "max_over_time", "stddev_over_time", "stdvar_over_time", "quantile_over_time", "first_over_time", "last_over_time"];
const aggregations = ["sum", "avg", "min", "max", "count", "stddev", "stdvar", "topk", "bottomk", "sort", "sort_desc"];
const durations = ["1m", "5m", "10m", "15m", "30m", "1h"];

let seen = [];
const cache = new Map();
let rangeOf = () => ({});

// setContext tells completion the time range to look labels up in and
// the metadata keys of the lines shown.
export function setContext(range, keys) {
  if (range) rangeOf = range;
  if (keys) seen = keys;
}

function cached(key, fn) {
  if (!cache.has(key)) {
    cache.set(key, fn().catch((e) => {
      cache.delete(key);
      throw e;
    }));
    setTimeout(() => cache.delete(key), 60000);
  }
  return cache.get(key);
}

export const labelNames = () => cached("names", () => get("/loki/api/v1/labels", rangeOf()).then((r) => r.data || []));
export const labelValues = (name) => cached("v:" + name, () =>
  get(`/loki/api/v1/label/${encodeURIComponent(name)}/values`, rangeOf()).then((r) => r.data || []));

// complete is the provider for attachCompletion.
export async function complete(text, caret) {
  const before = text.slice(0, caret);
  let depth = 0, inStr = null, braceAt = -1;
  for (let i = 0; i < before.length; i++) {
    const c = before[i];
    if (inStr) {
      if (c === "\\" && inStr === '"') i++;
      else if (c === inStr) inStr = null;
      continue;
    }
    if (c === '"' || c === "`") inStr = c;
    else if (c === "{") { depth++; braceAt = i; }
    else if (c === "}") depth = Math.max(0, depth - 1);
  }
  const done = (from, items, to = caret) => (items.length ? { from, to, items } : null);
  if (depth > 0 && braceAt >= 0) {
    if (inStr) {
      const m = before.match(/([a-zA-Z_]\w*)\s*(=~|!~|!=|=)\s*"([^"]*)$/);
      if (!m) return null;
      const vals = await labelValues(m[1]);
      const rest = (text.slice(caret).match(/^[^"]*/) || [""])[0].length;
      return done(caret - m[3].length, rank(vals.map((v) => ({ label: v, insert: v.replace(/\\/g, "\\\\").replace(/"/g, '\\"') })), m[3]), caret + rest);
    }
    const m = before.match(/[{,]\s*([a-zA-Z_]\w*)?$/);
    if (!m) return null;
    const p = m[1] || "";
    const names = await labelNames();
    return done(caret - p.length, rank(names.map((n) => ({ label: n, insert: `${n}=""`, caret: n.length + 2, detail: "stream label" })), p));
  }
  if (inStr) return null;
  const r = before.match(/\[(\w*)$/);
  if (r) return done(caret - r[1].length, rank(durations.map((d) => ({ label: d, insert: d + "]" })), r[1]));
  const pipe = before.match(/\|\s*([a-zA-Z_]\w*)?$/);
  if (pipe) {
    const p = pipe[1] || "";
    const cands = [...stages.map((s) => ({ label: s, detail: "stage" })),
      ...seen.map((k) => ({ label: k, insert: `${k}=""`, caret: k.length + 2, detail: "label filter" }))];
    return done(caret - p.length, rank(cands, p));
  }
  const w = before.match(/([a-zA-Z_]\w*)$/);
  if (w && w[1].length >= 1) {
    const cands = [...rangeFns.map((f) => ({ label: f, insert: f + "()", caret: f.length + 1, detail: "range function" })),
      ...aggregations.map((f) => ({ label: f, insert: f + "()", caret: f.length + 1, detail: "aggregation" })),
      { label: "by", detail: "keyword" }, { label: "without", detail: "keyword" }];
    return done(caret - w[1].length, rank(cands, w[1]));
  }
  return null;
}

// isMetricQuery tells a metric query (a function or aggregation around a
// selector) from a log query (a selector and a pipeline).
export function isMetricQuery(q) {
  return !/^\s*\{/.test(q);
}
