/** A file's versions in a modal dialog: each state with its rev, size and time, and a download for each file state. */
import type { PathVersion } from "../../../protocol/browse.ts";
import type { Api } from "./api.ts";
import { fill, h } from "./dom.ts";
import { ago, bytes, count, hostName, isoTime, localTime } from "./format.ts";

export class VersionsDialog {
  readonly el = h("dialog", { class: "versions", "aria-labelledby": "versions-title" });
  private path = "";

  constructor(
    private readonly api: Api,
    private readonly download: (path: string, rev: number | null) => void,
    private readonly failed: (e: unknown) => void,
  ) {}

  async open(path: string): Promise<void> {
    this.path = path;
    const page = await this.api.versions(path, null);
    const list = h("ol", { class: "version-list" });
    const more = h("div", { class: "more" });
    const close = h("button", { type: "button", class: "close" }, "Close");
    close.addEventListener("click", () => this.el.close());
    fill(this.el, h("h2", { id: "versions-title" }, "Versions of ", h("code", {}, path)), list, more, close);
    this.append(list, more, page.versions, page.next);
    if (page.versions.length === 0) list.append(h("li", { class: "muted" }, "No versions kept."));
    if (page.retainedFrom > 0) {
      more.before(
        h("p", { class: "muted small" }, `States older than rev ${count(page.retainedFrom)} may have been collected.`),
      );
    }
    if (!this.el.open) this.el.showModal();
  }

  private append(list: HTMLElement, more: HTMLElement, versions: readonly PathVersion[], next: number | null): void {
    const first = list.childElementCount === 0;
    for (const [i, v] of versions.entries()) list.append(this.item(v, first && i === 0));
    fill(more);
    if (next === null) return;
    const button = h("button", { type: "button" }, "Older versions");
    button.addEventListener("click", async () => {
      button.disabled = true;
      try {
        const page = await this.api.versions(this.path, next);
        this.append(list, more, page.versions, page.next);
      } catch (e) {
        button.disabled = false;
        this.failed(e);
      }
    });
    more.append(button);
  }

  private item(v: PathVersion, current: boolean): HTMLLIElement {
    const what =
      v.kind === "file"
        ? `file, ${bytes(v.size ?? 0)}`
        : v.kind === "gone"
          ? "deleted"
          : v.kind === "symlink"
            ? "symlink"
            : "directory";
    let action: HTMLElement | null = null;
    if (v.kind === "file") {
      action = h("button", { type: "button", "aria-label": `Download rev ${v.rev}` }, "Download");
      // Any state by its rev, the current one included (file?rev= serves both).
      action.addEventListener("click", () => this.download(this.path, v.rev));
    }
    return h(
      "li",
      {},
      h("strong", {}, `rev ${count(v.rev)}${current ? " (current)" : ""}`),
      ` ${what} · `,
      v.at > 0 ? h("time", { datetime: isoTime(v.at), title: localTime(v.at) }, ago(v.at)) : "time unknown",
      " · host ",
      hostName(v),
      " ",
      action,
    );
  }
}
