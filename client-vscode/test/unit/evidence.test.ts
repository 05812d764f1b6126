import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';

import {
  commandLink,
  evidenceItems,
  evidenceLabel,
  evidenceLocation,
  evidenceMarkdownLink,
  fileLink,
  insufficientNote,
  parseShowRelatedArgs,
  resultTitle,
} from '../../src/evidence';
import { evidence, findResult } from './fixtures';

describe('result → QuickPick items', () => {
  it('labels rows "symbol — path:line" with a kind icon, score as description, reasons as detail', () => {
    const [first, window] = evidenceItems(findResult());
    assert.equal(first.label, '$(symbol-method) Invoice.total — src/billing.py:12');
    assert.equal(first.description, '0.877 · python');
    assert.equal(first.detail, 'def total(self):  —  exact-identifier · open-file-import');
    assert.deepEqual(first.location, {
      uri: 'file:///work/shop/src/billing.py',
      range: { start: { line: 11, character: 0 }, end: { line: 30, character: 0 } },
      selection: { start: { line: 11, character: 0 }, end: { line: 12, character: 0 } },
    });
    // No symbol: the span instead of an empty "— path"; no reasons: the kind.
    assert.equal(window.label, '$(file-text) README.md:1–20');
    assert.equal(window.detail, 'window'); // its text does not reach the line it opens at
    // The line it opens at comes first; with no text there, the reasons alone.
    const [atLine] = evidenceItems(
      findResult({ results: [evidence({ line: 13, selectionRange: undefined })] }),
    );
    assert.equal(atLine.detail, 'return sum(self.items)  —  exact-identifier · open-file-import');
    const [blank] = evidenceItems(findResult({ results: [evidence({ text: '' })] }));
    assert.equal(blank.detail, 'exact-identifier · open-file-import');
  });

  it('keeps the server order and one row per result', () => {
    const r = findResult({
      results: [evidence({ symbol: 'b', score: 0.1 }), evidence({ symbol: 'a', score: 0.9 })],
    });
    assert.deepEqual(
      evidenceItems(r).map((i) => i.evidence.symbol),
      ['b', 'a'],
    );
  });

  it('unknown kinds get a generic icon and a non-finite score does not print NaN', () => {
    const label = evidenceLabel(evidence({ kind: 'macro', symbol: 'm' }));
    assert.ok(label.startsWith('$(symbol-misc) m — '));
    const [item] = evidenceItems(findResult({ results: [evidence({ score: Number.NaN })] }));
    assert.equal(item.description, '— · python');
  });

  it('titles the list with confidence, branch@short-commit and a non-ready index state', () => {
    assert.equal(
      resultTitle(findResult()),
      'Evidence: where is the invoice total computed · confidence 0.73 · main@0123456',
    );
    assert.equal(
      resultTitle(findResult({ commit: null, branch: null, indexState: 'partial' })),
      'Evidence: where is the invoice total computed · confidence 0.73 · index partial',
    );
  });

  it('says why when the evidence is insufficient or empty', () => {
    assert.equal(insufficientNote(findResult()), undefined);
    assert.equal(
      insufficientNote(findResult({ insufficient: true, insufficient_reason: "no result contains 'E1234'" })),
      "no result contains 'E1234'",
    );
    assert.equal(insufficientNote(findResult({ results: [] })), 'nothing in the index matches the query');
  });
});

