/**
 * A small SVG writer for the benchmark chart: side-by-side line panels, both axes log-scaled,
 * one line per server under test through the medians, with a whisker from the lowest to the
 * highest repetition at each point.
 */

export interface Point {
  x: number;
  median: number;
  min: number;
  max: number;
}

export interface Series {
  name: string;
  color: string;
  /** Points with a non-positive or non-finite median are left out (a gap in the line). */
  points: Point[];
  /** Drawn dashed (e.g. the limit, which is a bound rather than a contender). */
  dashed?: boolean;
}

export interface Panel {
  title: string;
  yLabel: string;
  xLabel: string;
  series: Series[];
}

const PANEL_W = 420;
const PANEL_H = 320;
const MARGIN = { left: 70, right: 20, top: 40, bottom: 50 };
const LEGEND_H = 30;

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function fmt(n: number): string {
  if (n >= 1e6) return `${+(n / 1e6).toPrecision(3)}M`;
  if (n >= 1e3) return `${+(n / 1e3).toPrecision(3)}k`;
  return `${+n.toPrecision(3)}`;
}

/** Powers of ten covering [min, max], at least two of them. */
function decades(min: number, max: number): number[] {
  let lo = Math.floor(Math.log10(min));
  let hi = Math.ceil(Math.log10(max));
  if (hi === lo) {
    lo -= 1;
    hi += 1;
  }
  const out: number[] = [];
  for (let e = lo; e <= hi; e++) out.push(10 ** e);
  return out;
}

const usable = (v: number): boolean => Number.isFinite(v) && v > 0;

function panelSvg(panel: Panel, offsetX: number): string {
  const plotW = PANEL_W - MARGIN.left - MARGIN.right;
  const plotH = PANEL_H - MARGIN.top - MARGIN.bottom;
  const points = panel.series.flatMap((s) => s.points).filter((p) => usable(p.median) && usable(p.x));
  const ys = points.flatMap((p) => [p.median, p.min, p.max]).filter(usable);
  const xs = points.map((p) => p.x);
  const yTicks = decades(ys.length ? Math.min(...ys) : 1, ys.length ? Math.max(...ys) : 10);
  const xLo = xs.length ? Math.log10(Math.min(...xs)) : 0;
  const xHi = xs.length ? Math.log10(Math.max(...xs)) : 1;
  const yLo = Math.log10(yTicks[0]);
  const yHi = Math.log10(yTicks[yTicks.length - 1]);
  const y = (v: number): number => MARGIN.top + plotH - ((Math.log10(v) - yLo) / (yHi - yLo)) * plotH;
  const pad = 0.06;
  const x = (v: number): number =>
    MARGIN.left + plotW * (xHi > xLo ? pad + ((Math.log10(v) - xLo) / (xHi - xLo)) * (1 - 2 * pad) : 0.5);
  const parts: string[] = [`<g transform="translate(${offsetX},0)">`];
  parts.push(`<text x="${PANEL_W / 2}" y="22" text-anchor="middle" font-size="14" font-weight="bold">${esc(panel.title)}</text>`);
  for (const t of yTicks) {
    parts.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left + plotW}" y1="${y(t)}" y2="${y(t)}" stroke="#ddd"/>`);
    parts.push(`<text x="${MARGIN.left - 6}" y="${y(t) + 4}" text-anchor="end" font-size="11">${fmt(t)}</text>`);
  }
  for (const xv of [...new Set(xs)].sort((a, b) => a - b)) {
    parts.push(`<line x1="${x(xv)}" x2="${x(xv)}" y1="${MARGIN.top + plotH}" y2="${MARGIN.top + plotH + 5}" stroke="#333"/>`);
    parts.push(`<text x="${x(xv)}" y="${MARGIN.top + plotH + 18}" text-anchor="middle" font-size="11">${fmt(xv)}</text>`);
  }
  parts.push(
    `<rect x="${MARGIN.left}" y="${MARGIN.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#333"/>`,
    `<text x="${MARGIN.left + plotW / 2}" y="${PANEL_H - 10}" text-anchor="middle" font-size="12">${esc(panel.xLabel)}</text>`,
    `<text transform="translate(16,${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle" font-size="12">${esc(panel.yLabel)}</text>`,
  );
  for (const s of panel.series) {
    const shown = s.points.filter((p) => usable(p.median) && usable(p.x)).sort((a, b) => a.x - b.x);
    if (!shown.length) continue;
    const path = shown.map((p, i) => `${i ? 'L' : 'M'}${x(p.x).toFixed(1)},${y(p.median).toFixed(1)}`).join(' ');
    const dash = s.dashed ? ' stroke-dasharray="6 4"' : '';
    parts.push(`<path d="${path}" fill="none" stroke="${s.color}" stroke-width="2"${dash}/>`);
    for (const p of shown) {
      const cx = x(p.x).toFixed(1);
      if (usable(p.min) && usable(p.max) && p.max > p.min) {
        parts.push(`<line x1="${cx}" x2="${cx}" y1="${y(p.min).toFixed(1)}" y2="${y(p.max).toFixed(1)}" stroke="${s.color}" stroke-width="1.5"/>`);
      }
      const label = `${s.name} at ${fmt(p.x)}: median ${fmt(p.median)} (min ${fmt(p.min)}, max ${fmt(p.max)})`;
      parts.push(`<circle cx="${cx}" cy="${y(p.median).toFixed(1)}" r="3.5" fill="${s.color}"><title>${esc(label)}</title></circle>`);
    }
  }
  parts.push('</g>');
  return parts.join('\n');
}

/** The panels side by side, with one legend (every series name, once). */
export function chartSvg(panels: Panel[]): string {
  const width = PANEL_W * panels.length;
  const height = PANEL_H + LEGEND_H;
  const named = new Map<string, Series>();
  for (const s of panels.flatMap((p) => p.series)) if (!named.has(s.name)) named.set(s.name, s);
  let nextX = 20;
  const legend = [...named.values()]
    .map((s) => {
      const lx = nextX;
      nextX += 50 + s.name.length * 7;
      const dash = s.dashed ? ' stroke-dasharray="6 4"' : '';
      return `<line x1="${lx}" x2="${lx + 24}" y1="${PANEL_H + 15}" y2="${PANEL_H + 15}" stroke="${s.color}" stroke-width="3"${dash}/><text x="${lx + 30}" y="${PANEL_H + 19}" font-size="12">${esc(s.name)}</text>`;
    })
    .join('\n');
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    ...panels.map((p, i) => panelSvg(p, i * PANEL_W)),
    legend,
    '</svg>',
    '',
  ].join('\n');
}
