// The run timeline: one bar per run from enqueue to end, the wait before
// the start drawn light and the run itself solid, coloured by outcome; drops
// and forced ends carry a marker. Built from the task's audit rows.
import { s, h, clear } from "./dom.js";
import { utc, short } from "./fmt.js";

// runsOf pairs a task's history rows into runs.
export function runsOf(rows) {
  const runs = new Map();
  for (const r of rows) {
    if (!r.run) continue;
    let run = runs.get(r.run);
    if (!run) runs.set(r.run, (run = { run: r.run, outcome: "waiting" }));
    const at = Date.parse(r.at);
    switch (r.event) {
      case "RunEnqueued": run.enqueued = at; break;
      case "RunStarted": run.started = at; run.outcome = "running"; run.deadline = r.deadline && Date.parse(r.deadline); break;
      case "RunCompleted": run.ended = at; run.outcome = "completed"; break;
      case "RunFailed": run.ended = at; run.outcome = "failed"; run.detail = r.detail; break;
      case "RunDropped": run.ended = at; run.outcome = "dropped"; run.reason = r.reason; run.detail = r.text; break;
      case "RunForcedEnd": run.ended = at; run.outcome = "forced"; run.reason = r.reason; run.detail = r.text; break;
    }
  }
  return [...runs.values()].filter((r) => r.enqueued !== undefined || r.started !== undefined);
}

const W = 1000, LANE = 18, TOP = 22, PAD = 4;

// drawTimeline renders runs over [now - span, now] into el; onPick(ms) is
// called with the time under a click (to explain it).
export function drawTimeline(el, runs, span, now, onPick) {
  clear(el);
  const from = now - span;
  const x = (t) => Math.max(0, Math.min(W, ((t - from) / span) * W));
  const visible = runs.filter((r) => (r.ended ?? now) >= from && (r.enqueued ?? r.started) <= now);
  // Lanes: a run goes to the first lane free at its enqueue.
  const laneEnd = [];
  const placed = visible.map((r) => {
    const start = r.enqueued ?? r.started, end = r.ended ?? now;
    let lane = laneEnd.findIndex((e) => x(e) + 2 <= x(start));
    if (lane < 0) lane = laneEnd.length;
    laneEnd[lane] = end;
    return { r, lane, start, end };
  });
  const lanes = Math.max(1, laneEnd.length);
  const height = TOP + lanes * (LANE + PAD) + 4;
  const svg = s("svg", { viewBox: `0 0 ${W} ${height}`, class: "timeline", role: "img",
    "aria-label": `Run timeline of the last ${short(span)}: ${visible.length} runs` });
  // Axis: six ticks, in UTC like every other time on the dashboard, the
  // zone named on the newest one.
  for (let i = 0; i <= 6; i++) {
    const t = from + (span * i) / 6;
    const label = axisLabel(t, span, from, now) + (i === 6 ? " UTC" : "");
    const half = label.length * 3.3;
    svg.append(s("line", { x1: x(t), x2: x(t), y1: TOP - 4, y2: height, class: "grid" }),
      s("text", { x: Math.min(Math.max(x(t), half), W - half), y: 12, "text-anchor": "middle", class: "axis", text: label }));
  }
  for (const { r, lane, start, end } of placed) {
    const y = TOP + lane * (LANE + PAD);
    const title = s("title", { text: describe(r) });
    const g = s("g", { class: `run o-${r.outcome}`, "data-run": r.run, "data-outcome": r.outcome }, title);
    if (r.started !== undefined && r.started > start) {
      g.append(s("rect", { x: x(start), y: y + LANE / 3, width: Math.max(1, x(r.started) - x(start)), height: LANE / 3, class: "wait" }));
    }
    const s0 = r.started ?? start;
    if (r.started !== undefined) {
      g.append(s("rect", { x: x(s0), y, width: Math.max(3, x(end) - x(s0)), height: LANE, rx: 2, class: "bar" }));
    } else if (r.ended === undefined) {
      g.append(s("rect", { x: x(start), y: y + LANE / 3, width: Math.max(3, x(end) - x(start)), height: LANE / 3, class: "wait" }));
    } else {
      g.append(s("rect", { x: x(start), y: y + LANE / 3, width: Math.max(1, x(end) - x(start)), height: LANE / 3, class: "wait" }));
    }
    if (r.outcome === "dropped") {
      const cx = x(end), cy = y + LANE / 2, d = 5;
      g.append(s("path", { d: `M${cx - d} ${cy - d}L${cx + d} ${cy + d}M${cx - d} ${cy + d}L${cx + d} ${cy - d}`, class: "mark" }));
    }
    if (r.outcome === "forced") {
      const cx = x(end);
      g.append(s("path", { d: `M${cx} ${y - 2}L${cx + 6} ${y + LANE / 2}L${cx} ${y + LANE + 2}Z`, class: "mark" }));
    }
    svg.append(g);
  }
  svg.addEventListener("click", (e) => {
    const box = svg.getBoundingClientRect();
    if (onPick && box.width > 0) onPick(from + ((e.clientX - box.left) / box.width) * span);
  });
  el.append(svg);
  return visible.length;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

// axisLabel is tick t in UTC, 24-hour: "14:05", with seconds when the span
// is 15 minutes or less ("14:05:30"), and with the date ("Nov 27 23:50")
// when [from, now] crosses a UTC day.
export function axisLabel(t, span, from, now) {
  const d = new Date(t);
  const p2 = (n) => String(n).padStart(2, "0");
  let label = `${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}`;
  if (span <= 15 * 60e3) label += `:${p2(d.getUTCSeconds())}`;
  if (new Date(from).toISOString().slice(0, 10) !== new Date(now).toISOString().slice(0, 10)) {
    label = `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()} ${label}`;
  }
  return label;
}

export function describe(r) {
  const parts = [`run ${r.run}: ${r.outcome}`];
  if (r.enqueued !== undefined) parts.push(`enqueued ${utc(r.enqueued)}`);
  if (r.started !== undefined) parts.push(`started ${utc(r.started)}`);
  if (r.ended !== undefined) parts.push(`ended ${utc(r.ended)}`);
  if (r.started !== undefined && r.ended !== undefined) parts.push(`took ${short(r.ended - r.started)}`);
  if (r.detail) parts.push(r.detail);
  return parts.join("\n");
}

export function legend() {
  return h("ul.legend", { "aria-label": "Legend" },
    ["completed", "failed", "forced", "dropped", "running", "waiting"].map((o) =>
      h("li", {}, h("span", { class: `swatch o-${o}`, "aria-hidden": "true" }), o === "forced" ? "forced end ▶" : o === "dropped" ? "dropped ✕" : o)));
}
