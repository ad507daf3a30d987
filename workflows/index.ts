// Entry point of the workflow bundle: every workflow the worker runs is exported here.
export * from './maintenance.ts';
export * from './probe.ts';
export * from './remote-session.ts';
