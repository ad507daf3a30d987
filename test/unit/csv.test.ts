// CSV cells of every export (domain/csv.ts) per the OWASP CSV-injection guidance: formula-looking cells
// get a leading apostrophe, and a cell with a separator of either locale (`,` or `;`), a quote or a
// line break is quoted.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { csvCell, csvLine } from '../../domain/csv.ts';

describe('csvCell', () => {
  it('neutralises cells that start like a formula', () => {
    for (const start of ['=', '+', '-', '@', '\t', '\uFF1D'])
      assert.equal(csvCell(`${start}1+1`), `'${start}1+1`, JSON.stringify(start));
    assert.equal(csvCell('\r=1'), `"'\r=1"`);
    assert.equal(csvCell('a=1'), 'a=1');
  });

  it('quotes cells with `;` (a separator in many locales), `,`, quotes and line breaks', () => {
    assert.equal(csvCell('x;=HYPERLINK("http://evil")'), '"x;=HYPERLINK(""http://evil"")"');
    assert.equal(csvCell('a,b'), '"a,b"');
    assert.equal(csvCell('say "hi"'), '"say ""hi"""');
    assert.equal(csvCell('two\nlines'), '"two\nlines"');
    assert.equal(csvCell('=a;b'), `"'=a;b"`);
    assert.equal(csvCell('plain'), 'plain');
  });

  it('writes null as empty, objects as JSON, and joins a line', () => {
    assert.equal(csvCell(null), '');
    assert.equal(csvCell(undefined), '');
    assert.equal(csvCell(7), '7');
    assert.equal(csvLine(['a', null, { k: 1 }, 'b;c']), 'a,,"{""k"":1}","b;c"');
  });
});
