/**
 * `npm start`: a local ferry server on workerd (wrangler dev) with SQLite
 * storage under .wrangler/state, the development secret, and a ready token.
 * Env: PORT (default 8787), FERRY_SECRET (default: the documented dev secret).
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { DEV_SECRET, signToken } from "../protocol/token.ts";

const port = Number(process.env.PORT ?? 8787);
const secret = process.env.FERRY_SECRET ?? readDevVarsSecret() ?? DEV_SECRET;
if (!existsSync(".dev.vars")) writeFileSync(".dev.vars", `FERRY_SECRET=${secret}\n`);

const wrangler = spawn(
  process.execPath,
  [
    "scripts/wrangler.mjs",
    "dev",
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--persist-to",
    ".wrangler/state",
    "--var",
    `FERRY_SECRET:${secret}`,
  ],
  { stdio: ["inherit", "pipe", "inherit"], env: { ...process.env, WRANGLER_SEND_METRICS: "false" } },
);
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => wrangler.kill(signal));
wrangler.on("exit", (code) => process.exit(code ?? 0));
wrangler.stdout.pipe(process.stdout);

const url = `http://127.0.0.1:${port}`;
await waitForHealth(url);
const token = signToken({ ws: "*", rights: "rw", exp: Math.floor(Date.now() / 1000) + 30 * 86400 }, secret);
console.log(`
ferry is running at ${url}  (storage: .wrangler/state)
  export FERRY_URL=${url}
  export FERRY_TOKEN=${token}
  export FERRY_WORKSPACE=demo
  npx ferry push ./some/dir      # then: npx ferry pull ./empty/dir
The token covers every workspace, read-write, for 30 days. Ctrl-C stops the server.
`);

function readDevVarsSecret(): string | undefined {
  if (!existsSync(".dev.vars")) return undefined;
  return /^FERRY_SECRET=(.*)$/m.exec(readFileSync(".dev.vars", "utf8"))?.[1]?.trim();
}

async function waitForHealth(base: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${base}/v1/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server did not answer at ${base}/v1/health within 60 s`);
}
