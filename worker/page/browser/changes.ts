/** Recent changes: revs newest first with host, time and the paths they wrote, an older page at a time. */
import type { RevSummary } from "../../../protocol/browse.ts";
import { type Api, PATHS_PER_REV } from "./api.ts";
import { fill, h } from "./dom.ts";
import { ago, count, hostName, isoTime, localTime } from "./format.ts";

export class ChangesView {
  readonly el = h("section", { class: "changes", "aria-labelledby": "changes-title" });
  private readonly list = h("ol", { class: "revs" });
  private readonly more = h("div", { class: "more" });

  constructor(
    private readonly api: Api,
    private readonly openPath: (path: string, kind: string) => void,
    private readonly failed: (e: unknown) => void,
  ) {
    fill(this.el, h("h2", { id: "changes-title" }, "Recent changes"), this.list, this.more);
  }

  /** The newest page again (after a poke), replacing whatever older pages were shown. */
  async refresh(): Promise<number> {
    const page = await this.api.revs(null);
    fill(this.list);
    if (page.revs.length === 0) this.list.append(h("li", { class: "muted" }, "No changes yet."));
    this.append(page.revs, page.next);
    return page.rev;
  }

  private append(revs: readonly RevSummary[], next: number | null): void {
    for (const r of revs) this.list.append(this.item(r));
    fill(this.more);
    if (next === null) return;
    const button = h("button", { type: "button" }, "Older changes");
    button.addEventListener("click", async () => {
      button.disabled = true;
      try {
        const page = await this.api.revs(next);
        this.append(page.revs, page.next);
      } catch (e) {
        button.disabled = false;
        this.failed(e);
      }
    });
    this.more.append(button);
  }

  private item(r: RevSummary): HTMLLIElement {
    const shown = r.paths.length;
    const rest = r.entries - shown;
    return h(
      "li",
      { "data-rev": r.rev },
      h(
        "div",
        { class: "rev-head" },
        h("strong", {}, `rev ${count(r.rev)}`),
        " ",
        r.at > 0
          ? h("time", { datetime: isoTime(r.at), title: localTime(r.at) }, ago(r.at))
          : h("span", { class: "muted" }, "time unknown"),
        " · host ",
        hostName(r),
        " · ",
        `${count(r.entries)} ${r.entries === 1 ? "entry" : "entries"}`,
      ),
      shown === 0
        ? null
        : h(
            "ul",
            { class: "paths" },
            ...r.paths.map((p) => {
              const label = `${p.path}${p.kind === "dir" ? "/" : ""}`;
              // A deleted path opens its versions too: what it held before is still there to download.
              const link =
                p.kind === "gone"
                  ? h(
                      "button",
                      { type: "button", class: "link" },
                      h("del", {}, label),
                      h("span", { class: "visually-hidden" }, " (deleted)"),
                    )
                  : h("button", { type: "button", class: "link" }, label);
              link.addEventListener("click", () => this.openPath(p.path, p.kind));
              return h("li", p.kind === "gone" ? { class: "gone" } : {}, link);
            }),
          ),
      rest <= 0
        ? null
        : h(
            "p",
            { class: "muted small" },
            // Fewer paths than asked for means the rest were all written again by later revs.
            shown < PATHS_PER_REV ? `and ${count(rest)} more, changed again by later revs` : `and ${count(rest)} more`,
          ),
    );
  }
}
