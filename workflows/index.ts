// Entry point of the workflow bundle: every workflow the worker runs is exported here.
export * from './alerts/webhook.ts';
export { autonomousQuotaResumeWorkflow } from './autonomous/quota-resume.ts';
export * from './autonomous/workflow.ts';
export * from './maintenance.ts';
export * from './orgsync/sync.ts';
export * from './probe.ts';
export * from './remote-session.ts';
export * from './usage/collect.ts';
export * from './usage/collect-schedule.ts';
export * from './usage/quota-enforcement.ts';
export * from './usage/summary-refresh.ts';
