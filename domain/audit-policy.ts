// Which audit records are written, pure.
//
// 1. A tenant's `audit_log_enabled = false` turns off the routine trail of that tenant (successful,
//    informational actions of its users). Security-relevant records are kept whatever the setting:
//    refusals and failures, warnings and worse, and platform-admin actions aimed at a tenant
//    (`target_tenant_id`), because the tenant's own switch must not hide what was done to it; and
//    every change of tenant settings, so switching the trail off is itself on record.
// 2. Failures by callers nobody authenticated (wrong passwords, forged proxy or agent tokens) are
//    attacker-driven: unbounded, they would let anyone fill the audit table. Per (action, client
//    address) the first `UNAUTHENTICATED_BURST` of a minute are written as they come; the rest are
//    counted and written as one `AUDIT_SUPPRESSED` summary when that minute's window closes.
// 3. Refusals a caller can repeat at will with a valid credential (the model proxy refusing a stopped
//    session's token or a call over quota, which a CLI retries in a loop) name a `source` (session and
//    reason): they are bounded the same way per (action, client address, source).

export interface AuditPolicyEntry {
  action: string;
  success?: boolean;
  severity?: string;
  targetTenantId?: number | null;
}

/** Changes to the audit switch itself (and other tenant settings) are always on record. */
const ALWAYS_KEPT = new Set(['TENANT_SETTINGS_UPDATE', 'TENANT_AUTONOMOUS_SETTINGS_UPDATE']);

export function keptWhenTenantAuditOff(entry: AuditPolicyEntry): boolean {
  if (entry.success === false || ALWAYS_KEPT.has(entry.action)) return true;
  if (entry.severity && entry.severity !== 'info') return true;
  return entry.targetTenantId != null;
}

export const UNAUTHENTICATED_BURST = 10;
export const UNAUTHENTICATED_WINDOW_MS = 60_000;
/** Distinct (action, address) pairs tracked at once; the oldest window is closed beyond that. */
export const UNAUTHENTICATED_MAX_KEYS = 10_000;

export interface SuppressedSummary {
  action: string;
  ipAddress: string | null;
  /** The bounded source (rule 3), when it was not just the client address. */
  source?: string;
  suppressed: number;
  windowStart: Date;
}

interface Window {
  action: string;
  ip: string | null;
  source?: string;
  start: number;
  written: number;
  suppressed: number;
}

/** Per-process limiter (the bound is per instance, which is all a flood guard needs). */
export class UnauthenticatedFailureLimiter {
  private readonly windows = new Map<string, Window>();

  /**
   * Whether to write this failure now, and any summaries of closed windows to write with it
   * (the closed window of this key, and windows evicted to stay within the key bound).
   */
  admit(
    action: string,
    ip: string | null,
    now: Date,
    source?: string,
  ): { write: boolean; summaries: SuppressedSummary[]; repeatedSince?: Date } {
    const t = now.getTime();
    const key = `${action}\u0000${ip ?? ''}\u0000${source ?? ''}`;
    const summaries: SuppressedSummary[] = [];
    let w = this.windows.get(key);
    if (w && t - w.start >= UNAUTHENTICATED_WINDOW_MS) {
      this.close(key, w, summaries);
      w = undefined;
    }
    if (!w) {
      while (this.windows.size >= UNAUTHENTICATED_MAX_KEYS) {
        const [oldKey, old] = this.windows.entries().next().value!;
        this.close(oldKey, old, summaries);
      }
      w = { action, ip, ...(source !== undefined ? { source } : {}), start: t, written: 0, suppressed: 0 };
      this.windows.set(key, w);
    }
    if (w.written < UNAUTHENTICATED_BURST) {
      w.written++;
      return { write: true, summaries };
    }
    w.suppressed++;
    // The first refusal past the burst: the caller repeats it (alerted once per key and window).
    return { write: false, summaries, ...(w.suppressed === 1 ? { repeatedSince: new Date(w.start) } : {}) };
  }

  /** Summaries of every window that has ended by `now` (called from a timer so counts are not lost). */
  sweep(now: Date): SuppressedSummary[] {
    const out: SuppressedSummary[] = [];
    for (const [key, w] of this.windows)
      if (now.getTime() - w.start >= UNAUTHENTICATED_WINDOW_MS) this.close(key, w, out);
    return out;
  }

  private close(key: string, w: Window, into: SuppressedSummary[]) {
    this.windows.delete(key);
    if (w.suppressed)
      into.push({
        action: w.action,
        ipAddress: w.ip,
        ...(w.source !== undefined ? { source: w.source } : {}),
        suppressed: w.suppressed,
        windowStart: new Date(w.start),
      });
  }
}
