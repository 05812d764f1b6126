/**
 * The install steps of README.md (client-vscode/README.md and the repository's) work when
 * followed literally: `npm run package` writes the .vsix the next step installs, and never
 * stops at one of vsce's questions. vsce asks only when its output is a terminal (a missing
 * `repository` field, `*` activation), so the command runs under a pseudo-terminal made by
 * util-linux `script`; a question would hang it until the timeout. Skips, saying why, where
 * `script` is missing.
 */

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';

const root = path.resolve(__dirname, '..', '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const vsix = `${manifest.name}-${manifest.version}.vsix`;
const hasScript = spawnSync('script', ['--version']).status === 0;

describe('packaging', () => {
  it('the install steps name the command and the file it writes', () => {
    for (const doc of [path.join(root, 'README.md'), path.join(root, '..', 'README.md')]) {
      const text = fs.readFileSync(doc, 'utf8');
      assert.match(text, /npm run package/, `${doc} does not say npm run package`);
      assert.ok(text.includes(`code --install-extension ${vsix}`), `${doc} does not install ${vsix}`);
    }
  });

  it(
    'npm run package writes the .vsix without asking anything',
    {
      skip: hasScript ? false : 'util-linux `script` is not installed (no pseudo-terminal)',
      timeout: 300_000,
    },
    () => {
      const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ce-vsix-')), vsix);
      // stdin is /dev/null: a question would wait on the terminal until the timeout kills it.
      const run = spawnSync('script', ['-qec', `npm run package -- --out '${out}'`, '/dev/null'], {
        cwd: root,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 240_000,
      });
      const log = `${run.stdout}\n${run.stderr}`;
      assert.doesNotMatch(log, /Do you want to continue/, log.slice(-2000));
      assert.equal(run.status, 0, `npm run package failed (signal ${run.signal}):\n${log.slice(-2000)}`);
      // A .vsix is a zip; its central directory names every file in plain text.
      const bytes = fs.readFileSync(out).toString('latin1');
      for (const name of [
        'extension/package.json',
        'extension/dist/extension.js',
        'extension/readme.md',
        'extension/changelog.md',
        'extension/images/icon.png',
      ]) {
        assert.ok(bytes.includes(name), `${vsix} lacks ${name}`);
      }
      fs.rmSync(path.dirname(out), { recursive: true, force: true });
    },
  );
});
