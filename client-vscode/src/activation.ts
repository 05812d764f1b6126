/**
 * Whether the extension starts the server by itself when a window opens (`codeEvidence.autoStart`).
 *
 * Starting it means a Python process that indexes every file of every folder, and embedding
 * keeps a CPU busy for minutes on a large repository, so nothing starts without a reason:
 * `trusted` (the default) starts only in a trusted workspace whose folders are git repositories
 * of at most AUTO_START_MAX_FILES tracked files, and asks once above that. The setting is read
 * from the user's own settings only: a repository's `.vscode/settings.json` cannot switch
 * indexing on (package.json gives it `application` scope too).
 *
 * No `vscode` import: the decision is unit-tested in plain Node, and the extension only feeds
 * it what VS Code knows (trust, folders, the remembered answer).
 */

import * as fs from 'node:fs';
import * as path from 'node:path';

export type AutoStart = 'always' | 'trusted' | 'never';
export const AUTO_START_MODES: readonly AutoStart[] = ['always', 'trusted', 'never'];
export const AUTO_START_DEFAULT: AutoStart = 'trusted';

/**
 * Above this many tracked files `trusted` asks before the first index. From the measured
 * rates of docs/performance.md (Django: 6,650 files → 50,275 chunks, ≈ 7.6 chunks a file;
 * 3,823 chunks/s until BM25 answers, ≈ 40 chunks/s embedding on 2 cores): 2,000 files is
 * about 15,000 chunks, BM25 answers after ≈ 4 s and every vector is there after ≈ 6 minutes of
 * background CPU. Past that the first index costs tens of minutes of a core, which a user
 * should agree to.
 */
export const AUTO_START_MAX_FILES = 2000;

/** What `WorkspaceConfiguration.inspect` returns, the parts that matter here. */
export interface Inspected<T> {
  defaultValue?: T;
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

/** The user's own value (else the default); a workspace's or folder's value is ignored. */
export function readAutoStart(inspected: Inspected<unknown> | undefined): AutoStart {
  const value = inspected?.globalValue ?? inspected?.defaultValue;
  return AUTO_START_MODES.includes(value as AutoStart) ? (value as AutoStart) : AUTO_START_DEFAULT;
}

export interface FolderFacts {
  name: string;
  /** Tracked files in its git index; null when the folder is not a git repository. */
  trackedFiles: number | null;
}

/** The user's earlier answer to the size question for this workspace. */
export type Remembered = 'start' | 'skip' | undefined;

export interface ActivationInput {
  autoStart: AutoStart;
  trusted: boolean;
  folders: FolderFacts[];
  remembered: Remembered;
  maxFiles?: number;
}

export interface Decision {
  action: 'start' | 'ask' | 'wait';
  /** For the status bar and the output channel: why (and, when waiting, how to start). */
  reason: string;
}

const HOW_TO_START = 'Run "Code Evidence: Restart Server" to start it.';

export function decideStart(input: ActivationInput): Decision {
  const max = input.maxFiles ?? AUTO_START_MAX_FILES;
  if (input.folders.length === 0) {
    return { action: 'wait', reason: 'Open a folder to index it with Code Evidence.' };
  }
  if (input.autoStart === 'never') {
    return { action: 'wait', reason: `codeEvidence.autoStart is "never". ${HOW_TO_START}` };
  }
  if (input.autoStart === 'always') {
    return { action: 'start', reason: 'codeEvidence.autoStart is "always"' };
  }
  if (!input.trusted) {
    return {
      action: 'wait',
      reason: `Not started: the workspace is not trusted (codeEvidence.autoStart is "trusted"). ${HOW_TO_START}`,
    };
  }
  const plain = input.folders.filter((f) => f.trackedFiles === null).map((f) => f.name);
  if (plain.length > 0) {
    return {
      action: 'wait',
      reason: `Not started: ${plain.join(', ')} ${plain.length === 1 ? 'is' : 'are'} not a git repository (codeEvidence.autoStart is "trusted"). ${HOW_TO_START}`,
    };
  }
  const files = input.folders.reduce((n, f) => n + (f.trackedFiles ?? 0), 0);
  if (files <= max) {
    return { action: 'start', reason: `a trusted git workspace of ${files} tracked files` };
  }
  if (input.remembered === 'start') {
    return { action: 'start', reason: `${files} tracked files; you chose to index this workspace` };
  }
  if (input.remembered === 'skip') {
    return {
      action: 'wait',
      reason: `Not started: ${files} tracked files, and you chose not to index this workspace. ${HOW_TO_START}`,
    };
  }
  return { action: 'ask', reason: sizeQuestion(files, max) };
}

export function sizeQuestion(files: number, max: number): string {
  return (
    `Code Evidence: this workspace has ${files.toLocaleString('en-US')} tracked files (more ` +
    `than ${max.toLocaleString('en-US')}). Its first index keeps a CPU core busy for a while ` +
    `(embedding runs at about 40 chunks a second on 2 cores). Index it now?`
  );
}

/**
 * The number of entries in a git repository's index (its tracked files), read from the
 * header of `.git/index` ("DIRC", version, entry count): no git process runs, so no
 * configuration inside the repository can run a program. null: not a git work tree.
 * A repository without an index yet (no commit, nothing staged) has 0.
 */
export function trackedFileCount(folder: string): number | null {
  const dotGit = path.join(folder, '.git');
  let gitDir: string;
  try {
    const st = fs.statSync(dotGit);
    if (st.isDirectory()) gitDir = dotGit;
    else {
      // A worktree or submodule: ".git" is a file saying "gitdir: <path>".
      const m = /^gitdir:\s*(.+?)\s*$/m.exec(fs.readFileSync(dotGit, 'utf8').slice(0, 4096));
      if (!m) return null;
      gitDir = path.resolve(folder, m[1]);
    }
  } catch {
    return null;
  }
  let fd: number | undefined;
  try {
    fd = fs.openSync(path.join(gitDir, 'index'), 'r');
    const header = Buffer.alloc(12);
    if (fs.readSync(fd, header, 0, 12, 0) < 12 || header.toString('latin1', 0, 4) !== 'DIRC') return 0;
    return header.readUInt32BE(8);
  } catch {
    return fs.existsSync(path.join(gitDir, 'HEAD')) ? 0 : null;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * Whether a server failure deserves a notification: once per distinct failure (the launch
 * command and what went wrong), not again on every window or restart while it persists.
 * `lastShown` is what the extension remembered from the previous notification.
 */
export function shouldNotify(lastShown: string | undefined, failure: string): boolean {
  return lastShown !== failure;
}
