/**
 * Entry point: one language client for the workspace (started when `codeEvidence.autoStart`
 * allows it, see activation.ts), the status-bar item, the Evidence view, the context-pack
 * documents and the commands.
 */

import * as vscode from 'vscode';

import { decideStart, readAutoStart, trackedFileCount, type Remembered } from './activation';
import { ServerController } from './client';
import { Commands } from './commands';
import { ContextPackDocuments } from './contextPack';
import { EvidenceTree } from './evidenceTree';
import { SETTINGS_SECTION } from './protocol';
import { StatusBar } from './statusBar';
import { StatusModel } from './statusModel';

/** workspaceState key: the user's answer to "index this large workspace?". */
const SIZE_ANSWER_KEY = 'codeEvidence.autoStartAnswer';

let controller: ServerController | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const model = new StatusModel();
  let bar: StatusBar | undefined;
  const server = new ServerController(model, () => bar?.render(), context.globalState);
  controller = server;
  bar = new StatusBar(model);
  const packs = new ContextPackDocuments();
  const tree = new EvidenceTree(server);
  const commands = new Commands(
    server,
    model,
    packs,
    () => bar?.render(),
    (params, result) => tree.add(params, result),
  );
  context.subscriptions.push(bar, packs, ...commands.register(), ...tree.register(), {
    dispose: () => void controller?.dispose(),
  });
  const decide = (): void => void autoStart(context, server, () => bar?.render());
  context.subscriptions.push(
    vscode.workspace.onDidGrantWorkspaceTrust(decide),
    vscode.workspace.onDidChangeWorkspaceFolders(() => {
      if (!server.enabled) decide();
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!server.enabled && e.affectsConfiguration(`${SETTINGS_SECTION}.autoStart`)) decide();
    }),
  );
  decide(); // not awaited: activation must not wait for a question or the first index pass
}

/** Starts the server if codeEvidence.autoStart allows it here, asks once when the workspace
 * is large, and otherwise says in the status bar why it is off and how to start it. */
async function autoStart(
  context: vscode.ExtensionContext,
  server: ServerController,
  render: () => void,
): Promise<void> {
  if (server.enabled) return;
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file');
  const decision = decideStart({
    autoStart: readAutoStart(vscode.workspace.getConfiguration(SETTINGS_SECTION).inspect('autoStart')),
    trusted: vscode.workspace.isTrusted,
    folders: folders.map((f) => ({ name: f.name, trackedFiles: trackedFileCount(f.uri.fsPath) })),
    remembered: context.workspaceState.get<Remembered>(SIZE_ANSWER_KEY),
  });
  let start = decision.action === 'start';
  if (decision.action === 'ask') {
    const index = 'Index It';
    const notNow = 'Not for This Workspace';
    const choice = await vscode.window.showInformationMessage(decision.reason, index, notNow);
    if (choice) await context.workspaceState.update(SIZE_ANSWER_KEY, choice === index ? 'start' : 'skip');
    start = choice === index;
  }
  if (start) {
    server.enabled = true;
    await server.start();
  } else {
    server.setState(
      'stopped',
      decision.action === 'ask'
        ? 'Not started yet: run "Code Evidence: Restart Server" to index this workspace.'
        : decision.reason,
    );
    render();
  }
}

export async function deactivate(): Promise<void> {
  await controller?.dispose();
  controller = undefined;
}
