// POST /v1/logs and /v1/metrics: OTLP over HTTP from the CLIs on people's laptops (issue 29 item 2),
// on the API's own origin so a CLI's OTEL_EXPORTER_OTLP_ENDPOINT=<base URL> reaches them. Mounted
// before the JSON parser (routes/index.ts mountStreamingRoutes): the body is read here, after the
// caller is known.
//
//   auth      Authorization: Bearer <personal upload token> (services/otlp/ingest-caller.ts; gateway
//             keys once issue 29 item 1 is merged): 401 without a valid one (a refused token is audited).
//   body      Content-Type application/x-protobuf or application/json (else 415), Content-Encoding
//             gzip or deflate or none (inflated only after auth, bounded in size and ratio:
//             api/middleware/body.ts), at most MAX_OTLP_BYTES decoded (else 413); a body that is not
//             an export request of its signal is a 400.
//   answer    200 with an empty Export{Logs,Metrics}ServiceResponse (everything accepted) in the
//             request's encoding. What the export adds: services/otlp/ingest.ts.

import { type Request, type Response, Router } from 'express';
import { z } from 'zod';
import { bearerTokenOf } from '../../domain/bearer.ts';
import { AppError, BadRequestError, UnauthorizedError } from '../../domain/errors.ts';
import type { AppDeps } from '../../services/deps.ts';
import {
  acceptedResponse,
  decodeExport,
  OtlpDecodeError,
  type OtlpEncoding,
  type OtlpSignal,
} from '../../services/otlp/codec.ts';
import { otlpIngestService } from '../../services/otlp/ingest.ts';
import { ingestCallerResolver } from '../../services/otlp/ingest-caller.ts';
import { UploadTokenRefused } from '../../services/upload-tokens.ts';
import { decodedBody, InflationLimitError } from '../middleware/body.ts';
import { endpoint } from '../openapi/endpoint.ts';
import { auditRefusedToken } from './upload.ts';

/** The largest export accepted, decoded (the OpenTelemetry SDKs batch far below this). */
export const MAX_OTLP_BYTES = 5 * 1024 * 1024;
const TOO_LARGE = `OTLP export too large (limit ${MAX_OTLP_BYTES / 1024 / 1024} MB decoded)`;

const MEDIA: Record<string, OtlpEncoding> = {
  'application/x-protobuf': 'protobuf',
  'application/protobuf': 'protobuf',
  'application/json': 'json',
};
const CONTENT_TYPE: Record<OtlpEncoding, string> = {
  protobuf: 'application/x-protobuf',
  json: 'application/json',
};

function encodingOf(req: Request): OtlpEncoding {
  const type = (req.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  const encoding = MEDIA[type];
  if (!encoding)
    throw new AppError(
      415,
      `Unsupported Content-Type "${type}" (use application/x-protobuf or application/json)`,
    );
  return encoding;
}

async function readBody(req: Request, res: Response): Promise<Buffer> {
  if (Number(req.get('content-length') ?? 0) > MAX_OTLP_BYTES) {
    res.set('connection', 'close');
    throw new AppError(413, TOO_LARGE);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of decodedBody(req, MAX_OTLP_BYTES)) {
      size += chunk.length;
      if (size > MAX_OTLP_BYTES) throw new InflationLimitError(size);
      chunks.push(chunk);
    }
  } catch (e) {
    if (!req.complete) res.set('connection', 'close');
    if (e instanceof InflationLimitError) throw new AppError(413, TOO_LARGE);
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('Z_'))
      throw new BadRequestError(`Malformed ${req.get('content-encoding')} body`);
    throw e;
  }
  return Buffer.concat(chunks, size);
}

const media = { 'application/x-protobuf': z.string(), 'application/json': z.looseObject({}) };
const declare = (signal: OtlpSignal) =>
  endpoint({
    tags: ['otlp'],
    summary: `OTLP/HTTP ${signal} export from a CLI (OpenTelemetry)`,
    auth: ['uploadKey'],
    selfParsedBody: {
      description: `An Export${signal === 'logs' ? 'Logs' : 'Metrics'}ServiceRequest (OTLP/HTTP, protobuf or JSON, gzip accepted), read with the OpenTelemetry protobuf definitions.`,
      content: media,
    },
    responses: { 200: 'An empty OTLP export response (everything accepted), in the request encoding' },
    errors: [400, 401, 403, 413, 415],
  });

export function otlpRouter(deps: AppDeps): Router {
  const r = Router();
  const resolveIngestCaller = ingestCallerResolver(deps);
  const ingest = otlpIngestService(deps);

  async function caller(req: Request) {
    const raw = bearerTokenOf(req.get('authorization'));
    try {
      return await resolveIngestCaller(raw);
    } catch (err) {
      if (!(err instanceof UploadTokenRefused)) throw err;
      await auditRefusedToken(deps, req, err);
      // An unknown token is no credential at all (OTLP exporters retry only on 401-free answers anyway).
      throw err.reason === 'unknown_token' ? new UnauthorizedError(err.error.message) : err.error;
    }
  }

  for (const signal of ['logs', 'metrics'] as const) {
    r.post(`/v1/${signal}`, declare(signal), async (req, res) => {
      const who = await caller(req);
      const encoding = encodingOf(req);
      const body = await readBody(req, res);
      let request: Record<string, unknown>;
      try {
        request = decodeExport(signal, encoding, body);
      } catch (e) {
        if (e instanceof OtlpDecodeError)
          throw new BadRequestError(`Not an OTLP ${signal} export (${encoding}): ${e.message}`);
        throw e;
      }
      if (signal === 'logs') await ingest.logs(request, who);
      else await ingest.metrics(request, who);
      res.status(200).type(CONTENT_TYPE[encoding]).send(acceptedResponse(signal, encoding));
    });
  }
  return r;
}
