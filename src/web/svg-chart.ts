import { html, type SafeHtml } from './html.js';

export interface ChartSeries {
  /** Machine name, on each bar as data-series (tests and styles find bars by it). */
  name: string;
  label: string;
  color: string;
  values: number[];
}

const WIDTH = 720;
const HEIGHT = 220;
const PAD = { top: 12, right: 8, bottom: 28, left: 36 };

/** A round axis maximum at or above the data's: 1, 2, 5, 10, 20, 50… */
export function niceMax(max: number): number {
  if (max <= 0) return 1;
  const step = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 5, 10]) if (m * step >= max) return m * step;
  return 10 * step;
}

/**
 * A grouped bar chart drawn on the server as inline SVG (no script, nothing fetched): one group of bars
 * per label, one bar per series, a zero line and a top gridline with the axis maximum, and every
 * `labelEvery`-th label under the axis. Each bar carries its label, series and value as data attributes
 * and a <title> for hover; the chart's own title and description are its accessible name.
 */
export function barChart(opts: { id: string; title: string; description: string; labels: string[]; series: ChartSeries[]; labelEvery?: number; formatLabel?: (label: string) => string }): SafeHtml {
  const { labels, series } = opts;
  const top = niceMax(Math.max(0, ...series.flatMap((s) => s.values)));
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const group = labels.length ? plotW / labels.length : plotW;
  const barW = Math.max(1, (group * 0.8) / Math.max(1, series.length));
  const y = (v: number) => PAD.top + plotH - (v / top) * plotH;
  const fmt = (n: number) => String(Math.round(n * 10) / 10);
  const every = opts.labelEvery ?? 1;
  const show = opts.formatLabel ?? ((l: string) => l);

  const bars = labels.flatMap((label, i) =>
    series.map((s, j) => {
      const v = s.values[i] ?? 0;
      const x = PAD.left + i * group + group * 0.1 + j * barW;
      return html`<rect x="${fmt(x)}" y="${fmt(y(v))}" width="${fmt(barW)}" height="${fmt(y(0) - y(v))}" fill="${s.color}" data-label="${label}" data-series="${s.name}" data-value="${v}"><title>${show(label)}: ${v} ${s.label.toLowerCase()}</title></rect>`;
    }),
  );
  const ticks = labels.map((label, i) =>
    // Counted back from the last label, so the newest always has one and none collide with it.
    (labels.length - 1 - i) % every === 0
      ? html`<text x="${fmt(i === labels.length - 1 ? WIDTH - PAD.right : i === 0 ? PAD.left : PAD.left + i * group + group / 2)}" y="${HEIGHT - 6}" text-anchor="${i === labels.length - 1 ? 'end' : i === 0 ? 'start' : 'middle'}">${show(label)}</text>`
      : '',
  );
  return html`<figure class="chart-figure">
<svg class="chart" id="${opts.id}" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${opts.id}-title ${opts.id}-desc" xmlns="http://www.w3.org/2000/svg" font-family="system-ui, sans-serif" font-size="11" fill="#59636e">
<title id="${opts.id}-title">${opts.title}</title><desc id="${opts.id}-desc">${opts.description}</desc>
<line x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${fmt(y(top))}" y2="${fmt(y(top))}" stroke="#e5e8ec"></line>
<text x="${PAD.left - 6}" y="${fmt(y(top) + 4)}" text-anchor="end">${top}</text>
<text x="${PAD.left - 6}" y="${fmt(y(0) + 4)}" text-anchor="end">0</text>
${bars}
<line x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${fmt(y(0))}" y2="${fmt(y(0))}" stroke="#b8c0cc"></line>
${ticks}
</svg>
<figcaption class="legend">${series.map((s) => html`<span class="key"><span class="swatch" style="background:${s.color}"></span>${s.label} (${s.values.reduce((a, b) => a + b, 0)})</span>`)}</figcaption>
</figure>`;
}
