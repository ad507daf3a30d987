/**
 * The proxy asks providers for `accept-encoding: identity`, but a provider (or a gateway in front of
 * it) may compress anyway. The compressed bytes still go to the caller untouched; this wrapper
 * decompresses a copy for the usage tap, so the count is not lost.
 */
import zlib from 'node:zlib';
import { type UsageResult, usageMissing } from '../../domain/usage/usage.ts';
import { noUsageTap, type UsageTap } from '../../domain/usage/usage-tap.ts';

/** A tap whose end may have to wait for decompression to drain. */
export interface MaybeAsyncUsageTap {
  write(chunk: Uint8Array): void;
  end(): UsageResult | Promise<UsageResult>;
}

/** Returns `tap` itself for uncompressed bodies, the common case, so that path costs nothing extra. */
export function decodingUsageTap(tap: UsageTap, contentEncoding: string | undefined): MaybeAsyncUsageTap {
  if (contentEncoding === undefined) return tap;
  const encoding = contentEncoding.trim().toLowerCase();
  if (encoding === 'identity' || encoding === '') return tap;
  const decoder = createDecoder(encoding);
  if (decoder === undefined) {
    return noUsageTap(`response content-encoding "${encoding}" is not supported by the usage reader`);
  }

  let failure: string | undefined;
  decoder.on('data', (chunk: Buffer) => tap.write(chunk));
  decoder.on('error', () => {
    failure = `response body could not be decoded (${encoding})`;
  });
  const drained = new Promise<void>((resolve) => {
    decoder.on('end', resolve);
    decoder.on('error', () => resolve());
  });
  return {
    write(chunk) {
      if (failure === undefined) decoder.write(chunk);
    },
    async end() {
      decoder.end();
      await drained;
      return failure === undefined ? tap.end() : usageMissing(failure);
    },
  };
}

function createDecoder(encoding: string): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | undefined {
  // Lenient flushing: a stream cut short still yields what was decoded so far.
  const options = { finishFlush: zlib.constants.Z_SYNC_FLUSH };
  switch (encoding) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip(options);
    case 'deflate':
      return zlib.createInflate(options);
    case 'br':
      return zlib.createBrotliDecompress({ finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH });
    default:
      return undefined;
  }
}
