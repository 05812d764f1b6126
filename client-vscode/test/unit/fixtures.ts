/** A FindResult as the server sends it (shape of server/code_evidence/schema.py + LSP fields). */

import type { Evidence, FindResult } from '../../src/protocol';

export function evidence(over: Partial<Evidence> = {}): Evidence {
  return {
    path: 'src/billing.py',
    start: 12,
    end: 30,
    symbol: 'Invoice.total',
    kind: 'method',
    language: 'python',
    score: 0.87654,
    reasons: ['exact-identifier', 'open-file-import'],
    text: 'def total(self):\n    return sum(self.items)\n',
    scores: { bm25: 1, fused: 0.03 },
    uri: 'file:///work/shop/src/billing.py',
    range: { start: { line: 11, character: 0 }, end: { line: 30, character: 0 } },
    ...over,
  };
}

export function findResult(over: Partial<FindResult> = {}): FindResult {
  return {
    query: 'where is the invoice total computed',
    workspace: '/work/shop',
    commit: '0123456789abcdef0123456789abcdef01234567',
    branch: 'main',
    results: [
      evidence(),
      evidence({
        path: 'README.md',
        start: 1,
        end: 20,
        symbol: '',
        kind: 'window',
        language: 'text',
        score: 0.25,
        reasons: [],
      }),
    ],
    context: {
      text: '# src/billing.py:12-30  Invoice.total\ndef total(self):\n    return sum(self.items)\n',
      tokens: 31,
      budget: 2000,
      dropped: [{ path: 'src/tax.py', start: 1, end: 80, reason: 'budget' }],
    },
    confidence: 0.7312,
    insufficient: false,
    insufficient_reason: null,
    trace: { bm25: { candidates: 40, ms: 1.2 } },
    notes: [],
    indexState: 'ready',
    ...over,
  };
}
