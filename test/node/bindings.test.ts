/**
 * One configuration, three readers: wrangler.toml is what `wrangler deploy`
 * ships; worker/env.ts types what the Worker receives; client/serve/ starts
 * the local server from it. These fail when one drifts from the others.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { unstable_readConfig } from "wrangler";
import { findWorkerSource } from "../../client/serve/worker-source.ts";
import { tempDir } from "./support/hosts.ts";

/** Env fields wrangler.toml does not declare, and why. */
const NOT_IN_WRANGLER_TOML: Record<string, string> = {
  FERRY_SECRET: "a secret: `wrangler secret put FERRY_SECRET`, FERRY_SECRET for ferry serve",
  FERRY_STORAGE: "set by ferry serve only (client/serve/launch.ts)",
};

const source = findWorkerSource();
const config = unstable_readConfig({ config: join(source.root, "wrangler.toml") });

/** The members of `interface Env` in worker/env.ts, read with the TypeScript compiler. */
function envFields(): string[] {
  const path = join(source.root, "worker", "env.ts");
  const file = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.ES2022);
  const env = file.statements.find((s) => ts.isInterfaceDeclaration(s) && s.name.text === "Env");
  if (env === undefined || !ts.isInterfaceDeclaration(env)) throw new Error("worker/env.ts has no interface Env");
  return env.members.map((m) => (m.name && ts.isIdentifier(m.name) ? m.name.text : "?")).sort();
}

/** The bindings `wrangler types` derives from wrangler.toml. */
function generatedBindings(): string[] {
  const out = join(tempDir("wrangler-types"), "env.d.ts");
  execFileSync(
    process.execPath,
    [join(source.root, "scripts/wrangler.mjs"), "types", out, "--include-runtime=false", "--strict-vars=false"],
    { cwd: source.root, stdio: "pipe", env: { ...process.env, WRANGLER_SEND_METRICS: "false" } },
  );
  const body = /interface __BaseEnv_Env \{([^}]*)\}/.exec(readFileSync(out, "utf8"))?.[1];
  if (body === undefined)
    throw new Error(`no Env interface in what wrangler types wrote:\n${readFileSync(out, "utf8")}`);
  return [...body.matchAll(/^\s*(\w+)\??:/gm)].map((m) => m[1] as string).sort();
}

describe("the Worker's configuration", () => {
  it("types in worker/env.ts every binding wrangler.toml declares, and nothing else unexplained", () => {
    const generated = generatedBindings();
    expect(generated).toContain("WORKSPACE");
    const fields = envFields();
    expect(generated.filter((b) => !fields.includes(b))).toEqual([]);
    expect(fields.filter((f) => !generated.includes(f))).toEqual(Object.keys(NOT_IN_WRANGLER_TOML).sort());
  }, 60_000);

  it("starts the local server with wrangler.toml's name, object class, buckets, compatibility settings and vars", () => {
    expect(source.name).toBe(config.name);
    const sqliteClasses = config.migrations.flatMap(
      (m: { new_sqlite_classes?: string[] }) => m.new_sqlite_classes ?? [],
    );
    expect(source.durableObjects).toEqual(
      config.durable_objects.bindings.map((b: { name: string; class_name: string }) => ({
        name: b.name,
        className: b.class_name,
        sqlite: sqliteClasses.includes(b.class_name),
      })),
    );
    expect(source.durableObjects).toEqual([{ name: "WORKSPACE", className: "WorkspaceObject", sqlite: true }]);
    expect(source.r2Buckets).toEqual(
      config.r2_buckets.map((b: { binding: string; bucket_name?: string }) => ({
        name: b.binding,
        bucketName: b.bucket_name,
      })),
    );
    expect(source.r2Buckets).toEqual([{ name: "PACKS", bucketName: "ferry-packs" }]);
    expect(source.compatibilityDate).toBe(config.compatibility_date);
    expect(source.compatibilityFlags).toEqual(config.compatibility_flags);
    expect(source.vars).toEqual(config.vars);
  });

  it("keeps observability on for the deployed Worker", () => {
    expect(config.observability).toMatchObject({ enabled: true });
  });
});
