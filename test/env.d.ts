declare namespace Cloudflare {
  interface Env {
    WORKSPACE: DurableObjectNamespace;
    FERRY_SECRET: string;
  }
}
