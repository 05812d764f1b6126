/**
 * The extension's side of the protocol against the real Python server, over stdio, with the
 * same protocol libraries the extension bundles (vscode-languageserver-protocol /
 * vscode-jsonrpc): the launch command, initializationOptions and configuration answers come
 * from the extension's own modules, so this fails when the two sides drift apart.
 *
 * The server is `$CODE_EVIDENCE_PYTHON -m code_evidence.cli serve` (default: the repository's
 * .venv, else python3) with PYTHONPATH=<repo>/server. Without a Python that can import the
 * server, the test is skipped and says why (or fails, with CODE_EVIDENCE_REQUIRE_SERVER=1).
 */

import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';

import {
  CodeLensRequest,
  CodeLensResolveRequest,
  ConfigurationRequest,
  createProtocolConnection,
  DidChangeConfigurationNotification,
  DidChangeWorkspaceFoldersNotification,
  DidOpenTextDocumentNotification,
  ExecuteCommandRequest,
  ExitNotification,
  HoverRequest,
  InitializedNotification,
  InitializeRequest,
  MarkupContent,
  RegistrationRequest,
  ResponseError,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  WorkDoneProgress,
  WorkDoneProgressCreateRequest,
  type CodeLens,
  type InitializeResult,
  type ProtocolConnection,
} from 'vscode-languageserver-protocol/node';

import { evidenceItems, parseShowRelatedArgs } from '../../src/evidence';
import { EvidenceModel, present, type EvidenceNode } from '../../src/evidenceView';
import {
  ClientCommands,
  FindRequest,
  ServerCommands,
  StatusNotification,
  type FindResult,
  type IndexStatus,
} from '../../src/protocol';
import { serverLaunch } from '../../src/serverCommand';
import {
  configurationAnswers,
  didChangeConfigurationParams,
  initializationOptions,
  readSettings,
  type ClientSettings,
} from '../../src/settings';
import { StatusModel, type ProgressValue } from '../../src/statusModel';

const CLIENT_DIR = path.resolve(__dirname, '..', '..', '..');
const REPO = path.resolve(CLIENT_DIR, '..');
const READY_TIMEOUT_MS = 120_000;

function pythonCandidate(): string {
  if (process.env.CODE_EVIDENCE_PYTHON) return process.env.CODE_EVIDENCE_PYTHON;
  const venv = path.join(REPO, '.venv', process.platform === 'win32' ? 'Scripts/python.exe' : 'bin/python');
  return fs.existsSync(venv) ? venv : 'python3';
}

const PYTHON = pythonCandidate();
const PYTHONPATH = [path.join(REPO, 'server'), process.env.PYTHONPATH].filter(Boolean).join(path.delimiter);

