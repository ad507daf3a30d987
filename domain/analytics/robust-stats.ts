// Robust statistics for anomaly detection, pure: the median, the median absolute deviation (MAD) and
// the modified z-score of Iglewicz and Hoaglin (1993):
//
//   z_i = 0.6745 * (x_i - median) / MAD
//
// 0.6745 is the 0.75 quantile of the standard normal, so z is on the scale of a standard score for
// normal data while one outlier cannot move the median or the MAD (unlike mean and standard deviation).
// When MAD is 0 (more than half the values equal the median) the score falls back to the mean absolute
// deviation: z_i = (x_i - median) / (1.253314 * MeanAD), 1.253314 = sqrt(pi/2) being the same
// normal-consistency factor for MeanAD. When both are 0 every value equals the median: all scores 0.

/** The recommended cut-off: |z| > 3.5 is a potential outlier (Iglewicz and Hoaglin). */
export const ROBUST_Z_THRESHOLD = 3.5;
const MAD_FACTOR = 0.6745;
const MEAN_AD_FACTOR = 1.253314;

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of an empty list');
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Median absolute deviation from the median (unscaled). */
export function mad(values: readonly number[]): number {
  const m = median(values);
  return median(values.map((v) => Math.abs(v - m)));
}

export interface RobustScores {
  median: number;
  mad: number;
  /** The deviation scale actually used: 'mad', 'mean_ad' (MAD was 0), or 'none' (no spread at all). */
  scale: 'mad' | 'mean_ad' | 'none';
  scores: number[];
}

/** Modified z-scores of every value (see the header for the MAD = 0 fallback). */
export function robustZScores(values: readonly number[]): RobustScores {
  const m = median(values);
  const d = mad(values);
  if (d > 0)
    return { median: m, mad: d, scale: 'mad', scores: values.map((v) => (MAD_FACTOR * (v - m)) / d) };
  const meanAd = values.reduce((s, v) => s + Math.abs(v - m), 0) / values.length;
  if (meanAd > 0)
    return {
      median: m,
      mad: 0,
      scale: 'mean_ad',
      scores: values.map((v) => (v - m) / (MEAN_AD_FACTOR * meanAd)),
    };
  return { median: m, mad: 0, scale: 'none', scores: values.map(() => 0) };
}

/** Linear-interpolation quantile (type 7, as R and NumPy's default) of an unsorted list, q in [0, 1]. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) throw new RangeError('quantile of an empty list');
  const s = [...values].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo);
}
