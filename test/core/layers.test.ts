/**
 * Each layer imports only what it may (README.md "Layout"): protocol/ is
 * pure (itself, cbor-x's no-eval build, @noble/hashes); the Worker side
 * (worker/) reaches the host side (client/) never, nor Node (package.json
 * only for its version); the host side
 * reaches worker/ only to bundle the Worker for `ferry serve`; the browser
 * page reads protocol/ and nothing else of ours.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)"([^"]+)"/gm;

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".gen.ts") && !f.endsWith(".gen.d.ts"))
    .map((f) => join(dir, f));
}

/** Every import of `file`: a repository path for a relative one, the package name otherwise. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  return [...text.matchAll(SPECIFIER)].map(([, spec = ""]) =>
    spec.startsWith(".") ? relative(ROOT, resolve(ROOT, dirname(file), spec)) : spec,
  );
}

/** The imports of the files under `dir` that `allowed` refuses, as "file: import". */
function offending(dir: string, allowed: (spec: string, file: string) => boolean): string[] {
  return sources(dir).flatMap((file) =>
    importsOf(file)
      .filter((spec) => !allowed(spec, file))
      .map((spec) => `${file}: ${spec}`),
  );
}

const under = (spec: string, dir: string) => spec.startsWith(`${dir}/`);

/**
 * A file past this many lines is doing more than one job (STYLE.md,
 * "Architecture" 1): split it by job, not by count. Generated files
 * (`*.gen.ts`, `*.gen.d.ts`: built from sources held to this, or from
 * wrangler.toml) are left out by sources().
 */
const MAX_LINES = 300;

describe("layers", () => {
  it("keeps protocol/ pure", () => {
    const pure = (spec: string) =>
      under(spec, "protocol") || spec === "cbor-x/index-no-eval" || spec.startsWith("@noble/hashes/");
    expect(offending("protocol", pure)).toEqual([]);
  });

  it("keeps the Worker side off the host side and off Node", () => {
    const workerSide = (spec: string, file: string) =>
      under(file, "worker/page/browser")
        ? under(spec, "worker/page/browser") || under(spec, "protocol")
        : under(spec, "worker") ||
          under(spec, "protocol") ||
          ["hono", "cloudflare:workers", "package.json"].includes(spec) ||
          spec.startsWith("hono/") ||
          spec.startsWith("@noble/hashes/");
    expect(offending("worker", workerSide)).toEqual([]);
  });

  it("keeps the sync rules below the object: worker/sync/ never reaches worker/do/ or the routes", () => {
    // The object (do/: its door, sockets, storage) calls the rules; rules that called back up
    // would be a second door. Import cycles anywhere are biome's noImportCycles (biome.json).
    const rules = (spec: string) =>
      under(spec, "worker/sync") || under(spec, "protocol") || spec.startsWith("@noble/hashes/");
    expect(offending("worker/sync", rules)).toEqual([]);
  });

  it("keeps the host side off the Worker's code, but for bundling it", () => {
    const hostSide = (spec: string, file: string) =>
      !under(spec, "worker") || (under(file, "client/serve") && spec === "worker/index.ts");
    expect(offending("client", hostSide)).toEqual([]);
  });

  it("keeps every source file to 300 lines at most", () => {
    const lines = (file: string) => readFileSync(join(ROOT, file), "utf8").split("\n").length - 1;
    const long = ["client", "worker", "protocol"]
      .flatMap(sources)
      .filter((file) => lines(file) > MAX_LINES)
      .map((file) => `${file}: ${lines(file)} lines`);
    expect(long).toEqual([]);
  });
});
