// CSV cells for every export (audit logs, analytics, compliance reports): one rule, per the OWASP
// "CSV Injection" guidance.
//
// - A cell that a spreadsheet would read as a formula (first character = + - @, TAB or CR, or their
//   full-width forms, which some spreadsheets also accept) gets a leading apostrophe: shown as text.
// - A cell holding a separator of ANY locale (`,` or `;`), a double quote, CR or LF is quoted and its
//   quotes doubled (RFC 4180): a `;` in a cell cannot start a new (formula) cell when the file is
//   opened with `;` as the separator.

const FORMULA_START = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;
const NEEDS_QUOTES = /[",;\r\n]/;

export function csvCell(v: unknown): string {
  let s = v == null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  if (FORMULA_START.test(s)) s = `'${s}`;
  return NEEDS_QUOTES.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** One CSV line (no terminator) of `values`, each through csvCell. */
export function csvLine(values: readonly unknown[]): string {
  return values.map(csvCell).join(',');
}
