// Structured JSON log lines on stderr (stdout stays free for command output such as `register`).
// Secrets never reach this module by design; `redact` is a second line of defence for field bags.

export type LogLevel = 'DEBUG' | 'INFO' | 'WARNING' | 'ERROR';

const ORDER: Record<LogLevel, number> = { DEBUG: 10, INFO: 20, WARNING: 30, ERROR: 40 };
// Field names that may carry credentials; their values are replaced before printing.
const SECRET_FIELD = /token|secret|password|authorization|api[_-]?key/i;

export function parseLogLevel(value: string): LogLevel {
  const upper = value.trim().toUpperCase();
  if (upper === 'WARN') return 'WARNING';
  if (upper in ORDER) return upper as LogLevel;
  throw new Error(`log_level must be one of DEBUG, INFO, WARNING, ERROR (got "${value}")`);
}

export function redact(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] = SECRET_FIELD.test(key) ? '[redacted]' : value;
  }
  return out;
}

export class Logger {
  constructor(
    private level: LogLevel = 'INFO',
    private readonly write: (line: string) => void = (line) => process.stderr.write(line + '\n'),
  ) {}

  setLevel(level: LogLevel): void {
    this.level = level;
  }

  debug(msg: string, fields: Record<string, unknown> = {}): void {
    this.log('DEBUG', msg, fields);
  }
  info(msg: string, fields: Record<string, unknown> = {}): void {
    this.log('INFO', msg, fields);
  }
  warn(msg: string, fields: Record<string, unknown> = {}): void {
    this.log('WARNING', msg, fields);
  }
  error(msg: string, fields: Record<string, unknown> = {}): void {
    this.log('ERROR', msg, fields);
  }

  private log(level: LogLevel, msg: string, fields: Record<string, unknown>): void {
    if (ORDER[level] < ORDER[this.level]) return;
    this.write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...redact(fields) }));
  }
}

/** Message of an unknown thrown value, for log fields. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    return cause instanceof Error ? `${err.message}: ${cause.message}` : err.message;
  }
  return String(err);
}
