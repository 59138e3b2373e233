/**
 * Browse the tree one directory at a time, a page of children per request
 * (the server never walks a subtree), with keyboard movement: arrows move
 * between rows, Enter opens a directory or downloads a file, Backspace goes
 * up. Directories are links (`?dir=`), so the back button and new tabs work.
 */
import type { TreeChild } from "../../../protocol/browse.ts";
import type { Api } from "./api.ts";
import { fill, h } from "./dom.ts";
import { bytes, isoTime, localTime, mode } from "./format.ts";

export interface FilesActions {
  open(dir: string): void;
  download(path: string, rev: number | null): void;
  versions(path: string): void;
  failed(e: unknown): void;
}

export function dirHref(dir: string): string {
  return dir === "" ? location.pathname : `${location.pathname}?dir=${encodeURIComponent(dir)}`;
}

export class FilesView {
  readonly el = h("section", { class: "files", "aria-labelledby": "files-title" });
  private readonly body = h("tbody", {});
  private readonly more = h("div", { class: "more" });
  private dir = "";
  /** The directory the table shows, to tell a refresh from a move. */
  private shown: string | null = null;

  constructor(
    private readonly api: Api,
    private readonly act: FilesActions,
  ) {
    this.body.addEventListener("keydown", (e) => this.onKey(e));
    // On load nothing has focus: the arrow keys start in the list rather than waiting for a Tab.
    document.addEventListener("keydown", (e) => {
      const idle = document.activeElement === null || document.activeElement === document.body;
      if (!idle || e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || !this.el.isConnected) return;
      if (e.key === "ArrowDown" || e.key === "Home") {
        e.preventDefault();
        this.focusRow(0);
      } else if (e.key === "ArrowUp" || e.key === "End") {
        e.preventDefault();
        this.focusRow(this.rows().length - 1);
      }
    });
  }

