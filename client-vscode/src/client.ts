/**
 * The language client's life: start `code-evidence serve` for the workspace, tell the user
 * exactly what to fix when it is missing or keeps crashing, restart on request, and feed the
 * status model from the server's notifications and `$/progress`.
 */

import * as os from 'node:os';

import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  ExecuteCommandRequest,
  LanguageClient,
  RevealOutputChannelOn,
  State,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';

import {
  ClientCommands,
  SETTINGS_SECTION,
  ServerCommands,
  StatusNotification,
  type IndexStatus,
} from './protocol';
import {
  crashMessage,
  expandPath,
  findExecutable,
  missingServerMessage,
  serverLaunch,
  type ServerLaunch,
} from './serverCommand';
import {
  configurationAnswers,
  didChangeConfigurationParams,
  initializationOptions,
  needsRestart,
  readSettings,
  serverSettingsChanged,
  type ClientSettings,
} from './settings';
import { shouldNotify } from './activation';
import { showRelated } from './related';
import type { StatusModel } from './statusModel';

/** The languages the server chunks; hovers and lenses are offered for these. */
export const LANGUAGES = [
  'python',
  'javascript',
  'javascriptreact',
  'typescript',
  'typescriptreact',
  'go',
  'rust',
  'java',
  'c',
  'cpp',
  'csharp',
  'ruby',
  'php',
  'kotlin',
  'swift',
  'scala',
];

/** More than this many crashes within CRASH_WINDOW_MS and the client stops restarting. */
const MAX_CRASHES = 3;
const CRASH_WINDOW_MS = 3 * 60_000;

/** Commands hover markdown may run: it comes from our own server, but only these. */
export const TRUSTED_COMMANDS = [
  ClientCommands.showRelated,
  ClientCommands.findEvidence,
  'editor.action.showReferences',
  'editor.action.peekLocations',
  'editor.action.goToLocations',
  'vscode.open',
];

/** The settings as they apply to `scope` (a workspace folder: its folder-level values win). */
export function currentSettings(scope?: vscode.Uri): ClientSettings {
  const config = vscode.workspace.getConfiguration(SETTINGS_SECTION, scope);
  return readSettings((key) => config.get(key));
}

/** globalState key: the last failure the user was notified of (see activation.shouldNotify). */
const LAST_FAILURE_KEY = 'codeEvidence.lastFailureNotice';

/** An output channel that remembers the last lines, so a crash message can quote them. */
class TailChannel implements vscode.OutputChannel {
  private tail = '';
  constructor(private readonly inner: vscode.OutputChannel) {}
  get name(): string {
    return this.inner.name;
  }
  lastLines(): string {
    return this.tail;
  }
  clearTail(): void {
    this.tail = '';
  }
  append(value: string): void {
    this.tail = (this.tail + value).slice(-4000);
    this.inner.append(value);
  }
  appendLine(value: string): void {
    this.append(`${value}\n`);
  }
  replace(value: string): void {
    this.inner.replace(value);
  }
  clear(): void {
    this.inner.clear();
  }
  show(columnOrPreserve?: vscode.ViewColumn | boolean, preserveFocus?: boolean): void {
    if (typeof columnOrPreserve === 'boolean') this.inner.show(columnOrPreserve);
    else this.inner.show(columnOrPreserve, preserveFocus);
  }
  hide(): void {
    this.inner.hide();
  }
  dispose(): void {
    this.inner.dispose();
  }
}

/** vscode-languageclient pops up its own generic notices when the connection fails ("couldn't
 * create connection to server"); this extension reports those failures itself, with the fix,
 * so the client's versions only go to the output channel. */
class CodeEvidenceClient extends LanguageClient {
  override error(message: string, data?: unknown, showNotification: boolean | 'force' = true): void {
    super.error(message, data, showNotification === 'force' ? false : showNotification);
  }
}

export class NotRunningError extends Error {}

export class ServerController implements vscode.Disposable {
  private client: CodeEvidenceClient | undefined;
  private settings: ClientSettings = currentSettings();
  private crashes: number[] = [];
  private stopping = false;
  private reported = false;
  private readonly output: TailChannel;
  private readonly disposables: vscode.Disposable[] = [];
  private clientDisposables: vscode.Disposable[] = [];
  private relatedCommand: vscode.Disposable | undefined;

  /** False until activation (codeEvidence.autoStart) or the user allows a start. */
  enabled = false;

