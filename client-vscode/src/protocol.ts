/**
 * The Code Evidence LSP extensions, as the server (`code-evidence serve`) speaks them.
 *
 * This file is the single place the client spells method names and field names, so a protocol
 * change shows up as a type error everywhere it matters. It imports only the protocol
 * libraries (never `vscode`), so the unit and integration tests can use it from plain Node.
 *
 * docs/lsp-extensions.md is the reference; tests/test_client_protocol.py fails when this file
 * and that page disagree (methods, commands, fields, the values of each union).
 */

import {
  NotificationType,
  RequestType,
  type Location,
  type Position,
  type Range,
} from 'vscode-languageserver-protocol';

/** How far the index is: BM25 is there before vectors, so `partial` answers are still useful. */
export type IndexState = 'indexing' | 'partial' | 'ready';

/** `auto` (the default): the server classifies the question itself. */
export type Intent = 'auto' | 'find-file' | 'explain' | 'fix-failure' | 'verify';

/** How much the rerank stage may spend: `quick` never runs the cross-encoder, `interactive`
 * (the default) scores a few candidates inside a time budget, `deep` more, with no limit. */
export type Depth = 'quick' | 'interactive' | 'deep';

export interface FindParams {
  query: string;
  /** The open document: its path, imports and the symbol under `position` become features. */
  textDocument?: { uri: string };
  position?: Position;
  limit?: number;
  budgetTokens?: number;
  intent?: Intent;
  /** A git revision: answer from the code as it was at that commit. */
  asOf?: string;
  depth?: Depth;
  /** Without `textDocument`: search this workspace folder (URI) only; else every folder. */
  workspaceFolder?: string;
}

/** One ranked piece of evidence. `start`/`end` are 1-based inclusive lines (the CLI's shape);
 * `uri`/`range` are the same place in LSP terms (0-based, end exclusive). `line` is where it
 * opens (the line holding the question, a trace frame's line); `selectionRange` is that line
 * in LSP terms. */
export interface Evidence {
  path: string;
  start: number;
  end: number;
  symbol: string;
  kind: string;
  language: string;
  score: number;
  reasons: string[];
  text: string;
  scores?: Record<string, number>;
  line?: number;
  uri?: string;
  range?: Range;
  selectionRange?: Range;
  /** The workspace folder (URI) the result is from. */
  workspaceFolder?: string;
}

export interface Dropped {
  path: string;
  start: number;
  end: number;
  reason: string;
}

export interface ContextPack {
  text: string;
  tokens: number;
  budget: number;
  dropped: Dropped[];
}

export interface StageTiming {
  candidates: number;
  ms: number;
}

export interface FindResult {
  query: string;
  workspace: string;
  commit: string | null;
  branch: string | null;
  results: Evidence[];
  context: ContextPack;
  confidence: number;
  insufficient: boolean;
  insufficient_reason: string | null;
  trace?: Record<string, StageTiming>;
  intent?: string;
  /** `read-only`: another process holds the index's writer lock; the answer is from the index
   * as it was. */
  index_mode?: 'read-write' | 'read-only';
  notes?: string[];
  /** A Chinese question's English rendering (what the models read); null otherwise. */
  rendering?: string | null;
  indexState?: IndexState;
  /** The workspace folders searched (URIs): several when a find named no document. */
  workspaceFolders?: string[];
}

/** `codeEvidence/explain`: the answer plus one line per result saying why it ranked there. */
export interface ExplainResult extends FindResult {
  explain: string[];
}

/** What `codeEvidence/status` carries and what `codeEvidence.status` returns, one per workspace
 * folder. Counts are null when the folder's index could not be opened (`state: "error"`). */
export interface IndexStatus {
  /** The workspace folder's URI. */
  workspace?: string;
  state: IndexState | 'error';
  commit: string | null;
  branch: string | null;
  dirty: boolean | null;
  indexedCommit?: string | null;
  indexedAt?: string | null;
  files: number | null;
  chunks: number | null;
  vectorsDone: number | null;
  vectorsTotal: number | null;
  pendingFiles: number | null;
  message?: string | null;
  /** The last index pass's report (server/code_evidence/schema.py `IndexReport`). */
  lastPass?: Record<string, unknown> | null;
}

/** The server's `codeEvidence` settings section (initializationOptions and
 * workspace/didChangeConfiguration). */
export interface ServerSettings {
  /** null: the workspace's own configuration (.code-evidence.toml, else the engine default). */
  budgetTokens: number | null;
  /** null: the workspace's own configuration. */
  limit: number | null;
  rerank: RerankMode;
  exclude: string[];
}

export type RerankMode = 'auto' | 'on' | 'off';

/** The range of `budgetTokens`: `[context] budget_tokens` in server/code_evidence/config.py.
 * package.json declares the same (tests/test_client_protocol.py checks both). */
export const BUDGET_TOKENS_MIN = 0;
export const BUDGET_TOKENS_MAX = 100_000;

/** Arguments of the `codeEvidence.showRelated` command a resolved code lens carries. */
export type ShowRelatedArgs = [uri: string, position: Position, locations: Location[]];

export const SETTINGS_SECTION = 'codeEvidence';

export const FindRequest = new RequestType<FindParams, FindResult, void>('codeEvidence/find');
export const ExplainRequest = new RequestType<FindParams, ExplainResult, void>('codeEvidence/explain');
export const StatusNotification = new NotificationType<IndexStatus>('codeEvidence/status');

/** Commands the server implements (workspace/executeCommand). */
export const ServerCommands = {
  find: 'codeEvidence.find',
  reindex: 'codeEvidence.reindex',
  status: 'codeEvidence.status',
} as const;

/** Commands the client implements; the server puts `showRelated` into code lenses. */
export const ClientCommands = {
  showRelated: 'codeEvidence.showRelated',
  findEvidence: 'codeEvidence.findEvidence',
  findSelection: 'codeEvidence.findSelection',
  showContextPack: 'codeEvidence.showContextPack',
  copyContextPack: 'codeEvidence.copyContextPack',
  reindexWorkspace: 'codeEvidence.reindexWorkspace',
  showIndexStatus: 'codeEvidence.showIndexStatus',
  restartServer: 'codeEvidence.restartServer',
} as const;
