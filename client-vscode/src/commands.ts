/** The palette commands. (`codeEvidence.showRelated`, the code lenses' command, is in
 * related.ts: its registration depends on what the server advertises.) */

import * as vscode from 'vscode';
import { ResponseError, WorkDoneProgressCancelNotification } from 'vscode-languageclient/node';

import { NotRunningError, type ServerController } from './client';
import type { ContextPackDocuments } from './contextPack';
import {
  ClientCommands,
  FindRequest,
  ServerCommands,
  type FindParams,
  type FindResult,
  type IndexStatus,
} from './protocol';
import { showEvidencePicker } from './quickPick';
import type { StatusModel } from './statusModel';

/** Query text from the editor: the selection, else the identifier under the cursor. */
function editorQuery(editor: vscode.TextEditor | undefined, wordFallback: boolean): string {
  if (!editor) return '';
  const selected = editor.document.getText(editor.selection).trim();
  if (selected || !wordFallback) return selected.slice(0, 2000);
  const word = editor.document.getWordRangeAtPosition(editor.selection.active);
  return word ? editor.document.getText(word) : '';
}

/** The open document and cursor, which the server turns into features (path, imports,
 * callers/callees of the symbol under the cursor). Only saved-to-disk schemes qualify. */
function editorContext(editor: vscode.TextEditor | undefined): Pick<FindParams, 'textDocument' | 'position'> {
  if (!editor || editor.document.uri.scheme !== 'file') return {};
  const { line, character } = editor.selection.active;
  return { textDocument: { uri: editor.document.uri.toString() }, position: { line, character } };
}

function reportError(err: unknown, what: string): void {
  if (err instanceof NotRunningError) {
    void vscode.window.showErrorMessage(err.message, 'Restart Server').then((c) => {
      if (c) void vscode.commands.executeCommand(ClientCommands.restartServer);
    });
    return;
  }
  const message = err instanceof ResponseError || err instanceof Error ? err.message : String(err);
  void vscode.window.showErrorMessage(`Code Evidence: ${what} failed: ${message}`);
}

export class Commands {
  private lastResult: FindResult | undefined;

  constructor(
    private readonly server: ServerController,
    private readonly model: StatusModel,
    private readonly packs: ContextPackDocuments,
    private readonly onModelChange: () => void,
    /** Every answer also goes to the Evidence view. */
    private readonly onAnswer: (params: FindParams, result: FindResult) => void = () => undefined,
  ) {}

  register(): vscode.Disposable[] {
    const reg = vscode.commands.registerCommand;
    return [
      reg(ClientCommands.findEvidence, (query?: unknown) =>
        this.findEvidence(typeof query === 'string' ? query : undefined),
      ),
      reg(ClientCommands.findSelection, () => this.findSelection()),
      reg(ClientCommands.showContextPack, () => this.showContextPack()),
      reg(ClientCommands.copyContextPack, (uri?: vscode.Uri) =>
        this.packs.copy(uri instanceof vscode.Uri ? uri : undefined),
      ),
      reg(ClientCommands.reindexWorkspace, () => this.reindex()),
      reg(ClientCommands.showIndexStatus, () => this.showIndexStatus()),
      reg(ClientCommands.restartServer, () => this.server.restart()),
    ];
  }

  private async askQuery(initial: string): Promise<string | undefined> {
    const query = await vscode.window.showInputBox({
      title: 'Code Evidence: Find Evidence',
      prompt: 'A question, identifiers, or a pasted error',
      value: initial,
      valueSelection: [0, initial.length],
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() === '' ? 'Type what to look for' : undefined),
    });
    return query?.trim() || undefined;
  }

  private find(
    query: string,
    editor: vscode.TextEditor | undefined,
    token?: vscode.CancellationToken,
  ): Promise<FindResult> {
    // Unset settings stay out of the request, so the server's own defaults apply.
    const { limit, budgetTokens } = this.server.currentSettings;
    const params: FindParams = {
      query,
      ...editorContext(editor),
      ...(limit !== null ? { limit } : {}),
      ...(budgetTokens !== null ? { budgetTokens } : {}),
    };
    return this.server
      .running()
      .sendRequest(FindRequest, params, token)
      .then((result) => {
        this.lastResult = result;
        this.onAnswer(params, result);
        return result;
      });
  }

  async findEvidence(preset?: string): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const query = preset ?? (await this.askQuery(editorQuery(editor, false)));
    if (!query) return;
    await this.pick(query, editor);
  }

  async findSelection(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const query = editorQuery(editor, true);
    if (!query) {
      await this.findEvidence();
      return;
    }
    await this.pick(query, editor);
  }

  private async pick(query: string, editor: vscode.TextEditor | undefined): Promise<void> {
    try {
      await showEvidencePicker(query, (token) => this.find(query, editor, token), {
        showContextPack: (result) => this.packs.show(result),
      });
    } catch (err) {
      reportError(err, 'find');
    }
  }

  async showContextPack(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const initial = editorQuery(editor, false) || this.lastResult?.query || '';
    const query = await this.askQuery(initial);
    if (!query) return;
    let cancelled = false;
    try {
      const result = await vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: `Code Evidence: assembling context for "${query}"`,
          cancellable: true,
        },
        (_progress, token) => {
          token.onCancellationRequested(() => (cancelled = true));
          return this.find(query, editor, token);
        },
      );
      if (!cancelled) await this.packs.show(result);
    } catch (err) {
      if (!cancelled) reportError(err, 'context pack');
    }
  }

  /** The server answers when the pass is over, with each folder's status. */
  async reindex(): Promise<void> {
    const busy = vscode.window.setStatusBarMessage('$(sync~spin) Code Evidence: reindexing the workspace…');
    try {
      const statuses = await this.server.executeServerCommand<IndexStatus[] | null>(ServerCommands.reindex);
      for (const s of Array.isArray(statuses) ? statuses : []) this.model.onStatus(s);
      this.onModelChange();
      vscode.window.setStatusBarMessage('$(check) Code Evidence: reindexed', 4000);
    } catch (err) {
      reportError(err, 'reindex');
    } finally {
      busy.dispose();
    }
  }

  async showIndexStatus(): Promise<void> {
    const problem = this.server.problem();
    if (problem) {
      const choice = await vscode.window.showWarningMessage(problem, 'Restart Server', 'Show Output');
      if (choice === 'Restart Server') await this.server.restart();
      else if (choice === 'Show Output') this.server.showOutput();
      return;
    }
    await this.server.refreshStatus();
    // Every folder's status (and a running pass first), as the tooltip shows them.
    const detail = this.model.tooltipLines().join('\n');
    const cancellable = this.model.cancellableTokens();
    const actions = ['Reindex', ...(cancellable.length > 0 ? ['Cancel Indexing'] : []), 'Show Output'];
    const choice = await vscode.window.showInformationMessage(
      'Code Evidence index',
      { modal: true, detail },
      ...actions,
    );
    if (choice === 'Reindex') await this.reindex();
    else if (choice === 'Show Output') this.server.showOutput();
    else if (choice === 'Cancel Indexing') {
      try {
        const client = this.server.running();
        for (const token of cancellable) {
          await client.sendNotification(WorkDoneProgressCancelNotification.type, { token });
        }
      } catch (err) {
        reportError(err, 'cancel');
      }
    }
  }
}