/** Why the server cannot run here, or undefined when it can. */
function unavailable(): string | undefined {
  const probe = spawnSync(PYTHON, ['-c', 'import code_evidence.lsp.server'], {
    env: { ...process.env, PYTHONPATH },
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (probe.error) return `${PYTHON} cannot run (${probe.error.message})`;
  if (probe.status !== 0) {
    const last = probe.stderr.trim().split('\n').at(-1) ?? `exit ${probe.status}`;
    return `${PYTHON} cannot import code_evidence.lsp.server: ${last}`;
  }
  return undefined;
}

const unavailableReason = unavailable();
/** CI sets CODE_EVIDENCE_REQUIRE_SERVER=1 so a broken Python fails the run instead of skipping. */
const required = process.env.CODE_EVIDENCE_REQUIRE_SERVER === '1';
const skipReason = required ? undefined : unavailableReason;
if (required && unavailableReason) {
  it('needs the Python server (CODE_EVIDENCE_REQUIRE_SERVER=1)', () => assert.fail(unavailableReason));
} else if (skipReason) {
  console.log(
    `# integration test skipped: ${skipReason}. Set CODE_EVIDENCE_PYTHON to a Python with the ` +
      `server's dependencies (e.g. make install, then ../.venv/bin/python).`,
  );
}

const BILLING = `"""Invoice arithmetic."""

TAX_RATE = 0.2


def compute_invoice_total(items, discount=0.0):
    """Sum the line items, apply the discount, add the sales tax."""
    subtotal = sum(price * qty for price, qty in items)
    return round((subtotal - discount) * (1 + TAX_RATE), 2)


class Invoice:
    def __init__(self, items):
        self.items = items

    def total(self):
        return compute_invoice_total(self.items)
`;

const APP = `from billing import compute_invoice_total


def checkout(cart):
    total = compute_invoice_total(cart.items, discount=cart.discount)
    print(f"charged {total}")
    return total
`;

function git(cwd: string, ...args: string[]): string {
  const r = spawnSync(
    'git',
    ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'init.defaultBranch=main', ...args],
    {
      cwd,
      encoding: 'utf8',
    },
  );
  assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

function makeWorkspace(root: string): string {
  const ws = path.join(root, 'shop');
  fs.mkdirSync(ws, { recursive: true });
  fs.writeFileSync(path.join(ws, 'billing.py'), BILLING);
  fs.writeFileSync(path.join(ws, 'app.py'), APP);
  git(ws, 'init', '-q');
  git(ws, 'add', '.');
  git(ws, 'commit', '-q', '-m', 'shop');
  return ws;
}

function positionOf(text: string, needle: string, occurrence = 0): { line: number; character: number } {
  const lines = text.split('\n');
  let seen = 0;
  for (let line = 0; line < lines.length; line++) {
    let from = 0;
    for (;;) {
      const character = lines[line].indexOf(needle, from);
      if (character < 0) break;
      if (seen++ === occurrence) return { line, character };
      from = character + 1;
    }
  }
  throw new Error(`${needle} not found`);
}

function waitFor<T>(
  what: string,
  probe: () => T | undefined,
  timeoutMs: number,
  stderr: () => string,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const tick = (): void => {
      const value = probe();
      if (value !== undefined) return resolve(value);
      if (Date.now() - started > timeoutMs) {
        return reject(new Error(`timed out waiting for ${what}; server stderr:\n${stderr().slice(-3000)}`));
      }
      setTimeout(tick, 100);
    };
    tick();
  });
}

