declare namespace Cloudflare {
  interface Env extends import("../worker/env.ts").Env {}
}
