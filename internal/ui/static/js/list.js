// The task list: the cron_tasks view (GET /v1/tasks) with filters and
// paging, in columns like `kubectl get cronjobs`.
import { api } from "./api.js";
import { h, clear } from "./dom.js";
import { relative, exact, schedule, zone } from "./fmt.js";

export function listPage(root, params) {
  const state = {
    owner: params.get("owner") || "",
    status: params.get("status") || "",
    q: params.get("q") || "",
    limit: params.get("limit") || "50",
    cursors: [""], // the cursor of each page seen, for "previous"
    page: 0,
    next: "",
    tasks: [],
    seq: 0,
  };
  const owner = h("input#f-owner", { type: "text", name: "owner", value: state.owner, placeholder: "channel/pop3/42", autocomplete: "off" });
  const status = h("select#f-status", { name: "status" },
    ["", "active", "paused", "deleted", "finished"].map((s) => h("option", { value: s, text: s || "any", selected: s === state.status })));
  const q = h("input#f-q", { type: "search", name: "q", value: state.q, placeholder: "part of a name", autocomplete: "off" });
  const limit = h("select#f-limit", { name: "limit" },
    ["25", "50", "100", "500"].map((n) => h("option", { value: n, text: n, selected: n === state.limit })));
  const form = h("form.filters", { role: "search", "aria-label": "Filter tasks" },
    h("div.field", {}, h("label", { for: "f-owner", text: "Owner" }), owner),
    h("div.field", {}, h("label", { for: "f-status", text: "Status" }), status),
    h("div.field", {}, h("label", { for: "f-q", text: "Name contains" }), q),
    h("div.field", {}, h("label", { for: "f-limit", text: "Per page" }), limit),
    h("button", { type: "submit", text: "Apply" }),
  );
  const msg = h("p.error", { role: "alert" });
  const count = h("p.count", { "aria-live": "polite" });
  const tbody = h("tbody");
  const table = h("table.tasks", {},
    h("caption.sr", { text: "Tasks" }),
    h("thead", {}, h("tr", {}, ["Name", "Owner", "Schedule", "Zone", "Status", "Next run", "Last run", "Runs", "OK", "Dropped", "Forced", "Failed", "Missed"]
      .map((c) => h("th", { scope: "col", text: c })))),
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
    const hash = "#/" + (p.toString() ? "?" + p : "");
    if (location.hash === hash) load(); else location.hash = hash;
  });
  // Name search filters as you type, on the loaded page.
  q.addEventListener("input", () => { state.q = q.value; render(); });

  function go(n) {
    if (n < 0 || (n > state.page && !state.next)) return;
    if (n > state.page) state.cursors[n] = state.next;
    state.page = n;
    load();
  }

  async function load() {
    const seq = ++state.seq;
    const p = new URLSearchParams({ limit: state.limit });
    if (state.owner) p.set("owner", state.owner);
    if (state.status) p.set("status", state.status);
    if (state.cursors[state.page]) p.set("cursor", state.cursors[state.page]);
    try {
      const page = await api("GET", "/v1/tasks?" + p);
      if (seq !== state.seq) return;
      msg.textContent = "";
      state.tasks = page.tasks || [];
      state.next = page.next || "";
      render();
    } catch (e) {
      if (seq === state.seq) msg.textContent = "Could not load tasks: " + e.message;
    }
  }

  function render() {
    clear(tbody);
    const needle = state.q.toLowerCase();
    const shown = state.tasks.filter((t) => !needle || t.name.toLowerCase().includes(needle));
    for (const t of shown) tbody.append(row(t));
    if (!shown.length) tbody.append(h("tr", {}, h("td.empty", { colspan: 13, text: state.tasks.length ? "No task on this page matches the name." : "No tasks." })));
    count.textContent = `${shown.length} task${shown.length === 1 ? "" : "s"} shown` + (needle ? ` (name filter applies to this page of ${state.tasks.length})` : "");
    prev.disabled = state.page === 0;
    next.disabled = !state.next;
    pager.querySelector(".pageno").textContent = `page ${state.page + 1}`;
  }

  function row(t) {
    const sc = schedule(t);
    const lo = t.last_outcome;
    return h("tr", { "data-id": t.id },
      h("th", { scope: "row" }, h("a", { href: `#/tasks/${t.id}`, text: t.name })),
      h("td", { text: t.owner }),
      h("td", {}, h("span.words", { text: sc.words }), h("br"), h("code.written", { text: sc.written })),
      h("td", { text: zone(t) }),
      h("td", {}, h("span", { class: `badge s-${t.status}`, text: t.status })),
      h("td", {}, t.status === "active" && t.next_run ? h("time.rel", { datetime: t.next_run, title: exact(t.next_run), text: relative(t.next_run) }) : "-"),
      h("td", {}, t.last_run ? h("time.rel", { datetime: t.last_run, title: exact(t.last_run), text: relative(t.last_run) }) : "-",
        lo ? [" ", h("span", { class: `badge o-${lo.outcome}`, title: [lo.reason, lo.detail].filter(Boolean).join(": ") || lo.outcome, text: lo.outcome })] : ""),
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
      timer = setTimeout(() => { timer = null; load(); }, 250);
    },
    reconnected: load,
    tick() {
      for (const el of root.querySelectorAll("time.rel")) el.textContent = relative(el.getAttribute("datetime"));
    },
    dispose() { clearTimeout(timer); state.seq++; },
  };
}