describe(
  'Code Evidence server over stdio, as the extension talks to it',
  {
    skip: skipReason ?? (required && unavailableReason ? 'see the failure above' : undefined),
    timeout: 300_000,
  },
  () => {
    let tmp = '';
    let ws = '';
    let head = '';
    let proc: ChildProcess | undefined;
    let conn: ProtocolConnection | undefined;
    let init: InitializeResult | undefined;
    let stderr = '';
    const statuses: IndexStatus[] = [];
    const progress: ProgressValue[] = [];
    const barTexts: string[] = []; // the status-bar text after each $/progress value
    const model = new StatusModel();
    let settings: ClientSettings = readSettings(
      (key) => ({ limit: 5, budgetTokens: 1500, rerank: 'off' })[key],
    );
    // Folder-level settings by folder URI, answered the way client.ts answers them.
    const folderSettings: Record<string, ClientSettings> = {};
    let lastAnswer: FindResult | undefined;

    const uriOf = (rel: string): string => pathToFileURL(path.join(ws, rel)).toString();
    const c = (): ProtocolConnection => {
      assert.ok(conn, 'no connection');
      return conn;
    };

    before(async () => {
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ce-client-'));
      ws = makeWorkspace(tmp);
      head = git(ws, 'rev-parse', 'HEAD');

      // The command line the extension builds from codeEvidence.pythonPath.
      const launch = serverLaunch({ serverPath: 'code-evidence', pythonPath: PYTHON });
      assert.deepEqual(launch.args, ['-m', 'code_evidence.cli', 'serve']);
      proc = spawn(launch.command, launch.args, {
        cwd: ws,
        env: { ...process.env, PYTHONPATH, CODE_EVIDENCE_CACHE_DIR: path.join(tmp, 'cache') },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      proc.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      assert.ok(proc.stdout && proc.stdin);
      conn = createProtocolConnection(
        new StreamMessageReader(proc.stdout),
        new StreamMessageWriter(proc.stdin),
      );

      // What vscode-languageclient does for these server → client messages.
      conn.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
        c().onProgress(WorkDoneProgress.type, token, (value) => {
          progress.push(value);
          model.onProgress(token, value);
          barTexts.push(model.view().text);
        });
        return null;
      });
      conn.onRequest(ConfigurationRequest.type, (params) =>
        configurationAnswers(
          params.items,
          (scope) => (scope && folderSettings[scope]) || settings,
          params.items.map(() => null),
        ),
      );
      conn.onRequest(RegistrationRequest.type, () => null);
      conn.onRequest('workspace/codeLens/refresh', () => null);
      conn.onNotification(StatusNotification, (s) => {
        statuses.push(s);
        model.onStatus(s);
      });
      conn.onNotification('window/showMessage', () => undefined);
      conn.onNotification('window/logMessage', () => undefined);
      conn.listen();

      init = await c().sendRequest(InitializeRequest.type, {
        processId: process.pid,
        clientInfo: { name: 'code-evidence-vscode-test' },
        rootUri: pathToFileURL(ws).toString(),
        workspaceFolders: [{ uri: pathToFileURL(ws).toString(), name: 'shop' }],
        initializationOptions: initializationOptions(settings),
        capabilities: {
          window: { workDoneProgress: true },
          workspace: {
            configuration: true,
            workspaceFolders: true,
            codeLens: { refreshSupport: true },
            executeCommand: {},
          },
          textDocument: {
            hover: { contentFormat: ['markdown', 'plaintext'] },
            codeLens: {},
            synchronization: { didSave: true },
          },
        },
      });
      await c().sendNotification(InitializedNotification.type, {});
      model.setServerState('running');
    });

    after(async () => {
      try {
        if (conn && proc?.exitCode === null) {
          await Promise.race([
            c().sendRequest(ShutdownRequest.type),
            new Promise((r) => setTimeout(r, 10_000)),
          ]);
          await c().sendNotification(ExitNotification.type);
        }
      } catch {
        // the process may already be gone; the kill below covers it
      }
      const exited =
        proc && proc.exitCode === null ? new Promise((r) => proc?.once('exit', r)) : Promise.resolve();
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (proc && proc.exitCode === null) proc.kill();
      conn?.dispose();
      if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    });

    it('initializes with the capabilities the extension relies on', () => {
      assert.ok(init, 'no initialize result');
      const caps = init.capabilities;
      assert.ok(caps.hoverProvider, 'hover');
      assert.equal(typeof caps.codeLensProvider, 'object');
      assert.equal(caps.codeLensProvider?.resolveProvider, true);
      const commands = caps.executeCommandProvider?.commands ?? [];
      for (const cmd of Object.values(ServerCommands)) assert.ok(commands.includes(cmd), cmd);
      // The palette commands are the client's own; the server must not claim them.
      for (const cmd of [ClientCommands.findEvidence, ClientCommands.restartServer])
        assert.ok(!commands.includes(cmd), cmd);
    });

    it('reports the index through codeEvidence/status until it is usable', async () => {
      const done = await waitFor(
        'a settled codeEvidence/status',
        () => [...statuses].reverse().find((s) => s.state === 'ready' || s.state === 'partial'),
        READY_TIMEOUT_MS,
        () => stderr,
      );
      assert.equal(done.commit, head);
      assert.equal(done.branch, 'main');
      assert.equal(done.files, 2);
      assert.ok((done.chunks ?? 0) >= 3, `chunks: ${done.chunks}`);
      assert.equal(done.workspace, pathToFileURL(ws).toString());
      // The initial pass reports $/progress (token created first); the status bar showed a
      // percentage while it ran and the short commit once it was over.
      const begin = progress.find((p) => p.kind === 'begin');
      assert.ok(begin && begin.kind === 'begin', `no progress begin: ${JSON.stringify(progress)}`);
      assert.match(begin.title, /indexing shop/);
      await waitFor(
        'progress end',
        () => progress.find((p) => p.kind === 'end'),
        READY_TIMEOUT_MS,
        () => stderr,
      );
      assert.ok(
        barTexts.some((t) => /Evidence: indexing \d+%$/.test(t)),
        barTexts.join(' | '),
      );
      const text = model.view().text;
      assert.ok(text.endsWith(head.slice(0, 7)), text);
    });

    it('answers codeEvidence/find with LSP locations the QuickPick can open', async () => {
      await c().sendNotification(DidOpenTextDocumentNotification.type, {
        textDocument: { uri: uriOf('app.py'), languageId: 'python', version: 1, text: APP },
      });
      const position = positionOf(APP, 'compute_invoice_total', 1);
      const result: FindResult = await c().sendRequest(FindRequest, {
        query: 'where is the invoice total with sales tax computed',
        textDocument: { uri: uriOf('app.py') },
        position,
        limit: settings.limit ?? undefined,
      });
      assert.equal(result.commit, head);
      assert.ok(
        ['ready', 'partial', 'indexing'].includes(result.indexState ?? ''),
        String(result.indexState),
      );
      assert.ok(result.results.length > 0 && result.results.length <= 5);
      for (const r of result.results) {
        assert.equal(r.uri, uriOf(r.path));
        assert.deepEqual(r.range, {
          start: { line: r.start - 1, character: 0 },
          end: { line: r.end, character: 0 },
        });
      }
      const hit = result.results.find((r) => r.symbol === 'compute_invoice_total');
      assert.ok(
        hit,
        `compute_invoice_total not among ${result.results.map((r) => r.symbol || r.path).join(', ')}`,
      );
      assert.equal(hit.path, 'billing.py');
      assert.equal(hit.start, 6);
      // The budget came from initializationOptions (the engine default is 2000).
      assert.equal(result.context.budget, 1500);
      assert.ok(result.context.tokens <= result.context.budget);
      assert.match(result.context.text, /# billing\.py:\d+-\d+/);

      lastAnswer = result;
      const items = evidenceItems(result);
      const row = items.find((i) => i.evidence === hit);
      assert.ok(row);
      assert.equal(row.label, '$(symbol-function) compute_invoice_total — billing.py:6');
      assert.equal(row.location.uri, uriOf('billing.py'));
      assert.equal(row.location.range.start.line, 5);
      // The server says where it opens: a line of the result, sent as its selectionRange too.
      assert.ok(hit.line !== undefined && hit.line >= hit.start && hit.line <= hit.end);
      assert.deepEqual(hit.selectionRange, {
        start: { line: hit.line - 1, character: 0 },
        end: { line: hit.line, character: 0 },
      });
      assert.deepEqual(row.location.selection, hit.selectionRange);
    });

    it('builds the Evidence view from the answer: question → file → chunk that opens', () => {
      assert.ok(lastAnswer, 'the find test did not run');
      const model = new EvidenceModel();
      model.add({ query: lastAnswer.query }, lastAnswer);
      const [answer] = model.children(undefined);
      const top = present(answer);
      assert.equal(top.label, lastAnswer.query);
      assert.match(top.description ?? '', /^(confidence \d\.\d\d|insufficient) · \d+ results?$/);
      const files = model.children(answer).filter((n) => n.kind === 'file');
      const billing = files.find((n) => present(n).label === 'billing.py');
      assert.ok(billing, files.map((n) => present(n).label).join(', '));
      const chunk = model
        .children(billing)
        .map(present)
        .find((v) => v.label === 'compute_invoice_total');
      assert.ok(chunk, 'no compute_invoice_total chunk');
      assert.equal(chunk.location?.uri, uriOf('billing.py'));
      assert.equal(chunk.location?.range.start.line, 5);
      assert.match(chunk.description ?? '', /^L6–\d+ · \d\.\d{3}/);
    });

    it('applies workspace/didChangeConfiguration without a restart', async () => {
      settings = { ...settings, budgetTokens: 700 };
      await c().sendNotification(
        DidChangeConfigurationNotification.type,
        didChangeConfigurationParams(settings),
      );
      const result: FindResult = await c().sendRequest(FindRequest, { query: 'compute_invoice_total' });
      assert.equal(result.context.budget, 700);
      // Cleared (null): back to the workspace's configuration, here the engine default.
      settings = { ...settings, budgetTokens: null };
      await c().sendNotification(
        DidChangeConfigurationNotification.type,
        didChangeConfigurationParams(settings),
      );
      const cleared: FindResult = await c().sendRequest(FindRequest, { query: 'compute_invoice_total' });
      assert.equal(cleared.context.budget, 2000);
    });

    it('hovers with markdown links to the definition and callers', async () => {
      const hover = await c().sendRequest(HoverRequest.type, {
        textDocument: { uri: uriOf('app.py') },
        position: positionOf(APP, 'compute_invoice_total', 1),
      });
      assert.ok(hover, 'no hover');
      assert.ok(MarkupContent.is(hover.contents), 'hover is not MarkupContent');
      assert.equal(hover.contents.kind, 'markdown');
      const md = hover.contents.value;
      assert.match(md, /compute_invoice_total/);
      assert.ok(md.includes(`[billing.py:6](${uriOf('billing.py')}#L6)`), md);
      assert.ok(md.includes(`(${uriOf('app.py')}#L`), `no caller link in app.py:\n${md}`);
    });

    it('lists code lenses cheaply and resolves them to codeEvidence.showRelated', async () => {
      const lenses: CodeLens[] | null = await c().sendRequest(CodeLensRequest.type, {
        textDocument: { uri: uriOf('billing.py') },
      });
      assert.ok(lenses && lenses.length >= 2, `lenses: ${JSON.stringify(lenses)}`);
      // The file's own lens comes resolved on its first line: the files the history changed
      // with it (one commit added them all), in the shape the showRelated handler accepts.
      const fileLens = lenses.find((l) => l.command !== undefined);
      assert.ok(fileLens?.command, `no file lens: ${JSON.stringify(lenses)}`);
      assert.equal(fileLens.range.start.line, 0);
      assert.match(fileLens.command.title, /^changes with \d+ files?$/);
      const [, , partners] = parseShowRelatedArgs(fileLens.command.arguments ?? []);
      assert.ok(
        partners.some((l) => l.uri === uriOf('app.py')),
        JSON.stringify(partners),
      );
      assert.ok(
        lenses.filter((l) => l !== fileLens).every((l) => l.command === undefined),
        'symbol lenses must resolve lazily',
      );
      const target = positionOf(BILLING, 'def compute_invoice_total').line;
      const lens = lenses.find((l) => l.range.start.line === target);
      assert.ok(lens, `no lens on line ${target}`);
      const resolved = await c().sendRequest(CodeLensResolveRequest.type, lens);
      assert.ok(resolved.command, 'resolved lens has no command');
      assert.equal(resolved.command.command, ClientCommands.showRelated);
      assert.match(resolved.command.title, /^\d+ callers? · related$/);
      // Exactly what the extension's showRelated handler accepts before calling the peek view.
      const [uri, position, locations] = parseShowRelatedArgs(resolved.command.arguments ?? []);
      assert.equal(uri, uriOf('billing.py'));
      assert.deepEqual(position, lens.range.start);
      assert.ok(
        locations.some((l) => l.uri === uriOf('app.py')),
        JSON.stringify(locations),
      );
      assert.ok(Number(resolved.command.title.split(' ')[0]) >= 2, resolved.command.title);
    });

    it('runs the status and find commands through workspace/executeCommand', async () => {
      const status = (await c().sendRequest(ExecuteCommandRequest.type, {
        command: ServerCommands.status,
        arguments: [],
      })) as IndexStatus;
      assert.equal(status.commit, head);
      assert.ok(['ready', 'partial', 'indexing'].includes(status.state));
      const found = (await c().sendRequest(ExecuteCommandRequest.type, {
        command: ServerCommands.find,
        arguments: [{ query: 'Invoice total', limit: 3 }],
      })) as FindResult;
      assert.ok(found.results.length > 0 && found.results.length <= 3);
      // Reindex answers when the pass is over, with each folder's status.
      const after = (await c().sendRequest(ExecuteCommandRequest.type, {
        command: ServerCommands.reindex,
        arguments: [],
      })) as IndexStatus[];
      assert.ok(Array.isArray(after) && after.length === 1, JSON.stringify(after));
      assert.equal(after[0].commit, head);
      assert.notEqual(after[0].state, 'indexing');
    });

    it('rejects a malformed find with a message the extension can show', async () => {
      await assert.rejects(
        c().sendRequest(FindRequest, {} as never),
        (err: unknown) => err instanceof ResponseError && err.code === -32602 && /query/.test(err.message),
      );
      // ...and keeps serving.
      const result: FindResult = await c().sendRequest(FindRequest, { query: 'checkout' });
      assert.ok(result.results.some((r) => r.path === 'app.py'));
    });

    it('searches every folder of a multi-root workspace, each with its own settings', async () => {
      const ledger = path.join(tmp, 'ledger');
      fs.mkdirSync(ledger);
      fs.writeFileSync(path.join(ledger, 'ledger.py'), 'def post_ledger_entry(amount):\n    return amount\n');
      git(ledger, 'init', '-q');
      git(ledger, 'add', '.');
      git(ledger, 'commit', '-q', '-m', 'ledger');
      const ledgerUri = pathToFileURL(fs.realpathSync(ledger)).toString();
      const shopUri = pathToFileURL(fs.realpathSync(ws)).toString();
      folderSettings[ledgerUri] = readSettings((key) => ({ budgetTokens: 900 })[key]);
      await c().sendNotification(DidChangeWorkspaceFoldersNotification.type, {
        event: { added: [{ uri: ledgerUri, name: 'ledger' }], removed: [] },
      });
      await waitFor(
        'the added folder indexed',
        () =>
          statuses.find((s) => s.workspace === ledgerUri && (s.state === 'ready' || s.state === 'partial')),
        READY_TIMEOUT_MS,
        () => stderr,
      );
      const both: FindResult = await c().sendRequest(FindRequest, {
        query: 'post_ledger_entry compute_invoice_total',
        limit: 20,
      });
      assert.deepEqual(new Set(both.workspaceFolders), new Set([shopUri, ledgerUri]));
      assert.deepEqual(new Set(both.results.map((r) => r.workspaceFolder)), new Set([shopUri, ledgerUri]));
      const scores = both.results.map((r) => r.score);
      assert.deepEqual(
        scores,
        [...scores].sort((a, b) => b - a),
      );
      const model = new EvidenceModel();
      model.add({ query: both.query }, both);
      const [answer] = model.children(undefined);
      const folders = model.children(answer).filter((n: EvidenceNode) => n.kind === 'folder');
      assert.deepEqual(new Set(folders.map((f) => present(f).label)), new Set(['ledger', path.basename(ws)]));
      const ledgerNode = folders.find((f) => present(f).label === 'ledger');
      const [ledgerFile] = model.children(ledgerNode);
      const [entry] = model.children(ledgerFile).map(present);
      assert.equal(entry.location?.uri, `${ledgerUri}/ledger.py`);
      // The ledger folder's own budget; the shop keeps the window's (cleared: the default).
      const inLedger: FindResult = await c().sendRequest(FindRequest, {
        query: 'post_ledger_entry',
        workspaceFolder: ledgerUri,
      });
      assert.equal(inLedger.context.budget, 900);
      assert.ok(inLedger.results.every((r) => r.workspaceFolder === ledgerUri));
      const inShop: FindResult = await c().sendRequest(FindRequest, {
        query: 'compute_invoice_total',
        workspaceFolder: shopUri,
      });
      assert.equal(inShop.context.budget, 2000);
    });
  },
);
