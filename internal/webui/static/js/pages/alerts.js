// The alerts page, as Prometheus' /alerts and /rules and Grafana's alert
// list draw them: the request's tenant's rule groups, the PromQL ones
// (/api/v1/rules) and the LogQL ones (Loki's ruler, in Prometheus' shape:
// /prometheus/api/v1/rules), each rule with its state, health and last
// error, last evaluation and how long it took, and its query, linked to
// the metrics page (PromQL) or the logs page (LogQL) as the alerts'
// generator URLs are; above them, the firing then the pending alerts with
// their labels, value and active-since; a filter by state, health and
// text (kept in the URL); and the Alertmanagers the alerts are sent to
// (/api/v1/alertmanagers). It refreshes itself.
import { get } from "../api.js";
import { h, clear, alertBox, markReady, params, autoRefresh } from "../dom.js";
import { num, micros, ago, dateTime, formatDuration, labelsText } from "../format.js";

// The two rule APIs, by language.
const SOURCES = [
  { lang: "promql", name: "PromQL", path: "/api/v1/rules" },
  { lang: "logql", name: "LogQL", path: "/prometheus/api/v1/rules" },
];
const STATES = ["firing", "pending", "inactive"];
const ORDER = { firing: 0, pending: 1, inactive: 2 };

// queryLink is the page that runs a rule's query: the metrics page's
// table for PromQL, the logs page for LogQL (the links of the alerts'
// generator URLs).
export function queryLink(lang, query) {
  return lang === "logql"
    ? "/logs?" + new URLSearchParams({ query })
    : "/graph?" + new URLSearchParams({ "g0.expr": query, "g0.tab": "1" });
}

// when reads an API time: ms since the epoch, or NaN for none (Go's zero
// time, "0001-01-01T00:00:00Z", is a rule not evaluated yet).
function when(s) {
  const t = s ? Date.parse(s) : NaN;
  return t > 0 ? t : NaN;
}

const agoOf = (s) => {
  const t = when(s);
  return Number.isNaN(t) ? h("span.muted", null, "never") : h("span", { title: dateTime(t) }, ago(t));
};

const durationOf = (sec) => (sec ? micros(sec * 1e6) : "–");

// labelChips writes a label set as chips, alertname left out (it is the
// alert's title).
const labelChips = (labels) => Object.entries(labels || {})
  .filter(([k]) => k !== "alertname")
  .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  .map(([k, v]) => h("span.label-chip", null, `${k}=${JSON.stringify(v)}`));

const stateBadge = (state) => h("span.badge.state", { class: state, dataset: { state } }, state);
const healthBadge = (health) => h("span.badge.health", { class: health === "err" ? "error" : health, dataset: { health } }, health);
const langBadge = (src) => h("span.badge.lang", { dataset: { lang: src.lang }, title: src.name + " rules" }, src.name);

