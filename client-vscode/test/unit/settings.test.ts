import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  DEFAULTS,
  configurationItem,
  didChangeConfigurationParams,
  initializationOptions,
  needsRestart,
  readSettings,
  serverSettingsChanged,
  toServerSettings,
} from '../../src/settings';
import { BUDGET_TOKENS_MAX, BUDGET_TOKENS_MIN } from '../../src/protocol';

const reader = (values: Record<string, unknown>) => (key: string) => values[key];

describe('settings mapping', () => {
  it('reads the defaults when nothing is set', () => {
    assert.deepEqual(readSettings(reader({})), DEFAULTS);
  });

  it('maps VS Code settings to the server section, without the client-only keys', () => {
    const s = readSettings(
      reader({
        budgetTokens: 3000,
        limit: 5,
        rerank: 'off',
        exclude: ['dist/**', ' vendor/ '],
        serverPath: '/opt/ce/bin/code-evidence',
        pythonPath: '',
      }),
    );
    assert.deepEqual(initializationOptions(s), {
      codeEvidence: { budgetTokens: 3000, limit: 5, rerank: 'off', exclude: ['dist/**', 'vendor/'] },
    });
    assert.deepEqual(didChangeConfigurationParams(s), {
      settings: {
        codeEvidence: { budgetTokens: 3000, limit: 5, rerank: 'off', exclude: ['dist/**', 'vendor/'] },
      },
    });
    assert.equal(s.serverPath, '/opt/ce/bin/code-evidence');
  });

  it('leaves budget and limit unset (null) so the workspace configuration decides', () => {
    const s = readSettings(reader({ rerank: 'on' }));
    assert.deepEqual(initializationOptions(s), {
      codeEvidence: { budgetTokens: null, limit: null, rerank: 'on', exclude: [] },
    });
    assert.equal(readSettings(reader({ budgetTokens: null })).budgetTokens, null);
  });

  it('repairs hand-edited values instead of sending them on', () => {
    const s = readSettings(
      reader({
        budgetTokens: 'lots',
        limit: 1e9,
        rerank: 'sometimes',
        exclude: 'dist/**',
        serverPath: '  ',
        serverEnv: { A: 1, B: {}, '': 'x' },
      }),
    );
    assert.equal(s.budgetTokens, null);
    assert.equal(s.limit, 100);
    assert.equal(s.rerank, 'auto');
    assert.deepEqual(s.exclude, []);
    assert.equal(s.serverPath, 'code-evidence');
    assert.deepEqual(s.serverEnv, { A: '1' });
    assert.equal(readSettings(reader({ limit: 0 })).limit, 1);
    assert.equal(readSettings(reader({ budgetTokens: -10 })).budgetTokens, BUDGET_TOKENS_MIN);
    assert.equal(readSettings(reader({ budgetTokens: 10 ** 9 })).budgetTokens, BUDGET_TOKENS_MAX);
    assert.equal(readSettings(reader({ budgetTokens: 12_600.4 })).budgetTokens, 12_600);
  });

  it('drops empty and duplicate exclude globs', () => {
    assert.deepEqual(readSettings(reader({ exclude: ['a', '', 'a', 3, 'b'] })).exclude, ['a', 'b']);
  });

  it('answers workspace/configuration for the section and for single keys', () => {
    const s = readSettings(reader({ limit: 7 }));
    assert.deepEqual(configurationItem(s, 'codeEvidence'), toServerSettings(s));
    assert.equal(configurationItem(s, 'codeEvidence.limit'), 7);
    assert.equal(configurationItem(s, 'codeEvidence.serverPath'), null);
    assert.equal(configurationItem(s, 'python'), null);
  });

  it('restarts only for launch settings and pushes only server-visible changes', () => {
    const a = readSettings(reader({}));
    assert.equal(needsRestart(a, { ...a, limit: 3 }), false);
    assert.equal(serverSettingsChanged(a, { ...a, limit: 3 }), true);
    const python = { ...a, pythonPath: '/usr/bin/python3' };
    assert.equal(needsRestart(a, python), true);
    assert.equal(serverSettingsChanged(a, python), false);
    assert.equal(needsRestart(a, { ...a, serverEnv: { X: '1' } }), true);
    assert.equal(serverSettingsChanged(a, { ...a, exclude: ['x'] }), true);
  });
});
