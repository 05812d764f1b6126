/** The Evidence view's model: question → folder → file → chunk, the verdict, the inline
 * actions' inputs and the related section (fixtures here; a real server answer in
 * test/integration/server.test.ts). */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  CONTEXT_ANSWER,
  EvidenceModel,
  MAX_ANSWERS,
  explainDocument,
  present,
  type EvidenceNode,
} from '../../src/evidenceView';
import { evidence, findResult } from './fixtures';

const labels = (model: EvidenceModel, node?: EvidenceNode) =>
  model.children(node).map((n) => present(n).label);

describe('Evidence view model', () => {
  it('groups an answer by file, best file first, with score, lines and reason tags', () => {
    const model = new EvidenceModel();
    const result = findResult({
      results: [
        evidence(),
        evidence({ path: 'src/tax.py', symbol: 'tax', start: 3, end: 3, score: 0.5, reasons: ['bm25'] }),
        evidence({ symbol: 'Invoice.add', start: 40, end: 44, score: 0.4, reasons: [] }),
      ],
    });
    model.add({ query: result.query }, result);
    const [answer] = model.children(undefined);
    const view = present(answer);
    assert.equal(view.label, result.query);
    assert.equal(view.description, 'confidence 0.73 · 3 results');
    assert.equal(view.contextValue, CONTEXT_ANSWER);
    assert.match(view.tooltip ?? '', /1 near misses left out/);
    assert.deepEqual(labels(model, answer), ['src/billing.py', 'src/tax.py']);
    const [billing] = model.children(answer);
    assert.equal(present(billing).description, '2 chunks · best 0.877');
    const chunks = model.children(billing).map(present);
    assert.deepEqual(
      chunks.map((c) => [c.label, c.description]),
      [
        ['Invoice.total', 'L12–30 · 0.877 · exact-identifier, open-file-import'],
        ['Invoice.add', 'L40–44 · 0.400'],
      ],
    );
    assert.deepEqual(chunks[0].location?.range.start, { line: 11, character: 0 });
    assert.equal(chunks[0].icon, 'symbol-method');
  });

  it('shows the insufficient verdict first', () => {
    const model = new EvidenceModel();
    model.add(
      { query: 'q' },
      findResult({ insufficient: true, insufficient_reason: 'weak evidence: no result stands out' }),
    );
    const [answer] = model.children(undefined);
    assert.match(present(answer).description ?? '', /^insufficient · 2 results/);
    const [verdict] = model.children(answer);
    assert.equal(present(verdict).label, 'Insufficient evidence: weak evidence: no result stands out');
    const empty = new EvidenceModel();
    empty.add({ query: 'q' }, findResult({ results: [] }));
    const [e] = empty.children(undefined);
    assert.deepEqual(labels(empty, e), ['Insufficient evidence: nothing in the index matches the query']);
  });

  it('groups by workspace folder when the answer spans several', () => {
    const model = new EvidenceModel();
    const shop = 'file:///work/shop';
    const ledger = 'file:///work/ledger';
    model.add(
      { query: 'q' },
      findResult({
        results: [
          evidence({ workspaceFolder: ledger, path: 'ledger.py', uri: 'file:///work/ledger/ledger.py' }),
          evidence({ workspaceFolder: shop }),
          evidence({ workspaceFolder: ledger, path: 'post.py', uri: 'file:///work/ledger/post.py' }),
        ],
        workspaceFolders: [shop, ledger],
      }),
    );
    const [answer] = model.children(undefined);
    const folders = model.children(answer);
    assert.deepEqual(
      folders.map((f) => present(f).label),
      ['ledger', 'shop'],
    );
    assert.deepEqual(labels(model, folders[0]), ['ledger.py', 'post.py']);
    assert.equal(present(folders[0]).description, '2 results');
  });

  it('keeps the newest answers first, at most MAX_ANSWERS; remove, clear and ask deep', () => {
    const model = new EvidenceModel();
    for (let i = 0; i < MAX_ANSWERS + 3; i++) model.add({ query: `q${i}` }, findResult({ query: `q${i}` }));
    const roots = model.children(undefined);
    assert.equal(roots.length, MAX_ANSWERS);
    assert.equal(present(roots[0]).label, `q${MAX_ANSWERS + 2}`);
    const newest = model.list()[0];
    assert.deepEqual(model.deepParams(newest.id), { query: newest.params.query, depth: 'deep' });
    model.remove(newest.id);
    assert.equal(model.list().length, MAX_ANSWERS - 1);
    model.clear();
    assert.deepEqual(model.children(undefined), []);
  });

  it('puts the related section, following the cursor symbol, above the answers', () => {
    const model = new EvidenceModel();
    model.add({ query: 'q' }, findResult());
    model.setRelated('compute_total', undefined, 'the server is still starting');
    let [related] = model.children(undefined);
    assert.equal(present(related).label, 'Related to compute_total');
    assert.equal(present(related).description, 'the server is still starting');
    model.setRelated('compute_total', findResult());
    [related] = model.children(undefined);
    assert.equal(present(related).collapsible, 'expanded');
    assert.deepEqual(labels(model, related), ['src/billing.py', 'README.md']);
    model.setRelated(undefined);
    assert.equal(model.children(undefined)[0].kind, 'answer');
  });

  it('gives every node a unique id, also when two answers hold the same chunk', () => {
    const model = new EvidenceModel();
    model.add({ query: 'a' }, findResult());
    model.add({ query: 'b' }, findResult());
    model.setRelated('total', findResult());
    const ids: string[] = [];
    const walk = (node?: EvidenceNode): void => {
      for (const child of model.children(node)) {
        ids.push(present(child).id);
        walk(child);
      }
    };
    walk();
    assert.equal(ids.length, 3 + 2 * (2 + 2) + 2 + 2); // roots, files and chunks
    assert.equal(new Set(ids).size, ids.length);
  });

  it('renders explain lines as a document', () => {
    assert.equal(
      explainDocument('q', ['1. a.py:1-2 bm25 #1']),
      '# Why these results: q\n\n```text\n1. a.py:1-2 bm25 #1\n```\n',
    );
  });
});
