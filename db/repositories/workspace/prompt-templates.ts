// The only SQL for prompt_templates (spec document 2, "Workspace and projects"). Visibility comes from
// domain/workspace/prompt-access.ts (a PromptViewer) and is applied to every read here; `variables`
// and `tags` are JSON text. use_count is incremented in the database (`use_count + 1`), never
// read-modify-written, so concurrent renders all count.
import { and, asc, count, desc, eq, or, type SQL, sql } from 'drizzle-orm';
import type { PromptViewer } from '../../../domain/workspace/prompt-access.ts';
import type { DatabaseHandle } from '../../client.ts';
import { containsPattern } from './like.ts';

export type PromptTemplateRow = DatabaseHandle['t']['promptTemplates']['$inferSelect'];
export type PromptTemplateInsert = DatabaseHandle['t']['promptTemplates']['$inferInsert'];

export interface PromptFilters {
  category?: string;
  search?: string;
  tag?: string;
  featured?: boolean;
}

export function promptTemplatesRepository({ db, t }: DatabaseHandle) {
  const p = t.promptTemplates;

  function visible(v: PromptViewer): SQL | undefined {
    if (v.kind === 'all') return undefined;
    const own = eq(p.authorId, v.userId);
    if (v.kind === 'own') return own;
    if (v.kind === 'tenant-admin') return or(own, eq(p.tenantId, v.tenantId));
    return or(own, and(eq(p.isPublic, true), eq(p.tenantId, v.tenantId)));
  }

  function where(v: PromptViewer, f: PromptFilters): SQL | undefined {
    const conds: (SQL | undefined)[] = [visible(v)];
    if (f.category !== undefined) conds.push(eq(p.category, f.category));
    if (f.featured) conds.push(eq(p.isFeatured, true));
    if (f.search !== undefined) {
      const like = containsPattern(f.search.toLowerCase());
      conds.push(
        sql`(lower(${p.name}) LIKE ${like} ESCAPE '\\' OR lower(coalesce(${p.description}, '')) LIKE ${like} ESCAPE '\\' OR lower(${p.content}) LIKE ${like} ESCAPE '\\')`,
      );
    }
    // tags is a JSON array of strings: match the JSON-encoded tag, quotes included (whole tag only).
    if (f.tag !== undefined)
      conds.push(sql`${p.tags} LIKE ${containsPattern(JSON.stringify(f.tag))} ESCAPE '\\'`);
    return and(...conds);
  }

  return {
    async list(v: PromptViewer, f: PromptFilters, page: { limit: number; offset: number }) {
      const cond = where(v, f);
      const [rows, [total]] = await Promise.all([
        db
          .select()
          .from(p)
          .where(cond)
          .orderBy(desc(p.isFeatured), desc(p.useCount), desc(p.id))
          .limit(page.limit)
          .offset(page.offset),
        db.select({ n: count() }).from(p).where(cond),
      ]);
      return { rows: rows as PromptTemplateRow[], total: Number(total?.n ?? 0) };
    },

    async categories(v: PromptViewer): Promise<{ category: string; count: number }[]> {
      const rows = await db
        .select({ category: p.category, n: count() })
        .from(p)
        .where(visible(v))
        .groupBy(p.category)
        .orderBy(asc(p.category));
      return rows.map((r) => ({ category: r.category, count: Number(r.n) }));
    },

    async find(id: number): Promise<PromptTemplateRow | undefined> {
      const [row] = await db.select().from(p).where(eq(p.id, id));
      return row;
    },

    async create(values: PromptTemplateInsert): Promise<PromptTemplateRow> {
      const [row] = await db.insert(p).values(values).returning();
      return row as PromptTemplateRow;
    },

    async update(id: number, values: Partial<PromptTemplateInsert>): Promise<PromptTemplateRow | undefined> {
      const [row] = await db.update(p).set(values).where(eq(p.id, id)).returning();
      return row as PromptTemplateRow | undefined;
    },

    async remove(id: number): Promise<boolean> {
      const rows = await db.delete(p).where(eq(p.id, id)).returning({ id: p.id });
      return rows.length > 0;
    },

    /** Adds one use in the database and returns the new count. */
    async countUse(id: number): Promise<number> {
      const [row] = await db
        .update(p)
        .set({ useCount: sql`${p.useCount} + 1` })
        .where(eq(p.id, id))
        .returning({ useCount: p.useCount });
      return row?.useCount ?? 0;
    },
  };
}
