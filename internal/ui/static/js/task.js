// The task page: the task's row, its next slots, the run timeline, the
// audit trail as `cronactor history` prints it, the "why did/didn't it run
// at …?" box answered like `cronactor explain`, and the actions.
import { api } from "./api.js";
import { h, clear } from "./dom.js";
import { relative, exact, schedule, zone, utc, parseDuration, durationWords } from "./fmt.js";
import { runsOf, drawTimeline, legend, describe } from "./timeline.js";

// TRAIL_PAGE is how many audit rows a page of the trail asks for (the
// page's ?trail_page=N changes it, for tests); "Older" loads the page
// before, so a task with years of events costs one page at a time.
const TRAIL_PAGE = Number(new URLSearchParams(location.search).get("trail_page")) || 500;

const ZOOMS = [["5m", 5 * 60e3], ["15m", 15 * 60e3], ["1h", 3600e3], ["6h", 6 * 3600e3], ["24h", 86400e3], ["7d", 7 * 86400e3], ["30d", 30 * 86400e3]];

// retryWords is a retry policy in words: "3 attempts, 1s × 2 up to 1m0s".
function retryWords(r) {
  if (!r) return "none (one attempt)";
  return `${r.max_attempts} attempts, backoff ${r.initial_backoff} × ${r.multiplier} up to ${r.max_backoff}`;
}

// runState is what the task does now: idle, or the run queued or running
// (its number, attempt and since when), and a retry due.
function runState(task, when) {
  const out = [];
  const st = task.run_state || "idle";
  out.push(h("span", { class: `badge r-${st}`, text: st }));
  if (st !== "idle" && task.run_id) {
    const attempt = task.run_attempt > 1 ? `, attempt ${task.run_attempt}` : "";
    out.push(` run ${task.run_number}${attempt} `, h("code", { text: task.run_id }), st === "running" ? " since " : " waiting since ",
      when(st === "running" ? task.run_started_at : task.run_enqueued_at));
  }
  if (task.next_retry) out.push("; retry due ", when(task.next_retry));
  return out;
}

// lastOutcome is how the latest run that ended, ended: its outcome, run,
// attempt, time and reason. It is often another run than the last start's
// (a retry, a trigger, or the run that started last still runs).
function lastOutcome(lo, when) {
  if (!lo) return ["-"];
  const why = [lo.reason, lo.detail].filter(Boolean).join(": ");
  return [h("span", { class: `badge o-${lo.outcome}`, text: lo.outcome }),
    ` run ${lo.run}${lo.attempt > 1 ? `, attempt ${lo.attempt}` : ""}${lo.trigger === "manual" ? " (triggered)" : ""}, at `, when(lo.at),
    why ? ` — ${why}` : ""];
}