describe('locations and links', () => {
  it('builds the LSP location from 1-based inclusive lines when the server sent no uri/range', () => {
    const e = evidence({ uri: undefined, range: undefined, path: 'pkg/a b.py', start: 3, end: 5 });
    const loc = evidenceLocation(e, '/repo');
    assert.equal(loc.uri, pathToFileURL('/repo/pkg/a b.py').toString());
    assert.equal(loc.uri, 'file:///repo/pkg/a%20b.py');
    assert.deepEqual(loc.range, { start: { line: 2, character: 0 }, end: { line: 5, character: 0 } });
  });

  it('opens at the line the server says: its selectionRange, else its line, else the start', () => {
    const line = { start: { line: 19, character: 0 }, end: { line: 20, character: 0 } };
    const sent = evidenceLocation(evidence({ line: 20, selectionRange: line }), '/repo');
    assert.deepEqual(sent.selection, line);
    assert.deepEqual(sent.range.start, { line: 11, character: 0 }); // the whole result stays
    // The CLI's JSON: 1-based lines only.
    const cli = evidenceLocation(evidence({ uri: undefined, range: undefined, line: 20 }), '/repo');
    assert.deepEqual(cli.selection, line);
    // A line outside the result (or none, from an older server) opens at its first line.
    for (const odd of [undefined, 99, 3, 1.5]) {
      const loc = evidenceLocation(evidence({ line: odd }), '/repo');
      assert.deepEqual(loc.selection.start, { line: 11, character: 0 });
    }
    assert.equal(
      evidenceMarkdownLink(evidence({ line: 20, selectionRange: line }), '/r'),
      '[src/billing.py:20](file:///work/shop/src/billing.py#L20,1)',
    );
  });

  it('never builds an empty or inverted range from odd line numbers', () => {
    const loc = evidenceLocation(evidence({ uri: undefined, range: undefined, start: 0, end: 0 }), '/repo');
    assert.deepEqual(loc.range, { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } });
  });

  it('file links carry a 1-based #Lline,col fragment that replaces any old one', () => {
    assert.equal(fileLink('file:///a.py', { line: 0, character: 4 }), 'file:///a.py#L1,5');
    assert.equal(fileLink('file:///a.py#L9', { line: 41, character: 0 }), 'file:///a.py#L42,1');
    assert.equal(fileLink('file:///a.py'), 'file:///a.py');
  });

  it('command links encode the arguments as JSON that round-trips', () => {
    const args = [
      'file:///a.py',
      { line: 1, character: 2 },
      [
        {
          uri: 'file:///b.py?x=1&y',
          range: { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } },
        },
      ],
    ];
    const link = commandLink('codeEvidence.showRelated', args);
    assert.match(link, /^command:codeEvidence\.showRelated\?/);
    assert.ok(!link.slice('command:'.length).includes(' '));
    assert.deepEqual(JSON.parse(decodeURIComponent(link.split('?').slice(1).join('?'))), args);
  });

  it('markdown links name path:line and escape brackets in the text', () => {
    const e = evidence({
      path: 'a[1].py',
      start: 7,
      uri: 'file:///r/a%5B1%5D.py',
      range: { start: { line: 6, character: 0 }, end: { line: 8, character: 0 } },
    });
    assert.equal(evidenceMarkdownLink(e, '/r'), '[a\\[1\\].py:7](file:///r/a%5B1%5D.py#L7,1)');
  });
});

describe('codeEvidence.showRelated arguments', () => {
  const loc = {
    uri: 'file:///b.py',
    range: { start: { line: 3, character: 0 }, end: { line: 4, character: 2 } },
  };

  it('accepts [uri, position, locations] as the server sends them', () => {
    const parsed = parseShowRelatedArgs(['file:///a.py', { line: 1, character: 2 }, [loc]]);
    assert.deepEqual(parsed, ['file:///a.py', { line: 1, character: 2 }, [loc]]);
    assert.deepEqual(parseShowRelatedArgs(['file:///a.py', { line: 0, character: 0 }, []])[2], []);
  });

  it('rejects malformed arguments with a message naming the bad one', () => {
    assert.throws(() => parseShowRelatedArgs([]), /argument 1/);
    assert.throws(() => parseShowRelatedArgs(['file:///a.py', { line: -1, character: 0 }, []]), /argument 2/);
    assert.throws(
      () => parseShowRelatedArgs(['file:///a.py', { line: 1.5, character: 0 }, []]),
      /argument 2/,
    );
    assert.throws(
      () => parseShowRelatedArgs(['file:///a.py', { line: 1, character: 0 }, [{ uri: 'x' }]]),
      /argument 3/,
    );
    assert.throws(
      () => parseShowRelatedArgs(['file:///a.py', { line: 1, character: 0 }, 'nope']),
      /argument 3/,
    );
  });
});
