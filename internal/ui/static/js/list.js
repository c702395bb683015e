// The task list: the cron_tasks view (GET /v1/tasks) with filters, in
// columns like `kubectl get cronjobs`. The view pages in ID order, so the
// page reads every page of the query (up to MAX_TASKS rows), then hides
// deleted tasks unless asked, sorts by name or next run and pages on the
// client.
import { api } from "./api.js";
import { h, clear } from "./dom.js";
import { relative, exact, schedule, zone } from "./fmt.js";

// MAX_TASKS bounds the rows the list reads (in ID order) to sort and page.
const MAX_TASKS = 10000;

// SORTS are the orders the list offers: by name (then owner), or by next
// run (soonest first; tasks with none — paused, finished, deleted — last,
// by name).
const byName = (a, b) => a.name.localeCompare(b.name) || a.owner.localeCompare(b.owner) || a.id.localeCompare(b.id);
const nextMs = (t) => (t.status === "active" && t.next_run ? Date.parse(t.next_run) : Infinity);
const SORTS = {
  name: byName,
  next: (a, b) => (nextMs(a) - nextMs(b)) || byName(a, b),
};

const HEAD_TITLES = {
  "Last run": "when the latest scheduled run started (#its number)",
  "Last outcome": "how the latest run that ended, ended: #its number, when (often another run than the last run's)",
  "Runs": "runs enqueued in this incarnation of the task",
};

