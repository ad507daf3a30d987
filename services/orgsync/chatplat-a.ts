// Org-directory adapter of chat platform A (`chatplat_a`), written against a contact API of the shape
// DingTalk's open platform ("oapi") has. Default base URL https://oapi.dingtalk.com (setting
// `chatplat_a.api_base_url`). Endpoints and fields assumed:
//
//   POST /gettoken                         body {appkey, appsecret}
//        -> {errcode: 0, errmsg, access_token, expires_in (seconds, 7200)}
//        (the key and secret travel in the JSON body, never in a URL, so no access log records them)
//   POST /topapi/v2/department/listsub?access_token=T   body {dept_id: number}
//        -> {errcode: 0, result: [{dept_id, name, parent_id, dept_group_chat_id?}]}
//        direct children of dept_id; not paged by the platform (one page per parent)
//   POST /topapi/v2/user/list?access_token=T            body {dept_id, cursor (0 first), size (<= 100)}
//        -> {errcode: 0, result: {has_more, next_cursor, list: [{userid, name, email, org_email?,
//            mobile, dept_id_list: number[]}]}}
//
// The root department is 1. Errors arrive as HTTP 200 with errcode != 0 (errmsg says why):
//   - rate limits: errcode 88 / 90018 / 90006 (or HTTP 429, hint header Retry-After, seconds);
//     retried with backoff;
//   - token invalid or expired: errcode 40014 / 42001: the cached token is dropped and the call made
//     once more with a fresh one;
//   - wrong app key or secret, missing permission: errcode 40001 / 40089 / 40091 / 60011 / 60020:
//     final (retrying cannot help);
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

export const CHATPLAT_A_DEFAULT_BASE_URL = 'https://oapi.dingtalk.com';
const PLATFORM = 'chatplat_a' as const;
const USER_PAGE_SIZE = 100;
const RATE_LIMIT_CODES = new Set([88, 90018, 90006]);
const STALE_TOKEN_CODES = new Set([40014, 42001]);
const AUTH_CODES = new Set([40001, 40089, 40091, 60011, 60020]);

export function chatplatADirectory(creds: PlatformCredentials): OrgDirectory {
  const url = (p: string, token?: string) => {
    const u = new URL(
      p.replace(/^\//, ''),
      creds.baseUrl.endsWith('/') ? creds.baseUrl : `${creds.baseUrl}/`,
    );
    if (token !== undefined) u.searchParams.set('access_token', token);
    return u;
  };

  /** The envelope: errcode 0 or a typed error. */
  const envelope = (path: string, body: Record<string, unknown>) => {
    const code = typeof body.errcode === 'number' ? body.errcode : Number(body.errcode ?? Number.NaN);
    if (code === 0) return body;
    const msg =
      `${PLATFORM} ${path}: errcode ${Number.isFinite(code) ? code : '?'} ${scrub(body.errmsg, creds)}`.trim();
    if (RATE_LIMIT_CODES.has(code)) throw new PlatformApiError(PLATFORM, 'rate_limited', msg, code);
    if (STALE_TOKEN_CODES.has(code) || AUTH_CODES.has(code))
      throw new PlatformApiError(PLATFORM, 'auth', msg, code);
    throw new PlatformApiError(PLATFORM, 'rejected', msg, Number.isFinite(code) ? code : null);
  };

  const fetchToken = async () => {
    const path = '/gettoken';
    const res = await callJson(
      PLATFORM,
      url(path),
      { method: 'POST', body: { appkey: creds.appKey, appsecret: creds.appSecret } },
      'retry-after',
    );
    const body = envelope(path, res.body);
    const token = textOf(body.access_token);
    if (!token) throw new PlatformApiError(PLATFORM, 'rejected', `${PLATFORM} ${path}: no access_token`);
    return { token, expiresIn: typeof body.expires_in === 'number' ? body.expires_in : 7200 };
  };

  const isStale = (err: unknown) =>
    err instanceof PlatformApiError && err.code != null && STALE_TOKEN_CODES.has(err.code);

  const post = (path: string, payload: Record<string, unknown>) =>
    withToken(
      PLATFORM,
      creds,
      fetchToken,
      async (token) => {
        const res = await callJson(
          PLATFORM,
          url(path, token),
          { method: 'POST', body: payload },
          'retry-after',
        );
        return envelope(path, res.body);
      },
      isStale,
    );

  const deptIdNumber = (id: string) => {
    if (!/^[0-9]{1,19}$/.test(id))
      throw new PlatformApiError(PLATFORM, 'rejected', `${PLATFORM}: department id ${id} is not numeric`);
    return Number(id);
  };

  return {
    platform: PLATFORM,
    rootDepartmentId: '1',
    async listDepartments(parentId: string): Promise<Page<PlatformDepartment>> {
      const body = await post('/topapi/v2/department/listsub', { dept_id: deptIdNumber(parentId) });
      const list = Array.isArray(body.result) ? (body.result as Record<string, unknown>[]) : [];
      const items: PlatformDepartment[] = [];
      for (const d of list) {
        const id = idOf(d.dept_id);
        if (!id) continue;
        items.push({
          id,
          name: textOf(d.name) ?? id,
          parentId: idOf(d.parent_id),
          chatId: idOf(d.dept_group_chat_id),
        });
      }
      return { items, nextCursor: null };
    },
    async listDepartmentUsers(departmentId: string, cursor: string | null): Promise<Page<PlatformUser>> {
      const body = await post('/topapi/v2/user/list', {
        dept_id: deptIdNumber(departmentId),
        cursor: cursor === null ? 0 : Number(cursor),
        size: USER_PAGE_SIZE,
      });
      const result = (body.result ?? {}) as Record<string, unknown>;
      const list = Array.isArray(result.list) ? (result.list as Record<string, unknown>[]) : [];
      const items: PlatformUser[] = [];
      for (const u of list) {
        const id = idOf(u.userid);
        if (!id) continue;
        items.push({
          id,
          name: textOf(u.name) ?? id,
          email: textOf(u.email) ?? textOf(u.org_email),
          mobile: textOf(u.mobile),
          departmentIds: Array.isArray(u.dept_id_list)
            ? (u.dept_id_list as unknown[]).map(idOf).filter((x): x is string => x !== null)
            : [departmentId],
        });
      }
      const next = result.has_more === true ? idOf(result.next_cursor) : null;
      return { items, nextCursor: next };
    },
  };
}
