/**
 * How a byte count reads to people, one spelling for the CLI
 * (client/cli/format.ts) and the workspace page (worker/page/browser):
 * `512 B`, `1.5 KiB`, `42 MiB`. Here because the page may import only protocol/.
 */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
}
