// Security settings stored in `security_settings` (key/value) with their defaults and validation.
import { z } from 'zod';

export const securitySettingsSchema = z.object({
  login_max_attempts: z.coerce.number().int().min(1).max(100),
  login_lockout_minutes: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 60),
  password_min_length: z.coerce.number().int().min(8).max(128),
});
export type SecuritySettings = z.infer<typeof securitySettingsSchema>;

export const DEFAULT_SECURITY_SETTINGS: {
  key: keyof SecuritySettings;
  value: number;
  description: string;
}[] = [
  { key: 'login_max_attempts', value: 5, description: 'Failed logins before the username is locked' },
  { key: 'login_lockout_minutes', value: 15, description: 'How long a locked username stays locked' },
  { key: 'password_min_length', value: 12, description: 'Minimum password length' },
];
