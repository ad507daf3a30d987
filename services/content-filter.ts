// The content filter service (issue 11 item 1): compiled rules cached per tenant, checks, upload
// flagging and the proxy's screening, one instance per database handle (contentFilterFor).
//
// Cache: a tenant's entry holds its content_filter_enabled flag and its enabled rules (global +
// own), compiled once. Every rule write bumps the content_filter_version row; each instance reads
// that version (and the newest tenant_settings change, which carries content_filter_enabled) at
// most every STAMP_CHECK_MS, in the background, and drops every entry when it moved. A write on this
// instance drops the entries at once. So a rule change reaches every instance within about
// STAMP_CHECK_MS; the hot path never waits for the version check.
//
// The proxy's cost when nothing is to be checked: one Map lookup and a timestamp comparison
// (`proxyScreen` answers null synchronously: filter off for the tenant, or no enabled block rule).
// Only when a block rule applies does the proxy read the body whole (once: it is then forwarded
// from that buffer) and test the prompt text. The rules are compiled once per cache entry into one
// matcher (domain/content-filter/matcher.ts: one Aho-Corasick pass for the keywords, one RE2 pass
// per group of regexes), and the body is parsed once: the parse is handed on to the forwarder.
//
// Counters (GET /api/content/filter/stats): flagged uploads are persistent (daily_messages
// .filter_verdict); checks, their verdicts and proxy refusals are counted in memory per process
// since its start (`since_start`), per tenant.
import type { DatabaseHandle, RawSql } from '../db/client.ts';
import { contentFilterRepository, type FilterRuleRow } from '../db/repositories/content-filter.ts';
import { compileMatcher, type RuleMatcher } from '../domain/content-filter/matcher.ts';
import { promptTextOf } from '../domain/content-filter/prompt-text.ts';
import {
  alertSeverityOf,
  type CompiledRule,
  compileRules,
  type FilterMatch,
  type FilterVerdict,
  highestSeverity,
} from '../domain/content-filter/rules.ts';
import { DEFAULT_TENANT_ID } from '../domain/tenants.ts';
import { parseJson } from '../domain/usage/usage.ts';
import { raiseAlert } from './alerts/raise.ts';

/** How often (at most) an instance checks whether rules or tenant settings changed elsewhere. */
export const STAMP_CHECK_MS = 1_000;

export interface TenantFilter {
  enabled: boolean;
  rules: CompiledRule[];
  /** Every enabled rule, as one matcher (checks and uploads). */
  matcher: RuleMatcher;
  /** The enabled block rules alone (what the proxy enforces), as one matcher. */
  blockMatcher: RuleMatcher;
}

/**
 * Frees a filter's regex engines (WebAssembly memory) once nothing holds it any more. Dropping the
 * cache cannot free them itself: a proxied request holds its tenant's block matcher while it reads
 * the body, and a matcher freed under it failed that request with a 500 (seen under load when a rule
 * write or another instance's version bump dropped the cache mid-request). Each disposer closes over
 * the engines only, never over the object it is registered for, so that object can be collected.
 */
const engines = new FinalizationRegistry<() => void>((dispose) => dispose());

function tracked<T extends { dispose(): void }>(holder: T): T {
  engines.register(holder, holder.dispose, holder);
  return holder;
}

function tenantFilterOf(enabled: boolean, rules: CompiledRule[]): TenantFilter {
  for (const r of rules) tracked(r);
  return {
    enabled,
    rules,
    matcher: tracked(compileMatcher(rules)),
    blockMatcher: tracked(compileMatcher(rules.filter((r) => r.rule.action === 'block'))),
  };
}

/** Frees a filter at once, for one its owner alone used and is done with (the global-only check). */
function disposeFilter(f: TenantFilter): void {
  for (const holder of [f.matcher, f.blockMatcher, ...f.rules]) {
    engines.unregister(holder);
    holder.dispose();
  }
}

export interface Counters {
  checks: number;
  blocked: number;
  review: number;
  warn: number;
  clean: number;
  proxy_refused: number;
}

const emptyCounters = (): Counters => ({
  checks: 0,
  blocked: 0,
  review: 0,
  warn: 0,
  clean: 0,
  proxy_refused: 0,
});

/** An uploaded message, as the ingest path has it after attribution. */
export interface UploadedMessage {
  date: string;
  toolName: string;
  hostName: string;
  messageId: string;
  content: string | null;
  tenantId: number;
}

