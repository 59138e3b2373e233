/**
 * The workspace page (served by the Worker at `/` and `/w/<workspace>`):
 * sign in with a token, then the workspace at a glance, recent changes, the
 * tree, a file's versions, kept current by pokes. It only ever reads.
 */
import { Api, ApiError } from "./api.ts";
import { ChangesView } from "./changes.ts";
import { fill, h } from "./dom.ts";
import { dirHref, FilesView } from "./files.ts";
import { goLive } from "./live.ts";
import { renderOverview } from "./overview.ts";
import { coalesced, throttled } from "./schedule.ts";
import { explain, renderSignIn } from "./signin.ts";
import { forgetToken, savedToken, saveToken, takeTokenFromFragment } from "./token.ts";
import { VersionsDialog } from "./versions.ts";

const root = document.getElementById("app") as HTMLElement;
/** How often at most the overview is read again while pokes come. */
const STATS_EVERY_MS = 5000;
/** How often it is read anyway: last seen and how far behind each host is move without a commit, so without a poke. */
const GLANCE_EVERY_MS = 60_000;

function workspaceOfPath(): string | null {
  const m = /^\/w\/([^/]+)\/?$/.exec(location.pathname);
  return m ? decodeURIComponent(m[1] as string) : null;
}

function currentDir(): string {
  return new URLSearchParams(location.search).get("dir") ?? "";
}

function start(): void {
  const workspace = workspaceOfPath();
  takeTokenFromFragment(workspace);
  const token = workspace === null ? null : savedToken(workspace);
  if (workspace === null || token === null) {
    signIn(workspace, null);
    return;
  }
  void showWorkspace(workspace, token);
}

function signIn(workspace: string | null, problem: string | null): void {
  document.title = "ferry";
  renderSignIn(root, workspace, problem, (ws, token) => {
    saveToken(ws, token);
    if (workspace === null) location.assign(`/w/${encodeURIComponent(ws)}`);
    else void showWorkspace(ws, token);
  });
}

async function showWorkspace(workspace: string, token: string): Promise<void> {
  const api = new Api(workspace, token);
  // Once refused, the reads still in flight or scheduled must not draw the sign-in form again.
  let closed = false;
  const refused = (e: unknown) => {
    if (closed) return;
    closed = true;
    forgetToken(workspace);
    stop?.();
    signIn(workspace, explain(e, workspace));
  };
  let stop: (() => void) | undefined;
  // A cheap read checks the token first; stats counts the whole workspace (~0.2 s at 100,000
  // entries, BENCHMARKS.md section 6), so the page shows the tree and changes without waiting for it.
  let firstRev: number;
  try {
    firstRev = (await api.revs(null)).rev;
  } catch (e) {
    if (e instanceof ApiError && e.isAuth) return refused(e);
    return signIn(workspace, explain(e, workspace));
  }

  const status = h("p", { class: "status", role: "status", "aria-live": "polite" });
  const liveBadge = h("span", { class: "live", "data-state": "connecting" }, "connecting");
  const toast = h("p", { class: "toast", role: "alert", hidden: true });
  // Rev 0: nothing was ever pushed, which for a name typed into the address is most likely a typo.
  const unknown = h(
    "p",
    { class: "notice", role: "status", hidden: firstRev > 0 },
    "Nothing was ever pushed to workspace ",
    h("code", {}, workspace),
    ". Check its name in the address, or push a directory to it: ",
    h("code", {}, `ferry push DIR -w ${workspace}`),
    ".",
  );
  const failed = (e: unknown) => {
    if (e instanceof ApiError && e.isAuth) return refused(e);
    toast.textContent = explain(e, workspace);
    toast.hidden = false;
  };
  const download = async (path: string, rev: number | null) => {
    status.textContent = `Downloading ${path}…`;
    try {
      const blob = await api.file(path, rev);
      const a = h("a", { href: URL.createObjectURL(blob), download: path.slice(path.lastIndexOf("/") + 1) });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
      status.textContent = `Downloaded ${path}`;
    } catch (e) {
      failed(e);
    }
  };
  const versions = new VersionsDialog(api, download, failed);
  const openVersions = (path: string) => versions.open(path).catch(failed);
  const navigate = (dir: string) => {
    history.pushState(null, "", dirHref(dir));
    files.show(dir).catch(failed);
  };
  const files = new FilesView(api, { open: navigate, download, versions: openVersions, failed });
  const changes = new ChangesView(api, (path, kind) => (kind === "dir" ? navigate(path) : openVersions(path)), failed);
  const glance = h("section", { class: "glance", "aria-labelledby": "glance-title" });
  fill(glance, h("h2", { id: "glance-title" }, "At a glance"), h("p", { class: "muted" }, "Counting…"));

  const signOut = h("button", { type: "button", class: "quiet" }, "Sign out");
  signOut.addEventListener("click", () => {
    forgetToken(workspace);
    stop?.();
    signIn(workspace, null);
  });
  document.title = `${workspace} · ferry`;
  fill(
    root,
    h(
      "header",
      { class: "bar" },
      h("a", { class: "brand", href: "/" }, "ferry"),
      h("h1", {}, h("span", { class: "muted" }, "workspace "), h("code", {}, workspace)),
      liveBadge,
      signOut,
    ),
    h("main", {}, toast, unknown, glance, h("div", { class: "grid" }, files.el, changes.el), status),
    versions.el,
  );
  window.onpopstate = () => files.show(currentDir()).catch(failed);
  await Promise.all([files.show(currentDir()), changes.refresh()]).catch(failed);
  // Refused meanwhile (the token expired between reads): the sign-in form is up; start no socket or timer behind it.
  if (closed) return;

  // After a poke: the lists at once (one run at a time), the overview at most every few seconds,
  // since stats walks the whole workspace (PROTOCOL.md §7.1) and a busy one pokes several times a second.
  const refreshLists = coalesced(async () => {
    try {
      const [rev] = await Promise.all([changes.refresh(), files.show(currentDir())]);
      status.textContent = `Up to date at rev ${rev}`;
      if (rev > 0) unknown.hidden = true;
      toast.hidden = true;
    } catch (e) {
      failed(e);
    }
  });
  const refreshGlance = throttled(
    coalesced(async () => {
      try {
        const [stats, activity] = await Promise.all([api.stats(), api.activity()]);
        fill(glance, h("h2", { id: "glance-title" }, "At a glance"), renderOverview(stats, activity));
      } catch (e) {
        failed(e);
      }
    }),
    STATS_EVERY_MS,
  );
  refreshGlance();
  const glanceTimer = setInterval(refreshGlance, GLANCE_EVERY_MS);
  const stopLive = goLive(api.socketUrl(), token, {
    changed: () => {
      refreshLists();
      refreshGlance();
    },
    state: (s) => {
      liveBadge.dataset.state = s;
      liveBadge.textContent = s === "live" ? "live" : "reconnecting (polling)";
    },
    expired: () => refused(new ApiError("unauthorized", "token expired", 401)),
  });
  stop = () => {
    clearInterval(glanceTimer);
    stopLive();
  };
}

start();
