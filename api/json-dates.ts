/** Timestamps in response bodies: ISO 8601, or null when absent. */
export const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);
