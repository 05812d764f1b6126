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

  it('the palette titles are the ones the README describes', () => {
    const titles = manifest.contributes.commands.map(
      (c: { category: string; title: string }) => `${c.category}: ${c.title}`,
    );
    for (const t of [
      'Find Evidence…',
      'Find Evidence for Selection',
      'Show Context Pack',
      'Reindex Workspace',
      'Show Index Status',
      'Restart Server',
    ]) {
      assert.ok(titles.includes(`Code Evidence: ${t}`), t);
    }
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
