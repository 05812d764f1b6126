/**
 * The Evidence view in the explorer: `EvidenceModel` (evidenceView.ts) as a VS Code tree, its
 * inline actions (copy the context pack, ask again deep, show explain, remove), and the
 * related-code section that follows the symbol under the cursor (a quick find, debounced).
 */

import * as vscode from 'vscode';

import {
  EvidenceModel,
  VIEW_ID,
  ViewCommands,
  explainDocument,
  present,
  type EvidenceNode,
} from './evidenceView';
import { ExplainRequest, FindRequest, type FindParams, type FindResult } from './protocol';
import type { ServerController } from './client';

const RELATED_DELAY_MS = 600;

export class EvidenceTree implements vscode.TreeDataProvider<EvidenceNode>, vscode.Disposable {
  readonly model = new EvidenceModel();
  private readonly changed = new vscode.EventEmitter<EvidenceNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];
  private view: vscode.TreeView<EvidenceNode> | undefined;
  private relatedTimer: NodeJS.Timeout | undefined;
  private relatedCancel: vscode.CancellationTokenSource | undefined;

  constructor(private readonly server: ServerController) {}

  register(): vscode.Disposable[] {
    this.view = vscode.window.createTreeView(VIEW_ID, { treeDataProvider: this, showCollapseAll: true });
    const reg = vscode.commands.registerCommand;
    const answerId = (node: unknown): number | undefined =>
      (node as EvidenceNode | undefined)?.kind === 'answer'
        ? (node as Extract<EvidenceNode, { kind: 'answer' }>).answer.id
        : this.model.list()[0]?.id;
    this.disposables.push(
      this.view,
      this.changed,
      reg(ViewCommands.copyContextPack, async (node?: unknown) => {
        const a = this.model.get(answerId(node) ?? -1);
        if (!a) return;
        await vscode.env.clipboard.writeText(a.result.context.text);
        vscode.window.setStatusBarMessage(
          `Code Evidence: context pack copied (${a.result.context.tokens} tokens)`,
          3000,
        );
      }),
      reg(ViewCommands.askDeep, async (node?: unknown) => {
        const params = this.model.deepParams(answerId(node) ?? -1);
        if (params) await this.ask(params, 'deep');
      }),
      reg(ViewCommands.explain, (node?: unknown) => this.explain(answerId(node))),
      reg(ViewCommands.remove, (node?: unknown) => {
        const id = answerId(node);
        if (id !== undefined) this.model.remove(id);
        this.changed.fire(undefined);
      }),
      reg(ViewCommands.clear, () => {
        this.model.clear();
        this.changed.fire(undefined);
      }),
      vscode.window.onDidChangeTextEditorSelection((e) => this.cursorMoved(e.textEditor)),
    );
    return [this];
  }

  /** A new answer (from the palette, the QuickPick or this view): shown on top. */
  add(params: FindParams, result: FindResult): void {
    this.model.add(params, result);
    this.changed.fire(undefined);
  }

  getTreeItem(node: EvidenceNode): vscode.TreeItem {
    const v = present(node);
    const collapsible = {
      none: vscode.TreeItemCollapsibleState.None,
      collapsed: vscode.TreeItemCollapsibleState.Collapsed,
      expanded: vscode.TreeItemCollapsibleState.Expanded,
    }[v.collapsible];
    const item = new vscode.TreeItem(v.label, collapsible);
    item.id = v.id;
    item.description = v.description;
    item.tooltip = v.tooltip;
    item.contextValue = v.contextValue;
    if (v.icon) item.iconPath = new vscode.ThemeIcon(v.icon);
    if (v.location) {
      const { start, end } = v.location.selection;
      item.command = {
        command: 'vscode.open',
        title: 'Open',
        arguments: [
          vscode.Uri.parse(v.location.uri),
          { selection: new vscode.Range(start.line, start.character, end.line, end.character) },
        ],
      };
    }
    return item;
  }

  getChildren(node?: EvidenceNode): EvidenceNode[] {
    return this.model.children(node);
  }

  private async ask(params: FindParams, what: string): Promise<void> {
    try {
      const result = await vscode.window.withProgress(
        { location: { viewId: VIEW_ID }, title: `Code Evidence: ${what}` },
        () => this.server.running().sendRequest(FindRequest, params),
      );
      this.add(params, result);
    } catch (err) {
      void vscode.window.showErrorMessage(`Code Evidence: ${what} failed: ${String(err)}`);
    }
  }

  private async explain(id: number | undefined): Promise<void> {
    const a = this.model.get(id ?? -1);
    if (!a) return;
    try {
      const explained = await this.server.running().sendRequest(ExplainRequest, a.params);
      const doc = await vscode.workspace.openTextDocument({
        content: explainDocument(a.result.query, explained.explain),
        language: 'markdown',
      });
      await vscode.window.showTextDocument(doc, { preview: true });
    } catch (err) {
      void vscode.window.showErrorMessage(`Code Evidence: explain failed: ${String(err)}`);
    }
  }

  /** The related section follows the cursor: the identifier there, after a pause. */
  private cursorMoved(editor: vscode.TextEditor): void {
    if (!this.view?.visible || editor.document.uri.scheme !== 'file') return;
    if (this.relatedTimer) clearTimeout(this.relatedTimer);
    this.relatedTimer = setTimeout(() => void this.refreshRelated(editor), RELATED_DELAY_MS);
  }

  private async refreshRelated(editor: vscode.TextEditor): Promise<void> {
    const range = editor.document.getWordRangeAtPosition(editor.selection.active);
    const symbol = range ? editor.document.getText(range) : '';
    if (!/[\p{L}\p{N}_]{2,}/u.test(symbol)) return;
    this.relatedCancel?.cancel();
    const cts = new vscode.CancellationTokenSource();
    this.relatedCancel = cts;
    const { line, character } = editor.selection.active;
    const params: FindParams = {
      query: symbol,
      textDocument: { uri: editor.document.uri.toString() },
      position: { line, character },
      depth: 'quick',
      budgetTokens: 0,
      limit: 10,
    };
    try {
      const result = await this.server.running().sendRequest(FindRequest, params, cts.token);
      if (cts.token.isCancellationRequested) return;
      this.model.setRelated(symbol, result);
    } catch (err) {
      if (cts.token.isCancellationRequested) return;
      this.model.setRelated(symbol, undefined, err instanceof Error ? err.message : String(err));
    }
    this.changed.fire(undefined);
  }

  dispose(): void {
    if (this.relatedTimer) clearTimeout(this.relatedTimer);
    this.relatedCancel?.cancel();
    for (const d of this.disposables) d.dispose();
  }
}