export function listPage(root, params) {
  const state = {
    owner: params.get("owner") || "",
    status: params.get("status") || "",
    q: params.get("q") || "",
    limit: params.get("limit") || "50",
    sort: SORTS[params.get("sort")] ? params.get("sort") : "name",
    deleted: params.get("deleted") === "1",
    page: 0,
    tasks: [],
    capped: false,
    seq: 0,
  };
  const owner = h("input#f-owner", { type: "text", name: "owner", value: state.owner, placeholder: "channel/pop3/42", autocomplete: "off" });
  const status = h("select#f-status", { name: "status" },
    ["", "active", "paused", "deleted", "finished"].map((s) => h("option", { value: s, text: s || "any", selected: s === state.status })));
  const q = h("input#f-q", { type: "search", name: "q", value: state.q, placeholder: "part of a name", autocomplete: "off" });
  const limit = h("select#f-limit", { name: "limit" },
    ["25", "50", "100", "500"].map((n) => h("option", { value: n, text: n, selected: n === state.limit })));
  const sort = h("select#f-sort", { name: "sort" },
    [["name", "name"], ["next", "next run"]].map(([v, text]) => h("option", { value: v, text, selected: v === state.sort })));
  const deleted = h("input#f-deleted", { type: "checkbox", name: "deleted", checked: state.deleted });
  const form = h("form.filters", { role: "search", "aria-label": "Filter tasks" },
    h("div.field", {}, h("label", { for: "f-owner", text: "Owner" }), owner),
    h("div.field", {}, h("label", { for: "f-status", text: "Status" }), status),
    h("div.field", {}, h("label", { for: "f-q", text: "Name contains" }), q),
    h("div.field", {}, h("label", { for: "f-sort", text: "Sort by" }), sort),
    h("div.field", {}, h("label", { for: "f-limit", text: "Per page" }), limit),
    h("div.field.check", {}, deleted, h("label", { for: "f-deleted", text: "Show deleted" })),
    h("button", { type: "submit", text: "Apply" }),
  );
  const msg = h("p.error", { role: "alert" });
  const count = h("p.count", { "aria-live": "polite" });
  const tbody = h("tbody");
  const table = h("table.tasks", {},
    h("caption.sr", { text: "Tasks" }),
    h("thead", {}, h("tr", {}, ["Name", "Owner", "Schedule", "Zone", "Status", "Next run", "Last run", "Last outcome", "Runs", "OK", "Dropped", "Forced", "Failed", "Missed"]
      .map((c) => h("th", { scope: "col", text: c, title: HEAD_TITLES[c] })))),
    tbody);
  const prev = h("button", { type: "button", text: "← Previous", onclick: () => go(state.page - 1) });
  const next = h("button", { type: "button", text: "Next →", onclick: () => go(state.page + 1) });
  const pager = h("nav.pager", { "aria-label": "Pages" }, prev, h("span.pageno"), next);

  root.append(
    h("div.pagehead", {}, h("h1", { text: "Tasks" }), h("a.button.primary", { href: "#/new", text: "New task" })),
    form, msg, h("div.scroll", { tabindex: "0", role: "region", "aria-label": "Task table" }, table), count, pager);

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const p = new URLSearchParams();
    if (owner.value) p.set("owner", owner.value);
    if (status.value) p.set("status", status.value);
    if (q.value) p.set("q", q.value);
    if (limit.value !== "50") p.set("limit", limit.value);
    if (sort.value !== "name") p.set("sort", sort.value);
    if (deleted.checked) p.set("deleted", "1");
    const hash = "#/" + (p.toString() ? "?" + p : "");
    if (location.hash === hash) load(); else location.hash = hash;
  });
  // Name search, sort, page size and "show deleted" apply as you change
  // them, on the tasks read.
  q.addEventListener("input", () => { state.q = q.value; state.page = 0; render(); });
  sort.addEventListener("change", () => { state.sort = sort.value; render(); });
  limit.addEventListener("change", () => { state.limit = limit.value; state.page = 0; render(); });
  deleted.addEventListener("change", () => { state.deleted = deleted.checked; state.page = 0; render(); });

  function go(n) {
    if (n < 0 || n * Number(state.limit) >= shownTasks().length) return;
    state.page = n;
    render();
  }

  async function load() {
    const seq = ++state.seq;
    const all = [];
    let cursor = "";
    try {
      do {
        const p = new URLSearchParams({ limit: "1000" });
        if (state.owner) p.set("owner", state.owner);
        if (state.status) p.set("status", state.status);
        if (cursor) p.set("cursor", cursor);
        const page = await api("GET", "/v1/tasks?" + p);
        if (seq !== state.seq) return;
        all.push(...(page.tasks || []));
        cursor = page.next || "";
      } while (cursor && all.length < MAX_TASKS);
      msg.textContent = "";
      state.tasks = all;
      state.capped = !!cursor;
      render();
    } catch (e) {
      if (seq === state.seq) msg.textContent = "Could not load tasks: " + e.message;
    }
  }

  // shownTasks: the tasks read, without deleted ones unless asked (or
  // filtered for), matching the name search, in the chosen order.
  function shownTasks() {
    const needle = state.q.toLowerCase();
    const keepDeleted = state.deleted || state.status === "deleted";
    return state.tasks
      .filter((t) => (keepDeleted || t.status !== "deleted") && (!needle || t.name.toLowerCase().includes(needle)))
      .sort(SORTS[state.sort]);
  }

  function render() {
    clear(tbody);
    const all = shownTasks();
    const per = Number(state.limit);
    const pages = Math.max(1, Math.ceil(all.length / per));
    state.page = Math.min(state.page, pages - 1);
    const shown = all.slice(state.page * per, (state.page + 1) * per);
    for (const t of shown) tbody.append(row(t));
    const hidden = state.tasks.filter((t) => t.status === "deleted").length;
    if (!shown.length) tbody.append(h("tr", {}, h("td.empty", { colspan: 14, text: state.tasks.length ? "No task matches." : "No tasks." })));
    count.textContent = `${all.length} task${all.length === 1 ? "" : "s"}` +
      (all.length > per ? `, ${state.page * per + 1}–${state.page * per + shown.length} shown` : "") +
      (hidden && !state.deleted && state.status !== "deleted" ? `; ${hidden} deleted hidden` : "") +
      (state.capped ? `; only the first ${state.tasks.length} tasks (in ID order) were read: filter by owner or status` : "");
    prev.disabled = state.page === 0;
    next.disabled = state.page >= pages - 1;
    pager.querySelector(".pageno").textContent = `page ${state.page + 1} of ${pages}`;
  }

  function row(t) {
    const sc = schedule(t);
    const lo = t.last_outcome;
    const rel = (iso) => h("time.rel", { datetime: iso, title: exact(iso), text: relative(iso) });
    return h("tr", { "data-id": t.id },
      h("th", { scope: "row" }, h("a", { href: `#/tasks/${t.id}`, text: t.name })),
      h("td", { text: t.owner }),
      h("td", {}, h("span.words", { text: sc.words }), h("br"), h("code.written", { text: sc.written })),
      h("td", { text: zone(t) }),
      h("td", {}, h("span", { class: `badge s-${t.status}`, text: t.status })),
      h("td", {}, t.status === "active" && t.next_run ? rel(t.next_run) : "-"),
      h("td.laststart", {}, t.last_run ? [rel(t.last_run), t.last_run_number ? h("span.runno", { text: ` #${t.last_run_number}` }) : ""] : "-"),
      h("td.lastoutcome", {}, lo ? [h("span", { class: `badge o-${lo.outcome}`, title: [lo.reason, lo.detail].filter(Boolean).join(": ") || lo.outcome, text: lo.outcome }),
        h("span.runno", { text: ` #${lo.run}${lo.attempt > 1 ? ` (attempt ${lo.attempt})` : ""} ` }), rel(lo.at)] : "-"),
      h("td.num", { text: t.run_count }),
      h("td.num", { text: t.completed_count }),
      h("td.num", { text: t.dropped_count }),
      h("td.num", { text: t.forced_count }),
      h("td.num", { text: t.failed_count }),
      h("td.num", { text: t.missed_count }),
    );
  }

  load();
  let timer = null;
  return {
    onEvent() {
      // Coalesce a burst of events into one read of the page.
      if (timer) return;
      // A large list is read again less often.
      timer = setTimeout(() => { timer = null; load(); }, state.tasks.length > 1000 ? 2000 : 250);
    },
    reconnected: load,
    tick() {
      for (const el of root.querySelectorAll("time.rel")) el.textContent = relative(el.getAttribute("datetime"));
    },
    dispose() { clearTimeout(timer); state.seq++; },
  };
}
