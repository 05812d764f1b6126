/**
 * The status-bar text, from what the server says: `codeEvidence/status` notifications (one
 * per workspace folder), the `$/progress` of an indexing pass, and whether the process is up.
 *
 * A state machine without `vscode`, so the text for every combination is unit-tested; the
 * status-bar item just renders `view()`.
 */

import type {
  WorkDoneProgressBegin,
  WorkDoneProgressEnd,
  WorkDoneProgressReport,
} from 'vscode-languageserver-protocol';

import { shortCommit } from './evidence';
import type { IndexStatus } from './protocol';

export type ServerState = 'starting' | 'running' | 'stopped' | 'missing' | 'crashed';

export type ProgressValue = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

export interface StatusView {
  text: string;
  tooltip: string;
  /** Drives the item's colour: errors and warnings get the theme's background. */
  severity: 'normal' | 'warning' | 'error';
}

interface ActiveProgress {
  title: string;
  message?: string;
  percentage?: number;
  cancellable: boolean;
}

/** Which folder state the single status-bar item shows when folders differ: the one that
 * needs attention first. */
const STATE_RANK: Record<IndexStatus['state'], number> = { error: 3, indexing: 2, partial: 1, ready: 0 };

const NAME = 'Evidence';

export class StatusModel {
  private server: ServerState = 'starting';
  private serverMessage: string | undefined;
  private readonly statuses = new Map<string, IndexStatus>();
  private readonly progress = new Map<string, ActiveProgress>();

  setServerState(state: ServerState, message?: string): void {
    this.server = state;
    this.serverMessage = message;
    if (state !== 'running') this.progress.clear();
    if (state === 'starting') this.statuses.clear();
  }

  onStatus(status: IndexStatus): void {
    if (!status || typeof status.state !== 'string') return;
    this.statuses.set(status.workspace ?? '', status);
    // Every folder settled means any pass is over, even if its `end` got lost.
    if ([...this.statuses.values()].every((s) => s.state !== 'indexing')) this.progress.clear();
  }

  onProgress(token: string | number, value: ProgressValue): void {
    const key = String(token);
    if (value.kind === 'end') {
      this.progress.delete(key);
      return;
    }
    const prev = this.progress.get(key);
    if (value.kind === 'begin') {
      this.progress.set(key, {
        title: value.title,
        message: value.message,
        percentage: clampPct(value.percentage),
        cancellable: value.cancellable ?? false,
      });
      return;
    }
    if (!prev) return; // a report for a token we never saw begin
    const pct = clampPct(value.percentage);
    this.progress.set(key, {
      ...prev,
      message: value.message ?? prev.message,
      // Percentages only rise in LSP; a lower one is a late message, not a restart.
      percentage: pct === undefined ? prev.percentage : Math.max(prev.percentage ?? 0, pct),
      cancellable: value.cancellable ?? prev.cancellable,
    });
  }

  /** Tokens of running passes the user may cancel (for the status view's Cancel button). */
  cancellableTokens(): string[] {
    return [...this.progress.entries()].filter(([, p]) => p.cancellable).map(([k]) => k);
  }

  /** The folder status the item shows: the one that needs attention first. */
  private headline(): IndexStatus | undefined {
    let best: IndexStatus | undefined;
    for (const s of this.statuses.values()) {
      if (!best || (STATE_RANK[s.state] ?? 0) > (STATE_RANK[best.state] ?? 0)) best = s;
    }
    return best;
  }

