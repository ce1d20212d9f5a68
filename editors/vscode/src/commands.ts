// The command palette entries: inject, dismiss, show the history, replay a transcript, the log.
//
// Inject and dismiss go through the server's own commands (`watcher.inject`, `watcher.dismiss`),
// which write to the journal; the process that owns the session applies them. The palette ids
// differ from the server's because vscode-languageclient registers the server's commands itself.

import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import type { WatcherExtension } from "./extension";
import { Finding, WAITING, act, history } from "./history";
import { readSettings } from "./settings";

const ICONS = { critical: "$(error)", warning: "$(warning)", hint: "$(info)" } as const;

interface FindingItem extends vscode.QuickPickItem {
  finding: Finding;
}

export function registerCommands(extension: WatcherExtension): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand("watcher.injectInterjection", () => inject(extension)),
    vscode.commands.registerCommand("watcher.dismissInterjection", () => dismiss(extension)),
    vscode.commands.registerCommand("watcher.showHistory", () => showHistory(extension)),
    vscode.commands.registerCommand("watcher.replayTranscript", (uri?: vscode.Uri) => replay(extension, uri)),
    vscode.commands.registerCommand("watcher.showServerLog", () => extension.log.show()),
    vscode.commands.registerCommand("watcher.restartServer", () => extension.restart()),
  ];
}

function running(extension: WatcherExtension) {
  if (extension.client === undefined) {
    void vscode.window.showWarningMessage(
      'Watcher: the language server is not running. Run "Watcher: Restart Server", or see "Watcher: Show Server Log".',
    );
  }
  return extension.client;
}

function item(finding: Finding): FindingItem {
  const where = finding.interjection.locations
    .map((l) => `${l.path ?? `cell ${l.cell_id}`}:${l.start_line}`)
    .join(", ");
  return {
    label: `${ICONS[finding.interjection.severity] ?? ""} ${finding.watcher} → ${finding.session}`,
    description: `${finding.status}${finding.detail ? `: ${finding.detail}` : ""}${where ? ` · ${where}` : ""}`,
    detail: finding.interjection.content,
    finding,
  };
}

async function pick(extension: WatcherExtension, keep: (f: Finding) => boolean, placeHolder: string) {
  const client = running(extension);
  if (client === undefined) {
    return undefined;
  }
  const { findings } = await history(client);
  const items = findings.filter(keep).reverse().map(item);
  if (items.length === 0) {
    void vscode.window.showInformationMessage(`Watcher: nothing to choose from (${placeHolder.toLowerCase()}).`);
    return undefined;
  }
  const chosen = await vscode.window.showQuickPick(items, { placeHolder, matchOnDetail: true });
  return chosen === undefined ? undefined : { client, finding: chosen.finding };
}

async function inject(extension: WatcherExtension): Promise<void> {
  const chosen = await pick(extension, (f) => f.injectable, "Inject which pending interjection?");
  if (chosen === undefined) {
    return;
  }
  const content = await vscode.window.showInputBox({
    prompt: `Inject into ${chosen.finding.session} (edit the text first if you like)`,
    value: chosen.finding.interjection.content,
  });
  if (content === undefined || content.trim() === "") {
    return;
  }
  await act(chosen.client, "watcher.inject", chosen.finding, content);
}

async function dismiss(extension: WatcherExtension): Promise<void> {
  const chosen = await pick(extension, (f) => f.shown, "Dismiss which interjection?");
  if (chosen !== undefined) {
    await act(chosen.client, "watcher.dismiss", chosen.finding);
  }
}

async function showHistory(extension: WatcherExtension): Promise<void> {
  const chosen = await pick(extension, () => true, "Every interjection of the journals followed, newest first");
  if (chosen === undefined) {
    return;
  }
  const { finding } = chosen;
  const place = finding.interjection.locations.find((l) => l.path);
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (place?.path && folder !== undefined) {
    const file = vscode.Uri.file(path.resolve(folder, place.path));
    const line = Math.max(place.start_line - 1, 0);
    await vscode.window.showTextDocument(file, { selection: new vscode.Range(line, 0, line, 0) });
  }
  const actions = finding.injectable ? ["Inject", "Dismiss"] : finding.shown ? ["Dismiss"] : [];
  const waiting = WAITING.has(finding.status) ? " (waiting)" : "";
  const choice = await vscode.window.showInformationMessage(
    `${finding.watcher} → ${finding.session}, ${finding.status}${waiting}: ${finding.interjection.content}`,
    ...actions,
  );
  if (choice === "Inject" || choice === "Dismiss") {
    await act(chosen.client, choice === "Inject" ? "watcher.inject" : "watcher.dismiss", finding);
  }
}

/** The journal the server follows for the first folder: the setting, else the project's own. */
function journalPath(folder: string): string {
  const configured = readSettings().journal;
  if (configured !== "") {
    return path.resolve(folder, configured);
  }
  for (let dir = folder; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, ".git")) || fs.existsSync(path.join(dir, "pyproject.toml"))) {
      return path.join(dir, ".watcher", "journal.sqlite3");
    }
    if (path.dirname(dir) === dir) {
      return path.join(folder, ".watcher", "journal.sqlite3");
    }
  }
}

/** Run watchers (the roles and evaluator in the settings) over a transcript, into the journal. */
async function replay(extension: WatcherExtension, uri?: vscode.Uri): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (folder === undefined) {
    void vscode.window.showWarningMessage("Watcher: open a folder first; the replay is recorded in its journal.");
    return;
  }
  let transcript = uri?.fsPath;
  if (transcript === undefined) {
    const files = await vscode.workspace.findFiles("**/*.jsonl", "**/node_modules/**", 200);
    const chosen = await vscode.window.showQuickPick(
      files.map((file) => ({ label: vscode.workspace.asRelativePath(file), file })),
      { placeHolder: "Replay which transcript?" },
    );
    transcript = chosen?.file.fsPath;
  }
  if (transcript === undefined) {
    return;
  }
  const settings = readSettings();
  const roles = settings.roles.flatMap((role) => ["--watcher", role]);
  const evaluator = settings.evaluator;
  const args = ["replay", transcript, "--journal", journalPath(folder), "--evaluator", evaluator, ...roles];
  const [command, prefix] = await extension.cliCommand();
  extension.log.info(`replaying: ${[command, ...prefix, ...args].join(" ")}`);
  execFile(command, [...prefix, ...args], { cwd: folder, env: process.env }, (error, stdout, stderr) => {
    extension.log.info(stdout.trimEnd());
    if (error) {
      extension.log.error(stderr.trimEnd() || String(error));
      void vscode.window.showErrorMessage(`Watcher: the replay failed: ${(stderr.trim() || error.message).split("\n").pop()}`);
    } else {
      const summary = stdout.split("\n").find((line) => line.startsWith("replayed")) ?? "the replay finished";
      void vscode.window.showInformationMessage(`Watcher: ${summary}.`);
    }
  });
}
