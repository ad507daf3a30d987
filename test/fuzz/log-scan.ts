// After the fuzz: the application's own log lines must hold none of the seeded secrets (provider
// keys, passwords, hashes, tokens), whatever the fuzz sent. Returns the reason of the first leak.

export function leakInLogs(lines: string[], secrets: string[]): string | undefined {
  const bcrypt = /\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}/;
  for (const [i, line] of lines.entries()) {
    for (const s of secrets)
      if (s && line.includes(s)) return `log line ${i + 1} holds a seeded secret (${s.slice(0, 6)}...)`;
    if (bcrypt.test(line)) return `log line ${i + 1} holds a bcrypt hash`;
  }
  return undefined;
}
