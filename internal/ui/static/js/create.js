// The create form: interval, cron and at tasks (one of the three), the
// DST policies of a cron schedule, the queue and the retry policy, with a
// preview of the next slots as you type.
import { api } from "./api.js";
import { h, clear } from "./dom.js";
import { parseDuration, durationWords, utc, relative, cronWords } from "./fmt.js";

export function createPage(root) {
  const field = (id, label, input, hint) => h("div.field", {},
    h("label", { for: id, text: label }), input, hint ? h("small", { id: id + "-hint", text: hint }) : "");
  const inp = (id, attrs) => h(`input#${id}`, { name: id.slice(2), autocomplete: "off", ...attrs });
  const name = inp("c-name", { required: true });
  const owner = inp("c-owner", { required: true, placeholder: "channel/pop3/42" });
  const kind = h("select#c-kind", { name: "kind" }, ["noop", "http", "exec"].map((k) => h("option", { value: k, text: k })));
  const interval = inp("c-interval", { placeholder: "1m", "aria-describedby": "c-interval-hint" });
  const cron = inp("c-cron", { placeholder: "*/5 * * * *", spellcheck: "false", "aria-describedby": "c-cron-hint" });
  const tz = inp("c-timezone", { placeholder: "UTC" });
  const exclude = h("textarea#c-exclude", { name: "exclude", rows: 2, spellcheck: "false", placeholder: "2026-12-25\n0 9 * * SAT,SUN", "aria-describedby": "c-exclude-hint" });
  const tolerance = inp("c-tolerance", { placeholder: "5s" });
  const timebox = inp("c-timebox", { placeholder: "interval/2" });
  const priority = inp("c-priority", { type: "number", value: "0" });
  const at = inp("c-at", { placeholder: "2026-12-01T09:00:00Z, 2026-12-02T09:00:00Z", spellcheck: "false", "aria-describedby": "c-at-hint" });
  const sel = (id, opts) => h(`select#${id}`, { name: id.slice(2) }, opts.map(([v, text]) => h("option", { value: v, text })));
  const dstGap = sel("c-dst_gap", [["", "default (shift)"], ["shift", "shift: run at the first instant after the gap"], ["skip", "skip the slot"]]);
  const dstOverlap = sel("c-dst_overlap", [["", "default (first)"], ["first", "first: the earlier instant"], ["last", "last: the later instant"], ["both", "both instants"]]);
  const queue = inp("c-queue", { placeholder: "default" });
  const retryMax = inp("c-retry_max_attempts", { type: "number", min: "1", placeholder: "1 (no retry)", "aria-describedby": "c-retry_max_attempts-hint" });
  const retryInitial = inp("c-retry_initial_backoff", { placeholder: "server default" });
  const retryMaxBackoff = inp("c-retry_max_backoff", { placeholder: "server default" });
  const retryMult = inp("c-retry_multiplier", { type: "number", step: "any", min: "1", placeholder: "server default" });
  const firstRun = inp("c-first_run", { placeholder: "RFC 3339, e.g. 2026-11-22T10:00:00Z (default: now + interval)" });
  const overlap = h("select#c-overlap", { name: "overlap" }, ["skip", "buffer_one", "cancel_other", "allow"].map((k) => h("option", { value: k, text: k })));
  const pauseAfter = inp("c-pause_after_failures", { type: "number", min: "1", placeholder: "never" });
  const payload = h("textarea#c-payload", { name: "payload", rows: 4, spellcheck: "false", placeholder: '{"url": "https://example.com/hook"}' });
  const msg = h("p.error#create-error", { role: "alert" });
  const preview = h("ol.slots#preview");
  const previewNote = h("p.note", { "aria-live": "polite" });
  const form = h("form.create", { novalidate: true },
    h("fieldset", {}, h("legend", { text: "Task" }),
      field("c-name", "Name", name), field("c-owner", "Owner", owner), field("c-kind", "Kind", kind),
      field("c-payload", "Payload (JSON, optional)", payload)),
    h("fieldset", {}, h("legend", { text: "Schedule: an interval, a cron expression, or times (at)" }),
      field("c-interval", "Interval", interval, "A Go duration: 30s, 5m, 1h30m."),
      field("c-cron", "Cron expression", cron, "5 or 6 fields, or @hourly, @daily…; day of month takes L (last day), L-3, 15W (nearest weekday), LW; day of week FRI#2 (second Friday), FRIL or 5L (last Friday); MON-SUN ranges."),
      field("c-at", "At (times)", at, "RFC 3339 instants, separated by commas: the task runs once at each."),
      field("c-timezone", "Time zone (cron, at)", tz),
      field("c-dst_gap", "DST gap (cron)", dstGap),
      field("c-dst_overlap", "DST overlap (cron)", dstOverlap),
      field("c-exclude", "Exclude (cron)", exclude, "One per line: a date (2026-12-25, the whole day in the zone) or a cron expression; its slots are not slots (not run, not missed)."),
      field("c-first_run", "First run (interval)", firstRun)),
    h("fieldset", {}, h("legend", { text: "Run policy (optional)" }),
      field("c-queue", "Queue", queue),
      field("c-retry_max_attempts", "Retry: max attempts", retryMax, "Counts the first try; above 1, a failed run is retried."),
      field("c-retry_initial_backoff", "Retry: initial backoff", retryInitial),
      field("c-retry_max_backoff", "Retry: max backoff", retryMaxBackoff),
      field("c-retry_multiplier", "Retry: multiplier", retryMult),
      field("c-overlap", "When a run would overlap another", overlap, "skip: drop it; buffer_one: it waits (at most one); cancel_other: cancel the running one; allow: run both."),
      field("c-pause_after_failures", "Pause after failed slots in a row", pauseAfter, "Each slot after its retries; empty: never.")),
    h("fieldset", {}, h("legend", { text: "Limits (optional)" }),
      field("c-tolerance", "Tolerance", tolerance), field("c-timebox", "Timebox", timebox), field("c-priority", "Priority", priority)),
    h("section.preview", { "aria-labelledby": "h-preview" }, h("h2#h-preview", { text: "Next slots" }), previewNote, preview),
    msg,
    h("div.buttons", {}, h("a.button", { href: "#/", text: "Cancel" }), h("button.primary", { type: "submit", text: "Create task" })),
  );
  root.append(h("h1", { text: "New task" }), form);

  let seq = 0, timer = null;
  const showSlots = (list, note) => {
    clear(preview);
    for (const s of list) preview.append(h("li", {}, h("time", { datetime: s, text: `${utc(s)} (${relative(s)})` })));
    previewNote.textContent = note;
  };
  // excludeList: the exclude field's dates and expressions, one a line.
  const excludeList = () => exclude.value.split("\n").map((x) => x.trim()).filter(Boolean);
  // atList: the at field's instants, as written.
  const atList = () => at.value.split(",").map((x) => x.trim()).filter(Boolean);
  async function updatePreview() {
    const my = ++seq;
    if (atList().length) {
      const ms = atList().map((x) => Date.parse(x));
      if (ms.some(isNaN)) return showSlots([], "A time in At is not an RFC 3339 time like 2026-12-01T09:00:00Z.");
      const future = ms.filter((m) => m > Date.now()).sort((a, b) => a - b);
      return showSlots(future.slice(0, 5).map((m) => new Date(m).toISOString()),
        `Once at each of ${ms.length} time${ms.length > 1 ? "s" : ""}` + (future.length < ms.length ? `; ${ms.length - future.length} already past.` : "."));
    }
    if (cron.value.trim()) {
      const p = new URLSearchParams({ cron: cron.value.trim(), count: "5" });
      if (tz.value.trim()) p.set("timezone", tz.value.trim());
      if (dstGap.value) p.set("dst_gap", dstGap.value);
      if (dstOverlap.value) p.set("dst_overlap", dstOverlap.value);
      for (const x of excludeList()) p.append("exclude", x);
      try {
        const res = await api("GET", "/v1/schedule/preview?" + p);
        if (my === seq) showSlots(res.slots || [], cronWords(cron.value));
      } catch (e) {
        if (my !== seq) return;
        showSlots([], e.status === 404 ? "This server cannot preview cron schedules yet." : e.message);
      }
      return;
    }
    const iv = parseDuration(interval.value.trim());
    if (!(iv > 0)) return showSlots([], interval.value ? "The interval is not a duration like 30s or 5m." : "Type an interval, a cron expression or times.");
    let first = firstRun.value.trim() ? Date.parse(firstRun.value.trim()) : Date.now() + iv;
    if (isNaN(first)) return showSlots([], "The first run is not an RFC 3339 time.");
    showSlots([0, 1, 2, 3, 4].map((k) => new Date(first + k * iv).toISOString()), `Every ${durationWords(iv)}.`);
  }
  for (const el of [interval, cron, at, tz, firstRun, dstGap, dstOverlap, exclude]) {
    for (const type of ["input", "change"]) el.addEventListener(type, () => { clearTimeout(timer); timer = setTimeout(updatePreview, 250); });
  }
  updatePreview();

  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    msg.textContent = "";
    form.querySelectorAll("[aria-invalid]").forEach((el) => el.removeAttribute("aria-invalid"));
    const body = { name: name.value, owner: owner.value, kind: kind.value };
    if (atList().length) {
      body.at = atList();
      if (tz.value.trim()) body.timezone = tz.value.trim();
    } else if (cron.value.trim()) {
      body.cron = cron.value.trim();
      if (tz.value.trim()) body.timezone = tz.value.trim();
      if (dstGap.value) body.dst_gap = dstGap.value;
      if (dstOverlap.value) body.dst_overlap = dstOverlap.value;
      if (excludeList().length) body.exclude = excludeList();
    } else {
      body.interval = interval.value.trim();
      if (firstRun.value.trim()) body.first_run = firstRun.value.trim();
    }
    if (tolerance.value.trim()) body.tolerance = tolerance.value.trim();
    if (timebox.value.trim()) body.timebox = timebox.value.trim();
    if (priority.value.trim() && priority.value !== "0") body.priority = Number(priority.value);
    if (queue.value.trim()) body.queue = queue.value.trim();
    if (retryMax.value.trim() || retryInitial.value.trim() || retryMaxBackoff.value.trim() || retryMult.value.trim()) {
      // Left out, the backoffs and multiplier take the server's defaults.
      body.retry = {};
      if (retryMax.value.trim()) body.retry.max_attempts = Number(retryMax.value);
      if (retryInitial.value.trim()) body.retry.initial_backoff = retryInitial.value.trim();
      if (retryMaxBackoff.value.trim()) body.retry.max_backoff = retryMaxBackoff.value.trim();
      if (retryMult.value.trim()) body.retry.multiplier = Number(retryMult.value);
    }
    if (overlap.value !== "skip") body.overlap = overlap.value;
    if (pauseAfter.value.trim()) body.pause_after_failures = Number(pauseAfter.value);
    if (payload.value.trim()) {
      try { body.payload = JSON.parse(payload.value); } catch (err) {
        msg.textContent = "payload: not valid JSON: " + err.message;
        payload.setAttribute("aria-invalid", "true");
        payload.focus();
        return;
      }
    }
    try {
      const t = await api("POST", "/v1/tasks", body);
      location.hash = `#/tasks/${t.id}`;
    } catch (err) {
      msg.textContent = "Not created: " + err.message;
      // A field such as "retry.initial_backoff" or "at[1]" names its input.
      const bad = err.field && form.querySelector(`#c-${CSS.escape(err.field.replace(/\[\d+\]$/, "").replace(".", "_"))}`);
      if (bad) { bad.setAttribute("aria-invalid", "true"); bad.focus(); }
    }
  });
  return { dispose() { clearTimeout(timer); seq++; } };
}
