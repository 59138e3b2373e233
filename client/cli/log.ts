/**
 * `ferry log <dir> [path]`: a path's retained states (rev, time, host,
 * kind, size), newest first, or without a path the workspace's recent revs.
 * The path is relative to <dir> (folder-endpoint.ts workspacePathOf): with `.`,
 * to where the command runs, inside the synced folder it is in.
 */
import type { Command } from "commander";
import { toHex } from "../../protocol/hash.ts";
import type { LogResponse } from "../../protocol/history.ts";
import type { EndpointFlags } from "./endpoint.ts";
import { EXIT } from "./errors.ts";
import { resolveDirEndpoint, workspacePathOf } from "./folder-endpoint.ts";
import { formatBytes } from "./format.ts";
import { serverOptions, toJson } from "./server-flags.ts";

export function registerLog(program: Command, setExit: (code: number) => void): void {
  serverOptions(
    program
      .command("log")
      .description("list a path's retained versions (or the workspace's recent revs), newest first")
      .argument("<dir>", "the synced directory")
      .argument("[path]", "a path relative to <dir>, inside the synced folder it is in"),
  )
    .option("--limit <n>", "at most this many lines", "50")
    .action(async (dir: string, path: string | undefined, flags: EndpointFlags & { json?: boolean; limit: string }) => {
      const endpoint = await resolveDirEndpoint(dir, flags);
      // Loaded when the command runs: `ferry --help` and the other commands start without the HTTP transport.
      const { HttpTransport } = await import("../transport/http-transport.ts");
      const transport = new HttpTransport(endpoint);
      try {
        const limit = Math.max(1, Number(flags.limit) || 50);
        const named = path === undefined ? "" : workspacePathOf(dir, path);
        const answer = await transport.call("log", { limit, ...(named !== "" ? { path: named } : {}) });
        process.stdout.write(
          flags.json ? `${toJson({ workspace: endpoint.workspace, ...withUtcTimes(answer) })}\n` : render(answer),
        );
        setExit(EXIT.ok);
      } finally {
        await transport.close();
      }
    });
}

/** `--json`: each state or rev with its time as UTC, `2026-12-06T08:13:04.000Z`, beside `at` (ms). */
function withUtcTimes(answer: LogResponse) {
  const time = (at: number) => (at > 0 ? { time: new Date(at).toISOString() } : {});
  return {
    ...answer,
    ...(answer.states ? { states: answer.states.map((s) => ({ ...s, ...time(s.at) })) } : {}),
    ...(answer.revs ? { revs: answer.revs.map((r) => ({ ...r, ...time(r.at) })) } : {}),
  };
}

/** `2026-12-06 09:13:04 +0100`: the time where the reader is (TZ), with its zone, so it is never mistaken for another's. */
export function localTime(at: number): string {
  if (at <= 0) return "unknown".padEnd(25);
  const d = new Date(at);
  const two = (n: number) => String(n).padStart(2, "0");
  const offset = -d.getTimezoneOffset();
  const zone = `${offset < 0 ? "-" : "+"}${two(Math.floor(Math.abs(offset) / 60))}${two(Math.abs(offset) % 60)}`;
  return (
    `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ` +
    `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())} ${zone}`
  );
}

function render(answer: LogResponse): string {
  const time = localTime;
  const lines: string[] = [];
  if (answer.states) {
    lines.push("     rev  time                       host      kind     size");
    for (const s of answer.states) {
      const size = s.size === undefined ? "" : formatBytes(s.size);
      lines.push(`${String(s.rev).padStart(8)}  ${time(s.at)}  ${hostName(s).padEnd(8)}  ${s.kind.padEnd(7)}  ${size}`);
    }
    if (answer.states.length === 0) lines.push("(no retained versions)");
  } else {
    lines.push("     rev  time                       host      entries");
    for (const r of answer.revs ?? []) {
      lines.push(`${String(r.rev).padStart(8)}  ${time(r.at)}  ${hostName(r).padEnd(8)}  ${r.entries}`);
    }
  }
  if (answer.next !== undefined) lines.push(`(older: --limit more)`);
  if (answer.retainedFrom > 0) lines.push(`(versions replaced before rev ${answer.retainedFrom} are no longer kept)`);
  return `${lines.join("\n")}\n`;
}

/** A host as people know it: the label it gave itself (`--label`, the hostname), else the start of its id. */
function hostName(h: { readonly host: Uint8Array; readonly label?: string }): string {
  return h.label ?? toHex(h.host).slice(0, 8);
}
