/**
 * `codeEvidence.showRelated` → VS Code's peek view. The server's code lenses carry plain JSON
 * `[uri, position, locations]`; `editor.action.showReferences` insists on real `vscode.Uri`,
 * `Position` and `Location` objects, so they are converted here.
 */

import * as vscode from 'vscode';

import { parseShowRelatedArgs } from './evidence';

export async function showRelated(args: unknown[]): Promise<void> {
  let parsed;
  try {
    parsed = parseShowRelatedArgs(args);
  } catch (err) {
    void vscode.window.showErrorMessage(err instanceof Error ? err.message : String(err));
    return;
  }
  const [uri, position, locations] = parsed;
  if (locations.length === 0) {
    vscode.window.setStatusBarMessage('Code Evidence: no related code found', 3000);
    return;
  }
  await vscode.commands.executeCommand(
    'editor.action.showReferences',
    vscode.Uri.parse(uri),
    new vscode.Position(position.line, position.character),
    locations.map(
      (l) =>
        new vscode.Location(
          vscode.Uri.parse(l.uri),
          new vscode.Range(
            l.range.start.line,
            l.range.start.character,
            l.range.end.line,
            l.range.end.character,
          ),
        ),
    ),
  );
}
