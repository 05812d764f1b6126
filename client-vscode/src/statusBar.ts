/** The status-bar item: renders {@link StatusModel.view} and opens the index status on click. */

import * as vscode from 'vscode';

import { ClientCommands } from './protocol';
import type { StatusModel } from './statusModel';

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;

  constructor(private readonly model: StatusModel) {
    this.item = vscode.window.createStatusBarItem('codeEvidence.status', vscode.StatusBarAlignment.Left, 50);
    this.item.name = 'Code Evidence';
    this.item.command = ClientCommands.showIndexStatus;
    this.render();
    this.item.show();
  }

  render(): void {
    const view = this.model.view();
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.backgroundColor =
      view.severity === 'error'
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : view.severity === 'warning'
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
