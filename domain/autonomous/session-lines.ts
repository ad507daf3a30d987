// The four stable session lines of every autonomous workflow (spec document 2, "Session lines"). Pure.
//   main          planning, plan convergence, development, PR fixes, final summary, CI repair
//   review        plan review and PR code review
//   test          verification of each development round
//   verification  post-merge acceptance check
export const SESSION_LINE_NAMES = ['main', 'review', 'test', 'verification'] as const;
export type SessionLineName = (typeof SESSION_LINE_NAMES)[number];

export const isSessionLineName = (v: unknown): v is SessionLineName =>
  typeof v === 'string' && (SESSION_LINE_NAMES as readonly string[]).includes(v);
