// An interface may not extend an import() type directly, so name it first.
type FerryEnv = import("../worker/env.ts").Env;
declare namespace Cloudflare {
  interface Env extends FerryEnv {}
}
