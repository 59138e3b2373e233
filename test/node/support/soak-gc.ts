/**
 * The soak's garbage collector (FERRY_SOAK_GC_MS): a loop that asks the
 * server for a whole collection (`POST …/gc`, PROTOCOL.md §7.10) every few
 * seconds while the writers run and the watchers converge, against a server
 * whose graces are short (SOAK_GC_VARS), so packs are condemned, revived and
 * deleted under live pushes; and the deep check (`GET …/check?deep=1`,
 * §7.11) the converged workspace must pass.
 */
import type { CheckPage, CheckProblem } from "../../../protocol/check.ts";
import type { Freed } from "../../../protocol/collection.ts";
import { tokenFor } from "./serve-process.ts";

/**
 * Worker variables of the soak's own server in this mode: graces of seconds,
 * so a collection every few seconds condemns and deletes packs during the
 * run (issue 31: "garbage collection running every few seconds and a short grace").
 */
export const SOAK_GC_VARS: Readonly<Record<string, string>> = {
  FERRY_UPLOAD_GRACE: "3s",
  FERRY_PACK_GRACE: "2s",
  FERRY_HISTORY: "5s",
};
const PACK_GRACE_MS = 2000;

/** The Freed counters the soak reports, summed over every collection. */
const TALLIED = [
  "packsCondemned",
  "packsDeleted",
  "packsRevived",
  "packsRewritten",
  "orphans",
  "r2Deleted",
  "objects",
] as const;

export class SoakCollector {
  runs = 0;
  /** Requests that got no answer (the server is down mid-run), with why. */
  readonly unanswered: string[] = [];
  /** Answers other than 200, with their body. */
  readonly refused: string[] = [];
  readonly freed: Record<(typeof TALLIED)[number], number> = Object.fromEntries(TALLIED.map((k) => [k, 0])) as never;
  private stopped = false;
  private readonly loop: Promise<void>;

  constructor(
    private readonly url: string,
    private readonly workspace: string,
    private readonly everyMs: number,
  ) {
    this.loop = this.run();
  }

  /** Ends the loop after the collection in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  /**
   * Ends the loop, then collects twice more a pack grace apart, so what the
   * run condemned is deleted from R2 (and the check after it meets no pack
   * still waiting out its grace).
   */
  async finish(): Promise<void> {
    await this.stop();
    for (let i = 0; i < 2; i++) {
      await new Promise((r) => setTimeout(r, PACK_GRACE_MS + 500));
      await this.collect();
    }
  }

  summary(): string {
    const freed = TALLIED.map((k) => `${k} ${this.freed[k]}`).join(", ");
    const refused = this.refused.length > 0 ? `, refused: ${this.refused.join("; ")}` : "";
    return `${this.runs} gc runs (${this.unanswered.length} unanswered${refused}), ${freed}`;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      await new Promise((r) => setTimeout(r, this.everyMs));
      if (this.stopped) break;
      await this.collect();
    }
  }

  private async collect(): Promise<void> {
    try {
      const res = await fetch(`${this.url}/v1/workspaces/${this.workspace}/gc`, {
        method: "POST",
        headers: { authorization: `Bearer ${tokenFor(this.workspace)}` },
      });
      const body = (await res.json()) as { freed?: Freed };
      if (res.status !== 200 || !body.freed) {
        this.refused.push(`${res.status} ${JSON.stringify(body)}`);
        return;
      }
      this.runs++;
      for (const k of TALLIED) this.freed[k] += body.freed[k] ?? 0;
    } catch (e) {
      this.unanswered.push(String(e));
    }
  }
}

/** Every problem `GET …/check?deep=1` finds, page by page (empty: clean). */
export async function deepCheck(url: string, workspace: string): Promise<CheckProblem[]> {
  const problems: CheckProblem[] = [];
  for (let after: number | null = 0; after !== null; ) {
    const res = await fetch(`${url}/v1/workspaces/${workspace}/check?deep=1&after=${after}`, {
      headers: { authorization: `Bearer ${tokenFor(workspace)}` },
    });
    if (res.status !== 200) throw new Error(`check answered ${res.status}: ${await res.text()}`);
    const page = (await res.json()) as CheckPage;
    problems.push(...page.problems);
    after = page.next;
  }
  return problems;
}
