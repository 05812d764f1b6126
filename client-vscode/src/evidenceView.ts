/**
 * The Evidence view's model: the last answers, grouped question → folder (in a multi-root
 * workspace) → file → chunk, and a "related code" section that follows the cursor's symbol.
 *
 * Each node says what the tree shows (label, description, tooltip, icon, whether it expands,
 * the context value inline actions key on) and where a click goes. No `vscode` import: the
 * unit tests build the tree from real server answers in plain Node, and evidenceTree.ts only
 * wraps the nodes in `vscode.TreeItem`s.
 */

import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { evidenceLocation, formatScore, kindIcon, shortCommit, type EvidenceLocation } from './evidence';
import type { Evidence, FindParams, FindResult } from './protocol';

/** The view (in the explorer) and its item commands, as package.json contributes them. */
export const VIEW_ID = 'codeEvidence.evidence';
export const ViewCommands = {
  copyContextPack: 'codeEvidence.evidence.copyContextPack',
  askDeep: 'codeEvidence.evidence.askDeep',
  explain: 'codeEvidence.evidence.explain',
  remove: 'codeEvidence.evidence.remove',
  clear: 'codeEvidence.evidence.clear',
} as const;

/** How many answers the view keeps; the oldest goes first. */
export const MAX_ANSWERS = 20;

export interface Answer {
  id: number;
  params: FindParams;
  result: FindResult;
}

export type EvidenceNode =
  | { kind: 'related'; symbol: string; result: FindResult | undefined; message?: string }
  | { kind: 'answer'; answer: Answer }
  | { kind: 'verdict'; answerId: number; text: string }
  | { kind: 'folder'; answerId: number; folder: string; results: Evidence[]; workspace: string }
  | { kind: 'file'; answerId: number; file: string; results: Evidence[]; workspace: string }
  | { kind: 'chunk'; answerId: number; evidence: Evidence; location: EvidenceLocation };

export interface NodeView {
  id: string;
  label: string;
  description?: string;
  tooltip?: string;
  /** A codicon name. */
  icon?: string;
  collapsible: 'none' | 'collapsed' | 'expanded';
  /** `viewItem` in package.json menus: inline actions appear on answers. */
  contextValue?: string;
  /** Where a click goes (chunks). */
  location?: EvidenceLocation;
}

export const CONTEXT_ANSWER = 'codeEvidence.answer';
export const CONTEXT_CHUNK = 'codeEvidence.chunk';

/** The folder a result is from: the server's `workspaceFolder` when it sent one. */
export function folderOf(e: Evidence, result: FindResult): string {
  return e.workspaceFolder ?? folderUriOf(result.workspace);
}

function folderUriOf(workspace: string): string {
  return workspace.startsWith('file:') ? workspace : pathToFileURL(workspace).toString();
}

/** A folder URI's last path segment, as the explorer names it. */
export function folderName(uri: string): string {
  try {
    return path.basename(fileURLToPath(uri)) || uri;
  } catch {
    return uri;
  }
}

