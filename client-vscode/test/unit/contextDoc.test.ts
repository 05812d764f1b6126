import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { RULE, contextPackPath, renderContextPack } from '../../src/contextDoc';
import { findResult } from './fixtures';

describe('context pack document', () => {
  it('heads the pack with query, commit, tokens, confidence and what was dropped', () => {
    const text = renderContextPack(findResult());
    const [head, body] = text.split(`${RULE}\n\n`);
    assert.match(head, /^Code Evidence context pack\n/);
    assert.match(head, /Query: {6}where is the invoice total computed/);
    assert.match(head, /Commit: {5}main@0123456\n/);
    assert.match(head, /Tokens: {5}31 \/ 2000/);
    assert.match(head, /Confidence: 0\.73\n/);
    assert.match(head, /src\/tax\.py:1-80 {2}budget/);
    // The body is the pack exactly as the server assembled it.
    assert.equal(body, findResult().context.text);
  });

  it('says when the evidence is insufficient, the index partial, or the pack empty', () => {
    const text = renderContextPack(
      findResult({
        insufficient: true,
        insufficient_reason: 'weak match',
        indexState: 'partial',
        context: { text: '', tokens: 0, budget: 2000, dropped: [] },
      }),
    );
    assert.match(text, /insufficient: weak match/);
    assert.match(text, /\(index partial\)/);
    assert.match(text, /\(the pack is empty: no evidence fit\)/);
    assert.doesNotMatch(text, /Dropped/);
  });

  it('makes a tab title from the query with path-hostile characters removed', () => {
    assert.equal(contextPackPath('why does a/b:c fail?', 3), '/3/Context Pack — why does a b c fail.txt');
    assert.equal(contextPackPath('', 1), '/1/Context Pack.txt');
    assert.ok(contextPackPath('x'.repeat(100), 2).length < 70);
  });
});
