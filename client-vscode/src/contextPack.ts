/**
 * "Show Context Pack": the pack as a read-only virtual document (a content provider, so the
 * editor never offers to save it) with a Copy command on its title bar.
 */

import * as vscode from 'vscode';

import { CONTEXT_SCHEME, contextPackPath, renderContextPack } from './contextDoc';
import type { FindResult } from './protocol';

/** Packs kept for reopening; older ones are forgotten (their tabs show an explanation). */
const KEEP = 20;

export class ContextPackDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly packs = new Map<string, FindResult>();
  private serial = 0;
  private readonly registration: vscode.Disposable;

  constructor() {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(CONTEXT_SCHEME, this);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const result = this.packs.get(uri.toString());
    if (!result)
      return 'This context pack is no longer available. Run "Code Evidence: Show Context Pack" again.\n';
    return renderContextPack(result);
  }

  async show(result: FindResult): Promise<void> {
    this.serial += 1;
    const uri = vscode.Uri.from({ scheme: CONTEXT_SCHEME, path: contextPackPath(result.query, this.serial) });
    this.packs.set(uri.toString(), result);
    while (this.packs.size > KEEP) this.packs.delete(this.packs.keys().next().value as string);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: false });
  }

  /** The pack for a context-pack document URI, or for the active editor, or the newest. */
  packFor(uri?: vscode.Uri): FindResult | undefined {
    const target =
      uri?.scheme === CONTEXT_SCHEME
        ? uri
        : vscode.window.activeTextEditor?.document.uri.scheme === CONTEXT_SCHEME
          ? vscode.window.activeTextEditor.document.uri
          : undefined;
    if (target) return this.packs.get(target.toString());
    return [...this.packs.values()].at(-1);
  }

  async copy(uri?: vscode.Uri): Promise<void> {
    const result = this.packFor(uri);
    if (!result) {
      void vscode.window.showInformationMessage(
        'Code Evidence: no context pack to copy yet. Run "Show Context Pack" first.',
      );
      return;
    }
    await vscode.env.clipboard.writeText(result.context.text);
    void vscode.window.setStatusBarMessage(
      `$(check) Copied context pack: ${result.context.tokens} tokens, ${result.results.length} results`,
      4000,
    );
  }

  dispose(): void {
    this.registration.dispose();
    this.packs.clear();
  }
}
