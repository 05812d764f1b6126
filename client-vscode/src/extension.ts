/**
 * Entry point: one language client for the workspace, the status-bar item, the context-pack
 * documents and the commands.
 */

import * as vscode from 'vscode';

import { ServerController } from './client';
import { Commands } from './commands';
import { ContextPackDocuments } from './contextPack';
import { StatusBar } from './statusBar';
import { StatusModel } from './statusModel';

let controller: ServerController | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const model = new StatusModel();
  let bar: StatusBar | undefined;
  controller = new ServerController(model, () => bar?.render());
  bar = new StatusBar(model);
  const packs = new ContextPackDocuments();
  const commands = new Commands(controller, model, packs, () => bar?.render());
  context.subscriptions.push(bar, packs, ...commands.register(), {
    dispose: () => void controller?.dispose(),
  });
  // Not awaited: activation must not wait for the first index pass or a missing server.
  void controller.start();
}

export async function deactivate(): Promise<void> {
  await controller?.dispose();
  controller = undefined;
}
