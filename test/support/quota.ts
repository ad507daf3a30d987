// Helpers for the quota tests: usage attributed to a user through the real upload API (today's
// assistant messages sent by the user's username), and personal quotas set through the admin API.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { dayKey } from '../../domain/quota.ts';
import type { TestApp } from './harness.ts';
import { api, type Session } from './session.ts';

export const UPLOAD_KEY = { 'x-upload-auth': 'test-upload-key' };

export const today = () => new Date().toISOString().slice(0, 10);

/** `count` assistant messages of `tokens` tokens each, sent today by `username`. */
export async function uploadRequests(app: TestApp, username: string, count: number, tokens = 10) {
  const messages = Array.from({ length: count }, () => ({
    date: today(),
    tool_name: 'cli_quota',
    host_name: 'quota-host',
    message_id: randomUUID(),
    role: 'assistant',
    sender_name: username,
    input_tokens: tokens,
    output_tokens: 0,
    timestamp: new Date().toISOString(),
  }));
  const r = await api(app.url, 'POST', '/api/upload/batch', { headers: UPLOAD_KEY, body: { messages } });
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

export async function setUserQuota(
  app: TestApp,
  admin: Session,
  userId: number,
  quota: Record<string, number>,
) {
  const r = await api(app.url, 'PUT', `/api/admin/users/${userId}/quota`, { auth: admin, body: quota });
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

/** The user's daily quota_usage row of the app's today, if any. */
export async function dailyQuotaRow(app: Pick<TestApp, 'database' | 'clock'>, userId: number) {
  const { db, t } = app.database;
  const [row] = await db
    .select()
    .from(t.quotaUsage)
    .where(
      and(
        eq(t.quotaUsage.userId, userId),
        eq(t.quotaUsage.period, 'daily'),
        eq(t.quotaUsage.date, dayKey(app.clock.now())),
      ),
    );
  return row;
}
