/**
 * Global setup for the Node tests: the Debian packages they run, installed
 * with apt-get when missing (CI runs as root on a fresh machine), so the
 * tests never assume them. Quick when they are installed. chromium drives
 * the browser tests (test/node/page*.test.ts; its path by
 * `inject("chromiumPath")`); rsync is one of the tools ctime-fuzz.test.ts
 * rewrites files with, as users do.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import type { TestProject } from "vitest/node";

export const CHROMIUM = "/usr/bin/chromium";

/** Each package by the file that shows it is installed. */
const PACKAGES: readonly (readonly [file: string, name: string])[] = [
  [CHROMIUM, "chromium"],
  ["/usr/bin/rsync", "rsync"],
];

declare module "vitest" {
  export interface ProvidedContext {
    chromiumPath: string;
  }
}

export default function setup(project: TestProject): void {
  const missing = PACKAGES.filter(([file]) => !existsSync(file));
  if (missing.length > 0) install(missing.map(([, name]) => name));
  for (const [file, name] of PACKAGES) {
    if (!existsSync(file)) throw new Error(`apt-get installed ${name} but ${file} is missing`);
  }
  project.provide("chromiumPath", CHROMIUM);
}

function install(names: readonly string[]): void {
  if (process.getuid?.() !== 0) {
    throw new Error(`the Node tests need ${names.join(", ")}: run 'apt-get install ${names.join(" ")}' as root`);
  }
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  console.log(`installing Debian's ${names.join(", ")} for the Node tests (apt-get)`);
  execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit", env });
  execFileSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...names], { stdio: "inherit", env });
}
