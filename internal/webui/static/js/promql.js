// PromQL completion: metric names (/api/v1/label/__name__/values),
// functions and aggregations, label names of the metric being selected
// (/api/v1/labels) and their values (/api/v1/label/{name}/values), range
// durations.
import { get } from "./api.js";
import { rank } from "./autocomplete.js";

const functions = [
  "abs", "absent", "absent_over_time", "acos", "acosh", "asin", "asinh", "atan", "atanh", "avg_over_time", "ceil",
  "changes", "clamp", "clamp_max", "clamp_min", "cos", "cosh", "count_over_time", "day_of_month", "day_of_week",
  "day_of_year", "days_in_month", "deg", "delta", "deriv", "exp", "first_over_time", "floor", "histogram_avg", "histogram_count",
  "histogram_fraction", "histogram_quantile", "histogram_stddev", "histogram_stdvar", "histogram_sum", "holt_winters",
  "hour", "idelta", "increase", "irate", "label_join", "label_replace", "last_over_time", "ln", "log10", "log2",
  "mad_over_time", "max_over_time", "min_over_time", "minute", "month", "pi", "predict_linear", "present_over_time",
  "quantile_over_time", "rad", "rate", "resets", "round", "scalar", "sgn", "sin", "sinh", "sort", "sort_by_label",
  "sort_by_label_desc", "sort_desc", "sqrt", "stddev_over_time", "stdvar_over_time", "sum_over_time", "tan", "tanh",
  "time", "timestamp", "vector", "year",
];
const aggregations = ["avg", "bottomk", "count", "count_values", "group", "limitk", "limit_ratio", "max", "min", "quantile", "stddev", "stdvar", "sum", "topk"];
const keywords = ["by", "without", "on", "ignoring", "group_left", "group_right", "offset", "bool", "and", "or", "unless"];
const durations = ["1m", "5m", "10m", "15m", "30m", "1h", "3h", "6h", "12h", "1d"];

let names = null; // metric names, loaded once
const labelCache = new Map();

// loadNames fetches the metric names (and keeps them).
export function loadNames() {
  if (!names) {
    names = get("/api/v1/label/__name__/values").then((r) => r.data || []).catch((e) => {
      names = null;
      throw e;
    });
  }
  return names;
}

function cached(key, fn) {
  if (!labelCache.has(key)) labelCache.set(key, fn().catch((e) => {
    labelCache.delete(key);
    throw e;
  }));
  return labelCache.get(key);
}

const labelNames = (metric) => cached("n:" + metric, () =>
  get("/api/v1/labels", metric ? { "match[]": metric } : {}).then((r) => (r.data || []).filter((n) => n !== "__name__")));
const labelValues = (metric, label) => cached(`v:${metric}:${label}`, () =>
  get(`/api/v1/label/${encodeURIComponent(label)}/values`, metric ? { "match[]": metric } : {}).then((r) => r.data || []));

// context reads what the caret is in: a label value, a label name, a
// grouping clause, a range, or an expression.
function context(before) {
  let depth = 0, inStr = null, braceAt = -1, parenAt = [];
  for (let i = 0; i < before.length; i++) {
    const c = before[i];
    if (inStr) {
      if (c === "\\") i++;
      else if (c === inStr) inStr = null;
      continue;
    }
    if (c === '"' || c === "'" || c === "`") inStr = c;
    else if (c === "{") { depth++; braceAt = i; }
    else if (c === "}") depth = Math.max(0, depth - 1);
    else if (c === "(") parenAt.push(i);
    else if (c === ")") parenAt.pop();
  }
  if (depth > 0) {
    const metric = (before.slice(0, braceAt).match(/([a-zA-Z_:][\w:]*)\s*$/) || [])[1] || "";
    if (inStr) {
      const m = before.match(/([a-zA-Z_]\w*)\s*(=~|!~|!=|=)\s*["'`]([^"'`]*)$/);
      if (m) return { kind: "value", metric, label: m[1], prefix: m[3], from: before.length - m[3].length };
      return null;
    }
    const m = before.match(/[{,]\s*([a-zA-Z_]\w*)?$/);
    if (m) return { kind: "label", metric, prefix: m[1] || "", from: before.length - (m[1] || "").length };
    return null;
  }
  if (inStr) return null;
  const open = parenAt[parenAt.length - 1];
  if (open != null && /\b(by|without|on|ignoring|group_left|group_right)\s*$/.test(before.slice(0, open))) {
    const m = before.match(/([a-zA-Z_]\w*)?$/);
    return { kind: "grouping", prefix: m[1] || "", from: before.length - (m[1] || "").length };
  }
  const r = before.match(/\[([\w]*)$/);
  if (r) return { kind: "range", prefix: r[1], from: before.length - r[1].length };
  const w = before.match(/([a-zA-Z_:][\w:]*)$/);
  if (w) return { kind: "expr", prefix: w[1], from: before.length - w[1].length };
  return null;
}

// complete is the provider for attachCompletion.
export async function complete(text, caret) {
  const before = text.slice(0, caret);
  const ctx = context(before);
  if (!ctx) return null;
  let items = [];
  switch (ctx.kind) {
    case "value": {
      const vals = await labelValues(ctx.metric, ctx.label);
      items = rank(vals.map((v) => ({ label: v, insert: v.replace(/\\/g, "\\\\").replace(/"/g, '\\"') })), ctx.prefix);
      break;
    }
    case "label": {
      const ls = await labelNames(ctx.metric);
      items = rank(ls.map((l) => ({ label: l, insert: `${l}=""`, caret: l.length + 2, detail: "label" })), ctx.prefix);
      break;
    }
    case "grouping": {
      const metric = (text.match(/([a-zA-Z_:][\w:]*)\s*[{[]/) || [])[1] || "";
      const ls = await labelNames(metric);
      items = rank(ls.map((l) => ({ label: l, detail: "label" })), ctx.prefix);
      break;
    }
    case "range":
      items = rank(durations.map((d) => ({ label: d, insert: d + "]", detail: "range" })), ctx.prefix);
      break;
    case "expr": {
      if (ctx.prefix.length < 1) return null;
      const ms = await loadNames();
      const cands = [
        ...aggregations.map((f) => ({ label: f, insert: f + "()", caret: f.length + 1, detail: "aggregation" })),
        ...functions.map((f) => ({ label: f, insert: f + "()", caret: f.length + 1, detail: "function" })),
        ...keywords.map((k) => ({ label: k, detail: "keyword" })),
        ...ms.map((m) => ({ label: m, detail: "metric" })),
      ];
      items = rank(cands, ctx.prefix);
      break;
    }
  }
  return items.length ? { from: ctx.from, to: caret + (ctx.kind === "value" ? closingLen(text, caret) : 0), items } : null;
}

// closingLen is how much of a quoted value after the caret a completion
// replaces: up to the closing quote.
function closingLen(text, caret) {
  const m = text.slice(caret).match(/^[^"'`]*/);
  return m ? m[0].length : 0;
}
