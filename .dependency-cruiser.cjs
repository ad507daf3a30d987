// The layers' import rules (README "Layout"), checked by `npm run lint` (dependency-cruiser).
// Each folder may import only the layers below it; a violation names the rule it breaks.
//
//   domain/      pure rules, no I/O                  -> nothing of ours but domain/
//   config/      the settings schema and loader      -> domain/
//   db/          schema, client, repositories (SQL)  -> domain/, config/
//   migrations/  versioned migrations and runner     -> db/, domain/, config/
//   services/    I/O shared by the API and workers   -> db/, domain/, config/, agent/ (its shared
//                (logger, audit, Temporal client...)    modules), workflows' contracts (names, types)
//   workflows/   deterministic Temporal code         -> domain/, activities (their types: the
//                                                       Temporal bundler refuses Node I/O in a workflow)
//   activities/  side effects invoked by workflows   -> services/ and below, workflows' contracts
//   api/         Express app and routes              -> services/ and below
//   agent/       ships alone to users' machines      -> its own code only
//   bin/         entry points (wiring only)          -> anything but test/ and bench/
const BELOW_SERVICES = 'activities|api|bin|web|test|bench';
/** A workflow's contract (names and argument types) may be used by whoever starts or signals it. */
const WORKFLOW_CONTRACT = '^workflows/[a-z-]+/contract[.]ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      comment:
        'domain/ holds pure rules: it imports nothing of ours outside domain/ (move I/O to services/).',
      severity: 'error',
      from: { path: '^domain/' },
      to: { path: '^(config|db|migrations|services|workflows|activities|api|agent|bin|web|test|bench)/' },
    },
    {
      name: 'config-at-the-bottom',
      comment: 'config/ is read by every layer, so it imports only domain/.',
      severity: 'error',
      from: { path: '^config/' },
      to: { path: '^(db|migrations|services|workflows|activities|api|agent|bin|web|test|bench)/' },
    },
    {
      name: 'db-below-services',
      comment: 'db/ (schema, repositories) imports only domain/ and config/.',
      severity: 'error',
      from: { path: '^db/' },
      to: { path: '^(migrations|services|workflows|activities|api|agent|bin|web|test|bench)/' },
    },
    {
      name: 'migrations-below-services',
      comment: 'migrations/ import only db/, domain/ and config/.',
      severity: 'error',
      from: { path: '^migrations/' },
      to: { path: '^(services|workflows|activities|api|agent|bin|web|test|bench)/' },
    },
    {
      name: 'services-below-api',
      comment:
        'services/ is shared by the API and the workers: it must not import api/, activities/ or bin/ ' +
        '(move what both need into services/).',
      severity: 'error',
      from: { path: '^services/' },
      to: { path: `^(${BELOW_SERVICES})/` },
    },
    {
      name: 'services-use-workflow-contracts-only',
      comment: "services/ may use a workflow's contract (its names and types), not its code.",
      severity: 'error',
      from: { path: '^services/' },
      to: { path: '^workflows/', pathNot: WORKFLOW_CONTRACT },
    },
    {
      name: 'workflows-are-deterministic',
      comment: 'workflows/ import domain/, other workflows and activity types; never I/O layers.',
      severity: 'error',
      from: { path: '^workflows/' },
      to: { path: '^(config|db|migrations|services|api|agent|bin|web|test|bench)/' },
    },
    {
      name: 'activities-below-api',
      comment: 'activities/ run in the worker: they must not import api/ or bin/ (use services/).',
      severity: 'error',
      from: { path: '^activities/' },
      to: { path: '^(api|bin|web|test|bench)/' },
    },
    {
      name: 'activities-use-workflow-contracts-only',
      comment: "activities/ may use a workflow's contract (its names and types), not its code.",
      severity: 'error',
      from: { path: '^activities/' },
      to: { path: '^workflows/', pathNot: WORKFLOW_CONTRACT },
    },
    {
      name: 'api-below-bin',
      comment: 'api/ is wired by bin/; it does not import entry points, tests or benchmarks.',
      severity: 'error',
      from: { path: '^api/' },
      to: { path: '^(bin|web|test|bench)/' },
    },
    {
      name: 'agent-ships-alone',
      comment: "agent/ is installed alone on users' machines: it imports only its own files.",
      severity: 'error',
      from: { path: '^agent/' },
      to: { path: '^(domain|config|db|migrations|services|workflows|activities|api|bin|web|test|bench)/' },
    },
    {
      name: 'no-import-circles',
      comment: 'Modules that import each other (even through others) cannot be read or tested alone.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    // swc parses TypeScript for dependency-cruiser (our TypeScript 7 has no JS compiler API).
    parser: 'swc',
    tsPreCompilationDeps: false,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|data|web)/' },
  },
};
