// The one reading of `Authorization: Bearer <token>` for the API's credentials (login sessions, agent
// tokens, upload tokens, OTLP exporters): scheme in any case, one token without whitespace, trailing
// whitespace allowed. Linear: `\s` and `\S` cannot overlap. (The model proxy reads its header with
// plain string work on its hot path: api/routes/remote/llm-proxy.ts.)
const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The token of an `Authorization: Bearer` header value, or undefined. */
export const bearerTokenOf = (authorization: string | undefined): string | undefined =>
  authorization ? BEARER.exec(authorization)?.[1] : undefined;
