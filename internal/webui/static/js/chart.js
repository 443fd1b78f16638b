// Time-series charts over uPlot: theme colors from the CSS variables
// (redrawn when the color scheme changes), a width that follows the
// container, a tooltip listing the values under the cursor, optional
// stacking, and a drag-to-select callback for zooming.
import uPlot from "../vendor/uplot/uPlot.esm.js";
import { dateTime, num } from "./format.js";
import { h } from "./dom.js";

// palette: distinct in light and dark themes.
export const palette = [
  "#5794f2", "#73bf69", "#f2cc0c", "#ff7383", "#b877d9", "#ff9830", "#37872d", "#8ab8ff",
  "#fade2a", "#c4162a", "#1f60c4", "#8f3bb8", "#96d98d", "#ffb357", "#e02f44", "#5ab4c4",
];

// colorOf gives each name its palette color, the same on every page load.
export function colorOf(name) {
  let x = 0;
  for (let i = 0; i < name.length; i++) x = (x * 31 + name.charCodeAt(i)) >>> 0;
  return palette[x % palette.length];
}

function cssVar(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

const live = new Set();
matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => {
  for (const c of live) c.rebuild();
});

// timeChart draws into el. opts: height, series [{label, color, width,
// fill, points}], data [xs in seconds, ys...], yFmt (axis and tooltip),
// stacked, bars, points (scatter), onSelect(fromSec, toSec), onClick(idx,
// seriesIdx), xRange [min, max] in seconds, tooltip (default true).
// It returns {update(data, series), destroy(), u}.
export function timeChart(el, opts) {
  const c = {
    el, opts, u: null, raw: opts.data, series: opts.series,
    update(data, series) {
      const same = !series || (series.length === this.series.length && series.every((s, i) => s.label === this.series[i].label));
      this.raw = data;
      if (series) this.series = series;
      if (!same || !this.u) return this.rebuild();
      this.u.setData(this.stacked(data), true);
      this.count();
      if (this.opts.xRange) this.u.setScale("x", { min: this.opts.xRange[0], max: this.opts.xRange[1] });
    },
    destroy() {
      live.delete(this);
      ro.disconnect();
      if (this.u) this.u.destroy();
      this.u = null;
    },
    stacked(data) {
      if (!this.opts.stacked) return data;
      // Series i shows the sum of series 0..i, drawn biggest first.
      const out = [data[0]];
      const acc = new Array(data[0].length).fill(0);
      const cum = [];
      for (let i = 1; i < data.length; i++) {
        cum.push(data[i].map((v, j) => (v == null ? (acc[j] || null) : (acc[j] += v))));
      }
      return out.concat(cum.reverse());
    },
    rebuild() {
      if (this.u) this.u.destroy();
      this.el.replaceChildren();
      this.u = new uPlot(this.options(), this.stacked(this.raw), this.el);
      this.count();
    },
    // count tells what is drawn (data-series, data-points on the
    // container), for tests and tools.
    count() {
      let n = 0;
      for (let i = 1; i < this.raw.length; i++) for (const v of this.raw[i]) if (v != null) n++;
      this.el.dataset.series = String(this.raw.length - 1);
      this.el.dataset.points = String(n);
    },
    options() {
      const o = this.opts;
      const axis = cssVar("--axis"), grid = cssVar("--grid");
      let series = this.series.map((s, i) => {
        const color = s.color || palette[i % palette.length];
        const base = {
          label: s.label, stroke: color, width: s.width ?? 1.5, spanGaps: false,
          points: o.points ? { show: true, size: 7, fill: color } : { size: 4, fill: color },
          value: (u, v) => (v == null ? "–" : (o.yFmt || num)(v)),
        };
        if (o.points) base.paths = () => null;
        if (o.bars) {
          base.paths = uPlot.paths.bars({ size: [0.85, 60], align: 0 });
          base.points = { show: false };
          base.fill = color;
          base.width = 0;
        } else if (s.fill || o.stacked) {
          base.fill = color + (o.stacked ? "aa" : "26");
        }
        return base;
      });
      if (o.stacked) series = series.reverse();
      const hooks = { setSelect: [], setCursor: [] };
      const opt = {
        width: this.el.clientWidth || 600,
        height: o.height || 200,
        legend: { show: false },
        cursor: { drag: { x: Boolean(o.onSelect), y: false, setScale: false }, points: { size: 6 }, focus: { prox: 16 } },
        focus: { alpha: 0.35 },
        scales: { x: { time: true, ...(o.xRange ? { range: () => o.xRange } : {}) }, y: { range: yRange(o) } },
        axes: [
          { stroke: axis, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 }, values: timeTicks, incrs: timeIncrs, space: 64 },
          { stroke: axis, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 }, size: o.ySize || 56, space: 24,
            values: (u, vals) => vals.map((v) => (o.yFmt || num)(v)) },
        ],
        series: [{ value: (u, v) => (v == null ? "–" : dateTime(v * 1000)) }, ...series],
        hooks,
      };
      if (o.onSelect) {
        hooks.setSelect.push((u) => {
          if (u.select.width < 4) return;
          const from = u.posToVal(u.select.left, "x"), to = u.posToVal(u.select.left + u.select.width, "x");
          u.setSelect({ left: 0, width: 0 }, false);
          o.onSelect(from, to);
        });
      }
      if (o.onClick) {
        hooks.ready = [(u) => u.over.addEventListener("click", () => {
          const i = u.cursor.idx;
          if (i != null) o.onClick(i, o.stacked ? null : u.cursor.focus?.idx ?? null);
        })];
      }
      if (o.tooltip !== false) hooks.setCursor.push(tooltip(this));
      return opt;
    },
  };
  const ro = new ResizeObserver(() => {
    if (c.u && el.clientWidth && Math.abs(c.u.width - el.clientWidth) > 1) c.u.setSize({ width: el.clientWidth, height: c.u.height });
  });
  ro.observe(el);
  live.add(c);
  c.rebuild();
  return c;
}