  view(): StatusView {
    switch (this.server) {
      case 'starting':
        return {
          text: `$(sync~spin) ${NAME}: starting`,
          tooltip: 'The Code Evidence server is starting',
          severity: 'normal',
        };
      case 'missing':
        return {
          text: `$(error) ${NAME}: no server`,
          tooltip: this.serverMessage ?? 'The Code Evidence server was not found.',
          severity: 'error',
        };
      case 'crashed':
        return {
          text: `$(error) ${NAME}: stopped`,
          tooltip:
            this.serverMessage ?? 'The Code Evidence server stopped. Run "Code Evidence: Restart Server".',
          severity: 'error',
        };
      case 'stopped':
        return {
          text: `$(circle-slash) ${NAME}: off`,
          tooltip: this.serverMessage ?? 'The Code Evidence server is not running',
          severity: 'normal',
        };
      case 'running':
        break;
    }
    const tooltip = [...this.tooltipLines(), '', 'Click for the index status'].join('\n');
    const active = [...this.progress.values()].at(-1);
    if (active) {
      const pct = active.percentage === undefined ? '' : ` ${Math.floor(active.percentage)}%`;
      return { text: `$(sync~spin) ${NAME}: indexing${pct}`, tooltip, severity: 'normal' };
    }
    const s = this.headline();
    if (!s) return { text: `$(sync~spin) ${NAME}: starting`, tooltip, severity: 'normal' };
    const at = shortCommit(s.commit);
    const commit = at ? `${at}${s.dirty ? '*' : ''}` : '';
    switch (s.state) {
      case 'indexing':
        return { text: `$(sync~spin) ${NAME}: indexing`, tooltip, severity: 'normal' };
      case 'partial':
        return {
          text: `$(telescope) ${NAME}: partial${commit ? ` ${commit}` : ''}`,
          tooltip,
          severity: 'warning',
        };
      case 'error':
        return { text: `$(error) ${NAME}: error`, tooltip, severity: 'error' };
      default:
        return { text: `$(telescope) ${NAME}: ${commit || 'ready'}`, tooltip, severity: 'normal' };
    }
  }

  /** The same facts, longer: the tooltip and the "Show Index Status" message. */
  tooltipLines(): string[] {
    const lines: string[] = [];
    const active = [...this.progress.values()].at(-1);
    if (active) {
      const pct = active.percentage === undefined ? '' : ` ${Math.floor(active.percentage)}%`;
      lines.push(`${active.title}${pct}${active.message ? ` — ${active.message}` : ''}`);
    }
    const all = [...this.statuses.values()];
    if (all.length === 0 && !active) lines.push('Waiting for the first index status…');
    for (const s of all) {
      if (all.length > 1) lines.push(`— ${folderName(s.workspace)} —`);
      lines.push(...statusLines(s));
    }
    return lines;
  }
}

function clampPct(p: number | undefined): number | undefined {
  if (typeof p !== 'number' || !Number.isFinite(p)) return undefined;
  return Math.min(100, Math.max(0, p));
}

/** The last path segment of a folder URI, decoded. */
export function folderName(uri: string | undefined): string {
  if (!uri) return 'workspace';
  const last = uri.replace(/\/+$/, '').split('/').at(-1) ?? uri;
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

const STATE_WORDS: Record<IndexStatus['state'], string> = {
  ready: 'Ready',
  partial: 'Partial: keyword search works, vectors are still being computed',
  indexing: 'Indexing',
  error: 'Error',
};

const n = (v: number | null | undefined): string => (typeof v === 'number' ? String(v) : '?');

/** One folder's index status, one fact a line. */
export function statusLines(s: IndexStatus): string[] {
  const lines = [`State: ${STATE_WORDS[s.state] ?? s.state}`];
  if (s.commit || s.branch) {
    const dirty = s.dirty ? ' (uncommitted changes)' : '';
    lines.push(`Commit: ${s.branch ? `${s.branch} @ ` : ''}${shortCommit(s.commit) || 'none'}${dirty}`);
  } else if (s.state !== 'error') {
    lines.push('Commit: not a git repository');
  }
  if (s.files !== null || s.chunks !== null) lines.push(`Files: ${n(s.files)} · Chunks: ${n(s.chunks)}`);
  const total = s.vectorsTotal ?? 0;
  const done = s.vectorsDone ?? 0;
  if (total > 0 || done > 0) {
    const pct = total > 0 ? ` (${Math.floor((100 * done) / total)}%)` : '';
    lines.push(`Vectors: ${done} / ${total}${pct}`);
  }
  if ((s.pendingFiles ?? 0) > 0) lines.push(`Pending files: ${s.pendingFiles}`);
  if (s.message) lines.push(s.message);
  return lines;
}