export function taskPage(root, id) {
  // rows are the audit rows shown, oldest first; prev is the "before" of
  // the page older than them ("" when none), oldest the version of the
  // first row loaded by "Older" (null while only the latest page is).
  let task = null, rows = [], zoom = 0, autoZoom = true, seq = 0, stickRight = true, prev = "", oldest = null;
  const title = h("h1", { text: "Task" });
  const status = h("span.badge");
  const actionMsg = h("p.error#action-error", { role: "alert" });
  const actionOk = h("p.ok#action-ok", { role: "status" });
  const btn = (text, id, f, cls) => h(`button#${id}${cls ? "." + cls : ""}`, { type: "button", text, onclick: f });
  const pauseBtn = btn("Pause", "act-pause", () => act("pause", "POST", `/v1/tasks/${id}/pause`, "paused"));
  const resumeBtn = btn("Resume", "act-resume", () => act("resume", "POST", `/v1/tasks/${id}/resume`, "resumed"));
  const triggerBtn = btn("Trigger now", "act-trigger", () => act("trigger", "POST", `/v1/tasks/${id}/trigger`, "triggered"));
  const deleteBtn = btn("Delete…", "act-delete", confirmDelete, "danger");
  const facts = h("dl.facts");
  const slots = h("ol.slots#slots");
  const slotNote = h("p.note");
  const timeline = h("div.tl#timeline");
  const runsTable = h("tbody");
  const zoomSel = h("div.zoom", { role: "group", "aria-label": "Timeline span" });
  const trail = h("tbody#trail");
  const trailNote = h("p.note");
  const olderBtn = h("button#trail-older", { type: "button", text: "Older", hidden: true, onclick: () => older() });
  const loadMsg = h("p.error", { role: "alert" });
  const exAt = h("input#explain-at", { type: "text", name: "at", required: true, placeholder: "2026-11-22T02:03:00Z",
    value: new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace(".000Z", "Z"), spellcheck: "false" });
  const exOut = h("div#explain-out", { "aria-live": "polite" });
  const exForm = h("form.explain", {},
    h("label", { for: "explain-at", text: "Why did (or didn't) it run at" }), exAt,
    h("button", { type: "submit", text: "Explain" }));

  for (const [i, [label]] of ZOOMS.entries()) {
    zoomSel.append(h("button", { type: "button", text: label, "data-zoom": i, "aria-pressed": String(i === zoom),
      onclick: () => { zoom = i; autoZoom = false; drawRuns(); } }));
  }

  root.append(
    h("p.crumbs", {}, h("a", { href: "#/", text: "← Tasks" })),
    h("div.pagehead", {}, title, status),
    h("div.actions", { role: "group", "aria-label": "Actions" }, pauseBtn, resumeBtn, triggerBtn, deleteBtn),
    actionMsg, actionOk, loadMsg,
    h("div.cols", {},
      h("section", { "aria-labelledby": "h-sched" }, h("h2#h-sched", { text: "Schedule" }), facts),
      h("section", { "aria-labelledby": "h-slots" }, h("h2#h-slots", { text: "Next slots" }), slots, slotNote)),
    h("section", { "aria-labelledby": "h-tl" },
      h("div.sechead", {}, h("h2#h-tl", { text: "Run timeline" }), zoomSel),
      timeline, legend(),
      h("details", {}, h("summary", { text: "Runs as a table" }),
        h("div.scroll", {}, h("table.runs", {}, h("thead", {}, h("tr", {}, ["Run", "Outcome", "Enqueued", "Started", "Ended", "Detail"].map((c) => h("th", { scope: "col", text: c })))), runsTable)))),
    h("section", { "aria-labelledby": "h-explain" }, h("h2#h-explain", { text: "Why did or didn't it run?" }), exForm, exOut),
    h("section", { "aria-labelledby": "h-trail" }, h("h2#h-trail", { text: "Audit trail" }), trailNote,
      h("div.scroll", { tabindex: "0", role: "region", "aria-label": "Audit trail" },
        h("table.trail", {}, h("thead", {}, h("tr", {}, ["Time", "Event", "nextRun", "lastRun"].map((c) => h("th", { scope: "col", text: c })))), trail)),
      olderBtn),
  );

  timeline.addEventListener("scroll", () => { stickRight = timeline.scrollLeft + timeline.clientWidth >= timeline.scrollWidth - 2; });
  exForm.addEventListener("submit", (e) => { e.preventDefault(); explain(exAt.value.trim()); });

  async function load() {
    const my = ++seq;
    try {
      // The latest page of the last 30 days; once older pages were
      // loaded, every row from the oldest loaded on (at most 10000).
      const q = oldest === null
        ? `limit=${TRAIL_PAGE}&since=${encodeURIComponent(new Date(Date.now() - 30 * 86400e3).toISOString())}`
        : oldest > 0 ? `limit=10000&after=${oldest - 1}` : "limit=10000";
      const [t, hist] = await Promise.all([api("GET", `/v1/tasks/${id}`), api("GET", `/v1/tasks/${id}/history?${q}`)]);
      if (my !== seq) return;
      loadMsg.textContent = "";
      task = t;
      rows = hist.rows || [];
      if (oldest === null || !rows.length || rows[0].version <= oldest) prev = hist.prev || "";
      trailNote.textContent = "As `cronactor history` prints it, newest first" + (prev ? "; older rows: press Older." : ".");
      render();
      loadSlots(my);
    } catch (e) {
      if (my === seq) loadMsg.textContent = "Could not load the task: " + e.message;
    }
  }

  // older loads the page of rows before those shown.
  async function older() {
    if (!prev) return;
    olderBtn.disabled = true;
    try {
      const page = await api("GET", `/v1/tasks/${id}/history?limit=${TRAIL_PAGE}&before=${prev}`);
      const got = page.rows || [];
      const first = rows.length ? rows[0].version : Infinity;
      rows = got.filter((r) => r.version < first).concat(rows);
      prev = page.prev || "";
      if (rows.length) oldest = rows[0].version;
      trailNote.textContent = "As `cronactor history` prints it, newest first" + (prev ? "; older rows: press Older." : "; from the task's first event.");
      render();
    } catch (e) {
      loadMsg.textContent = "Could not load older rows: " + e.message;
    } finally {
      olderBtn.disabled = false;
    }
  }

  function render() {
    olderBtn.hidden = !prev;
    document.title = `${task.name} · cronactor`;
    title.textContent = task.name;
    status.className = `badge s-${task.status}`;
    status.textContent = task.status === "paused" && task.pause_reason ? `paused (${task.pause_reason})` : task.status;
    pauseBtn.hidden = task.status !== "active";
    resumeBtn.hidden = task.status !== "paused";
    const gone = task.status === "deleted";
    triggerBtn.disabled = gone || task.status === "finished";
    deleteBtn.disabled = gone;
    const sc = schedule(task);
    const fact = (k, ...v) => [h("dt", { text: k }), h("dd", {}, ...v)];
    const when = (iso) => iso ? h("time.rel", { datetime: iso, "data-full": "1", title: exact(iso), text: `${utc(iso)} (${relative(iso)})` }) : "-";
    clear(facts).append(
      ...fact("Schedule", h("span", { text: sc.words }), " ", h("code", { text: sc.written })),
      ...fact("Zone", zone(task)),
      ...(task.exclude && task.exclude.length ? fact("Exclude", h("code#f-exclude", { text: task.exclude.join("; ") })) : []),
      ...fact("Owner", task.owner),
      ...fact("Kind", task.kind),
      ...fact("Tolerance / timebox", `${task.tolerance} / ${task.timebox}`),
      ...fact("Queue", h("span#f-queue", { text: task.queue || "default" })),
      ...fact("Retry", h("span#f-retry", { text: retryWords(task.retry) })),
      ...fact("Missed runs", h("span#f-missed", { text: `${task.missed_run_policy || "run_once"}; missed after ${task.missed_after || "one spacing"}` })),
      ...fact("Start deadline / heartbeat", h("span#f-deadlines", { text: `${task.start_deadline || "none"} / ${task.heartbeat_timeout || "none"}` })),
      ...fact("Overlap / pause", h("span#f-overlap", { text: `${task.overlap || "skip"}; ${task.pause_after_failures ? `pause after ${task.pause_after_failures} failed slots in a row (${task.consecutive_failures || 0} now)` : "never pauses by itself"}` })),
      ...fact("Run state", h("span#f-runstate", {}, ...runState(task, when))),
      ...fact("Next run", task.status === "active" ? when(task.next_run) : `- (${task.status})`),
      ...fact("Last run", h("span#f-laststart", {}, task.last_run ? ["started ", when(task.last_run), task.last_run_number ? `, run ${task.last_run_number}` : ""] : "-")),
      ...fact("Last outcome", h("span#f-lastoutcome", {}, ...lastOutcome(task.last_outcome, when))),
      ...fact("Runs", h("span#f-runs", {}, `${task.run_count} enqueued: ${task.completed_count} completed, ${task.dropped_count} dropped, ${task.forced_count} forced, ${task.failed_count} failed; ${task.retry_count || 0} retries, ${task.trigger_count || 0} triggered, ${task.backfill_count || 0} backfilled; ${task.missed_count} missed`,
        task.incarnation > 1 ? [" — counted since it was created again ", when(task.created_at)] : "")),
      ...fact("Backfill", h("span#f-backfill", { text: task.backfill_pending ? `${task.backfill_pending} past slot${task.backfill_pending > 1 ? "s" : ""} waiting for room to be enqueued (max_waiting ${task.max_waiting})` : "none waiting" })),
      ...fact("Payload", h("code.json", { text: task.payload === null || task.payload === undefined ? "-" : JSON.stringify(task.payload) })),
      ...fact("Checkpoint", h("code.json", { text: task.checkpoint === null || task.checkpoint === undefined ? "-" : JSON.stringify(task.checkpoint) })),
      ...fact("ID", h("code", { text: task.id })),
    );
    clear(trail);
    for (const r of rows.slice().reverse()) {
      trail.append(h("tr", { class: `e-${r.event}` },
        h("td", {}, h("time", { datetime: r.at, text: utc(r.at) })),
        h("td", { text: r.text }),
        h("td", { text: utc(r.next_run) }),
        h("td", { text: utc(r.last_run) })));
    }
    drawRuns();
  }

  function drawRuns() {
    const runs = runsOf(rows);
    const now = Date.now();
    if (autoZoom && runs.length) {
      const first = Math.min(...runs.map((r) => r.enqueued ?? r.started));
      zoom = ZOOMS.findIndex(([, span]) => now - span <= first);
      if (zoom < 0) zoom = ZOOMS.length - 1;
    }
    zoomSel.querySelectorAll("button").forEach((b) => b.setAttribute("aria-pressed", String(Number(b.dataset.zoom) === zoom)));
    const n = drawTimeline(timeline, runs, ZOOMS[zoom][1], now, (ms) => {
      exAt.value = new Date(Math.round(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
      explain(exAt.value);
    });
    if (!n) timeline.append(h("p.note", { text: `No runs in the last ${ZOOMS[zoom][0]}.` }));
    // On a narrow screen the timeline scrolls sideways: keep the newest end
    // (now, at the right) in view unless the reader scrolled away from it.
    if (stickRight) timeline.scrollLeft = timeline.scrollWidth;
    clear(runsTable);
    for (const r of runs.slice().reverse().slice(0, 200)) {
      runsTable.append(h("tr", { "data-outcome": r.outcome },
        h("td", { text: r.run }), h("td", {}, h("span", { class: `badge o-${r.outcome}`, text: r.outcome })),
        h("td", { text: r.enqueued ? utc(r.enqueued) : "-" }), h("td", { text: r.started ? utc(r.started) : "-" }),
        h("td", { text: r.ended ? utc(r.ended) : "-" }), h("td", { text: r.detail || "", title: describe(r) })));
    }
  }

  // The next slots: the server's when it can tell (cron schedules), else
  // computed from next_run and the interval.
  async function loadSlots(my) {
    const fill = (list, note) => {
      clear(slots);
      for (const s of list) slots.append(h("li", {}, h("time.rel", { datetime: s, "data-full": "1", title: exact(s), text: `${utc(s)} (${relative(s)})` })));
      slotNote.textContent = note;
    };
    if (task.status !== "active") return fill([], `No slots while the task is ${task.status}.`);
    try {
      const up = await api("GET", `/v1/tasks/${id}/upcoming?count=5`);
      if (my === seq && up && Array.isArray(up.slots)) return fill(up.slots, "");
    } catch { /* not available on this server: compute */ }
    if (my !== seq) return;
    const iv = parseDuration(task.interval);
    if (!task.next_run || !(iv > 0)) return fill([], "");
    const first = Date.parse(task.next_run);
    fill([0, 1, 2, 3, 4].map((k) => new Date(first + k * iv).toISOString()),
      `Computed from the next run and the interval (every ${durationWords(iv)}); a tick may enqueue a slot up to one tick late.`);
  }

  async function explain(at) {
    clear(exOut);
    try {
      const ex = await api("GET", `/v1/tasks/${id}/explain?at=${encodeURIComponent(at)}`);
      exOut.append(h("p.verdict", { text: ex.verdict }));
      if (ex.exists) exOut.append(h("p", { text: `State: ${ex.status}; nextRun ${utc(ex.next_run)}; lastRun ${utc(ex.last_run)}` }));
      const ol = h("ol.decisions", { "aria-label": `Decisions within ${ex.window} of ${at}` });
      ex.decisions.forEach((d, i) => {
        if (i === ex.decisions.findIndex((x) => !x.before)) ol.append(h("li.marker", { text: `──── ${utc(ex.at)} ────` }));
        ol.append(h("li", {}, h("time", { datetime: d.at, text: utc(d.at) }), ": ", d.text));
      });
      if (ex.decisions.every((d) => d.before)) ol.append(h("li.marker", { text: `──── ${utc(ex.at)} ────` }));
      exOut.append(h("p", { text: `Decisions within ${ex.window}:` }), ol);
    } catch (e) {
      exOut.append(h("p.error", { role: "alert", text: e.message }));
    }
  }

  async function act(name, method, path, done) {
    actionMsg.textContent = "";
    actionOk.textContent = "";
    try {
      const res = await api(method, path);
      actionOk.textContent = name === "trigger" && res && res.run_id ? `Triggered: run ${res.run_id}.` : `Task ${done}.`;
      await load();
    } catch (e) {
      actionMsg.textContent = `Could not ${name} the task: ${e.message}`;
    }
  }

  function confirmDelete() {
    const dlg = document.getElementById("confirm-dialog");
    document.getElementById("confirm-text").textContent =
      `Delete the task “${task ? task.name : id}”? It will enqueue nothing more and its waiting runs are dropped. This cannot be undone.`;
    dlg.returnValue = "";
    dlg.onclose = () => { if (dlg.returnValue === "ok") act("delete", "DELETE", `/v1/tasks/${id}`, "deleted"); };
    dlg.showModal();
  }

  load();
  let timer = null;
  return {
    onEvent(ev) {
      if (ev.task_id !== id || timer) return;
      timer = setTimeout(() => { timer = null; load(); }, 200);
    },
    reconnected: load,
    tick() {
      for (const el of root.querySelectorAll("time.rel")) {
        const iso = el.getAttribute("datetime");
        el.textContent = el.dataset.full ? `${utc(iso)} (${relative(iso)})` : relative(iso);
      }
      if (task) drawRuns();
    },
    dispose() { clearTimeout(timer); seq++; document.title = "cronactor"; },
  };
}