type Deps = { database: DatabaseHandle; logger?: { warn: (o: object, m: string) => void } };

export function contentFilterService(deps: Deps) {
  const cache = new Map<number, TenantFilter>();
  const loading = new Map<number, Promise<TenantFilter>>();
  /** Bumped whenever the cache is dropped: a load started before a drop is not stored. */
  let generation = 0;
  let stamp: string | undefined;
  let stampCheckedAt = Number.NEGATIVE_INFINITY;
  let stampCheck: Promise<void> | undefined;
  const counters = new Map<number, Counters>();

  function drop() {
    generation += 1;
    // Not disposed here: a request may still hold one of them (see `engines`).
    cache.clear();
    loading.clear();
  }

  /** Starts a background version check when the last one is older than STAMP_CHECK_MS. */
  function freshen() {
    const now = performance.now();
    if (now - stampCheckedAt < STAMP_CHECK_MS || stampCheck !== undefined) return;
    stampCheckedAt = now;
    stampCheck = contentFilterRepository(deps.database.sql)
      .stamp()
      .then((s) => {
        if (s !== stamp) {
          if (stamp !== undefined) drop();
          stamp = s;
        }
      })
      .catch((error) =>
        deps.logger?.warn({ err: (error as Error).message }, 'content filter: version check failed'),
      )
      .finally(() => {
        stampCheck = undefined;
      });
  }

  async function load(tenantId: number, sql: RawSql): Promise<TenantFilter> {
    const repo = contentFilterRepository(sql);
    const [enabled, rows] = await Promise.all([
      repo.filterEnabled(tenantId),
      repo.list({ kind: 'tenant', tenantId }),
    ]);
    const rules = compileRules(rows, (rule, problem) =>
      deps.logger?.warn({ rule_id: rule.id, problem }, 'content filter: stored rule skipped'),
    );
    return tenantFilterOf(enabled, rules);
  }

  /** The tenant's filter, from the cache or loaded (through `sql` when inside a transaction). */
  function tenantFilter(
    tenantId: number,
    sql: RawSql = deps.database.sql,
  ): TenantFilter | Promise<TenantFilter> {
    freshen();
    const hit = cache.get(tenantId);
    if (hit !== undefined) return hit;
    const pending = loading.get(tenantId);
    if (pending !== undefined && sql === deps.database.sql) return pending;
    const gen = generation;
    const p = load(tenantId, sql).then((f) => {
      if (gen === generation) cache.set(tenantId, f);
      if (loading.get(tenantId) === p) loading.delete(tenantId);
      return f;
    });
    if (sql === deps.database.sql) loading.set(tenantId, p);
    p.catch(() => loading.delete(tenantId));
    return p;
  }

  function count(tenantId: number, field: keyof Counters) {
    let c = counters.get(tenantId);
    if (c === undefined) {
      c = emptyCounters();
      counters.set(tenantId, c);
    }
    c[field] += 1;
  }

  /** Block rules of a tenant whose filter is on, or null when a proxied prompt needs no check. */
  function screenOf(f: TenantFilter): RuleMatcher | null {
    return f.enabled && f.blockMatcher.rules.length > 0 ? f.blockMatcher : null;
  }

  return {
    /** Drops this instance's cache at once (after a rule write here); other instances follow the version. */
    invalidate() {
      drop();
      stamp = undefined;
      stampCheckedAt = Number.NEGATIVE_INFINITY;
    },

    /** Checks the version now (instead of within STAMP_CHECK_MS) and waits for it; for tests and tools. */
    async syncVersion(): Promise<void> {
      await stampCheck;
      stampCheckedAt = Number.NEGATIVE_INFINITY;
      freshen();
      await stampCheck;
    },

    /** POST /api/content/check: the caller's tenant's enabled rules (global + own; global only without tenant). */
    async check(tenantId: number | null, content: string) {
      const f = tenantId === null ? await globalFilter() : await tenantFilter(tenantId);
      const result = f.matcher.check(content);
      // The global-only filter is built per call (not cached): free its engines.
      if (tenantId === null) disposeFilter(f);
      const key = tenantId ?? 0;
      count(key, 'checks');
      count(key, result.verdict);
      return { ...result, filterEnabled: f.enabled };
    },

    /**
     * The proxy's gate: null (synchronously, the common case) when nothing is to be checked for this
     * tenant; else the block rules to test the prompt with.
     */
    proxyScreen(tenantId: number | null): RuleMatcher | null | Promise<RuleMatcher | null> {
      const f = tenantFilter(tenantId ?? DEFAULT_TENANT_ID);
      return f instanceof Promise ? f.then(screenOf) : screenOf(f);
    },

    /**
     * The block rules a proxied request body matches (its user/prompt text only; [] when none), and
     * the body's parse (undefined when it is not JSON) for the forwarder, so it is parsed only once.
     */
    screenProxyBody(
      screen: RuleMatcher,
      body: Buffer,
      tenantId: number | null,
    ): { matches: FilterMatch[]; parsed: unknown } {
      const parsed = parseJson(body.toString('utf8'));
      const text = promptTextOf(parsed);
      if (text === '') return { matches: [], parsed };
      const { matches } = screen.check(text);
      if (matches.length > 0) count(tenantId ?? DEFAULT_TENANT_ID, 'proxy_refused');
      return { matches, parsed };
    },

    /**
     * Upload enforcement (called by the ingest path inside its transaction, with its `sql`): for the
     * tenants with the filter on, every newly stored message that matches is flagged with its
     * verdict (never dropped); the blocked ones raise one `content_filter` alert per tenant.
     */
    async screenUploaded(sql: RawSql, rows: readonly UploadedMessage[]): Promise<void> {
      const byTenant = new Map<number, UploadedMessage[]>();
      for (const m of rows) {
        if (m.content === null || m.content === '') continue;
        const list = byTenant.get(m.tenantId);
        if (list === undefined) byTenant.set(m.tenantId, [m]);
        else list.push(m);
      }
      const repo = contentFilterRepository(sql);
      for (const [tenantId, messages] of byTenant) {
        // The flag is read fresh (uploads are not a hot path); the compiled rules come from the cache.
        if (!(await repo.filterEnabled(tenantId))) continue;
        const f = await tenantFilter(tenantId, sql);
        if (f.rules.length === 0) continue;
        const flags: Array<UploadedMessage & { verdict: FilterVerdict; rules: FilterMatch[] }> = [];
        const blockMatches: FilterMatch[] = [];
        for (const m of messages) {
          const { verdict, matches } = f.matcher.check(m.content!);
          if (verdict === 'clean') continue;
          flags.push({ ...m, verdict, rules: matches });
          if (verdict === 'blocked') blockMatches.push(...matches.filter((x) => x.action === 'block'));
        }
        if (flags.length === 0) continue;
        await repo.flagMessages(flags);
        const blocked = flags.filter((x) => x.verdict === 'blocked');
        if (blocked.length === 0) continue;
        const ruleIds = [...new Set(blockMatches.map((x) => x.rule_id))];
        await raiseAlert(
          { sql },
          {
            alertType: 'content_filter',
            severity: alertSeverityOf(highestSeverity(blockMatches.map((x) => x.severity))),
            title: `Content filter: ${blocked.length} uploaded message(s) matched a block rule`,
            message: `Stored flagged (filter_verdict = blocked). Rules: ${ruleIds.join(', ')}. Messages: ${blocked
              .slice(0, 10)
              .map((x) => `${x.date}/${x.toolName}/${x.hostName}/${x.messageId}`)
              .join(', ')}${blocked.length > 10 ? ', ...' : ''}`,
            userId: null,
            tenantId,
          },
        );
      }
    },

    /** In-memory counters since this process started: one tenant's, or the sum over all (null). */
    countersOf(tenantId: number | null): Counters {
      if (tenantId !== null) return { ...(counters.get(tenantId) ?? emptyCounters()) };
      const sum = emptyCounters();
      for (const c of counters.values())
        for (const k of Object.keys(sum) as (keyof Counters)[]) sum[k] += c[k];
      return sum;
    },
  };

  /** Global rules only (a caller without tenant); not cached (rare: system admins without tenant). */
  async function globalFilter(): Promise<TenantFilter> {
    const rows: FilterRuleRow[] = (
      await contentFilterRepository(deps.database.sql).list({ kind: 'all' })
    ).filter((r) => r.tenantId === null);
    return tenantFilterOf(true, compileRules(rows));
  }
}

export type ContentFilterService = ReturnType<typeof contentFilterService>;

const services = new WeakMap<DatabaseHandle, ContentFilterService>();

/** The one content filter of a database handle (its cache is shared by every route using it). */
export function contentFilterFor(deps: Deps): ContentFilterService {
  let s = services.get(deps.database);
  if (s === undefined) {
    s = contentFilterService(deps);
    services.set(deps.database, s);
  }
  return s;
}
