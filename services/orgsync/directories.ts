// Which adapter and which credentials a platform uses, from settings (sections chatplat_a /
// chatplat_b: app_key, app_secret (also SVC_CHATPLAT_A__APP_SECRET), api_base_url). Read inside
// activities and the API only: the secret never travels through a workflow.
import type { Settings } from '../../config/settings.ts';
import type { OrgDirectory, Platform, PlatformCredentials } from '../../domain/orgsync/platform.ts';
import { CHATPLAT_A_DEFAULT_BASE_URL, chatplatADirectory } from './chatplat-a.ts';
import { CHATPLAT_B_DEFAULT_BASE_URL, chatplatBDirectory } from './chatplat-b.ts';

const DEFAULT_BASE_URL: Record<Platform, string> = {
  chatplat_a: CHATPLAT_A_DEFAULT_BASE_URL,
  chatplat_b: CHATPLAT_B_DEFAULT_BASE_URL,
};

export type PlatformSettings = Settings['chatplat_a'];

export const platformSettings = (settings: Pick<Settings, Platform>, platform: Platform): PlatformSettings =>
  settings[platform];

/** The credentials, or null when app_key or app_secret is missing (the platform is not configured). */
export function platformCredentials(
  settings: Pick<Settings, Platform>,
  platform: Platform,
): PlatformCredentials | null {
  const s = settings[platform];
  const appKey = s.app_key?.trim();
  const appSecret = s.app_secret?.trim();
  if (!appKey || !appSecret) return null;
  return { appKey, appSecret, baseUrl: s.api_base_url ?? DEFAULT_BASE_URL[platform] };
}

export function orgDirectory(platform: Platform, creds: PlatformCredentials): OrgDirectory {
  return platform === 'chatplat_a' ? chatplatADirectory(creds) : chatplatBDirectory(creds);
}