export async function render(main) {
  const filter = { state: params.get("state"), health: params.get("health"), search: params.get("search") };
  if (!STATES.includes(filter.state)) filter.state = "";
  const refreshSel = h("select", { "aria-label": "Refresh every" },
    ["15s", "60s", "off"].map((v) => h("option", { value: v, selected: v === "15s" }, v === "off" ? "no refresh" : "every " + v)));
  const info = h("span.muted.alerts-info");
  const err = h("div");
  const stateBtns = h("div.seg.state-filter", { role: "group", "aria-label": "State" });
  const healthSel = h("select", { "aria-label": "Health" },
    [["", "any health"], ["ok", "ok"], ["err", "err"], ["unknown", "unknown"]].map(([v, t]) => h("option", { value: v }, t)));
  healthSel.value = filter.health;
  const search = h("input", { type: "search", placeholder: "Filter by name, label or query", "aria-label": "Filter rules", value: filter.search });
  const active = h("div");
  const groups = h("div");
  const managers = h("div");
  clear(main,
    h("div.panel-head", null, h("h1", null, "Alerts"), info, h("span.spacer"), refreshSel),
    err,
    h("div.row.alerts-filter", null, stateBtns, healthSel, search),
    h("section.panel.active-alerts", null, h("div.panel-head", null, h("h2", null, "Firing and pending"),
      h("span.muted", null, "alerts of the rules below, firing first")), active),
    groups,
    h("section.panel.alertmanagers", null, h("div.panel-head", null, h("h2", null, "Alertmanagers"),
      h("span.muted", null, "where firing alerts are sent")), managers));

  let data = null; // the last answers, drawn again when the filter changes
  const openRules = new Set(); // the rules whose details are open, across refreshes

  const changed = () => {
    filter.health = healthSel.value;
    filter.search = search.value.trim();
    params.set(filter);
    if (data) draw(data);
  };
  healthSel.addEventListener("change", changed);
  search.addEventListener("input", changed);

  async function refresh() {
    if (document.hidden && data) return; // a tab in the background draws nothing
    const answer = (path) => get(path).then((r) => ({ data: r.data }), (e) => ({ error: e }));
    const [prom, logql, ams] = await Promise.all([...SOURCES.map((s) => answer(s.path)), answer("/api/v1/alertmanagers")]);
    data = { rules: [prom, logql], ams, at: Date.now() };
    draw(data);
    markReady();
  }

  // matches tells the rules (and their alerts) the filter keeps.
  function matches(rule, alert) {
    if (filter.state && (alert ? alert.state : rule.state) !== filter.state) return false;
    if (filter.health && rule.health !== filter.health) return false;
    const q = filter.search.toLowerCase();
    if (!q) return true;
    const labels = Object.entries(Object.assign({}, rule.labels, alert && alert.labels)).map(([k, v]) => `${k}=${v}`);
    return [rule.name, rule.query, rule.group.name, ...labels].some((s) => String(s).toLowerCase().includes(q));
  }

  function draw(d) {
    // Every rule, with its group and language; errors of either API shown
    // beside what the other answered.
    const errors = [];
    const all = [];
    const groupList = [];
    d.rules.forEach((r, i) => {
      const src = SOURCES[i];
      if (r.error) {
        errors.push(new Error(`${src.name} rules (${src.path}): ${r.error.message}`));
        return;
      }
      for (const [gi, g] of ((r.data && r.data.groups) || []).entries()) {
        const rules = (g.rules || []).map((rule, ri) => Object.assign({}, rule, { src, group: g, id: `rule-${src.lang}-${gi}-${ri}` }));
        groupList.push({ src, g, rules });
        all.push(...rules);
      }
    });
    if (d.ams.error) errors.push(new Error(`Alertmanagers (/api/v1/alertmanagers): ${d.ams.error.message}`));
    clear(err, errors.map(alertBox));

    const alerting = all.filter((r) => r.type === "alerting");
    const count = (s) => alerting.filter((r) => r.state === s).length;
    const alerts = [];
    for (const r of alerting) for (const a of r.alerts || []) alerts.push({ a, r });
    const firing = alerts.filter((x) => x.a.state === "firing").length;
    const pending = alerts.filter((x) => x.a.state === "pending").length;
    const errs = all.filter((r) => r.health === "err").length;
    clear(info, `${firing} firing · ${pending} pending · ${all.length} rule${all.length === 1 ? "" : "s"} in ${groupList.length} group${groupList.length === 1 ? "" : "s"}`,
      errs ? h("span.error", null, ` · ${errs} failing`) : null, ` · updated ${ago(d.at)}`);

    // The state filter, with each state's count of alerting rules.
    clear(stateBtns, [["", "All", all.length], ...STATES.map((s) => [s, s[0].toUpperCase() + s.slice(1), count(s)])].map(([s, label, n]) =>
      h("button", {
        type: "button", class: filter.state === s ? "active" : "", dataset: { state: s },
        "aria-pressed": String(filter.state === s),
        onclick: () => {
          filter.state = s;
          changed();
        },
      }, label, h("span.count", null, String(n)))));

    drawActive(alerts.filter((x) => matches(x.r, x.a)), alerts.length);
    drawGroups(groupList, all.length, errors.length > 0);
    drawManagers(d.ams.data);
  }

  function drawActive(list, total) {
    const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
    list.sort((x, y) => ORDER[x.a.state] - ORDER[y.a.state] || cmp(x.r.name, y.r.name) ||
      when(x.a.activeAt) - when(y.a.activeAt) || cmp(labelsText(x.a.labels || {}), labelsText(y.a.labels || {})));
    if (!list.length) {
      clear(active, h("p.note", null, total ? "No firing or pending alert matches the filter." : "No alert is firing or pending."));
      return;
    }
    clear(active, h("div.scroll", { style: { maxHeight: "480px" } }, h("table.alert-list", null,
      h("thead", null, h("tr", null, h("th", null, "state"), h("th", null, "alert"), h("th.num", null, "value"),
        h("th", null, "active since"), h("th", null, "rule"))),
      h("tbody", null, list.map(({ a, r }) => {
        const since = when(a.activeAt);
        return h("tr.active-alert", { dataset: { state: a.state, rule: r.name, lang: r.src.lang } },
          h("td", null, stateBadge(a.state)),
          h("td", null, h("div", null, h("a.alert-name", { href: "#" + r.id, title: "Show the rule", onclick: (e) => showRule(e, r.id) }, (a.labels && a.labels.alertname) || r.name), " ", labelChips(a.labels)),
            a.annotations && a.annotations.summary ? h("div.muted.annotation", null, a.annotations.summary) : null),
          h("td.num.mono", { title: a.value }, num(parseFloat(a.value))),
          h("td", null, Number.isNaN(since) ? "–" : h("span", { title: dateTime(since) }, ago(since)),
            when(a.keepFiringSince) ? h("div.muted", null, "kept firing since " + ago(when(a.keepFiringSince))) : null),
          h("td", null, langBadge(r.src), " ", h("span.muted", null, r.group.name), " ",
            h("a.query-link", { href: queryLink(r.src.lang, r.query), title: r.query }, r.src.lang === "logql" ? "Logs" : "Metrics")));
      })))));
  }

  // showRule scrolls to a rule's row and marks it (not through the URL's
  // fragment: app.js draws the page again on popstate).
  function showRule(e, id) {
    e.preventDefault();
    const row = document.getElementById(id);
    if (!row) return;
    for (const r of groups.querySelectorAll("tr.rule.target")) r.classList.remove("target");
    row.classList.add("target");
    row.scrollIntoView({ block: "center" });
  }

  function drawGroups(groupList, total, failed) {
    if (!total) {
      clear(groups, h("section.panel.no-rules", null, h("p.empty", null,
        failed ? "No rule could be read (see the error above)."
          : "No rules loaded: see rules.files / --rules-files (PromQL) and rules.logql_files / --logql-rules-files (LogQL).")));
      return;
    }
    const shown = groupList.map(({ src, g, rules }) => ({ src, g, rules: rules.filter((r) => matches(r)) }))
      .filter((x) => x.rules.length);
    if (!shown.length) {
      clear(groups, h("section.panel", null, h("p.empty", null, "No rule matches the filter.")));
      return;
    }
    clear(groups, shown.map(({ src, g, rules }) => h("section.panel.rule-group", { dataset: { group: g.name, lang: src.lang } },
      h("div.panel-head", null, h("h2", null, g.name), langBadge(src),
        h("span.muted", null, `${g.file} · every ${formatDuration(g.interval * 1000)} · evaluated `, agoOf(g.lastEvaluation),
          ` in ${durationOf(g.evaluationTime)}`)),
      h("table.rules", null,
        h("thead", null, h("tr", null, h("th.c-state", null, "state"), h("th", null, "rule"), h("th.c-health", null, "health"),
          h("th.c-eval", null, "last evaluation"), h("th.num.c-took", null, "took"))),
        h("tbody", null, rules.map(ruleRow))))));
  }

  function ruleRow(r) {
    const alerting = r.type === "alerting";
    const n = (r.alerts || []).length;
    const details = alerting ? h("details.rule-details", {
      open: openRules.has(r.id),
      ontoggle: (e) => (e.target.open ? openRules.add(r.id) : openRules.delete(r.id)),
    },
    h("summary", null, n ? `${n} active alert${n === 1 ? "" : "s"}` : "definition"),
    h("table.kv", null, h("tbody", null,
      h("tr", null, h("td", null, "for"), h("td", null, formatDuration(r.duration * 1000))),
      r.keepFiringFor ? h("tr", null, h("td", null, "keep_firing_for"), h("td", null, formatDuration(r.keepFiringFor * 1000))) : null,
      Object.entries(r.annotations || {}).map(([k, v]) => h("tr", null, h("td", null, k), h("td", null, v))))),
    n ? h("table.rule-alerts", null, h("tbody", null, r.alerts.map((a) => h("tr", null,
      h("td", null, stateBadge(a.state)), h("td", null, labelChips(a.labels)),
      h("td.num.mono", { title: a.value }, num(parseFloat(a.value))),
      h("td", null, Number.isNaN(when(a.activeAt)) ? "–" : h("span", { title: dateTime(when(a.activeAt)) }, ago(when(a.activeAt)))))))) : null)
      : null;
    return h("tr.rule", { id: r.id, dataset: { rule: r.name, type: r.type, state: r.state || "", health: r.health, lang: r.src.lang } },
      h("td", null, alerting ? stateBadge(r.state) : h("span.badge.recording", null, "recording")),
      h("td", null,
        h("div", null, h("b.rule-name", null, r.name), " ", labelChips(r.labels)),
        h("a.query-link.rule-query", { href: queryLink(r.src.lang, r.query), title: `Run the query on the ${r.src.lang === "logql" ? "logs" : "metrics"} page` }, r.query),
        details),
      h("td", null, healthBadge(r.health), r.lastError ? h("div.error.rule-error", null, r.lastError) : null),
      h("td", null, agoOf(r.lastEvaluation)),
      h("td.num", null, durationOf(r.evaluationTime)));
  }

  function drawManagers(am) {
    const act = (am && am.activeAlertmanagers) || [], dropped = (am && am.droppedAlertmanagers) || [];
    if (!am) {
      clear(managers);
      return;
    }
    clear(managers, act.length
      ? h("ul.am-list", null, act.map((x) => h("li.mono", { dataset: { url: x.url } }, x.url)))
      : h("p.note", null, "No Alertmanager: alerts are evaluated but not sent (see alerting: or --alertmanager-url)."),
    dropped.length ? [h("h3", null, "Dropped"), h("ul.am-list.dropped", null, dropped.map((x) => h("li.mono.muted", null, x.url)))] : null);
  }

  await autoRefresh(refreshSel, refresh);
}
