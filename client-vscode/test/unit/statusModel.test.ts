import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { IndexStatus } from '../../src/protocol';
import { StatusModel, statusLines } from '../../src/statusModel';

function status(over: Partial<IndexStatus> = {}): IndexStatus {
  return {
    state: 'ready',
    commit: 'abcdef0123456789',
    branch: 'main',
    dirty: false,
    files: 12,
    chunks: 80,
    vectorsDone: 80,
    vectorsTotal: 80,
    pendingFiles: 0,
    message: null,
    ...over,
  };
}

function running(): StatusModel {
  const m = new StatusModel();
  m.setServerState('running');
  return m;
}

describe('status bar text', () => {
  it('shows starting until the server runs and reports', () => {
    const m = new StatusModel();
    assert.equal(m.view().text, '$(sync~spin) Evidence: starting');
    m.setServerState('running');
    assert.equal(m.view().text, '$(sync~spin) Evidence: starting');
    assert.match(m.view().tooltip, /Waiting for the first index status/);
  });

  it('ready shows the short commit, with * when the tree is dirty', () => {
    const m = running();
    m.onStatus(status());
    assert.equal(m.view().text, '$(telescope) Evidence: abcdef0');
    assert.equal(m.view().severity, 'normal');
    m.onStatus(status({ dirty: true }));
    assert.equal(m.view().text, '$(telescope) Evidence: abcdef0*');
    m.onStatus(status({ commit: null, branch: null }));
    assert.equal(m.view().text, '$(telescope) Evidence: ready');
  });

  it('partial is a warning and says what is missing in the tooltip', () => {
    const m = running();
    m.onStatus(status({ state: 'partial', vectorsDone: 30, vectorsTotal: 120 }));
    const v = m.view();
    assert.equal(v.text, '$(telescope) Evidence: partial abcdef0');
    assert.equal(v.severity, 'warning');
    assert.match(v.tooltip, /Vectors: 30 \/ 120 \(25%\)/);
  });

  it('indexing shows the $/progress percentage, rising only, and clears on end', () => {
    const m = running();
    m.onStatus(status({ state: 'indexing' }));
    assert.equal(m.view().text, '$(sync~spin) Evidence: indexing');
    m.onProgress('tok', { kind: 'begin', title: 'Indexing', percentage: 0, cancellable: true });
    assert.equal(m.view().text, '$(sync~spin) Evidence: indexing 0%');
    m.onProgress('tok', { kind: 'report', percentage: 42.7, message: 'embedding 120/300' });
    assert.equal(m.view().text, '$(sync~spin) Evidence: indexing 42%');
    assert.match(m.view().tooltip, /Indexing 42% — embedding 120\/300/);
    m.onProgress('tok', { kind: 'report', percentage: 10 });
    assert.equal(m.view().text, '$(sync~spin) Evidence: indexing 42%');
    assert.deepEqual(m.cancellableTokens(), ['tok']);
    m.onProgress('tok', { kind: 'end' });
    m.onStatus(status());
    assert.equal(m.view().text, '$(telescope) Evidence: abcdef0');
    assert.deepEqual(m.cancellableTokens(), []);
  });

  it('ignores reports for tokens that never began, and clamps percentages', () => {
    const m = running();
    m.onStatus(status());
    m.onProgress(7, { kind: 'report', percentage: 50 });
    assert.equal(m.view().text, '$(telescope) Evidence: abcdef0');
    m.onProgress(7, { kind: 'begin', title: 'Indexing', percentage: 250 });
    assert.equal(m.view().text, '$(sync~spin) Evidence: indexing 100%');
  });

  it('a ready status ends a pass whose end notification was lost', () => {
    const m = running();
    m.onProgress('t', { kind: 'begin', title: 'Indexing', percentage: 90 });
    m.onStatus(status());
    assert.equal(m.view().text, '$(telescope) Evidence: abcdef0');
  });

  it('server problems are errors whose tooltip is the fix', () => {
    const m = new StatusModel();
    m.setServerState('missing', 'Install code-evidence or set codeEvidence.serverPath');
    assert.equal(m.view().text, '$(error) Evidence: no server');
    assert.equal(m.view().severity, 'error');
    assert.equal(m.view().tooltip, 'Install code-evidence or set codeEvidence.serverPath');
    m.setServerState('crashed');
    assert.equal(m.view().text, '$(error) Evidence: stopped');
    m.onStatus(status({ state: 'error', message: 'disk full' }));
    m.setServerState('running');
    assert.equal(m.view().text, '$(error) Evidence: error');
    assert.match(m.view().tooltip, /disk full/);
  });
});

describe('status lines', () => {
  it('one fact a line, naming the branch, commit, counts and pending files', () => {
    assert.deepEqual(statusLines(status({ dirty: true, pendingFiles: 3, message: 'watching 1 folder' })), [
      'State: Ready',
      'Commit: main @ abcdef0 (uncommitted changes)',
      'Files: 12 · Chunks: 80',
      'Vectors: 80 / 80 (100%)',
      'Pending files: 3',
      'watching 1 folder',
    ]);
    assert.equal(statusLines(status({ commit: null, branch: null }))[1], 'Commit: not a git repository');
  });
});

describe('several workspace folders', () => {
  it('shows the folder that needs attention and lists each folder in the tooltip', () => {
    const m = running();
    m.onStatus(status({ workspace: 'file:///w/api' }));
    m.onStatus(
      status({
        workspace: 'file:///w/web%20app',
        state: 'partial',
        commit: 'fedcba9876',
        vectorsDone: 1,
        vectorsTotal: 4,
      }),
    );
    assert.equal(m.view().text, '$(telescope) Evidence: partial fedcba9');
    const tip = m.view().tooltip;
    assert.match(tip, /— api —\nState: Ready/);
    assert.match(tip, /— web app —\nState: Partial/);
    m.onStatus(status({ workspace: 'file:///w/web%20app' }));
    assert.equal(m.view().text, '$(telescope) Evidence: abcdef0');
  });

  it('an unopenable folder is an error without counts', () => {
    const m = running();
    m.onStatus(
      status({
        workspace: 'file:///w/x',
        state: 'error',
        commit: null,
        branch: null,
        dirty: null,
        files: null,
        chunks: null,
        vectorsDone: null,
        vectorsTotal: null,
        pendingFiles: null,
        message: 'index locked',
      }),
    );
    assert.equal(m.view().text, '$(error) Evidence: error');
    assert.deepEqual(
      statusLines(
        status({
          state: 'error',
          commit: null,
          branch: null,
          files: null,
          chunks: null,
          vectorsDone: null,
          vectorsTotal: null,
          pendingFiles: null,
          message: 'index locked',
        }),
      ),
      ['State: Error', 'index locked'],
    );
  });

  it('progress for one folder survives another folder reporting ready', () => {
    const m = running();
    m.onStatus(status({ workspace: 'file:///a', state: 'indexing' }));
    m.onProgress('p', { kind: 'begin', title: 'Indexing a', percentage: 20 });
    m.onStatus(status({ workspace: 'file:///b' }));
    assert.equal(m.view().text, '$(sync~spin) Evidence: indexing 20%');
  });
});
