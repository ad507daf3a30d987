// The only SQL for `security_settings` (key/value rows).
import { eq } from 'drizzle-orm';
import type { DatabaseHandle } from '../client.ts';

export function securitySettingsRepository({ db, t }: DatabaseHandle) {
  const s = t.securitySettings;
  return {
    async all() {
      return db
        .select({
          key: s.settingKey,
          value: s.settingValue,
          description: s.description,
          updatedAt: s.updatedAt,
        })
        .from(s);
    },
    async put(key: string, value: string, description: string, at: Date): Promise<void> {
      await db
        .insert(s)
        .values({ settingKey: key, settingValue: value, description, updatedAt: at })
        .onConflictDoUpdate({ target: s.settingKey, set: { settingValue: value, updatedAt: at } });
    },
    async get(key: string) {
      const [row] = await db.select().from(s).where(eq(s.settingKey, key));
      return row;
    },
  };
}
