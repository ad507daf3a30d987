// Display-name caches of the chat platforms (spec document 2, "Organization sync and alert webhooks"
// item 4): imported sessions from a chat platform may carry a sender id (and a chat id) without a
// name; every org sync writes the names it saw to `<data dir>/orgsync/<platform>-names.json`
// ({"users": {"<platform user id>": "<name>"}, "groups": {"<chat id>": "<name>"}, "updated_at": ...}),
// merged over the previous file, written atomically (temp file + rename) with mode 0600 in a 0700
// directory. Readers keep an in-memory copy per data directory and look names up in O(1): `refresh()`
// stats the two files at most once a second (callers call it once per batch, never per message) and
// re-reads a file only when its mtime or size changed. An unreadable or malformed file reads as empty.

import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isPlatform, PLATFORMS, type Platform } from '../../domain/orgsync/platform.ts';

export interface NameTable {
  users: Record<string, string>;
  groups: Record<string, string>;
}

export const displayNamesFile = (dataDir: string, platform: Platform) =>
  path.join(dataDir, 'orgsync', `${platform}-names.json`);

function readTable(file: string): NameTable {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<NameTable>;
    const clean = (o: unknown): Record<string, string> => {
      const out: Record<string, string> = Object.create(null);
      if (o && typeof o === 'object')
        for (const [k, v] of Object.entries(o)) if (typeof v === 'string') out[k] = v;
      return out;
    };
    return { users: clean(parsed.users), groups: clean(parsed.groups) };
  } catch {
    return { users: Object.create(null), groups: Object.create(null) };
  }
}

/** Merges `names` over the platform's file and replaces it atomically (mode 0600). */
export function writeDisplayNames(dataDir: string, platform: Platform, names: NameTable, at: Date): void {
  const file = displayNamesFile(dataDir, platform);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const current = readTable(file);
  const next = {
    users: { ...current.users, ...names.users },
    groups: { ...current.groups, ...names.groups },
    updated_at: at.toISOString(),
  };
  const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(tmp, JSON.stringify(next), { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

const REFRESH_EVERY_MS = 1000;

export interface DisplayNames {
  /** Re-reads a changed file (at most one stat per platform a second). Call once per batch. */
  refresh(): void;
  user(platform: Platform, id: string): string | undefined;
  group(platform: Platform, chatId: string): string | undefined;
}

const lookups = new Map<string, DisplayNames>();

/** The shared lookup of a data directory. */
export function displayNames(dataDir: string): DisplayNames {
  const existing = lookups.get(dataDir);
  if (existing) return existing;
  const tables = new Map<Platform, { table: NameTable; stamp: string }>();
  let checkedAt = 0;
  const lookup: DisplayNames = {
    refresh() {
      const now = Date.now();
      if (now - checkedAt < REFRESH_EVERY_MS) return;
      checkedAt = now;
      for (const p of PLATFORMS) {
        const file = displayNamesFile(dataDir, p);
        let stamp = 'absent';
        try {
          const st = statSync(file);
          stamp = `${st.mtimeMs}:${st.size}`;
        } catch {}
        if (tables.get(p)?.stamp === stamp) continue;
        tables.set(p, {
          stamp,
          table:
            stamp === 'absent'
              ? { users: Object.create(null), groups: Object.create(null) }
              : readTable(file),
        });
      }
    },
    user: (p, id) => tables.get(p)?.table.users[id],
    group: (p, chatId) => tables.get(p)?.table.groups[chatId],
  };
  lookups.set(dataDir, lookup);
  return lookup;
}

/** Tests: forget the in-memory copies (the next refresh re-reads at once). */
export function resetDisplayNameLookups(): void {
  lookups.clear();
}

/**
 * The ingest hook: a message from a chat platform (`message_source` chatplat_a / chatplat_b) with a
 * sender id and no sender name gets the cached display name. Pure lookup; `names.refresh()` is the
 * caller's, once per batch.
 */
export function withSenderName<
  M extends { messageSource: string | null; senderId: string | null; senderName: string | null },
>(names: DisplayNames, m: M): M {
  if (m.senderName || !m.senderId || !isPlatform(m.messageSource)) return m;
  const name = names.user(m.messageSource, m.senderId);
  return name ? { ...m, senderName: name.slice(0, 255) } : m;
}
