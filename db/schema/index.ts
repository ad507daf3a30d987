// The whole relational schema, one definition for both dialects (see columns.ts).
export * from './autonomous.ts';
export * from './autonomous-activity.ts';
export * from './collectors.ts';
export * from './compliance.ts';
export * from './forge.ts';
export * from './gateway-keys.ts';
export * from './governance.ts';
export * from './identity.ts';
export * from './orgsync.ts';
export * from './otel.ts';
export * from './proxy.ts';
export * from './remote.ts';
export * from './terminal-relay.ts';
export * from './upload-tokens.ts';
export * from './usage.ts';
