// The tokens-and-requests-over-time chart (uPlot, loaded with the dashboard chunk only): two series on
// two y axes, days on x in the viewer's zone, redrawn on data change and resized with its box. The
// same figures are in the table below it, so the chart is decorative for screen readers
// (aria-hidden) and the table is the accessible source. Axes are named ("Day", "Tokens", "Requests")
// and their figures compact ("1.2M"), so a label never outgrows the axis margin (issue 28 item 5).
import 'uplot/dist/uPlot.min.css';
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { formatCompact, formatNumber } from '../../ui/index.ts';

export function UsageChart({ data }: { data: [number[], number[], number[]] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    // The canvas fills the box inside its padding (clientWidth includes it): at 360 px nothing is cut.
    const width = () => {
      const pad = Number.parseFloat(getComputedStyle(el).paddingLeft) * 2 || 0;
      return Math.max(240, el.clientWidth - pad);
    };
    const axisValues = (_u: uPlot, vals: number[]) => vals.map((v) => formatCompact(v));
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
          { label: 'Day', labelSize: 20 },
          { scale: 'tokens', label: 'Tokens', labelSize: 20, values: axisValues, size: 56 },
          {
            scale: 'requests',
            label: 'Requests',
            labelSize: 20,
            side: 1,
            values: axisValues,
            size: 56,
            grid: { show: false },
          },
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
