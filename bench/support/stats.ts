// The figures the benchmarks print: percentiles over samples, and the machine line every header ends with.
import os from 'node:os';

/** The sample at fraction q (0.5 = p50, 0.99 = p99) of the sorted samples, nearest rank below; NaN when empty. */
export function percentile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
}

/** The middle sample, or the mean of the two middle ones for an even count. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** `cpus=2  loadavg=1.3  node=v20...`: where a run was measured, for the end of a header line. */
export function machine(): string {
  return `cpus=${os.cpus().length}  loadavg=${os.loadavg()[0]!.toFixed(1)}  node=${process.version}`;
}
