// cloudflare:test's `env`: wrangler.toml's bindings come from worker/wrangler-env.gen.d.ts, which
// declares them on Cloudflare.Env too; these are the Worker's others (worker/env.ts).
// An interface may not extend an import() type directly, so name it first.
type FerryExtras = Pick<import("../worker/env.ts").Env, "FERRY_SECRET" | "FERRY_STORAGE">;
declare namespace Cloudflare {
  interface Env extends FerryExtras {}
}
