/**
 * A small SVG writer for the benchmark chart: side-by-side line panels over a categorical x
 * axis (concurrency levels), log-scaled y, one line per server under test.
 */

export interface Series {
  name: string;
  color: string;
  /** One value per x label; NaN or missing leaves a gap. */
  values: number[];
}

export interface Panel {
  title: string;
  yLabel: string;
  xLabel: string;
  xLabels: string[];
  series: Series[];
}

const PANEL_W = 420;
const PANEL_H = 300;
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

function panelSvg(panel: Panel, offsetX: number): string {
  const plotW = PANEL_W - MARGIN.left - MARGIN.right;
  const plotH = PANEL_H - MARGIN.top - MARGIN.bottom;
  const finite = panel.series.flatMap((s) => s.values).filter((v) => Number.isFinite(v) && v > 0);
  const ticks = decades(finite.length ? Math.min(...finite) : 1, finite.length ? Math.max(...finite) : 10);
  const logLo = Math.log10(ticks[0]);
  const logHi = Math.log10(ticks[ticks.length - 1]);
  const y = (v: number): number => MARGIN.top + plotH - ((Math.log10(v) - logLo) / (logHi - logLo)) * plotH;
  const step = panel.xLabels.length > 1 ? plotW / (panel.xLabels.length - 1) : 0;
  const x = (i: number): number => MARGIN.left + (panel.xLabels.length > 1 ? i * step : plotW / 2);
  const parts: string[] = [`<g transform="translate(${offsetX},0)">`];
  parts.push(`<text x="${PANEL_W / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${esc(panel.title)}</text>`);
  for (const t of ticks) {
    parts.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left + plotW}" y1="${y(t)}" y2="${y(t)}" stroke="#ddd"/>`);
    parts.push(`<text x="${MARGIN.left - 6}" y="${y(t) + 4}" text-anchor="end" font-size="11">${fmt(t)}</text>`);
  }
  panel.xLabels.forEach((label, i) => {
    parts.push(`<line x1="${x(i)}" x2="${x(i)}" y1="${MARGIN.top + plotH}" y2="${MARGIN.top + plotH + 5}" stroke="#333"/>`);
    parts.push(`<text x="${x(i)}" y="${MARGIN.top + plotH + 18}" text-anchor="middle" font-size="11">${esc(label)}</text>`);
  });
  parts.push(
    `<rect x="${MARGIN.left}" y="${MARGIN.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#333"/>`,
    `<text x="${MARGIN.left + plotW / 2}" y="${PANEL_H - 10}" text-anchor="middle" font-size="12">${esc(panel.xLabel)}</text>`,
    `<text transform="translate(16,${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle" font-size="12">${esc(panel.yLabel)}</text>`,
  );
  for (const s of panel.series) {
    const points = s.values.map((v, i) => (Number.isFinite(v) && v > 0 ? [x(i), y(v)] : undefined));
    let path = '';
    let pen = false;
    for (const p of points) {
      if (!p) {
        pen = false;
        continue;
      }
      path += `${pen ? 'L' : 'M'}${p[0].toFixed(1)},${p[1].toFixed(1)} `;
      pen = true;
    }
    if (path) parts.push(`<path d="${path.trim()}" fill="none" stroke="${s.color}" stroke-width="2"/>`);
    points.forEach((p, i) => {
      if (!p) return;
      parts.push(
        `<circle cx="${p[0].toFixed(1)}" cy="${p[1].toFixed(1)}" r="3.5" fill="${s.color}"><title>${esc(`${s.name}: ${fmt(s.values[i])}`)}</title></circle>`,
      );
    });
  }
  parts.push('</g>');
  return parts.join('\n');
}

/** The panels side by side, with one shared legend (the series of the first panel). */
export function chartSvg(panels: Panel[]): string {
  const width = PANEL_W * panels.length;
  const height = PANEL_H + LEGEND_H;
  const legend = (panels[0]?.series ?? [])
    .map((s, i) => {
      const lx = 20 + i * 170;
      return `<line x1="${lx}" x2="${lx + 24}" y1="${PANEL_H + 15}" y2="${PANEL_H + 15}" stroke="${s.color}" stroke-width="3"/><text x="${lx + 30}" y="${PANEL_H + 19}" font-size="12">${esc(s.name)}</text>`;
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