  /** Shows `dir` from its first page; keeps focus on the table if it was there. */
  async show(dir: string): Promise<void> {
    this.dir = dir;
    const page = await this.api.tree(dir, null);
    // A refresh after a poke keeps the keyboard where it was: same row, or the nearest one left.
    const focusedRow = this.el.contains(document.activeElement)
      ? Math.max(0, this.rows().indexOf(document.activeElement as HTMLElement))
      : null;
    const sameDir = dir === this.shown;
    this.shown = dir;
    fill(
      this.el,
      h("h2", { id: "files-title" }, "Files"),
      this.breadcrumb(),
      h(
        "table",
        { class: "tree" },
        h("caption", { class: "visually-hidden" }, `Contents of ${dir === "" ? "the workspace root" : dir}`),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            h("th", { scope: "col" }, "Name"),
            h("th", { scope: "col", class: "num" }, "Size"),
            h("th", { scope: "col" }, "Mode"),
            h("th", { scope: "col" }, "Modified"),
            h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Actions")),
          ),
        ),
        this.body,
      ),
      this.more,
    );
    fill(this.body);
    if (dir !== "") this.body.append(this.parentRow());
    this.append(page.children, page.next);
    if (page.children.length === 0)
      this.body.append(h("tr", {}, h("td", { colspan: 5, class: "muted" }, "Empty directory")));
    if (focusedRow !== null) this.focusRow(sameDir ? focusedRow : 0);
  }

  private breadcrumb(): HTMLElement {
    const parts = this.dir === "" ? [] : this.dir.split("/");
    const crumbs = [
      h(
        "li",
        {},
        parts.length === 0
          ? h("span", { "aria-current": "page" }, "root")
          : h("a", { href: dirHref(""), "data-dir": "" }, "root"),
      ),
    ];
    parts.forEach((name, i) => {
      const path = parts.slice(0, i + 1).join("/");
      const last = i === parts.length - 1;
      crumbs.push(
        h(
          "li",
          {},
          last ? h("span", { "aria-current": "page" }, name) : h("a", { href: dirHref(path), "data-dir": path }, name),
        ),
      );
    });
    const nav = h("nav", { "aria-label": "Directory" }, h("ol", { class: "crumbs" }, ...crumbs));
    nav.addEventListener("click", (e) => this.follow(e));
    return nav;
  }

  private append(children: readonly TreeChild[], next: string | null): void {
    for (const child of children) this.body.append(this.row(child));
    fill(this.more);
    if (next !== null) {
      const button = h("button", { type: "button" }, "Show more");
      button.addEventListener("click", async () => {
        button.disabled = true;
        try {
          const page = await this.api.tree(this.dir, next);
          const at = this.rows().length;
          this.append(page.children, page.next);
          this.focusRow(at);
        } catch (e) {
          button.disabled = false;
          this.act.failed(e);
        }
      });
      this.more.append(button);
    }
  }

  private parentRow(): HTMLTableRowElement {
    const up = this.dir.includes("/") ? this.dir.slice(0, this.dir.lastIndexOf("/")) : "";
    const link = h(
      "a",
      { href: dirHref(up), "data-dir": up, class: "name dir", "aria-label": "Parent directory" },
      "..",
    );
    link.addEventListener("click", (e) => this.follow(e));
    return h("tr", {}, h("td", {}, link), h("td", {}), h("td", {}), h("td", {}), h("td", {}));
  }

  private row(c: TreeChild): HTMLTableRowElement {
    const path = this.dir === "" ? c.name : `${this.dir}/${c.name}`;
    let name: HTMLElement;
    let actions: HTMLElement | string = "";
    if (c.kind === "dir") {
      name = h("a", { href: dirHref(path), "data-dir": path, class: "name dir" }, `${c.name}/`);
      name.addEventListener("click", (e) => this.follow(e));
    } else if (c.kind === "file") {
      name = h("button", { type: "button", class: "name file", title: `Download ${c.name}` }, c.name);
      name.addEventListener("click", () => this.act.download(path, null));
      const history = h("button", { type: "button", class: "link", "aria-label": `Versions of ${c.name}` }, "versions");
      history.addEventListener("click", () => this.act.versions(path));
      actions = history;
    } else {
      name = h(
        "span",
        { class: "name symlink", tabindex: 0 },
        c.name,
        h("span", { class: "target" }, ` → ${c.target}`),
      );
    }
    const when = c.kind === "symlink" ? "" : h("time", { datetime: isoTime(c.mtime) }, localTime(c.mtime));
    return h(
      "tr",
      { "data-kind": c.kind },
      h("td", {}, name),
      h("td", { class: "num" }, c.kind === "file" ? bytes(c.size) : ""),
      h("td", {}, c.kind === "symlink" ? "" : h("code", {}, mode(c.mode))),
      h("td", {}, when),
      h("td", {}, actions),
    );
  }

  private follow(e: Event): void {
    const a = (e.target as Element).closest("a[data-dir]");
    if (!(a instanceof HTMLAnchorElement) || (e as MouseEvent).ctrlKey || (e as MouseEvent).metaKey) return;
    e.preventDefault();
    this.act.open(a.dataset.dir ?? "");
  }

  private rows(): HTMLElement[] {
    return [...this.body.querySelectorAll<HTMLElement>("tr td:first-child > .name")];
  }

  private focusRow(i: number): void {
    const rows = this.rows();
    rows[Math.max(0, Math.min(i, rows.length - 1))]?.focus();
  }

  private onKey(e: KeyboardEvent): void {
    const rows = this.rows();
    const at = rows.indexOf(document.activeElement as HTMLElement);
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      this.focusRow(at < 0 ? 0 : at + (e.key === "ArrowDown" ? 1 : -1));
    } else if (e.key === "Home" || e.key === "End") {
      e.preventDefault();
      this.focusRow(e.key === "Home" ? 0 : rows.length - 1);
    } else if (e.key === "Backspace" && this.dir !== "") {
      e.preventDefault();
      this.act.open(this.dir.includes("/") ? this.dir.slice(0, this.dir.lastIndexOf("/")) : "");
    }
  }
}
