/**
 * The context pack as a document: a short header saying what it answers and what was left
 * out, then the pack exactly as the server assembled it. "Copy" copies only the pack, since
 * that is what gets pasted into a prompt; the header is for the reader. No `vscode` import.
 */

import type { FindResult } from './protocol';
import { shortCommit } from './evidence';

export const CONTEXT_SCHEME = 'code-evidence-context';

export const RULE = '─'.repeat(72);

/** A tab title that names the query; characters a path cannot hold are replaced. */
export function contextPackPath(query: string, serial: number): string {
  const words = query
    .replace(/[\\/:*?"<>|#%\r\n\t]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const short = words.length > 40 ? `${words.slice(0, 39)}…` : words;
  return `/${serial}/Context Pack${short ? ` — ${short}` : ''}.txt`;
}

export function renderContextPack(result: FindResult): string {
  const { context } = result;
  const lines = ['Code Evidence context pack', `Query:      ${result.query}`];
  const at = shortCommit(result.commit);
  if (at || result.branch) {
    const state = result.indexState && result.indexState !== 'ready' ? ` (index ${result.indexState})` : '';
    lines.push(`Commit:     ${result.branch ? `${result.branch}@` : ''}${at}${state}`);
  }
  lines.push(`Tokens:     ${context.tokens} / ${context.budget}`);
  const verdict = result.insufficient
    ? `  — insufficient: ${result.insufficient_reason ?? 'weak evidence'}`
    : '';
  lines.push(`Confidence: ${result.confidence.toFixed(2)}${verdict}`);
  if (context.dropped.length > 0) {
    lines.push(`Dropped:    ${context.dropped.length} (did not fit the budget or was cut)`);
    for (const d of context.dropped.slice(0, 20)) {
      lines.push(`            ${d.path}:${d.start}-${d.end}  ${d.reason}`);
    }
    if (context.dropped.length > 20) lines.push(`            … ${context.dropped.length - 20} more`);
  }
  for (const note of result.notes ?? []) lines.push(`Note:       ${note}`);
  lines.push(RULE, '');
  const body = context.text.trim() === '' ? '(the pack is empty: no evidence fit)' : context.text;
  return `${lines.join('\n')}\n${body}${body.endsWith('\n') ? '' : '\n'}`;
}
