// OTLP/HTTP bodies (issue 29 item 2) read with the OpenTelemetry project's own definitions: the .proto
// files of open-telemetry/opentelemetry-proto v1.9.0, vendored under ./proto (Apache-2.0, LICENSE
// beside them), loaded by protobufjs (the library @opentelemetry/otlp-transformer generated its code
// with; its current releases no longer ship a decoder). No hand-written wire decoding here.
//
// Both encodings end in the same plain object (protobufjs toObject: lowerCamelCase fields, 64-bit
// integers as decimal strings, enums as numbers), so the mapping (domain/otlp/) reads one shape.
// OTLP/JSON (the specification's "JSON Protobuf Encoding") differs from protobufjs's own JSON in one
// place that matters here: trace and span ids are hex, not base64; they are converted before fromObject.
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

const PROTO_ROOT = fileURLToPath(new URL('./proto/', import.meta.url));

function loadRoot(): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => PROTO_ROOT + target;
  root.loadSync(
    [
      'opentelemetry/proto/collector/logs/v1/logs_service.proto',
      'opentelemetry/proto/collector/metrics/v1/metrics_service.proto',
    ],
    { keepCase: false },
  );
  return root;
}

let loaded: protobuf.Root | undefined;
const root = () => {
  loaded ??= loadRoot();
  return loaded;
};

export type OtlpSignal = 'logs' | 'metrics';
export type OtlpEncoding = 'protobuf' | 'json';

const REQUEST = {
  logs: 'opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest',
  metrics: 'opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest',
} as const;
const RESPONSE = {
  logs: 'opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse',
  metrics: 'opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse',
} as const;

/** A body that is not a valid message of its signal. */
export class OtlpDecodeError extends Error {}

const TO_OBJECT: protobuf.IConversionOptions = { longs: String, enums: Number, bytes: String, arrays: true };

/** OTLP/JSON's hex trace and span ids, as the bytes protobufjs's fromObject expects (base64). */
function hexIdsToBase64(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(hexIdsToBase64);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if ((k === 'traceId' || k === 'spanId') && typeof v === 'string') {
      if (!/^(?:[0-9a-fA-F]{2})*$/.test(v)) throw new OtlpDecodeError(`${k} is not hex`);
      out[k] = Buffer.from(v, 'hex').toString('base64');
    } else out[k] = hexIdsToBase64(v);
  }
  return out;
}

/** The export request of `signal` in `body`, as a plain object (see the header). */
export function decodeExport(
  signal: OtlpSignal,
  encoding: OtlpEncoding,
  body: Buffer,
): Record<string, unknown> {
  const type = root().lookupType(REQUEST[signal]);
  try {
    if (encoding === 'protobuf') return type.toObject(type.decode(body), TO_OBJECT);
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      throw new OtlpDecodeError('the body is not a JSON object');
    return type.toObject(type.fromObject(hexIdsToBase64(parsed) as Record<string, unknown>), TO_OBJECT);
  } catch (e) {
    if (e instanceof OtlpDecodeError) throw e;
    throw new OtlpDecodeError((e as Error).message);
  }
}

/** The "all accepted" answer of `signal` (an empty Export*ServiceResponse) in `encoding`. */
export function acceptedResponse(signal: OtlpSignal, encoding: OtlpEncoding): Buffer {
  if (encoding === 'json') return Buffer.from('{}');
  const type = root().lookupType(RESPONSE[signal]);
  return Buffer.from(type.encode(type.create({})).finish());
}

/** An export request of `signal` built from a plain object (lowerCamelCase), encoded: for tests and benches. */
export function encodeExport(signal: OtlpSignal, value: Record<string, unknown>): Buffer {
  const type = root().lookupType(REQUEST[signal]);
  return Buffer.from(type.encode(type.fromObject(value)).finish());
}
