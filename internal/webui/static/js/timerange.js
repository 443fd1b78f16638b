// The time range picker of the metrics and logs pages: a range (a
// duration, presets offered) ending at a time (empty: now).
import { h } from "./dom.js";
import { formatDuration, parseDuration } from "./format.js";

const presets = ["5m", "15m", "30m", "1h", "3h", "6h", "12h", "1d", "2d", "7d", "14d"];
let uid = 0;

// localInput writes ms as a datetime-local input's value.
function localInput(ms) {
  const d = new Date(ms);
  const p = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

// rangePicker returns {el, range(), end(), set(rangeMs, endMs|null),
// window() → {start, end} in ms}; onChange runs after the user changes
// either.
export function rangePicker({ range = "1h", end = "", onChange }) {
  const id = "ranges" + uid++;
  const rangeIn = h("input", { type: "text", list: id, value: range, size: 6, title: "Range: a duration such as 1h, 30m, 2d", "aria-label": "Range" });
  const endIn = h("input", { type: "datetime-local", step: 1, title: "End of the range (empty: now)", "aria-label": "End" });
  if (end) endIn.value = localInput(Number(end));
  const changed = () => onChange && onChange();
  const validate = () => {
    const ok = !Number.isNaN(parseDuration(rangeIn.value));
    rangeIn.setCustomValidity(ok ? "" : "not a duration");
    return ok;
  };
  rangeIn.addEventListener("change", () => validate() && changed());
  endIn.addEventListener("change", changed);
  const shift = (dir) => {
    const r = parseDuration(rangeIn.value) || 3.6e6;
    const e = (endIn.value ? new Date(endIn.value).getTime() : Date.now()) + (dir * r) / 2;
    endIn.value = e >= Date.now() ? "" : localInput(e);
    changed();
  };
  const el = h("div.row.range", null,
    h("label", null, "Range", rangeIn),
    h("datalist", { id }, presets.map((p) => h("option", { value: p }))),
    h("label", null, "End", h("span.row", { style: { gap: "4px", alignItems: "center" } },
      h("button", { type: "button", title: "Earlier", onclick: () => shift(-1) }, "‹"),
      endIn,
      h("button", { type: "button", title: "Later", onclick: () => shift(1) }, "›"),
      h("button", { type: "button", title: "End now", onclick: () => { endIn.value = ""; changed(); } }, "now"))),
  );
  return {
    el,
    range() {
      const r = parseDuration(rangeIn.value);
      return Number.isNaN(r) || r <= 0 ? 3.6e6 : r;
    },
    rangeText() {
      return rangeIn.value;
    },
    end() {
      return endIn.value ? new Date(endIn.value).getTime() : null;
    },
    set(rangeMs, endMs) {
      rangeIn.value = formatDuration(Math.max(1000, Math.round(rangeMs)));
      endIn.value = endMs == null ? "" : localInput(endMs);
    },
    window() {
      const end = this.end() ?? Date.now();
      return { start: end - this.range(), end };
    },
  };
}

// autoStep is a step in seconds giving about points points over rangeMs,
// rounded to a familiar value.
export function autoStep(rangeMs, points = 250) {
  const raw = rangeMs / 1000 / points;
  const nice = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400];
  return nice.find((n) => n >= raw) || Math.ceil(raw / 86400) * 86400;
}
