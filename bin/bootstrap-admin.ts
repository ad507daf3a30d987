// On an empty database, create the first platform administrator. Without SVC_ADMIN_PASSWORD a random
// password is generated, printed once, and must be changed at first login.
import { randomBytes } from 'node:crypto';
import type { DatabaseHandle } from '../db/client.ts';
import { usersRepository } from '../db/repositories/users.ts';
import { hashPassword } from '../domain/passwords.ts';

export async function bootstrapAdmin(
  database: DatabaseHandle,
  opts: { username: string; password?: string },
  print: (line: string) => void,
): Promise<boolean> {
  const users = usersRepository(database);
  if ((await users.countActive()) > 0) return false;
  const generated = !opts.password;
  const password = opts.password ?? randomBytes(12).toString('base64url');
  try {
    await users.create({
      username: opts.username,
      passwordHash: await hashPassword(password),
      role: 'platform_admin',
      isAdmin: true,
      tenantId: null,
      mustChangePassword: generated,
    });
  } catch (err) {
    // Another instance bootstrapped at the same moment: the unique username decides, nothing to do.
    if (await users.findByUsername(opts.username)) return false;
    throw err;
  }
  if (generated)
    print(
      `Created administrator "${opts.username}" with generated password: ${password}  (shown once; change it at first login)`,
    );
  else print(`Created administrator "${opts.username}" from SVC_ADMIN_PASSWORD`);
  return true;
}
