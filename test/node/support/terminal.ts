/**
 * Running the real `ferry` in a pseudo-terminal (util-linux `script`), and
 * reading what a person would see: `screen` replays the output through a
 * small terminal model (carriage return, newline, cursor up, erase below,
 * erase line), so text that was drawn over is gone from it, as on a screen.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { FERRY_BIN } from "./cli.ts";

export interface Terminal {
  readonly child: ChildProcess;
  /** Everything written to the terminal so far, escape sequences included. */
  raw(): string;
  /** Types Ctrl-C (the terminal sends SIGINT to ferry). */
  interrupt(): void;
  exited: Promise<number | null>;
}

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

export function ferryInTerminal(args: readonly string[], env: NodeJS.ProcessEnv): Terminal {
  // `exec`: script runs the command through $SHELL (or /bin/sh, dash on Debian) and a shell left
  // waiting in between would take the Ctrl-C too and end with 130 whatever ferry does with it.
  const command = ["exec", process.execPath, FERRY_BIN, ...args].map(quote).join(" ");
  const child = spawn("script", ["-qfec", command, "/dev/null"], {
    env: { ...env, SHELL: "/bin/sh" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  return { child, raw: () => out, interrupt: () => child.stdin?.write("\x03"), exited };
}

/** The lines a terminal shows after replaying `raw` (the pty turns "\n" into "\r\n"). */
export function screen(raw: string): string[] {
  const lines: string[] = [""];
  let row = 0;
  let col = 0;
  const put = (ch: string) => {
    const line = (lines[row] ?? "").padEnd(col, " ");
    lines[row] = line.slice(0, col) + ch + line.slice(col + 1);
    col++;
  };
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i] as string;
    if (ch === "\r") col = 0;
    else if (ch === "\n") {
      row++;
      if (lines[row] === undefined) lines[row] = "";
    } else if (ch === "\x1b" && raw[i + 1] === "[") {
      // CSI: ESC [ digits letter
      let end = i + 2;
      while (end < raw.length && raw[end] !== undefined && /[0-9]/.test(raw[end] as string)) end++;
      const op = raw[end];
      const n = Number(raw.slice(i + 2, end) || "1");
      i = end;
      if (op === "A") row = Math.max(0, row - n);
      else if (op === "J") {
        lines[row] = (lines[row] ?? "").slice(0, col);
        lines.length = row + 1;
      } else if (op === "K") lines[row] = (lines[row] ?? "").slice(0, col);
    } else if (ch >= " ") put(ch);
  }
  return lines.map((l) => l.trimEnd()).filter((l, i, all) => l !== "" || i < all.length - 1);
}
