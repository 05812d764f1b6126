/** package.json and the code must agree: every command the code registers is contributed,
 * and the contributed settings have the defaults the code falls back to. */

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import { CONTEXT_SCHEME } from '../../src/contextDoc';
import { ClientCommands, SETTINGS_SECTION } from '../../src/protocol';
import { DEFAULTS } from '../../src/settings';

const root = path.resolve(__dirname, '..', '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

describe('package.json', () => {
  it('contributes every client command, each activating the extension', () => {
    const contributed = new Set<string>(
      manifest.contributes.commands.map((c: { command: string }) => c.command),
    );
    for (const id of Object.values(ClientCommands)) {
      assert.ok(contributed.has(id), `${id} is not contributed`);
      assert.ok(manifest.activationEvents.includes(`onCommand:${id}`), `${id} does not activate`);
    }
    assert.ok(manifest.activationEvents.includes('onStartupFinished'));
  });

  it('the Commands table of README.md lists exactly the palette commands', () => {
    // Rows of the table read `| Code Evidence: <title> | what it does |`.
    const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
    const documented = new Set([...readme.matchAll(/^\| (Code Evidence: [^|]+?) \|/gm)].map((m) => m[1]));
    const hidden = new Set(
      manifest.contributes.menus.commandPalette
        .filter((m: { when: string }) => m.when === 'false')
        .map((m: { command: string }) => m.command),
    );
    const palette = new Set<string>(
      manifest.contributes.commands
        .filter((c: { command: string }) => !hidden.has(c.command))
        .map((c: { category: string; title: string }) => `${c.category}: ${c.title}`),
    );
    assert.ok(documented.size > 0, 'README.md has no Commands table');
    assert.deepEqual([...documented].sort(), [...palette].sort());
  });

  it('declares each setting with the default the code uses', () => {
    const props = manifest.contributes.configuration.properties;
    for (const [key, value] of Object.entries(DEFAULTS)) {
      const decl = props[`${SETTINGS_SECTION}.${key}`];
      assert.ok(decl, `${SETTINGS_SECTION}.${key} is not declared`);
      assert.deepEqual(decl.default, value, `${key} default`);
    }
    assert.deepEqual(props['codeEvidence.rerank'].enum, ['auto', 'on', 'off']);
  });

  it('offers Copy on context-pack documents and bundles to the declared main', () => {
    const title = manifest.contributes.menus['editor/title'];
    assert.ok(
      title.some(
        (m: { command: string; when: string }) =>
          m.command === ClientCommands.copyContextPack && m.when.includes(CONTEXT_SCHEME),
      ),
    );
    assert.equal(manifest.main, './dist/extension.js');
    assert.match(fs.readFileSync(path.join(root, 'esbuild.mjs'), 'utf8'), /outfile: 'dist\/extension\.js'/);
  });

  it('@types/vscode is not newer than engines.vscode (vsce refuses to package otherwise)', () => {
    const engine = manifest.engines.vscode.replace(/^[\^~]/, '');
    const types = manifest.devDependencies['@types/vscode'].replace(/^[\^~]/, '');
    assert.ok(types.localeCompare(engine, undefined, { numeric: true }) <= 0, `${types} > ${engine}`);
  });
});
