// Every setting of the service, resolved once: environment > config.json / config.yaml in the data
// directory > default. Only entry points read this; everything else receives the values it needs.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { z } from 'zod';

const schema = z.object({
  NODE_ENV: z.string().default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(19888),
  HOST: z.string().default('127.0.0.1'),
  SVC_DATA_DIR: z.string().default('./data'),
  DATABASE_URL: z.string().optional(),
  TEMPORAL_ADDRESS: z.string().optional(),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_TASK_QUEUE: z.string().default('svc'),
  TEMPORAL_CLI_PATH: z.string().optional(),
  SVC_ENCRYPTION_KEY: z.string().optional(),
  SECRET_KEY: z.string().optional(),
  SVC_UPLOAD_AUTH_KEY: z.string().optional(),
  SVC_ADMIN_USERNAME: z.string().default('admin'),
  SVC_ADMIN_PASSWORD: z.string().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Auth session lifetime in hours. */
  SVC_SESSION_LIFETIME_HOURS: z.coerce.number().positive().default(24),
  /** Express `trust proxy` value: hops or a list of addresses whose X-Forwarded-* are believed. */
  SVC_TRUST_PROXY: z.string().default('loopback'),
  /** Override the embedded Temporal server's ports from temporal-dev.yaml (0 = pick a free port). */
  SVC_TEMPORAL_DEV_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  SVC_TEMPORAL_UI_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Public URL agents use to reach this server (defaults to http://HOST:PORT). */
  SVC_PUBLIC_URL: z.string().optional(),
});

export type Settings = z.infer<typeof schema> & {
  dataDir: string;
  production: boolean;
  dialect: 'sqlite' | 'postgres';
  sqlitePath: string;
  /** Where each value came from, for the startup banner. */
  sources: Record<string, 'env' | 'file' | 'default'>;
};

export const SETTING_NAMES = Object.keys(schema.shape) as (keyof z.infer<typeof schema>)[];

function readConfigFile(dataDir: string): Record<string, unknown> {
  for (const name of ['config.json', 'config.yaml', 'config.yml']) {
    const file = path.join(dataDir, name);
    if (!existsSync(file)) continue;
    const raw = readFileSync(file, 'utf8');
    const parsed = name.endsWith('.json') ? JSON.parse(raw) : YAML.parse(raw);
    if (parsed && typeof parsed === 'object') {
      // Accept both `PORT` and `port` spellings in the file.
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(parsed)) out[k.toUpperCase()] = v;
      return out;
    }
  }
  return {};
}

export class SettingsError extends Error {}

export function loadSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const dataDir = path.resolve(env.SVC_DATA_DIR || './data');
  const file = readConfigFile(dataDir);
  const merged: Record<string, unknown> = {};
  const sources: Settings['sources'] = {};
  for (const name of SETTING_NAMES) {
    if (env[name] !== undefined && env[name] !== '') {
      merged[name] = env[name];
      sources[name] = 'env';
    } else if (file[name] !== undefined) {
      merged[name] = String(file[name]);
      sources[name] = 'file';
    } else sources[name] = 'default';
  }
  const parsed = schema.safeParse(merged);
  if (!parsed.success) {
    const first = parsed.error.issues[0]!;
    throw new SettingsError(`Invalid setting ${first.path.join('.')}: ${first.message}`);
  }
  const s = parsed.data;
  const production = s.NODE_ENV === 'production';
  if (production) {
    const missing = (['SVC_ENCRYPTION_KEY', 'SECRET_KEY'] as const).filter((k) => !s[k]);
    if (missing.length)
      throw new SettingsError(
        `Refusing to start in production without ${missing.join(' and ')}. Set ${missing.length > 1 ? 'them' : 'it'} in the environment or in ${dataDir}/config.json.`,
      );
  }
  const dialect = s.DATABASE_URL && /^postgres(ql)?:\/\//.test(s.DATABASE_URL) ? 'postgres' : 'sqlite';
  const sqlitePath =
    s.DATABASE_URL && dialect === 'sqlite'
      ? s.DATABASE_URL.replace(/^sqlite:(\/\/)?/, '')
      : path.join(dataDir, 'svc.sqlite');
  return { ...s, dataDir, production, dialect, sqlitePath, sources };
}
