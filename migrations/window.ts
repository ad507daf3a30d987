// The compatibility window, derived in one place from each revision's kind (document 2 "Versioning"
// 4-5, expand/contract). For every revision r, floor(r) is the oldest application revision (the head of
// a build) that can serve a database at r:
//   - the first revision is its own floor;
//   - an expand revision keeps the floor of the revision before it (older builds ignore what it adds);
//   - a contract revision moves the floor to the revision before it (that build no longer uses what
//     it drops or renames; anything older might).
// The runner records floor(r) with each applied revision, so a build that does not know r can still
// tell whether it may serve the database: it may when floor(r) is a revision it knows.
import type { Migration } from './migration.ts';

export function compatibilityFloors(migrations: readonly Migration[]): Map<string, string> {
  const floors = new Map<string, string>();
  let floor = migrations[0]?.id;
  migrations.forEach((m, i) => {
    if (i === 0) floor = m.id;
    else if ((m.kind ?? 'contract') === 'contract') floor = migrations[i - 1]!.id;
    floors.set(m.id, floor!);
  });
  return floors;
}

/** The oldest application revision that can serve a database at the last revision of `migrations`. */
export function minCompatible(migrations: readonly Migration[]): string {
  const last = migrations.at(-1);
  if (!last) throw new Error('no migrations');
  return compatibilityFloors(migrations).get(last.id)!;
}
