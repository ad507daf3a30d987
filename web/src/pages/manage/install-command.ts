// The agent install one-liner shown after a registration token is created (docs/integrators/remote-workspaces.md "Remote workspaces",
// step 3): `curl -fsSL <server>/api/remote/agent/install.sh | bash -s -- --server <server> --token <t>`,
// with `--insecure` when the server is plain http (the installer refuses http otherwise), and the
// PowerShell form for Windows. Pure: unit-tested in test/unit/web-manage-forms.test.ts.

/** Quotes a value for a POSIX shell: only safe characters pass bare, the rest go in single quotes. */
export function shellQuote(value: string): string {
  if (/^[A-Za-z0-9._:/@%+=-]+$/.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The server address without a trailing slash; only http(s) origins are accepted. */
export function serverOf(origin: string): string {
  const u = new URL(origin);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('The server must be http or https');
  return u.origin;
}

export function installCommand(origin: string, token: string, opts: { name?: string } = {}): string {
  const server = serverOf(origin);
  const args = ['--server', shellQuote(server), '--token', shellQuote(token)];
  if (opts.name) args.push('--name', shellQuote(opts.name));
  if (server.startsWith('http:')) args.push('--insecure');
  return `curl -fsSL ${shellQuote(`${server}/api/remote/agent/install.sh`)} | bash -s -- ${args.join(' ')}`;
}

/** PowerShell: download install.ps1 and run it with the same parameters. */
export function installCommandWindows(origin: string, token: string): string {
  const server = serverOf(origin);
  const q = (s: string) => `'${s.replace(/'/g, "''")}'`;
  const insecure = server.startsWith('http:') ? ' -Insecure' : '';
  return `& ([scriptblock]::Create((irm ${q(`${server}/api/remote/agent/install.ps1`)}))) -Server ${q(server)} -Token ${q(token)}${insecure}`;
}
