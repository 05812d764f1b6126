/** codeEvidence.autoStart: when the extension starts the indexer by itself (trust, git, size,
 * the setting, the remembered answer), the tracked-file count it decides on, and the
 * once-per-failure notification rule. */

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import {
  AUTO_START_MAX_FILES,
  decideStart,
  readAutoStart,
  shouldNotify,
  trackedFileCount,
  type ActivationInput,
} from '../../src/activation';

const repo = (name: string, trackedFiles: number | null) => ({ name, trackedFiles });
const base: ActivationInput = {
  autoStart: 'trusted',
  trusted: true,
  folders: [repo('shop', 120)],
  remembered: undefined,
};

describe('autoStart decision', () => {
  it('trusted (the default): a trusted git workspace under the size limit starts', () => {
    assert.equal(decideStart(base).action, 'start');
    const at = { ...base, folders: [repo('a', AUTO_START_MAX_FILES - 1), repo('b', 1)] };
    assert.equal(decideStart(at).action, 'start');
  });

  it('trusted: an untrusted workspace never starts, whatever its size', () => {
    const d = decideStart({ ...base, trusted: false, remembered: 'start' });
    assert.equal(d.action, 'wait');
    assert.match(d.reason, /not trusted/);
    assert.match(d.reason, /Restart Server/);
  });

  it('trusted: a folder that is not a git repository does not start', () => {
    const d = decideStart({ ...base, folders: [repo('shop', 10), repo('Downloads', null)] });
    assert.equal(d.action, 'wait');
    assert.match(d.reason, /Downloads is not a git repository/);
  });

  it('trusted: above the size limit asks, once; the answer is remembered', () => {
    const big = { ...base, folders: [repo('a', AUTO_START_MAX_FILES), repo('b', 1)] };
    const asked = decideStart(big);
    assert.equal(asked.action, 'ask');
    assert.match(asked.reason, /2,001 tracked files \(more than 2,000\)/);
    assert.equal(decideStart({ ...big, remembered: 'start' }).action, 'start');
    assert.equal(decideStart({ ...big, remembered: 'skip' }).action, 'wait');
  });

  it('always starts anywhere; never never does; no folder waits', () => {
    const plain = { ...base, trusted: false, folders: [repo('x', null)] };
    assert.equal(decideStart({ ...plain, autoStart: 'always' }).action, 'start');
    assert.equal(decideStart({ ...base, autoStart: 'never', remembered: 'start' }).action, 'wait');
    assert.equal(decideStart({ ...base, folders: [] }).action, 'wait');
  });

  it('reads the setting from the user only: a workspace cannot switch indexing on', () => {
    assert.equal(readAutoStart(undefined), 'trusted');
    assert.equal(readAutoStart({ defaultValue: 'trusted' }), 'trusted');
    assert.equal(readAutoStart({ defaultValue: 'trusted', globalValue: 'never' }), 'never');
    const hostile = { defaultValue: 'never', workspaceValue: 'always', workspaceFolderValue: 'always' };
    assert.equal(readAutoStart(hostile), 'never');
    assert.equal(readAutoStart({ defaultValue: 'trusted', globalValue: 'sometimes' }), 'trusted');
  });
});

function git(cwd: string, ...args: string[]): void {
  const r = spawnSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@e', ...args], {
    cwd,
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
}

describe('tracked file count (read from .git/index, no git process)', () => {
  it('counts the files a repository tracks, and says null for a plain folder', () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ce-act-'));
    try {
      const ws = path.join(tmp, 'ws');
      fs.mkdirSync(path.join(ws, 'src'), { recursive: true });
      assert.equal(trackedFileCount(ws), null);
      git(ws, 'init', '-q');
      assert.equal(trackedFileCount(ws), 0); // a repository with nothing staged yet
      for (let i = 0; i < 7; i++) fs.writeFileSync(path.join(ws, 'src', `m${i}.py`), `x = ${i}\n`);
      fs.writeFileSync(path.join(ws, 'untracked.txt'), 'not added\n');
      git(ws, 'add', 'src');
      git(ws, 'commit', '-qm', 'seven');
      assert.equal(trackedFileCount(ws), 7);
      // A linked worktree: .git is a file naming the real git folder.
      const wt = path.join(tmp, 'wt');
      git(ws, 'worktree', 'add', '-q', wt);
      assert.ok(fs.statSync(path.join(wt, '.git')).isFile());
      assert.equal(trackedFileCount(wt), 7);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe('failure notifications', () => {
  it('notify once per distinct failure, not on every start', () => {
    const f = 'missing: code-evidence serve';
    assert.equal(shouldNotify(undefined, f), true);
    assert.equal(shouldNotify(f, f), false);
    assert.equal(shouldNotify(f, 'missing: /usr/bin/python3 -m code_evidence.cli serve'), true);
  });
});
