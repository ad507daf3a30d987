// Autonomous development, pure rules: one import for the API and services. Temporal workflow code
// should import the specific files it needs (states.ts, transitions.ts, errors.ts, limits.ts), which
// import nothing but each other; create-input.ts brings zod and access.ts the role rules.
export * from './access.ts';
export * from './create-input.ts';
export * from './errors.ts';
export * from './limits.ts';
export * from './milestones.ts';
export * from './session-lines.ts';
export * from './states.ts';
export * from './transitions.ts';
