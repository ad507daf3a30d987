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
  /**
   * SSO (issue 12): a first SSO login whose verified email equals an existing local user's email is
   * linked to that user only when this is true; otherwise a new user is provisioned. Stored as text.
   */
  sso_link_existing_by_email: z.preprocess(
    (v) => (v === 'true' ? true : v === 'false' ? false : v),
    z.boolean({ error: 'sso_link_existing_by_email must be true or false' }),
  ),
});
export type SecuritySettings = z.infer<typeof securitySettingsSchema>;

export const DEFAULT_SECURITY_SETTINGS: {
  key: keyof SecuritySettings;
  value: number | boolean;
  description: string;
}[] = [
  { key: 'login_max_attempts', value: 5, description: 'Failed logins before the username is locked' },
  { key: 'login_lockout_minutes', value: 15, description: 'How long a locked username stays locked' },
  { key: 'password_min_length', value: 12, description: 'Minimum password length' },
  {
    key: 'sso_link_existing_by_email',
    value: false,
    description: 'Link a first SSO login to the local user with the same verified email',
  },
];
