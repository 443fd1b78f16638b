// TraceQL completion: scopes and attribute names inside a spanset
// filter (/tempo/api/v2/search/tags), the values of the attribute before
// an operator (/tempo/api/v2/search/tag/{tag}/values), intrinsics, and
// pipeline functions after "|"; and the Tempo search answer read into the
// summaries the trace list draws.
import { get } from "./api.js";
import { rank } from "./autocomplete.js";

const pipeFns = ["count()", "avg()", "min()", "max()", "sum()", "by()", "select()", "coalesce()"];
const cache = new Map();

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

const scopes = () => cached("tags", () => get("/tempo/api/v2/search/tags").then((r) => r.scopes || []));
const values = (tag) => cached("v:" + tag, () =>
  get(`/tempo/api/v2/search/tag/${encodeURIComponent(tag)}/values`).then((r) => r.tagValues || []));

// quote writes a value as TraceQL reads it: strings quoted, the rest bare.
function literal(v) {
  return v.type === "string" ? JSON.stringify(v.value) : v.value;
}

// complete is the provider for attachCompletion.
export async function complete(text, caret) {
  const before = text.slice(0, caret);
  let depth = 0, inStr = false;
  for (let i = 0; i < before.length; i++) {
    const c = before[i];
    if (inStr) {
      if (c === "\\") i++;
      else if (c === '"') inStr = false;
      continue;
    }
    if (c === '"') inStr = true;
    else if (c === "{") depth++;
    else if (c === "}") depth = Math.max(0, depth - 1);
  }
  const done = (from, items, to = caret) => (items.length ? { from, to, items } : null);
  if (inStr) return null;
  if (depth > 0) {
    // A value after an attribute and an operator.
    const v = before.match(/((?:resource|span|event|link|instrumentation)?\.[\w.\-]+|[a-zA-Z:]+)\s*(=~|!~|!=|>=|<=|=|>|<)\s*([\w.\-]*)$/);
    if (v) {
      const vals = await values(v[1]);
      return done(caret - v[3].length, rank(vals.map((x) => ({ label: x.value, insert: literal(x), detail: x.type })), v[3]));
    }
    // An attribute or intrinsic name.
    const a = before.match(/(?:^|[\s{(&|!])((?:resource|span|event|link|instrumentation)?\.?[\w.:\-]*)$/);
    if (!a) return null;
    const p = a[1];
    const all = [];
    for (const s of await scopes()) {
      for (const t of s.tags || []) {
        all.push(s.name === "intrinsic" ? { label: t, insert: t + " ", detail: "intrinsic" } : { label: `${s.name}.${t}`, insert: `${s.name}.${t} `, detail: s.name });
      }
    }
    return done(caret - p.length, rank(all, p));
  }
  const pipe = before.match(/\|\s*([a-z_]*)$/);
  if (pipe) {
    return done(caret - pipe[1].length, rank(pipeFns.map((f) => ({ label: f, insert: f, caret: f.length - 1, detail: "pipeline" })), pipe[1]));
  }
  return null;
}

// summaries turns Tempo's search answer into the trace list's entries:
// times in microseconds, the spans matched, the root's service.
export function summaries(res) {
  return (res.traces || []).map((t) => {
    const matched = (t.spanSets || []).reduce((n, s) => n + (s.matched || 0), 0);
    return {
      traceID: t.traceID,
      rootService: t.rootServiceName,
      rootName: t.rootTraceName || "",
      start: Number(BigInt(t.startTimeUnixNano || "0") / 1000n),
      duration: (t.durationMs || 0) * 1000,
      spans: matched,
      errors: 0,
      services: new Map([[t.rootServiceName, matched]]),
    };
  });
}
