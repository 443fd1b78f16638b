// Number, size, duration and time formatting shared by the pages.

const SI = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];

// num formats a count or rate compactly: 1234567 → "1.23M", 0.5 → "0.5".
export function num(v, digits = 3) {
  if (v == null || Number.isNaN(v)) return "–";
  if (!Number.isFinite(v)) return v > 0 ? "+Inf" : "-Inf";
  const a = Math.abs(v);
  for (const [m, s] of SI) if (a >= m) return trim((v / m).toPrecision(digits)) + s;
  if (a === 0) return "0";
  if (a < 0.001) return v.toExponential(2);
  return trim(v.toPrecision(digits));
}

// int formats a whole number with thousands separators.
export function int(v) {
  if (v == null || Number.isNaN(v)) return "–";
  return Math.round(v).toLocaleString("en-US");
}

function trim(s) {
  return s.includes(".") && !s.includes("e") ? s.replace(/\.?0+$/, "") : s;
}

// bytes formats a size in binary units: 1536 → "1.5 KiB".
export function bytes(v) {
  if (v == null || Number.isNaN(v)) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let i = 0;
  let a = Math.abs(v);
  while (a >= 1024 && i < units.length - 1) {
    a /= 1024;
    v /= 1024;
    i++;
  }
  return (i === 0 ? String(Math.round(v)) : trim(v.toPrecision(3))) + " " + units[i];
}

// micros formats a duration in microseconds: 1500 → "1.5ms".
export function micros(us) {
  if (us == null || Number.isNaN(us)) return "–";
  if (us === 0) return "0";
  if (us < 1) return trim((us * 1000).toFixed(0)) + "ns";
  if (us < 1000) return trim(us.toPrecision(3)) + "µs";
  if (us < 1e6) return trim((us / 1e3).toPrecision(3)) + "ms";
  return seconds(us / 1e6);
}

// seconds formats a duration in seconds: 75 → "1m 15s".
export function seconds(s) {
  if (s == null || Number.isNaN(s)) return "–";
  if (s < 60) return trim(s.toPrecision(3)) + "s";
  const d = Math.floor(s / 86400), hh = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60), ss = Math.floor(s % 60);
  if (d) return `${d}d ${hh}h`;
  if (hh) return `${hh}h ${m}m`;
  return `${m}m ${ss}s`;
}

const pad = (n, w = 2) => String(n).padStart(w, "0");

// dateTime formats ms since the epoch as local "2026-01-02 15:04:05.000".
export function dateTime(ms, withMillis = true) {
  const d = new Date(ms);
  const s = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return withMillis ? s + "." + pad(d.getMilliseconds(), 3) : s;
}

// ago formats how long before now ms was: "5m ago".
export function ago(ms, now = Date.now()) {
  const s = (now - ms) / 1000;
  if (s < 0) return "in the future";
  if (s < 1) return "just now";
  return seconds(Math.round(s)) + " ago";
}

// parseDuration reads a Prometheus-style duration ("1h30m", "90s",
// "250ms") into milliseconds; NaN if malformed.
export function parseDuration(s) {
  s = String(s).trim();
  if (/^\d+(\.\d+)?$/.test(s)) return parseFloat(s) * 1000;
  const re = /(\d+(?:\.\d+)?)(ms|us|µs|ns|y|w|d|h|m|s)/gy;
  const mult = { ns: 1e-6, us: 1e-3, "µs": 1e-3, ms: 1, s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7, w: 6.048e8, y: 3.1536e10 };
  let total = 0, m, at = 0;
  while ((m = re.exec(s))) {
    total += parseFloat(m[1]) * mult[m[2]];
    at = re.lastIndex;
  }
  return at === s.length && at > 0 ? total : NaN;
}

// formatDuration writes ms as a Prometheus duration: 5400000 → "1h30m".
export function formatDuration(ms) {
  if (!ms) return "0s";
  const parts = [];
  for (const [u, m] of [["d", 8.64e7], ["h", 3.6e6], ["m", 6e4], ["s", 1e3]]) {
    if (ms >= m) {
      parts.push(Math.floor(ms / m) + u);
      ms %= m;
    }
  }
  if (ms >= 1) parts.push(Math.round(ms) + "ms");
  return parts.join("");
}

// labelsText writes a label set as {a="b", c="d"}, the name first if any.
export function labelsText(metric) {
  const name = metric.__name__ || "";
  const rest = Object.entries(metric)
    .filter(([k]) => k !== "__name__")
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  return name + (rest.length || !name ? `{${rest.join(", ")}}` : "");
}
