/**
 * A dependency-free SVG line chart with log axes: restore time against tree
 * size, one line per store kind, each point the median with a min-max
 * whisker. Log-log because the arms differ by orders of magnitude and
 * "flat in tree size" should look flat.
 */
export interface ChartPoint {
  readonly x: number;
  readonly y: number;
  readonly min?: number;
  readonly max?: number;
}

export interface ChartSeries {
  readonly name: string;
  readonly points: readonly ChartPoint[];
  /** A reference (a published figure), drawn grey and dashed. */
  readonly reference?: boolean;
}

export interface ChartSpec {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly ChartSeries[];
  /** Horizontal reference lines, e.g. a bar. */
  readonly marks?: readonly { readonly y: number; readonly label: string }[];
}

const W = 760;
const PLOT_H = 420;
const M = { left: 70, right: 20, top: 40, bottom: 55 };
const LEGEND_ROW = 20;
const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"];

export function lineChartSvg(spec: ChartSpec): string {
  // The legend sits under the plot, one series a row, so long names are never cut.
  const H = PLOT_H + spec.series.length * LEGEND_ROW + 10;
  const plotBottom = PLOT_H - M.bottom;
  const pts = spec.series.flatMap((s) => s.points);
  const ys = [...pts.flatMap((p) => [p.y, p.min ?? p.y, p.max ?? p.y]), ...(spec.marks ?? []).map((m) => m.y)];
  const [x0, x1] = logRange(pts.map((p) => p.x));
  const [y0, y1] = logRange(ys.filter((y) => y > 0));
  const px = (x: number) => M.left + ((Math.log10(x) - x0) / (x1 - x0)) * (W - M.left - M.right);
  const py = (y: number) => plotBottom - ((Math.log10(Math.max(y, 10 ** y0)) - y0) / (y1 - y0)) * (plotBottom - M.top);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="15">${esc(spec.title)}</text>`,
  ];
  for (const t of ticks(y0, y1)) {
    out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${py(t)}" y2="${py(t)}" stroke="#ddd"/>`);
    out.push(`<text x="${M.left - 6}" y="${py(t) + 4}" text-anchor="end">${label(t)}</text>`);
  }
  for (const t of ticks(x0, x1)) {
    out.push(`<line y1="${M.top}" y2="${plotBottom}" x1="${px(t)}" x2="${px(t)}" stroke="#eee"/>`);
    out.push(`<text x="${px(t)}" y="${plotBottom + 16}" text-anchor="middle">${label(t)}</text>`);
  }
  out.push(
    `<rect x="${M.left}" y="${M.top}" width="${W - M.left - M.right}" height="${plotBottom - M.top}" fill="none" stroke="#333"/>`,
    `<text x="${(M.left + W - M.right) / 2}" y="${plotBottom + 36}" text-anchor="middle">${esc(spec.xLabel)}</text>`,
    `<text transform="translate(16 ${(M.top + plotBottom) / 2}) rotate(-90)" text-anchor="middle">${esc(spec.yLabel)}</text>`,
  );
  for (const m of spec.marks ?? []) {
    out.push(
      `<line x1="${M.left}" x2="${W - M.right}" y1="${py(m.y)}" y2="${py(m.y)}" stroke="#999" stroke-dasharray="6 4"/>`,
      `<text x="${W - M.right - 4}" y="${py(m.y) - 4}" text-anchor="end" fill="#666">${esc(m.label)}</text>`,
    );
  }
  spec.series.forEach((s, i) => {
    const color = s.reference ? "#888" : COLORS[i % COLORS.length];
    const dash = s.reference ? ` stroke-dasharray="5 4"` : "";
    const sorted = [...s.points].sort((a, b) => a.x - b.x);
    out.push(
      `<polyline fill="none" stroke="${color}" stroke-width="2"${dash} points="${sorted.map((p) => `${px(p.x)},${py(p.y)}`).join(" ")}"/>`,
    );
    for (const p of sorted) {
      if (p.min !== undefined && p.max !== undefined) {
        out.push(`<line x1="${px(p.x)}" x2="${px(p.x)}" y1="${py(p.min)}" y2="${py(p.max)}" stroke="${color}"/>`);
      }
      out.push(
        `<circle cx="${px(p.x)}" cy="${py(p.y)}" r="3.5" fill="${color}"><title>${esc(s.name)}: ${p.x} → ${p.y}</title></circle>`,
      );
    }
    const ly = PLOT_H + i * LEGEND_ROW;
    out.push(
      `<line x1="${M.left}" x2="${M.left + 24}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="2"${dash}/>`,
      `<text x="${M.left + 32}" y="${ly + 4}">${esc(s.name)}</text>`,
    );
  });
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}

function logRange(values: readonly number[]): [number, number] {
  const lo = Math.log10(Math.min(...values));
  const hi = Math.log10(Math.max(...values));
  const pad = Math.max(0.1, (hi - lo) * 0.08);
  return [lo - pad, hi + pad];
}

/** 1, 2, 5 per decade inside the range (only 1s past three decades). */
function ticks(lo: number, hi: number): number[] {
  const steps = hi - lo > 3 ? [1] : [1, 2, 5];
  const out: number[] = [];
  for (let d = Math.floor(lo); d <= Math.ceil(hi); d++) {
    for (const s of steps) {
      const v = s * 10 ** d;
      if (Math.log10(v) >= lo && Math.log10(v) <= hi) out.push(v);
    }
  }
  return out;
}

function label(v: number): string {
  return v >= 1000 ? `${v / 1000}k`.replace("000k", "M") : String(Number(v.toPrecision(3)));
}

function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
