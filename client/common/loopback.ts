/**
 * Whether a host name or address stays on this machine: 127.0.0.0/8, ::1
 * (bracketed or not, or IPv4-mapped) and `localhost`. What the development
 * secret is confined to: `ferry serve` refuses it on any other address
 * (client/serve/launch.ts), and the CLI mints from it only for such a URL
 * (client/cli/endpoint.ts). A name that resolves elsewhere is not loopback.
 */
import { isIPv4 } from "node:net";

export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  if (bare === "localhost" || bare === "::1") return true;
  const v4 = bare.startsWith("::ffff:") ? bare.slice("::ffff:".length) : bare;
  return isIPv4(v4) && v4.startsWith("127.");
}