// timeIncrs are the x axis' tick spacings: whole seconds and up.
const timeIncrs = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800, 2592000];

// timeTicks labels the x axis in 24-hour local time, with the date when
// ticks are a day or more apart or the range spans days.
function timeTicks(u, splits, axisIdx, space, incr) {
  const p = (n) => String(n).padStart(2, "0");
  const span = (u.scales.x.max ?? 0) - (u.scales.x.min ?? 0);
  return splits.map((s) => {
    const d = new Date(s * 1000);
    const hm = `${p(d.getHours())}:${p(d.getMinutes())}`;
    if (incr >= 86400) return `${p(d.getMonth() + 1)}-${p(d.getDate())}`;
    if (span > 86400 && d.getHours() === 0 && d.getMinutes() === 0) return `${p(d.getMonth() + 1)}-${p(d.getDate())}`;
    return incr < 60 ? `${hm}:${p(d.getSeconds())}` : hm;
  });
}

// yRange starts the y axis at zero for non-negative data, with headroom.
function yRange(o) {
  return (u, min, max) => {
    if (min == null || max == null) return [0, 1];
    if (o.points) {
      const pad = (max - min) * 0.08 || Math.abs(max) * 0.1 || 1;
      return [Math.max(0, min - pad), max + pad];
    }
    const lo = min >= 0 ? 0 : min * 1.05;
    const hi = max <= 0 ? 0 : max * 1.08;
    return hi === lo ? [lo, lo + 1] : [lo, hi];
  };
}

// tooltip shows the time and the values (raw, not stacked) under the
// cursor, largest first, at most 12.
function tooltip(c) {
  let tip = null;
  return (u) => {
    const i = u.cursor.idx;
    if (i == null || u.cursor.left < 0) {
      if (tip) tip.hidden = true;
      return;
    }
    if (!tip) {
      tip = h("div.tooltip");
      c.el.append(tip);
    }
    const o = c.opts;
    const rows = [];
    for (let s = 0; s < c.series.length; s++) {
      const v = c.raw[s + 1][i];
      if (v == null) continue;
      rows.push([c.series[s], v, s]);
    }
    if (!rows.length) {
      tip.hidden = true;
      return;
    }
    rows.sort((a, b) => b[1] - a[1]);
    const shown = rows.slice(0, 12);
    tip.replaceChildren(
      h("div.muted", null, (o.xFmt || ((x) => dateTime(x * 1000, false)))(c.raw[0][i])),
      ...shown.map(([s, v, idx]) => h("div", null,
        h("span.dot", { style: { background: s.color || palette[idx % palette.length] } }),
        h("span.mono", null, s.label), " ", h("b", null, (o.yFmt || num)(v)))),
      rows.length > shown.length ? h("div.muted", null, `+${rows.length - shown.length} more`) : null,
    );
    tip.hidden = false;
    const left = u.cursor.left + u.over.offsetLeft, top = u.cursor.top + u.over.offsetTop;
    const w = tip.offsetWidth;
    tip.style.left = (left + 16 + w > c.el.clientWidth ? Math.max(0, left - w - 16) : left + 16) + "px";
    tip.style.top = Math.max(0, top - 10) + "px";
  };
}

// legend lists the series with their colors; clicking one shows it alone,
// clicking it again shows all.
export function legend(chart, labels) {
  const el = h("div.legend");
  let alone = -1;
  labels.forEach((label, i) => {
    const color = chart.series[i].color || palette[i % palette.length];
    el.append(h("span", {
      title: "Show this series alone",
      onclick: () => {
        alone = alone === i ? -1 : i;
        const n = chart.series.length;
        for (let s = 0; s < n; s++) {
          const idx = chart.opts.stacked ? n - s : s + 1;
          chart.u.setSeries(idx, { show: alone < 0 || alone === s });
        }
        [...el.children].forEach((c, j) => c.classList.toggle("off", alone >= 0 && alone !== j));
      },
    }, h("span.dot", { style: { background: color } }), label));
  });
  return el;
}
