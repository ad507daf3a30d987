// The line's CLI home under isolation: the runner (root) writes the adapter's session files into it
// before every run (runner/cli-home.ts), and the agent account owns it during the run. Between the two
// the agent could have planted a symlink where root is about to write (`.svc-cli/settings.json` ->
// /etc/...). So before the runner touches it: every process of the account is gone (launcher.ts), the
// whole home is taken back by the service account (`chown -R -h`: links themselves, never their
// targets) and every symlink under `.svc-cli` is removed; after the adapter's files are written the
// home is handed to the agent account (0700).
import { execFileSync } from 'node:child_process';
import { chmodSync, lstatSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';

function removeSymlinks(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const abs = path.join(dir, name);
    const st = lstatSync(abs, { throwIfNoEntry: false });
    if (!st) continue;
    if (st.isSymbolicLink()) rmSync(abs, { force: true });
    else if (st.isDirectory()) removeSymlinks(abs);
  }
}

/** Takes the home back before the runner writes into it (no-op for a home that does not exist yet). */
export function reclaimHome(home: string, service: { uid: number; gid: number }): void {
  const st = lstatSync(home, { throwIfNoEntry: false });
  if (!st) return;
  if (!st.isDirectory()) {
    rmSync(home, { force: true });
    return;
  }
  execFileSync('chown', ['-R', '-h', `${service.uid}:${service.gid}`, '--', home], { stdio: 'ignore' });
  removeSymlinks(path.join(home, '.svc-cli'));
}

/** Gives the home to the agent account for the run. */
export function handOverHome(home: string, account: { uid: number; gid: number }): void {
  execFileSync('chown', ['-R', '-h', `${account.uid}:${account.gid}`, '--', home], { stdio: 'ignore' });
  chmodSync(home, 0o700);
}
