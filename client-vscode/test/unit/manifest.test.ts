/** package.json and the code must agree: every command the code registers is contributed,
 * and the contributed settings have the defaults the code falls back to. */

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import { AUTO_START_DEFAULT, AUTO_START_MODES } from '../../src/activation';
import { CONTEXT_SCHEME } from '../../src/contextDoc';
import { CONTEXT_ANSWER, VIEW_ID, ViewCommands } from '../../src/evidenceView';
import { BUDGET_TOKENS_MAX, BUDGET_TOKENS_MIN, ClientCommands, SETTINGS_SECTION } from '../../src/protocol';
import { DEFAULTS } from '../../src/settings';

const root = path.resolve(__dirname, '..', '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

describe('package.json', () => {
  it('contributes every client and view command; VS Code implies their activation', () => {
    const contributed = new Set<string>(
      manifest.contributes.commands.map((c: { command: string }) => c.command),
    );
    for (const id of [...Object.values(ClientCommands), ...Object.values(ViewCommands)]) {
      assert.ok(contributed.has(id), `${id} is not contributed`);
    }
    // Contributed commands and views activate the extension by themselves (VS Code >= 1.74):
    // listing them again is noise vsce warns about. Startup is where autoStart decides.
    assert.deepEqual(manifest.activationEvents, ['onStartupFinished']);
  });

  it('contributes the Evidence view with inline actions on answers', () => {
    const views = manifest.contributes.views.explorer as { id: string }[];
    assert.ok(
      views.some((v) => v.id === VIEW_ID),
      `${VIEW_ID} is not in the explorer`,
    );
    const inline = manifest.contributes.menus['view/item/context'] as {
      command: string;
      when: string;
      group: string;
    }[];
    for (const id of [ViewCommands.copyContextPack, ViewCommands.askDeep, ViewCommands.explain]) {
      const m = inline.find((x) => x.command === id);
      assert.ok(m, `${id} is not an item action`);
      assert.ok(m.when.includes(`view == ${VIEW_ID}`) && m.when.includes(`viewItem == ${CONTEXT_ANSWER}`));
      assert.match(m.group, /^inline/);
    }
  });

  it('has what vsce needs to package without asking: repository, bugs, homepage, icon, changelog', () => {
    assert.equal(manifest.repository.type, 'git');
    assert.match(manifest.repository.url, /^https:\/\/.+\.git$/);
    assert.match(manifest.bugs.url, /^https:\/\//);
    assert.match(manifest.homepage, /^https:\/\//);
    assert.doesNotMatch(manifest.scripts.package, /allow-missing-repository/);
    const icon = fs.readFileSync(path.join(root, manifest.icon));
    assert.equal(icon.subarray(1, 4).toString('latin1'), 'PNG');
    assert.ok(icon.readUInt32BE(16) >= 128 && icon.readUInt32BE(20) >= 128, 'the icon is under 128 px');
    const changelog = fs.readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8');
    assert.ok(changelog.includes(`## ${manifest.version}`), `CHANGELOG.md has no ${manifest.version}`);
    const shipped = fs.readFileSync(path.join(root, '.vscodeignore'), 'utf8');
    for (const f of [manifest.icon, 'CHANGELOG.md'])
      assert.ok(shipped.includes(`!${f}`), `${f} is not packaged`);
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
    // autoStart: user settings only (a repository's .vscode/settings.json cannot turn it on).
    const auto = props['codeEvidence.autoStart'];
    assert.deepEqual(auto.enum, AUTO_START_MODES);
    assert.equal(auto.default, AUTO_START_DEFAULT);
    assert.equal(auto.scope, 'application');
    assert.deepEqual(props['codeEvidence.trace.server'].enum, ['off', 'messages', 'verbose']);
    // What the server reads may differ per folder; how it is launched may not.
    for (const key of ['budgetTokens', 'limit', 'rerank', 'exclude'])
      assert.equal(props[`codeEvidence.${key}`].scope, 'resource', key);
    for (const key of manifest.capabilities.untrustedWorkspaces.restrictedConfigurations)
      assert.equal(props[key].scope, 'machine-overridable', key);
    // One budget range, the server's (tests/test_client_protocol.py holds it to config.py).
    assert.equal(props['codeEvidence.budgetTokens'].minimum, BUDGET_TOKENS_MIN);
    assert.equal(props['codeEvidence.budgetTokens'].maximum, BUDGET_TOKENS_MAX);
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
