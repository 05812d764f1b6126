/**
 * Evidence → what the editor shows: QuickPick rows, locations and links.
 *
 * Pure functions over the protocol types (no `vscode` import), so they are unit-tested in plain
 * Node; the VS Code glue only wraps their output in `vscode.*` classes.
 */

import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

import type { Location, Position, Range } from 'vscode-languageserver-protocol';

import type { Evidence, FindResult, ShowRelatedArgs } from './protocol';

export interface EvidenceLocation {
  uri: string;
  /** The whole result: what the editor highlights. */
  range: Range;
  /** The line it opens at (inside `range`): where the cursor goes and what is revealed. */
  selection: Range;
}

/** The result's own LSP `uri`/`range`/`selectionRange` when the server sent them; otherwise
 * built from the 1-based inclusive lines (`line` where it opens) and the workspace path (older
 * servers, or the CLI's JSON). A server without `line` opens at the result's first line. */
export function evidenceLocation(e: Evidence, workspace: string): EvidenceLocation {
  const range = isRange(e.range) ? e.range : lineRange(e.start || 1, e.end || e.start || 1);
  const selection = isRange(e.selectionRange)
    ? e.selectionRange
    : lineRange(openLine(e, range), openLine(e, range));
  if (e.uri) return { uri: e.uri, range, selection };
  const file = path.isAbsolute(e.path) ? e.path : path.join(workspace, e.path);
  return { uri: pathToFileURL(file).toString(), range, selection };
}

/** 1-based inclusive lines as an LSP range over them whole (0-based, end exclusive). */
function lineRange(first: number, last: number): Range {
  const start = Math.max(0, first - 1);
  const end = Math.max(start + 1, last);
  return { start: { line: start, character: 0 }, end: { line: end, character: 0 } };
}

/** The 1-based line a result opens at: its `line` when that lies in the range, else the
 * range's first line. */
function openLine(e: Evidence, range: Range): number {
  const first = range.start.line + 1;
  const line = e.line ?? first;
  return Number.isInteger(line) && line >= first && line <= Math.max(first, range.end.line) ? line : first;
}

const KIND_ICONS: Record<string, string> = {
  function: 'symbol-function',
  method: 'symbol-method',
  class: 'symbol-class',
  interface: 'symbol-interface',
  struct: 'symbol-struct',
  enum: 'symbol-enum',
  module: 'symbol-module',
  variable: 'symbol-variable',
  constant: 'symbol-constant',
  window: 'file-text',
};

export function kindIcon(kind: string): string {
  return KIND_ICONS[kind] ?? 'symbol-misc';
}

export interface EvidenceItem {
  /** `$(icon) symbol — path:line` */
  label: string;
  /** The score, and the language. */
  description: string;
  /** The code of the line it opens at, then the reason tags. */
  detail: string;
  evidence: Evidence;
  location: EvidenceLocation;
}

/** `symbol — path:line`; chunks without a symbol (line windows, top-level code) show the path
 * and the line span instead, because an empty symbol would leave a bare dash. */
export function evidenceLabel(e: Evidence): string {
  const where = `${e.path}:${e.start}`;
  const icon = `$(${kindIcon(e.kind)}) `;
  if (e.symbol) return `${icon}${e.symbol} — ${where}`;
  return `${icon}${where}–${e.end}`;
}

export function formatScore(score: number): string {
  return Number.isFinite(score) ? score.toFixed(3) : '—';
}

export function evidenceItems(result: FindResult): EvidenceItem[] {
  return result.results.map((e) => {
    const location = evidenceLocation(e, result.workspace);
    const why = e.reasons.length ? e.reasons.join(' · ') : e.kind;
    const code = openingCode(e, location);
    return {
      label: evidenceLabel(e),
      description: `${formatScore(e.score)}${e.language ? ` · ${e.language}` : ''}`,
      detail: code ? `${code}  —  ${why}` : why,
      evidence: e,
      location,
    };
  });
}

/** The code on the line a result opens at, trimmed and cut to `limit` characters ('' when the
 * text does not reach it): what the row shows first, as a search result list does. */
export function openingCode(e: Evidence, loc: EvidenceLocation, limit = 120): string {
  const line = (e.text ?? '').split('\n')[loc.selection.start.line + 1 - (e.start || 1)] ?? '';
  const code = line.trim();
  return code.length > limit ? `${code.slice(0, limit - 1)}…` : code;
}

export function shortCommit(commit: string | null | undefined): string {
  return commit ? commit.slice(0, 7) : '';
}

/** One line above the list: what was asked, how sure the answer is, and at which commit. */
export function resultTitle(result: FindResult): string {
  const parts = [`Evidence: ${result.query}`];
  parts.push(`confidence ${result.confidence.toFixed(2)}`);
  const at = shortCommit(result.commit);
  if (at) parts.push(result.branch ? `${result.branch}@${at}` : at);
  if (result.indexState && result.indexState !== 'ready') parts.push(`index ${result.indexState}`);
  return parts.join(' · ');
}

/** Shown instead of (or above) the rows when the engine says the answer is not enough. */
export function insufficientNote(result: FindResult): string | undefined {
  if (!result.insufficient && result.results.length > 0) return undefined;
  return result.insufficient_reason ?? 'nothing in the index matches the query';
}

/** A `command:` link for trusted markdown: the arguments travel as URI-encoded JSON. */
export function commandLink(command: string, args: unknown[]): string {
  return `command:${command}?${encodeURIComponent(JSON.stringify(args))}`;
}

/** A file link VS Code opens at a line: `file:///x.py#L12,5` (1-based line and column). */
export function fileLink(uri: string, position?: Position): string {
  const base = uri.split('#')[0];
  if (!position) return base;
  return `${base}#L${position.line + 1},${position.character + 1}`;
}

/** A markdown link `[path:line](link)` to one result, at the line it opens at. */
export function evidenceMarkdownLink(e: Evidence, workspace: string): string {
  const loc = evidenceLocation(e, workspace);
  const text = `${e.path}:${loc.selection.start.line + 1}`.replace(/[[\]]/g, '\\$&');
  return `[${text}](${fileLink(loc.uri, loc.selection.start)})`;
}

function isPosition(v: unknown): v is Position {
  const p = v as Position;
  return (
    typeof p === 'object' &&
    p !== null &&
    Number.isInteger(p.line) &&
    Number.isInteger(p.character) &&
    p.line >= 0 &&
    p.character >= 0
  );
}

function isRange(v: unknown): v is Range {
  const r = v as Range;
  return typeof r === 'object' && r !== null && isPosition(r.start) && isPosition(r.end);
}

function isLocation(v: unknown): v is Location {
  const l = v as Location;
  return typeof l === 'object' && l !== null && typeof l.uri === 'string' && isRange(l.range);
}

/**
 * Checks the `codeEvidence.showRelated` arguments a code lens (or a hover link) carries.
 * Throws with a message naming what is wrong, because a silent no-op on a click is worse.
 */
export function parseShowRelatedArgs(args: unknown[]): ShowRelatedArgs {
  const [uri, position, locations] = args;
  if (typeof uri !== 'string' || uri === '') {
    throw new Error('codeEvidence.showRelated: argument 1 must be a document URI string');
  }
  if (!isPosition(position)) {
    throw new Error('codeEvidence.showRelated: argument 2 must be a position {line, character}');
  }
  if (!Array.isArray(locations) || !locations.every(isLocation)) {
    throw new Error('codeEvidence.showRelated: argument 3 must be an array of LSP Locations');
  }
  return [uri, position, locations];
}
