// The engine benchmark's plot, as plain SVG: lines over N on a doubling axis.

export interface Chart {
  title: string;
  xLabel: string;
  yLabel: string;
  series: { name: string; group: string; dashed: boolean; points: { size: number; ms: number }[] }[];
}

export const palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];

export function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** A step of 1, 2 or 5 times a power of ten that splits `max` into about five intervals. */
export function tickStep(max: number): number {
  const rough = max / 5;
  const power = 10 ** Math.floor(Math.log10(rough));
  return [1, 2, 5, 10].map((factor) => factor * power).find((step) => step >= rough) ?? rough;
}

/** Lines over N on a doubling (log 2) axis, so N = 50, 100, 200, 400 are evenly spaced. */
export function renderChart(chart: Chart): string {
  const width = 820;
  const height = 440;
  const margin = { top: 40, right: 190, bottom: 56, left: 64 };
  const plotWidth = width - margin.left - margin.right;
  const plotHeight = height - margin.top - margin.bottom;
  const xs = [...new Set(chart.series.flatMap((series) => series.points.map((point) => point.size)))].sort(
    (a, b) => a - b,
  );
  const ys = chart.series.flatMap((series) => series.points.map((point) => point.ms));
  const step = tickStep(Math.max(...ys, 1) * 1.05);
  const yMax = Math.ceil((Math.max(...ys, 1) * 1.05) / step) * step;
  const logMin = Math.log2(xs[0] ?? 1);
  const logSpan = Math.log2(xs[xs.length - 1] ?? 2) - logMin || 1;
  const x = (size: number) => margin.left + ((Math.log2(size) - logMin) / logSpan) * plotWidth;
  const y = (ms: number) => margin.top + plotHeight - (ms / yMax) * plotHeight;
  const groups = [...new Set(chart.series.map((series) => series.group))];
  const color = (group: string) => palette[groups.indexOf(group) % palette.length];
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<title>${escapeXml(chart.title)}</title>`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="14">${escapeXml(chart.title)}</text>`,
  ];
  for (let value = 0; value <= yMax + step / 2; value += step) {
    parts.push(
      `<line x1="${margin.left}" x2="${margin.left + plotWidth}" y1="${y(value)}" y2="${y(value)}" stroke="#ddd"/>`,
      `<text x="${margin.left - 8}" y="${y(value) + 4}" text-anchor="end">${Number(value.toPrecision(6))}</text>`,
    );
  }
  for (const size of xs) {
    parts.push(
      `<line x1="${x(size)}" x2="${x(size)}" y1="${margin.top}" y2="${margin.top + plotHeight}" stroke="#eee"/>`,
      `<text x="${x(size)}" y="${margin.top + plotHeight + 18}" text-anchor="middle">${size}</text>`,
    );
  }
  parts.push(
    `<rect x="${margin.left}" y="${margin.top}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#333"/>`,
    `<text x="${margin.left + plotWidth / 2}" y="${height - 14}" text-anchor="middle">${escapeXml(chart.xLabel)}</text>`,
    `<text transform="translate(16 ${margin.top + plotHeight / 2}) rotate(-90)" text-anchor="middle">${escapeXml(chart.yLabel)}</text>`,
  );
  chart.series.forEach((series, index) => {
    const stroke = color(series.group);
    const dash = series.dashed ? ' stroke-dasharray="6 4"' : "";
    const points = series.points.map((point) => `${x(point.size).toFixed(1)},${y(point.ms).toFixed(1)}`).join(" ");
    parts.push(`<polyline points="${points}" fill="none" stroke="${stroke}" stroke-width="2"${dash}/>`);
    for (const point of series.points) {
      parts.push(`<circle cx="${x(point.size).toFixed(1)}" cy="${y(point.ms).toFixed(1)}" r="3" fill="${stroke}"/>`);
    }
    const legendY = margin.top + 8 + index * 18;
    const legendX = margin.left + plotWidth + 16;
    parts.push(
      `<line x1="${legendX}" x2="${legendX + 28}" y1="${legendY}" y2="${legendY}" stroke="${stroke}" stroke-width="2"${dash}/>`,
      `<text x="${legendX + 36}" y="${legendY + 4}">${escapeXml(series.name)}</text>`,
    );
  });
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}