  constructor(
    private readonly model: StatusModel,
    private readonly onModelChange: () => void,
    private readonly memory: vscode.Memento,
  ) {
    this.output = new TailChannel(vscode.window.createOutputChannel('Code Evidence'));
    this.disposables.push(
      this.output,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(SETTINGS_SECTION)) void this.settingsChanged();
      }),
      vscode.workspace.onDidChangeWorkspaceFolders(() => {
        if (!this.client && this.enabled) void this.start();
      }),
    );
  }

  /** The running client, or a NotRunningError whose message says what to do. */
  running(): LanguageClient {
    if (this.client?.state === State.Running) return this.client;
    throw new NotRunningError(
      this.client?.state === State.Starting
        ? 'Code Evidence: the server is still starting; try again in a moment.'
        : 'Code Evidence: the server is not running. Run "Code Evidence: Restart Server" (see the "Code Evidence" output for why it stopped).',
    );
  }

  get currentSettings(): ClientSettings {
    return this.settings;
  }

  showOutput(): void {
    this.output.show(true);
  }

  setState(state: Parameters<StatusModel['setServerState']>[0], message?: string): void {
    this.model.setServerState(state, message);
    this.onModelChange();
  }

  async start(): Promise<void> {
    if (this.client) return;
    const folders = vscode.workspace.workspaceFolders ?? [];
    const local = folders.filter((f) => f.uri.scheme === 'file');
    if (local.length === 0) {
      this.setState('stopped', 'Open a folder to index it with Code Evidence.');
      return;
    }
    this.settings = currentSettings();
    const cwd = local[0].uri.fsPath;
    const launch = serverLaunch({
      serverPath: expandPath(this.settings.serverPath, cwd, os.homedir()),
      pythonPath: expandPath(this.settings.pythonPath, cwd, os.homedir()),
    });
    this.reported = false;
    this.output.clearTail();
    const env = { ...process.env, ...this.settings.serverEnv };
    if (!findExecutable(launch.command, env, cwd)) {
      const message = missingServerMessage(launch);
      this.output.appendLine(`[client] ${message}`);
      this.setState('missing', message);
      this.report(message, launch, 'missing');
      return;
    }
    this.output.appendLine(`[client] starting: ${launch.display} (in ${cwd})`);
    const serverOptions: ServerOptions = {
      command: launch.command,
      args: launch.args,
      options: { cwd, env },
    };
    const client = new CodeEvidenceClient(
      'codeEvidence',
      'Code Evidence',
      serverOptions,
      this.clientOptions(launch),
    );
    this.client = client;
    this.stopping = false;
    this.setState('starting');
    this.clientDisposables.push(
      client.onDidChangeState(({ newState }) => {
        if (newState === State.Running) {
          void this.memory.update(LAST_FAILURE_KEY, undefined); // a later failure is news again
          this.registerShowRelated(client);
          this.setState('running');
          void this.refreshStatus();
        } else if (newState === State.Starting) {
          this.setState('starting');
        } else if (newState === State.Stopped && !this.reported) {
          this.setState('stopped');
        }
      }),
      client.onNotification(StatusNotification, (status) => {
        this.model.onStatus(status);
        this.onModelChange();
      }),
    );
    try {
      await client.start();
    } catch (err) {
      const message = crashMessage(
        launch,
        1,
        `${this.output.lastLines()}\n${err instanceof Error ? err.message : String(err)}`,
      );
      this.setState('crashed', message);
      this.report(message, launch, 'crashed');
    }
  }

  private clientOptions(launch: ServerLaunch): LanguageClientOptions {
    return {
      documentSelector: LANGUAGES.map((language) => ({ scheme: 'file', language })),
      initializationOptions: initializationOptions(this.settings),
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never, // we notify ourselves, with the fix
      markdown: { isTrusted: { enabledCommands: TRUSTED_COMMANDS }, supportHtml: false },
      initializationFailedHandler: () => false,
      errorHandler: {
        error: (_error, _message, count) => ({
          action: (count ?? 0) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown,
        }),
        closed: () => {
          if (this.stopping) return { action: CloseAction.DoNotRestart, handled: true };
          const now = Date.now();
          this.crashes = [...this.crashes.filter((t) => now - t < CRASH_WINDOW_MS), now];
          if (this.crashes.length <= MAX_CRASHES && this.client?.state === State.Running) {
            this.output.appendLine(
              `[client] the server stopped; restarting (${this.crashes.length}/${MAX_CRASHES})`,
            );
            return { action: CloseAction.Restart, handled: true };
          }
          const message = crashMessage(launch, this.crashes.length, this.output.lastLines());
          this.setState('crashed', message);
          this.report(message, launch, 'crashed');
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
      middleware: {
        handleWorkDoneProgress: (token, params, next) => {
          this.model.onProgress(token, params);
          this.onModelChange();
          next(token, params);
        },
        // A server that lists codeEvidence.showRelated among its commands gets it registered
        // by the client as "forward to the server"; the peek view is what the user wants.
        executeCommand: (command, args, next) =>
          command === ClientCommands.showRelated ? showRelated(args) : next(command, args),
        workspace: {
          // Servers that pull settings get the same mapped section the push sends.
          // A `scopeUri` (a workspace folder) gets that folder's settings.
          configuration: async (params, token, next) => {
            const answers = await next(params, token);
            if (!Array.isArray(answers)) return answers;
            return configurationAnswers(
              params.items,
              (scope) => (scope ? currentSettings(vscode.Uri.parse(scope)) : this.settings),
              answers,
            );
          },
        },
      },
    };
  }

  /** Registers `codeEvidence.showRelated` unless the server advertises it (then the client
   * already registered it, and the middleware above routes it to the peek view). */
  private registerShowRelated(client: LanguageClient): void {
    this.relatedCommand?.dispose();
    this.relatedCommand = undefined;
    const advertised = client.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
    if (!advertised.includes(ClientCommands.showRelated)) {
      this.relatedCommand = vscode.commands.registerCommand(
        ClientCommands.showRelated,
        (...args: unknown[]) => showRelated(args),
      );
    }
  }

  /** One notification per failure, with the buttons that fix it: not again on every start
   * (or window) while the same launch fails the same way; the status bar still says it. */
  private report(message: string, launch: ServerLaunch, kind: 'missing' | 'crashed'): void {
    if (this.reported) return;
    this.reported = true;
    const failure = `${kind}: ${launch.display}`;
    if (!shouldNotify(this.memory.get<string>(LAST_FAILURE_KEY), failure)) {
      this.output.appendLine(`[client] (already notified) ${message}`);
      return;
    }
    void this.memory.update(LAST_FAILURE_KEY, failure);
    const openSettings = 'Open Settings';
    const restart = 'Restart Server';
    const output = 'Show Output';
    void vscode.window.showErrorMessage(message, openSettings, restart, output).then((choice) => {
      if (choice === openSettings)
        void vscode.commands.executeCommand('workbench.action.openSettings', launch.setting);
      else if (choice === restart) void vscode.commands.executeCommand(ClientCommands.restartServer);
      else if (choice === output) this.showOutput();
    });
  }

  /** The message for the status view when there is no running server. */
  problem(): string | undefined {
    return this.client?.state === State.Running ? undefined : this.model.view().tooltip;
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    this.stopping = true;
    for (const d of this.clientDisposables) d.dispose();
    this.clientDisposables = [];
    this.relatedCommand?.dispose();
    this.relatedCommand = undefined;
    try {
      if (client.state !== State.Stopped) await client.stop(5000);
    } catch (err) {
      this.output.appendLine(`[client] stopping the server failed: ${String(err)}`);
    }
    await client.dispose().catch(() => undefined);
  }

  async restart(): Promise<void> {
    this.enabled = true; // the user asked: autoStart no longer holds it back
    await this.memory.update(LAST_FAILURE_KEY, undefined); // and gets told if it fails
    await this.stop();
    this.crashes = [];
    await this.start();
  }

  async executeServerCommand<T>(command: string, args: unknown[] = []): Promise<T> {
    return (await this.running().sendRequest(ExecuteCommandRequest.type, { command, arguments: args })) as T;
  }

  /** Asks the server for its status (the notification may have been missed while starting). */
  async refreshStatus(): Promise<IndexStatus | undefined> {
    try {
      const status = await this.executeServerCommand<IndexStatus | null>(ServerCommands.status);
      if (status && typeof status === 'object' && 'state' in status) {
        this.model.onStatus(status);
        this.onModelChange();
        return status;
      }
    } catch (err) {
      this.output.appendLine(`[client] ${ServerCommands.status} failed: ${String(err)}`);
    }
    return undefined;
  }

  private async settingsChanged(): Promise<void> {
    const before = this.settings;
    const after = currentSettings();
    this.settings = after;
    if (needsRestart(before, after)) {
      this.output.appendLine('[client] server command changed; restarting');
      await this.restart();
      return;
    }
    if (serverSettingsChanged(before, after) && this.client?.state === State.Running) {
      await this.client.sendNotification(
        'workspace/didChangeConfiguration',
        didChangeConfigurationParams(after),
      );
    }
  }

  async dispose(): Promise<void> {
    await this.stop();
    for (const d of this.disposables) d.dispose();
  }
}
