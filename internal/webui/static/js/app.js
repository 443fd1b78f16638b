// The pages' entry: the shared top bar, then the page the path names,
// loaded as its own module.
import { signOut, token } from "./api.js";
import { alertBox, clear } from "./dom.js";

const routes = [
  [/^\/$/, "status", "./pages/status.js", "Status"],
  [/^\/graph$/, "graph", "./pages/graph.js", "Metrics"],
  [/^\/traces$/, "traces", "./pages/traces.js", "Traces"],
  [/^\/trace\/([^/]+)$/, "traces", "./pages/trace.js", "Trace"],
  [/^\/services$/, "services", "./pages/services.js", "Service map"],
  [/^\/logs$/, "logs", "./pages/logs.js", "Logs"],
  [/^\/alerts$/, "alerts", "./pages/alerts.js", "Alerts"],
];

function topbar(active) {
  for (const a of document.querySelectorAll(".topbar nav a")) {
    a.classList.toggle("active", a.dataset.page === active);
  }
  const out = document.getElementById("signout");
  const show = () => (out.hidden = !token());
  out.onclick = signOut;
  show();
  document.addEventListener("wh-token", show);
}

async function start() {
  const main = document.getElementById("main");
  const path = location.pathname.replace(/\/+$/, "") || "/";
  for (const [re, nav, mod, title] of routes) {
    const m = path.match(re);
    if (!m) continue;
    topbar(nav);
    document.title = `${title} · wirehouse`;
    try {
      const page = await import(mod);
      await page.render(main, ...m.slice(1).map(decodeURIComponent));
    } catch (e) {
      console.error(e);
      main.append(alertBox(e));
    }
    return;
  }
  clear(main, alertBox(new Error("No page at " + location.pathname)));
}

// Back and forward between the states a page pushed (a search, a
// query): draw the page of the URL again.
window.addEventListener("popstate", () => location.reload());

start();
