// Org-directory adapter of chat platform B (`chatplat_b`), written against a contact API of the shape
// Feishu/Lark's open platform has. Default base URL https://open.feishu.cn (setting
// `chatplat_b.api_base_url`; Lark: https://open.larksuite.com). Endpoints and fields assumed:
//
//   POST /open-apis/auth/v3/tenant_access_token/internal      body {app_id, app_secret}
//        -> {code: 0, msg, tenant_access_token, expire (seconds, 7200)}
//   GET  /open-apis/contact/v3/departments/{department_id}/children
//        ?department_id_type=department_id&page_size=50&page_token=P      Authorization: Bearer T
//        -> {code: 0, data: {has_more, page_token, items: [{department_id, name,
//            parent_department_id, chat_id?}]}}
//   GET  /open-apis/contact/v3/users/find_by_department
//        ?department_id=D&department_id_type=department_id&user_id_type=user_id&page_size=50&page_token=P
//        -> {code: 0, data: {has_more, page_token, items: [{user_id, name, email, enterprise_email?,
//            mobile, department_ids: string[]}]}}
//
// The root department is "0". Errors carry code != 0 (msg says why), usually with HTTP 200, 400 or 429:
//   - rate limits: HTTP 429 or code 99991400; hint header x-ogw-ratelimit-reset (seconds); retried;
//   - token invalid or expired: code 99991661 / 99991663 / 99991668: the cached token is dropped and
//     the call made once more with a fresh one;
//   - wrong app id or secret, missing scope: code 10003 / 10014 / 99991672 / 99991679 / 40004: final;
//   - anything else: final.
import {
  type OrgDirectory,
  type Page,
  PlatformApiError,
  type PlatformCredentials,
  type PlatformDepartment,
  type PlatformUser,
} from '../../domain/orgsync/platform.ts';
import { callJson, idOf, scrub, textOf, withToken } from './platform-http.ts';

export const CHATPLAT_B_DEFAULT_BASE_URL = 'https://open.feishu.cn';
const PLATFORM = 'chatplat_b' as const;
const PAGE_SIZE = 50;
const HINT_HEADER = 'x-ogw-ratelimit-reset';
const RATE_LIMIT_CODES = new Set([99991400]);
const STALE_TOKEN_CODES = new Set([99991661, 99991663, 99991668]);
const AUTH_CODES = new Set([10003, 10014, 99991672, 99991679, 40004]);

export function chatplatBDirectory(creds: PlatformCredentials): OrgDirectory {
  const url = (p: string, query: Record<string, string | null> = {}) => {
    const u = new URL(
      p.replace(/^\//, ''),
      creds.baseUrl.endsWith('/') ? creds.baseUrl : `${creds.baseUrl}/`,
    );
    for (const [k, v] of Object.entries(query)) if (v !== null) u.searchParams.set(k, v);
    return u;
  };

  const envelope = (path: string, res: { headers: Headers; body: Record<string, unknown> }) => {
    const code = typeof res.body.code === 'number' ? res.body.code : Number(res.body.code ?? Number.NaN);
    if (code === 0) return res.body;
    const msg =
      `${PLATFORM} ${path}: code ${Number.isFinite(code) ? code : '?'} ${scrub(res.body.msg, creds)}`.trim();
    if (RATE_LIMIT_CODES.has(code)) {
      const hint = res.headers.get(HINT_HEADER);
      const ms = hint && /^[0-9]{1,7}$/.test(hint.trim()) ? Number(hint.trim()) * 1000 : null;
      throw new PlatformApiError(PLATFORM, 'rate_limited', msg, code, ms);
    }
    if (STALE_TOKEN_CODES.has(code) || AUTH_CODES.has(code))
      throw new PlatformApiError(PLATFORM, 'auth', msg, code);
    throw new PlatformApiError(PLATFORM, 'rejected', msg, Number.isFinite(code) ? code : null);
  };

  const fetchToken = async () => {
    const path = '/open-apis/auth/v3/tenant_access_token/internal';
    const res = await callJson(
      PLATFORM,
      url(path),
      { method: 'POST', body: { app_id: creds.appKey, app_secret: creds.appSecret } },
      HINT_HEADER,
    );
    const body = envelope(path, res);
    const token = textOf(body.tenant_access_token);
    if (!token)
      throw new PlatformApiError(PLATFORM, 'rejected', `${PLATFORM} ${path}: no tenant_access_token`);
    return { token, expiresIn: typeof body.expire === 'number' ? body.expire : 7200 };
  };

  const isStale = (err: unknown) =>
    err instanceof PlatformApiError && err.code != null && STALE_TOKEN_CODES.has(err.code);

  const get = (path: string, query: Record<string, string | null>) =>
    withToken(
      PLATFORM,
      creds,
      fetchToken,
      async (token) => {
        const res = await callJson(
          PLATFORM,
          url(path, query),
          { method: 'GET', headers: { authorization: `Bearer ${token}` } },
          HINT_HEADER,
        );
        const body = envelope(path, res);
        return (body.data ?? {}) as Record<string, unknown>;
      },
      isStale,
    );

  const nextOf = (data: Record<string, unknown>) => (data.has_more === true ? textOf(data.page_token) : null);
  const itemsOf = (data: Record<string, unknown>) =>
    Array.isArray(data.items) ? (data.items as Record<string, unknown>[]) : [];

  return {
    platform: PLATFORM,
    rootDepartmentId: '0',
    async listDepartments(parentId: string, cursor: string | null): Promise<Page<PlatformDepartment>> {
      const data = await get(`/open-apis/contact/v3/departments/${encodeURIComponent(parentId)}/children`, {
        department_id_type: 'department_id',
        page_size: String(PAGE_SIZE),
        page_token: cursor,
      });
      const items: PlatformDepartment[] = [];
      for (const d of itemsOf(data)) {
        const id = idOf(d.department_id);
        if (!id) continue;
        items.push({
          id,
          name: textOf(d.name) ?? id,
          parentId: idOf(d.parent_department_id),
          chatId: idOf(d.chat_id),
        });
      }
      return { items, nextCursor: nextOf(data) };
    },
    async listDepartmentUsers(departmentId: string, cursor: string | null): Promise<Page<PlatformUser>> {
      const data = await get('/open-apis/contact/v3/users/find_by_department', {
        department_id: departmentId,
        department_id_type: 'department_id',
        user_id_type: 'user_id',
        page_size: String(PAGE_SIZE),
        page_token: cursor,
      });
      const items: PlatformUser[] = [];
      for (const u of itemsOf(data)) {
        const id = idOf(u.user_id);
        if (!id) continue;
        items.push({
          id,
          name: textOf(u.name) ?? id,
          email: textOf(u.email) ?? textOf(u.enterprise_email),
          mobile: textOf(u.mobile),
          departmentIds: Array.isArray(u.department_ids)
            ? (u.department_ids as unknown[]).map(idOf).filter((x): x is string => x !== null)
            : [departmentId],
        });
      }
      return { items, nextCursor: nextOf(data) };
    },
  };
}
