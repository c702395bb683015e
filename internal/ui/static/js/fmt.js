// Words for times, durations and schedules.

const UNITS = { h: 3600e3, m: 60e3, s: 1e3, ms: 1, "µs": 1e-3, us: 1e-3, ns: 1e-6 };

// parseDuration reads a Go duration string ("1m30s", "500ms") into ms.
export function parseDuration(str) {
  if (typeof str !== "string" || str === "") return NaN;
  if (str === "0") return 0;
  const re = /(\d+(?:\.\d+)?)(h|ms|m|s|µs|us|ns)/gy;
  let total = 0, m, at = 0;
  const neg = str[0] === "-";
  if (neg || str[0] === "+") re.lastIndex = at = 1;
  while ((m = re.exec(str))) { total += parseFloat(m[1]) * UNITS[m[2]]; at = re.lastIndex; }
  if (at !== str.length) return NaN;
  return neg ? -total : total;
}

// short renders ms compactly: "45s", "4m", "2h5m", "3d".
export function short(ms) {
  ms = Math.abs(ms);
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 && m < 10 ? `${m}m${s % 60}s` : `${m}m`;
  const hr = Math.floor(m / 60);
  if (hr < 48) return m % 60 ? `${hr}h${m % 60}m` : `${hr}h`;
  return `${Math.floor(hr / 24)}d`;
}

// relative renders a time as "in 4m" or "4m ago".
export function relative(iso, now = Date.now()) {
  if (!iso) return "-";
  const d = Date.parse(iso) - now;
  if (Math.abs(d) < 1000) return "now";
  return d > 0 ? `in ${short(d)}` : `${short(d)} ago`;
}

// exact renders a time for a tooltip: RFC 3339 UTC and the local time.
export function exact(iso) {
  if (!iso) return "";
  const t = new Date(iso);
  return `${t.toISOString().replace(".000Z", "Z")} (${t.toLocaleString()})`;
}

export function utc(iso) {
  return iso ? new Date(iso).toISOString().replace(".000Z", "Z") : "-";
}

const WORDS = [[86400e3, "day"], [3600e3, "hour"], [60e3, "minute"], [1e3, "second"], [1, "millisecond"]];

// durationWords: 90000 → "1 minute 30 seconds".
export function durationWords(ms) {
  if (!(ms > 0)) return String(ms);
  const parts = [];
  for (const [size, word] of WORDS) {
    const n = Math.floor(ms / size);
    if (n > 0) { parts.push(n === 1 ? `1 ${word}` : `${n} ${word}s`); ms -= n * size; }
  }
  return parts.join(" ");
}

// schedule describes a task's schedule: what was written and in words.
export function schedule(t) {
  if (t.cron) {
    const exprs = Array.isArray(t.cron) ? t.cron : [t.cron];
    return { written: exprs.join(" | "), words: exprs.map(cronWords).join("; and ") };
  }
  if (Array.isArray(t.at) && t.at.length) {
    return { written: `at ${t.at.length} time${t.at.length > 1 ? "s" : ""}`, words: t.at.length === 1 ? `once, at ${utc(t.at[0])}` : `at ${t.at.map(utc).join(", ")}` };
  }
  const ms = parseDuration(t.interval);
  const words = ms === 60e3 ? "every minute" : ms === 3600e3 ? "every hour" : ms === 86400e3 ? "every day" : `every ${durationWords(ms)}`;
  return { written: `@every ${t.interval}`, words };
}

const MACROS = {
  "@yearly": "once a year, at midnight on 1 January", "@annually": "once a year, at midnight on 1 January",
  "@monthly": "at midnight on the first of every month", "@weekly": "at midnight every Sunday",
  "@daily": "every day at midnight", "@midnight": "every day at midnight", "@hourly": "at the start of every hour",
};
const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

// cronWords: the common cron forms in words; anything else as written.
export function cronWords(expr) {
  const e = expr.trim();
  if (MACROS[e.toLowerCase()]) return MACROS[e.toLowerCase()];
  let f = e.split(/\s+/);
  let sec = null;
  if (f.length === 6) [sec, ...f] = f;
  if (f.length !== 5) return e;
  const [min, hour, dom, mon, dow] = f;
  const any = (x) => x === "*" || x === "?";
  const num = (x) => /^\d+$/.test(x);
  let when;
  if (num(min) && num(hour)) when = `at ${hour.padStart(2, "0")}:${min.padStart(2, "0")}`;
  else if (num(min) && any(hour)) when = `at minute ${min} of every hour`;
  else if (/^\*\/\d+$/.test(min) && any(hour)) when = `every ${min.slice(2)} minutes`;
  else if (any(min) && any(hour)) when = "every minute";
  else return e;
  if (sec !== null && sec !== "0") return e;
  if (!any(mon)) return e;
  if (any(dom) && any(dow)) return num(min) && num(hour) ? `every day ${when}` : when;
  if (any(dom) && /^[0-7](-[0-7])?$/.test(dow)) {
    const [a, b] = dow.split("-").map(Number);
    return `${when}, ${b === undefined ? "on " + DAYS[a] + "s" : DAYS[a] + " to " + DAYS[b]}`;
  }
  if (num(dom) && any(dow)) return `${when} on day ${dom} of the month`;
  return e;
}

export function zone(t) {
  return t.timezone || "UTC";
}
