import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import {
  crashMessage,
  expandPath,
  findExecutable,
  missingServerMessage,
  serverLaunch,
} from '../../src/serverCommand';

describe('server launch', () => {
  it('runs "<serverPath> serve" by default and "<python> -m code_evidence.cli serve" with pythonPath', () => {
    assert.deepEqual(serverLaunch({ serverPath: 'code-evidence', pythonPath: '' }), {
      command: 'code-evidence',
      args: ['serve'],
      display: 'code-evidence serve',
      setting: 'codeEvidence.serverPath',
    });
    const py = serverLaunch({ serverPath: 'code-evidence', pythonPath: '/v/bin/python' }, [
      '--index-dir',
      '/i',
    ]);
    assert.equal(py.command, '/v/bin/python');
    assert.deepEqual(py.args, ['-m', 'code_evidence.cli', 'serve', '--index-dir', '/i']);
    assert.equal(py.setting, 'codeEvidence.pythonPath');
  });

  it('expands ${workspaceFolder} and ~', () => {
    assert.equal(expandPath('${workspaceFolder}/.venv/bin/python', '/w', '/home/u'), '/w/.venv/bin/python');
    assert.equal(expandPath('~/bin/code-evidence', '/w', '/home/u'), '/home/u/bin/code-evidence');
    assert.equal(expandPath('a~b', '/w', '/home/u'), 'a~b');
    assert.equal(expandPath('${workspaceFolder}/x', undefined, '/h'), '${workspaceFolder}/x');
  });

  it('finds commands on PATH or by path, and reports missing ones', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ce-path-'));
    try {
      const exe = path.join(dir, 'code-evidence');
      fs.writeFileSync(exe, '#!/bin/sh\n', { mode: 0o755 });
      assert.equal(findExecutable('code-evidence', { PATH: `/nonexistent:${dir}` }, '/', 'linux'), exe);
      assert.equal(findExecutable('code-evidence', { PATH: '/nonexistent' }, '/', 'linux'), undefined);
      assert.equal(findExecutable(exe, { PATH: '' }, '/', 'linux'), exe);
      assert.equal(findExecutable('./code-evidence', {}, dir, 'linux'), exe);
      assert.equal(findExecutable(dir, {}, '/', 'linux'), undefined, 'a directory is not an executable');
      assert.equal(findExecutable('', { PATH: dir }, '/', 'linux'), undefined);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('tries PATHEXT on Windows, whatever the case of Path', () => {
    const seen: string[] = [];
    const hit = findExecutable(
      'code-evidence',
      { Path: 'C:\\a;C:\\b', PATHEXT: '.EXE;.CMD' },
      'C:\\',
      'win32',
      (p) => {
        seen.push(p);
        return p.endsWith(path.join('C:\\b', 'code-evidence.CMD'));
      },
    );
    assert.equal(hit, path.join('C:\\b', 'code-evidence.CMD'));
    assert.ok(seen.includes(path.join('C:\\a', 'code-evidence.EXE')));
  });

  it('messages name the setting to fix and quote the last stderr line', () => {
    const launch = serverLaunch({ serverPath: 'code-evidence', pythonPath: '/v/bin/python' });
    assert.match(missingServerMessage(launch), /"\/v\/bin\/python" was not found.*codeEvidence\.pythonPath/);
    assert.match(
      missingServerMessage(serverLaunch({ serverPath: 'ce', pythonPath: '' })),
      /codeEvidence\.serverPath/,
    );
    const script = serverLaunch({ serverPath: 'code-evidence', pythonPath: '' });
    const msg = crashMessage(script, 2, 'Traceback...\nOSError: [Errno 28] No space left on device\n\n');
    assert.match(msg, /stopped unexpectedly 2 times/);
    assert.match(msg, /Last message: OSError: \[Errno 28\] No space left on device/);
    assert.match(msg, /codeEvidence\.serverPath/);
    const dep = crashMessage(launch, 2, "Traceback...\nModuleNotFoundError: No module named 'pygls'\n\n");
    assert.match(dep, /Last message: ModuleNotFoundError: No module named 'pygls'/);
    assert.match(dep, /"\/v\/bin\/python" cannot run the server: it has no module "pygls"/);
    assert.match(dep, /codeEvidence\.pythonPath/);
    // The Python that was tried, and how to install the server into it.
    const py = serverLaunch({ serverPath: 'code-evidence', pythonPath: '/usr/bin/python3' });
    const noServer = crashMessage(py, 1, '/usr/bin/python3: No module named code_evidence\n');
    assert.match(
      noServer,
      /the Python "\/usr\/bin\/python3" cannot run the server: it has no module "code_evidence"/,
    );
    assert.match(noServer, /"\/usr\/bin\/python3" -m pip install code-evidence/);
    assert.doesNotMatch(crashMessage(launch, 1, ''), /Last message/);
  });
});
