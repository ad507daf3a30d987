// The tokens-and-requests-over-time chart (uPlot, loaded with the dashboard chunk only): two series on
// two y axes, days on x in the viewer's zone, redrawn on data change and resized with its box. The
// same figures are in the table below it, so the chart is decorative for screen readers
// (aria-hidden) and the table is the accessible source.
import 'uplot/dist/uPlot.min.css';
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { formatNumber } from '../../ui/index.ts';

export function UsageChart({ data }: { data: [number[], number[], number[]] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const width = () => Math.max(300, el.clientWidth);
    const axisValues = (_u: uPlot, vals: number[]) => vals.map((v) => formatNumber(v, { digits: 0 }));
    const plot = new uPlot(
      {
        width: width(),
        height: 260,
        series: [
          {},
          {
            label: 'Tokens',
            stroke: '#1f5fbf',
            width: 2,
            scale: 'tokens',
            value: (_u, v) => formatNumber(v),
          },
          {
            label: 'Requests',
            stroke: '#c2410c',
            width: 2,
            scale: 'requests',
            value: (_u, v) => formatNumber(v),
          },
        ],
        axes: [
          {},
          { scale: 'tokens', values: axisValues, size: 70 },
          { scale: 'requests', side: 1, values: axisValues, size: 60, grid: { show: false } },
        ],
        scales: { x: { time: true } },
      },
      data,
      el,
    );
    const ro = new ResizeObserver(() => plot.setSize({ width: width(), height: 260 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.destroy();
    };
  }, [data]);
  return <div class="usage-chart" ref={box} aria-hidden="true" />;
}
