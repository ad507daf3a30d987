// A LIKE pattern that matches `text` literally anywhere (wildcards escaped; use with ESCAPE '\').
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
