/**
 * How the server is launched, and what to tell the user when it cannot be.
 *
 * Kept apart from the extension so the integration test starts the server with exactly the
 * command line the extension would use. No `vscode` import.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';

import type { ClientSettings } from './settings';

export interface ServerLaunch {
  command: string;
  args: string[];
  /** Human-readable, for messages and the output channel. */
  display: string;
  /** Which setting chose this command, so an error can point at the one to fix. */
  setting: 'codeEvidence.pythonPath' | 'codeEvidence.serverPath';
}

/** `${workspaceFolder}` and a leading `~` in a path setting, as VS Code users expect them. */
export function expandPath(value: string, workspaceFolder: string | undefined, home: string): string {
  let out = value;
  if (workspaceFolder !== undefined) out = out.split('${workspaceFolder}').join(workspaceFolder);
  if (out === '~' || out.startsWith('~/') || out.startsWith('~\\')) out = home + out.slice(1);
  return out;
}

/** `pythonPath` wins when set (the package is importable there even without the console
 * script on PATH); otherwise the `code-evidence` console script. */
export function serverLaunch(
  s: Pick<ClientSettings, 'serverPath' | 'pythonPath'>,
  extraArgs: string[] = [],
): ServerLaunch {
  if (s.pythonPath) {
    const args = ['-m', 'code_evidence.cli', 'serve', ...extraArgs];
    return {
      command: s.pythonPath,
      args,
      display: [s.pythonPath, ...args].join(' '),
      setting: 'codeEvidence.pythonPath',
    };
  }
  const args = ['serve', ...extraArgs];
  return {
    command: s.serverPath,
    args,
    display: [s.serverPath, ...args].join(' '),
    setting: 'codeEvidence.serverPath',
  };
}

export type LookupEnv = Record<string, string | undefined>;

/** `env[name]`, ignoring case on Windows, where a copied `process.env` spells it `Path`. */
function envVar(env: LookupEnv, name: string, platform: NodeJS.Platform): string | undefined {
  if (platform !== 'win32') return env[name];
  const key = Object.keys(env).find((k) => k.toUpperCase() === name);
  return key === undefined ? undefined : env[key];
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/**
 * Where `command` resolves to, or `undefined` when it does not exist. A command with a path
 * separator is taken relative to `cwd`; a bare name is looked up on PATH (with PATHEXT on
 * Windows), as the OS would when spawning it.
 */
export function findExecutable(
  command: string,
  env: LookupEnv,
  cwd: string,
  platform: NodeJS.Platform = process.platform,
  exists: (p: string) => boolean = isFile,
): string | undefined {
  if (command === '') return undefined;
  const exts =
    platform === 'win32'
      ? ['', ...(envVar(env, 'PATHEXT', platform) ?? '.EXE;.CMD;.BAT;.COM').split(';').filter(Boolean)]
      : [''];
  const hasSep = command.includes('/') || (platform === 'win32' && command.includes('\\'));
  if (hasSep || path.isAbsolute(command)) {
    const full = path.resolve(cwd, command);
    return exts.map((e) => full + e).find(exists);
  }
  const sep = platform === 'win32' ? ';' : ':';
  for (const dir of (envVar(env, 'PATH', platform) ?? '').split(sep)) {
    if (dir === '') continue;
    const hit = exts.map((e) => path.join(dir, command + e)).find(exists);
    if (hit) return hit;
  }
  return undefined;
}

/** The notification text when the launch command does not exist. */
export function missingServerMessage(launch: ServerLaunch): string {
  if (launch.setting === 'codeEvidence.pythonPath') {
    return (
      `Code Evidence: the Python interpreter "${launch.command}" was not found. ` +
      `Fix "codeEvidence.pythonPath" (a Python 3.11+ with code-evidence installed: ` +
      `pip install code-evidence), or clear it to use the code-evidence command.`
    );
  }
  return (
    `Code Evidence: the server command "${launch.command}" was not found. ` +
    `Install it (pip install code-evidence, then make sure "code-evidence" is on PATH), ` +
    `or set "codeEvidence.serverPath" to its full path, or "codeEvidence.pythonPath" to a ` +
    `Python that has it installed.`
  );
}

/** The notification text when the server exits on its own. `stderrTail` is its last words. */
export function crashMessage(launch: ServerLaunch, crashes: number, stderrTail: string): string {
  const last = stderrTail.trim().split('\n').filter(Boolean).slice(-1)[0];
  const why = last ? ` Last message: ${last.slice(0, 300)}` : '';
  const times = crashes === 1 ? 'once' : `${crashes} times`;
  // The Python that was tried lacks the server or one of its dependencies: say how to add it.
  const missing = /No module named '?([\w.]+)/.exec(last ?? '');
  if (missing && launch.setting === 'codeEvidence.pythonPath') {
    return (
      `Code Evidence: the Python "${launch.command}" cannot run the server: it has no ` +
      `module "${missing[1]}".${why} Install the server into that Python ` +
      `("${launch.command}" -m pip install code-evidence; from a checkout: pip install -e .), ` +
      `or point "codeEvidence.pythonPath" at one that has it, then restart the server.`
    );
  }
  return (
    `Code Evidence: the server (${launch.display}) stopped unexpectedly ${times}.${why} ` +
    `Check the "Code Evidence" output, fix "${launch.setting}" if it points at the wrong ` +
    `install, then restart the server.`
  );
}
