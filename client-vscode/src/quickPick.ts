/**
 * The evidence QuickPick: opens at once (busy) while the server answers, previews each row's
 * location as the user moves through the list, opens it on Enter, and puts the editor back
 * where it was when the user escapes.
 */

import * as vscode from 'vscode';

import {
  evidenceItems,
  insufficientNote,
  resultTitle,
  type EvidenceItem,
  type EvidenceLocation,
} from './evidence';
import type { FindResult } from './protocol';

interface Row extends vscode.QuickPickItem {
  item?: EvidenceItem;
}

export function toRange(loc: EvidenceLocation, which: 'range' | 'selection' = 'range'): vscode.Range {
  const { start, end } = loc[which];
  return new vscode.Range(start.line, start.character, end.line, end.character);
}

const highlight = vscode.window.createTextEditorDecorationType({
  isWholeLine: true,
  backgroundColor: new vscode.ThemeColor('editor.rangeHighlightBackground'),
});

/** Opens the result with the cursor on the line it opens at, that line centred when it is
 * out of view (the result's whole range is highlighted by the caller). */
async function reveal(loc: EvidenceLocation, preview: boolean): Promise<vscode.TextEditor> {
  const line = toRange(loc, 'selection');
  const editor = await vscode.window.showTextDocument(vscode.Uri.parse(loc.uri), {
    preview,
    preserveFocus: preview,
    selection: new vscode.Range(line.start, line.start),
  });
  editor.revealRange(line, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  return editor;
}

export interface PickerActions {
  showContextPack(result: FindResult): Promise<void>;
}

/**
 * Shows the picker for an answer that is still on its way. `answer` rejects on failure; the
 * picker closes then and the caller reports the error. Cancelling the picker cancels `token`.
 */
export async function showEvidencePicker(
  query: string,
  answer: (token: vscode.CancellationToken) => Promise<FindResult>,
  actions: PickerActions,
): Promise<void> {
  const qp = vscode.window.createQuickPick<Row>();
  const cts = new vscode.CancellationTokenSource();
  const origin = vscode.window.activeTextEditor;
  const originSelection = origin?.selection;
  let previewed: vscode.TextEditor | undefined;
  let accepted = false;
  let result: FindResult | undefined;
  const packButton: vscode.QuickInputButton = {
    iconPath: new vscode.ThemeIcon('book'),
    tooltip: 'Show Context Pack',
  };

  qp.title = `Evidence: ${query}`;
  qp.placeholder = 'Searching…';
  qp.busy = true;
  qp.matchOnDescription = true;
  qp.matchOnDetail = true;
  qp.ignoreFocusOut = false;

  const clearHighlight = (): void => previewed?.setDecorations(highlight, []);

  const done = new Promise<void>((resolve) => {
    qp.onDidChangeActive(async ([row]) => {
      if (!row?.item || accepted) return;
      try {
        clearHighlight();
        previewed = await reveal(row.item.location, true);
        previewed.setDecorations(highlight, [toRange(row.item.location)]);
      } catch {
        // A file deleted since indexing: the row stays, the preview just does not move.
      }
    });
    qp.onDidAccept(async () => {
      const row = qp.selectedItems[0] ?? qp.activeItems[0];
      if (!row?.item) return;
      accepted = true;
      qp.hide();
      clearHighlight();
      try {
        await reveal(row.item.location, false);
      } catch (err) {
        void vscode.window.showErrorMessage(
          `Code Evidence: cannot open ${row.item.evidence.path}: ${String(err)}`,
        );
      }
    });
    qp.onDidTriggerButton(async (button) => {
      if (button === packButton && result) {
        accepted = true;
        qp.hide();
        clearHighlight();
        await actions.showContextPack(result);
      }
    });
    qp.onDidHide(async () => {
      cts.cancel();
      clearHighlight();
      if (!accepted && origin && previewed && previewed.document !== origin.document) {
        await vscode.window.showTextDocument(origin.document, {
          viewColumn: origin.viewColumn,
          selection: originSelection,
          preview: false,
        });
      }
      qp.dispose();
      resolve();
    });
  });

  qp.show();
  try {
    result = await answer(cts.token);
  } catch (err) {
    if (cts.token.isCancellationRequested) return; // the user closed the picker first
    qp.hide();
    throw err;
  }
  if (cts.token.isCancellationRequested) return;
  const items = evidenceItems(result);
  const note = insufficientNote(result);
  qp.title = resultTitle(result);
  qp.busy = false;
  qp.buttons = [packButton];
  if (items.length === 0) {
    qp.placeholder = 'No evidence';
    qp.items = [{ label: '$(info) No evidence', detail: note, alwaysShow: true }];
  } else {
    qp.placeholder = note
      ? `Weak evidence: ${note}. Type to filter.`
      : `${items.length} result${items.length === 1 ? '' : 's'} — type to filter, Enter to open`;
    qp.items = items.map((item) => ({
      label: item.label,
      description: item.description,
      detail: item.detail,
      item,
    }));
  }
  await done;
}
