// The dashboard: a hash router over three pages (task list, task page,
// create form), the token gate, and the live event stream that tells the
// open page to refresh.
import { follow, onTokenNeeded, setToken } from "./api.js";
import { h, clear } from "./dom.js";
import { listPage } from "./list.js";
import { taskPage } from "./task.js";
import { createPage } from "./create.js";

const main = document.getElementById("main");
const banner = document.getElementById("banner");
const live = document.getElementById("live");

// The open page: {render(), onEvent(ev), reconnected(), dispose()}.
let page = null;

// The token gate: one dialog, shared by every caller that got a 401.
let pendingToken = null;
onTokenNeeded((refused) => {
  if (pendingToken) return pendingToken;
  const dlg = document.getElementById("token-dialog");
  const form = document.getElementById("token-form");
  const input = document.getElementById("token-input");
  document.getElementById("token-error").textContent = refused ? "That token was refused. Try again." : "";
  document.body.classList.add("locked");
  pendingToken = new Promise((resolve) => {
    form.onsubmit = (e) => {
      e.preventDefault();
      if (!input.value) return;
      setToken(input.value);
      input.value = "";
      dlg.close();
      document.body.classList.remove("locked");
      pendingToken = null;
      resolve();
    };
    dlg.oncancel = (e) => e.preventDefault(); // no data without a token
  });
  dlg.showModal();
  input.focus();
  return pendingToken;
});

function route() {
  const hash = location.hash.replace(/^#/, "") || "/";
  if (page && page.dispose) page.dispose();
  clear(main);
  let m;
  if ((m = hash.match(/^\/tasks\/([0-9a-fA-F-]{36})(?:\?.*)?$/))) page = taskPage(main, m[1]);
  else if (hash.startsWith("/new")) page = createPage(main);
  else page = listPage(main, new URLSearchParams(hash.split("?")[1] || ""));
  document.querySelectorAll("header nav a").forEach((a) => {
    const on = (a.getAttribute("href") === "#/new") === hash.startsWith("/new");
    if (on) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  });
}

let wasLive = false;
function liveState(state, detail) {
  live.classList.toggle("down", state !== "live");
  if (state === "live") {
    live.textContent = "live";
    live.title = "following the event stream (" + detail + ")";
    banner.hidden = true;
    clear(banner);
    // Whatever happened while disconnected (or before the first connect)
    // is read again once the stream is back.
    if (page && page.reconnected) page.reconnected();
    wasLive = true;
  } else {
    live.textContent = "offline";
    live.title = detail || "";
    clear(banner).append(
      h("strong", { text: "Live updates stopped: " }),
      `${detail || "the connection dropped"}. Reconnecting… What you see may be out of date.`,
    );
    banner.hidden = false;
    wasLive = false;
  }
}

window.addEventListener("hashchange", route);
route();
follow((ev) => { if (page && page.onEvent) page.onEvent(ev); }, liveState);
// Relative times ("in 4m") age on screen without asking the server.
setInterval(() => { if (page && page.tick) page.tick(); }, 5000);
// Tests and scripts can ask whether the page is following the stream.
window.cronactorLive = () => wasLive;