/** `results` grouped by key, groups in the order their best (first) result appears. */
function groupBy<T>(items: T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

export class EvidenceModel {
  private answers: Answer[] = [];
  private nextId = 1;
  private related: { symbol: string; result: FindResult | undefined; message?: string } | undefined;

  /** Newest first. */
  list(): readonly Answer[] {
    return this.answers;
  }

  add(params: FindParams, result: FindResult): Answer {
    const answer = { id: this.nextId++, params, result };
    this.answers = [answer, ...this.answers].slice(0, MAX_ANSWERS);
    return answer;
  }

  get(id: number): Answer | undefined {
    return this.answers.find((a) => a.id === id);
  }

  remove(id: number): void {
    this.answers = this.answers.filter((a) => a.id !== id);
  }

  clear(): void {
    this.answers = [];
  }

  /** What the related section shows: the symbol at the cursor and a quick find for it
   * (`undefined` result: not asked yet or failed, with `message` saying why). */
  setRelated(symbol: string | undefined, result?: FindResult, message?: string): void {
    this.related = symbol ? { symbol, result, message } : undefined;
  }

  /** The params to ask an answer again, deep (the cross-encoder scores more, no time limit). */
  deepParams(id: number): FindParams | undefined {
    const a = this.get(id);
    return a ? { ...a.params, depth: 'deep' } : undefined;
  }

  roots(): EvidenceNode[] {
    const out: EvidenceNode[] = [];
    if (this.related) out.push({ kind: 'related', ...this.related });
    for (const answer of this.answers) out.push({ kind: 'answer', answer });
    return out;
  }

  children(node: EvidenceNode | undefined): EvidenceNode[] {
    if (node === undefined) return this.roots();
    switch (node.kind) {
      case 'related':
        return node.result ? fileNodes(0, node.result.results, node.result.workspace) : [];
      case 'answer':
        return answerChildren(node.answer);
      case 'folder':
        return fileNodes(node.answerId, node.results, node.workspace);
      case 'file':
        return node.results.map((e) => ({
          kind: 'chunk',
          answerId: node.answerId,
          evidence: e,
          location: evidenceLocation(e, node.workspace),
        }));
      default:
        return [];
    }
  }
}

function answerChildren(answer: Answer): EvidenceNode[] {
  const { result, id } = answer;
  const out: EvidenceNode[] = [];
  if (result.insufficient || result.results.length === 0) {
    const why = result.insufficient_reason ?? 'nothing in the index matches the query';
    out.push({ kind: 'verdict', answerId: id, text: `Insufficient evidence: ${why}` });
  }
  const byFolder = groupBy(result.results, (e) => folderOf(e, result));
  if (byFolder.size > 1) {
    for (const [folder, results] of byFolder) {
      const workspace = fileURLToPathSafe(folder) ?? result.workspace;
      out.push({ kind: 'folder', answerId: id, folder, results, workspace });
    }
    return out;
  }
  return [...out, ...fileNodes(id, result.results, result.workspace)];
}

function fileURLToPathSafe(uri: string): string | undefined {
  try {
    return fileURLToPath(uri);
  } catch {
    return undefined;
  }
}

function fileNodes(answerId: number, results: Evidence[], workspace: string): EvidenceNode[] {
  return [...groupBy(results, (e) => e.path)].map(([file, rs]) => ({
    kind: 'file',
    answerId,
    file,
    results: rs,
    workspace,
  }));
}

function lines(e: Evidence): string {
  return e.start === e.end ? `L${e.start}` : `L${e.start}–${e.end}`;
}

/** What the tree shows for a node. `id`s are unique in the tree (a chunk may be in several
 * answers) and stable per answer, so expansion survives a refresh. */
export function present(node: EvidenceNode): NodeView {
  switch (node.kind) {
    case 'related': {
      const n = node.result?.results.length ?? 0;
      return {
        id: `related:${node.symbol}`,
        label: `Related to ${node.symbol}`,
        description: node.result ? `${n} result${n === 1 ? '' : 's'}` : (node.message ?? 'searching…'),
        tooltip: 'Code related to the symbol at the cursor (a quick find: no cross-encoder)',
        icon: 'references',
        collapsible: n > 0 ? 'expanded' : 'none',
      };
    }
    case 'answer': {
      const r = node.answer.result;
      const verdict = r.insufficient ? 'insufficient' : `confidence ${r.confidence.toFixed(2)}`;
      const n = r.results.length;
      const at = shortCommit(r.commit);
      const depth = node.answer.params.depth === 'deep' ? ' · deep' : '';
      return {
        id: `answer:${node.answer.id}`,
        label: r.query,
        description: `${verdict} · ${n} result${n === 1 ? '' : 's'}${depth}`,
        tooltip: [
          r.query,
          `confidence ${r.confidence.toFixed(2)} (0–1: how close the best result is to the question)`,
          r.insufficient ? `insufficient evidence: ${r.insufficient_reason ?? ''}` : '',
          `context pack: ${r.context.tokens}/${r.context.budget} tokens, ${r.context.dropped.length} near misses left out`,
          at ? `index at ${r.branch ? `${r.branch}@` : ''}${at}` : '',
          ...(r.notes ?? []),
        ]
          .filter(Boolean)
          .join('\n'),
        icon: r.insufficient ? 'warning' : 'search',
        collapsible: 'expanded',
        contextValue: CONTEXT_ANSWER,
      };
    }
    case 'verdict':
      return {
        id: `verdict:${node.answerId}`,
        label: node.text,
        icon: 'warning',
        collapsible: 'none',
      };
    case 'folder': {
      const n = node.results.length;
      return {
        id: `folder:${node.answerId}:${node.folder}`,
        label: folderName(node.folder),
        description: `${n} result${n === 1 ? '' : 's'}`,
        tooltip: node.workspace,
        icon: 'root-folder',
        collapsible: 'expanded',
      };
    }
    case 'file': {
      const n = node.results.length;
      return {
        id: `file:${node.answerId}:${node.workspace}:${node.file}`,
        label: node.file,
        description: `${n} chunk${n === 1 ? '' : 's'} · best ${formatScore(node.results[0].score)}`,
        tooltip: path.join(node.workspace, node.file),
        icon: 'file-code',
        collapsible: 'expanded',
      };
    }
    case 'chunk': {
      const e = node.evidence;
      return {
        id: `chunk:${node.answerId}:${node.location.uri}:${e.start}-${e.end}:${e.symbol}`,
        label: e.symbol || lines(e),
        description: `${lines(e)} · ${formatScore(e.score)}${e.reasons.length ? ` · ${e.reasons.join(', ')}` : ''}`,
        tooltip: `${e.path}:${e.start}-${e.end}${opensAt(e)}\nscore ${formatScore(e.score)}\nwhy: ${e.reasons.join(', ') || e.kind}`,
        icon: kindIcon(e.kind),
        collapsible: 'none',
        contextValue: CONTEXT_CHUNK,
        location: node.location,
      };
    }
  }
}

/** ", opens at line N" when a result opens past its first line (`Evidence.line`). */
function opensAt(e: Evidence): string {
  return e.line !== undefined && e.line !== e.start ? `, opens at line ${e.line}` : '';
}

/** The explain lines of `codeEvidence/explain` as a markdown document. */
export function explainDocument(query: string, lines: readonly string[]): string {
  return [`# Why these results: ${query}`, '', '```text', ...lines, '```', ''].join('\n');
}
