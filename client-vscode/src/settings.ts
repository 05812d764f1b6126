/**
 * VS Code settings (`codeEvidence.*`) → what the server is told.
 *
 * The server only needs the retrieval settings; how it is launched (`serverPath`, `pythonPath`)
 * stays on the client. Values are validated here rather than trusted, because settings.json is
 * hand-edited: a string where a number belongs must not reach the server as a bad request on
 * every query. No `vscode` import, so this runs under the unit tests.
 */

import {
  BUDGET_TOKENS_MAX,
  BUDGET_TOKENS_MIN,
  SETTINGS_SECTION,
  type RerankMode,
  type ServerSettings,
} from './protocol';

export interface ClientSettings extends ServerSettings {
  /** The `code-evidence` executable (a name on PATH or a path). */
  serverPath: string;
  /** A Python interpreter that has `code_evidence` installed; wins over `serverPath` when set. */
  pythonPath: string;
  /** Extra environment for the server process. */
  serverEnv: Record<string, string>;
}

export const DEFAULTS: ClientSettings = {
  budgetTokens: null,
  limit: null,
  rerank: 'auto',
  exclude: [],
  serverPath: 'code-evidence',
  pythonPath: '',
  serverEnv: {},
};

/** Settings whose change needs a new server process, not just a didChangeConfiguration. */
export const RESTART_KEYS: readonly (keyof ClientSettings)[] = ['serverPath', 'pythonPath', 'serverEnv'];

const RERANK_MODES: readonly RerankMode[] = ['auto', 'on', 'off'];

/** Reads one key of the `codeEvidence` section; `vscode.WorkspaceConfiguration.get` fits. */
export type SettingsReader = (key: string) => unknown;

/** A number clamped into range; anything else is "not set", so the workspace's own
 * configuration (.code-evidence.toml) decides rather than a default the client made up. */
function intIn(value: unknown, min: number, max: number): number | null {
  if (typeof value !== 'number' || !Number.isFinite(value)) return null;
  return Math.min(max, Math.max(min, Math.round(value)));
}

function str(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value.trim() : fallback;
}

function globs(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const out: string[] = [];
  for (const v of value) {
    if (typeof v === 'string' && v.trim() !== '' && !out.includes(v.trim())) out.push(v.trim());
  }
  return out;
}

function env(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return out;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (k !== '' && (typeof v === 'string' || typeof v === 'number')) out[k] = String(v);
  }
  return out;
}

export function readSettings(get: SettingsReader): ClientSettings {
  const rerank = get('rerank');
  return {
    budgetTokens: intIn(get('budgetTokens'), BUDGET_TOKENS_MIN, BUDGET_TOKENS_MAX),
    limit: intIn(get('limit'), 1, 100),
    rerank: RERANK_MODES.includes(rerank as RerankMode) ? (rerank as RerankMode) : DEFAULTS.rerank,
    exclude: globs(get('exclude')),
    serverPath: str(get('serverPath'), DEFAULTS.serverPath) || DEFAULTS.serverPath,
    pythonPath: str(get('pythonPath'), DEFAULTS.pythonPath),
    serverEnv: env(get('serverEnv')),
  };
}

/** Only what the server reads, in the server's field names. */
export function toServerSettings(s: ServerSettings): ServerSettings {
  return {
    budgetTokens: s.budgetTokens,
    limit: s.limit,
    rerank: s.rerank,
    exclude: [...s.exclude],
  };
}

/** `initialize.initializationOptions`: the section, keyed by its name. */
export function initializationOptions(s: ServerSettings): Record<string, ServerSettings> {
  return { [SETTINGS_SECTION]: toServerSettings(s) };
}

/** `workspace/didChangeConfiguration` params: the same shape under `settings`. */
export function didChangeConfigurationParams(s: ServerSettings): {
  settings: Record<string, ServerSettings>;
} {
  return { settings: initializationOptions(s) };
}

/** The answer to a `workspace/configuration` item: section `codeEvidence` (or a key in it). */
export function configurationItem(s: ServerSettings, section: string | undefined): unknown {
  const server = toServerSettings(s);
  if (section === undefined || section === SETTINGS_SECTION) return server;
  const prefix = `${SETTINGS_SECTION}.`;
  if (section.startsWith(prefix)) {
    const key = section.slice(prefix.length) as keyof ServerSettings;
    return key in server ? server[key] : null;
  }
  return null;
}

/**
 * The answers to a `workspace/configuration` request: items of our section get the settings of
 * their `scopeUri` (a workspace folder, whose folder-level settings win there; none: the
 * window's); other sections keep what VS Code answered (`others`).
 */
export function configurationAnswers(
  items: readonly { section?: string; scopeUri?: string }[],
  settingsFor: (scopeUri: string | undefined) => ServerSettings,
  others: readonly unknown[],
): unknown[] {
  return items.map((item, i) =>
    item.section === SETTINGS_SECTION || item.section?.startsWith(`${SETTINGS_SECTION}.`)
      ? configurationItem(settingsFor(item.scopeUri), item.section)
      : others[i],
  );
}

/** Which keys changed in a way the running server cannot absorb. */
export function needsRestart(before: ClientSettings, after: ClientSettings): boolean {
  return RESTART_KEYS.some((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
}

/** Whether the server-visible part changed (worth a didChangeConfiguration). */
export function serverSettingsChanged(before: ServerSettings, after: ServerSettings): boolean {
  return JSON.stringify(toServerSettings(before)) !== JSON.stringify(toServerSettings(after));
}
