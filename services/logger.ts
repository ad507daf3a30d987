// Structured JSON logs. Secrets are redacted by path as a second line of defence: code must not put
// them in log objects in the first place.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import pino, { type Logger } from 'pino';
import { pinoHttp } from 'pino-http';

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'req.headers["x-goog-api-key"]',
  'req.headers["x-upload-auth"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.api_key',
  '*.token',
  '*.proxy_token',
  '*.agent_token',
  '*.registration_token',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: undefined }, destination);
}

export function httpLogger(logger: Logger) {
  return pinoHttp({
    logger,
    genReqId: (req: IncomingMessage, res) => {
      const incoming = req.headers['x-request-id'];
      const id = typeof incoming === 'string' && /^[\w.-]{1,64}$/.test(incoming) ? incoming : randomUUID();
      res.setHeader('x-request-id', id);
      return id;
    },
    // Query strings can carry `token=`; log the path only.
    serializers: {
      req: (req) => ({ id: req.id, method: req.method, url: String(req.url).split('?')[0] }),
      res: (res) => ({ statusCode: res.statusCode }),
    },
    // 501 is an answer the spec reserves for endpoints without a transport yet, not a server fault.
    customLogLevel: (_req, res, err) =>
      err || (res.statusCode >= 500 && res.statusCode !== 501)
        ? 'error'
        : res.statusCode >= 400
          ? 'info'
          : 'debug',
    // For any 5xx without a thrown error pino-http makes one up ("failed with status code N") and logs
    // its stack, which says nothing but where pino-http is: log the status only. A thrown error is
    // logged once, by the error middleware (api/middleware/errors.ts).
    customErrorObject: (_req, res, error, val) =>
      !res.err && error.message === `failed with status code ${res.statusCode}`
        ? { res: val.res, responseTime: val.responseTime }
        : val,
    autoLogging: { ignore: (req) => req.url === '/livez' || req.url === '/metrics' },
  });
}
