/**
 * Global setup for the browser tests (test/node/page.test.ts): Debian's
 * chromium, installed with apt-get when it is missing (CI runs as root on a
 * fresh machine), so the tests never assume it. Quick when it is installed.
 * Tests read its path with `inject("chromiumPath")`.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import type { TestProject } from "vitest/node";

export const CHROMIUM = "/usr/bin/chromium";

declare module "vitest" {
  export interface ProvidedContext {
    chromiumPath: string;
  }
}

export default function setup(project: TestProject): void {
  if (!existsSync(CHROMIUM)) install();
  project.provide("chromiumPath", CHROMIUM);
}

function install(): void {
  if (process.getuid?.() !== 0) {
    throw new Error(
      `the browser tests need ${CHROMIUM}: run 'apt-get install chromium' as root (CI installs it itself)`,
    );
  }
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  console.log("installing Debian's chromium for the browser tests (apt-get)");
  execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit", env });
  execFileSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", "chromium"], { stdio: "inherit", env });
  if (!existsSync(CHROMIUM)) throw new Error(`apt-get installed chromium but ${CHROMIUM} is missing`);
}
