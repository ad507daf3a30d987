// OTLP exports shaped like the CLIs' own (attribute names from each CLI's telemetry docs), as the plain
// lowerCamelCase objects of OTLP/JSON, and a sender for /v1/logs and /v1/metrics.
import { gzipSync } from 'node:zlib';
import { encodeExport } from '../../services/otlp/codec.ts';

type Scalar = string | number | boolean;
const value = (v: Scalar) =>
  typeof v === 'string'
    ? { stringValue: v }
    : typeof v === 'boolean'
      ? { boolValue: v }
      : Number.isInteger(v)
        ? { intValue: String(v) }
        : { doubleValue: v };
export const kv = (attrs: Record<string, Scalar>) =>
  Object.entries(attrs).map(([key, v]) => ({ key, value: value(v) }));
export const nanos = (d: Date) => `${BigInt(d.getTime()) * 1_000_000n}`;

/** An ExportLogsServiceRequest of one resource with the given records (attributes and time). */
export function logsExport(
  service: string,
  records: Array<{ body?: string; attributes: Record<string, Scalar>; at: Date }>,
  resource: Record<string, Scalar> = {},
) {
  return {
    resourceLogs: [
      {
        resource: { attributes: kv({ 'service.name': service, ...resource }) },
        scopeLogs: [
          {
            scope: { name: `com.example.${service}` },
            logRecords: records.map((r) => ({
              timeUnixNano: nanos(r.at),
              observedTimeUnixNano: nanos(r.at),
              ...(r.body ? { body: { stringValue: r.body } } : {}),
              attributes: kv(r.attributes),
            })),
          },
        ],
      },
    ],
  };
}

/** An ExportMetricsServiceRequest of one Sum metric; temporality 1 delta, 2 cumulative. */
export function sumExport(
  service: string,
  name: string,
  temporality: 1 | 2,
  points: Array<{ attributes?: Record<string, Scalar>; start: Date; at: Date; value: number }>,
) {
  return {
    resourceMetrics: [
      {
        resource: { attributes: kv({ 'service.name': service }) },
        scopeMetrics: [
          {
            metrics: [
              {
                name,
                sum: {
                  aggregationTemporality: temporality,
                  isMonotonic: true,
                  dataPoints: points.map((p) => ({
                    attributes: kv(p.attributes ?? {}),
                    startTimeUnixNano: nanos(p.start),
                    timeUnixNano: nanos(p.at),
                    ...(Number.isInteger(p.value) ? { asInt: String(p.value) } : { asDouble: p.value }),
                  })),
                },
              },
            ],
          },
        ],
      },
    ],
  };
}

/** Posts an export; `as` protobuf (encoded with the OpenTelemetry definitions) or json; gzip optional. */
export async function sendOtlp(
  url: string,
  signal: 'logs' | 'metrics',
  request: Record<string, unknown>,
  opts: { token?: string; as?: 'protobuf' | 'json'; gzip?: boolean; contentType?: string } = {},
) {
  const as = opts.as ?? 'protobuf';
  let body: Buffer = as === 'protobuf' ? encodeExport(signal, request) : Buffer.from(JSON.stringify(request));
  const headers: Record<string, string> = {
    'content-type': opts.contentType ?? (as === 'protobuf' ? 'application/x-protobuf' : 'application/json'),
  };
  if (opts.gzip) {
    body = gzipSync(body);
    headers['content-encoding'] = 'gzip';
  }
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const res = await fetch(`${url}/v1/${signal}`, { method: 'POST', headers, body: new Uint8Array(body) });
  return {
    status: res.status,
    type: res.headers.get('content-type') ?? '',
    body: Buffer.from(await res.arrayBuffer()),
  };
}
