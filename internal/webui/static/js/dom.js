// Small DOM helpers: h() builds elements without HTML strings, so that
// data (log lines, span tags) is never parsed as markup.

// h(tag, props, ...children): tag may carry classes ("div.panel.wide");
// props sets attributes (on* functions become listeners, class/className,
// dataset, hidden, value...); children are nodes, strings or arrays,
// null and false skipped.
export function h(tag, props, ...children) {
  const [name, ...classes] = tag.split(".");
  const el = document.createElement(name || "div");
  if (classes.length) el.className = classes.join(" ");
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v == null || v === false) continue;
      if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
      else if (k === "class") el.className = (el.className ? el.className + " " : "") + v;
      else if (k === "dataset") Object.assign(el.dataset, v);
      else if (k === "style" && typeof v === "object") Object.assign(el.style, v);
      else if (k in el && typeof v !== "string") el[k] = v;
      else if (k === "value" || k === "checked" || k === "selected") el[k] = v;
      else el.setAttribute(k, v === true ? "" : v);
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c == null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

// clear empties el and appends children.
export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// debounce delays fn until ms after the last call.
export function debounce(fn, ms) {
  let t;
  return (...args) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...args), ms);
  };
}

// alertBox is an error message element.
export function alertBox(err) {
  return h("div.alert", { role: "alert" }, err && err.message ? err.message : String(err));
}

// markReady tells the tests (and performance tools) that the page's data
// is drawn: the first time, a "wh-data" performance mark.
export function markReady() {
  const root = document.documentElement;
  if (!root.dataset.ready) performance.mark("wh-data");
  root.dataset.ready = "1";
}

// params reads and writes the page's URL query.
export const params = {
  get(name, def = "") {
    const v = new URLSearchParams(location.search).get(name);
    return v == null ? def : v;
  },
  all() {
    return new URLSearchParams(location.search);
  },
  // set replaces the URL's query with obj (empty values left out),
  // pushing a history entry when push is true.
  set(obj, push = false) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(obj)) {
      if (v !== "" && v != null && v !== false) q.set(k, v);
    }
    const url = location.pathname + (q.toString() ? "?" + q : "");
    if (url === location.pathname + location.search) return;
    history[push ? "pushState" : "replaceState"](null, "", url);
  },
};

// autoRefresh calls refresh now, then every number of seconds the select
// says ("off": never), and again when the tab becomes visible; it
// resolves once the first refresh has.
export async function autoRefresh(select, refresh) {
  let timer = null;
  const schedule = () => {
    clearInterval(timer);
    const v = select.value;
    if (v !== "off") timer = setInterval(refresh, parseInt(v, 10) * 1000);
  };
  select.addEventListener("change", schedule);
  document.addEventListener("visibilitychange", () => !document.hidden && select.value !== "off" && refresh());
  await refresh();
  schedule();
}
