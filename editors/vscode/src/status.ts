// The status-bar item: how many watchers are attached and how many interjections wait.

import * as vscode from "vscode";
import type { WatcherExtension } from "./extension";
import { summary } from "./history";

const REFRESH_MS = 3000;

export class WatcherStatus implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("watcher.status", vscode.StatusBarAlignment.Left, 10);
  private readonly timer: NodeJS.Timeout;
  private readonly diagnostics: vscode.Disposable;
  private soon: NodeJS.Timeout | undefined;

  constructor(private readonly extension: WatcherExtension) {
    this.item.name = "Watcher";
    this.timer = setInterval(() => void this.refresh(), REFRESH_MS);
    this.diagnostics = vscode.languages.onDidChangeDiagnostics(() => this.refreshSoon());
    this.show();
  }

  /** Show the state now: "not running" without a server, else the last counts (refreshed next). */
  show(): void {
    if (this.extension.client === undefined && this.extension.isStarting) {
      this.item.text = "$(sync~spin) Watcher: starting";
      this.item.tooltip = "Starting the watcher language server.";
      this.item.command = "watcher.showServerLog";
      this.item.backgroundColor = undefined;
    } else if (this.extension.client === undefined) {
      this.item.text = "$(eye-closed) Watcher: not running";
      this.item.tooltip = "The watcher language server is not running. Click to see its log.";
      this.item.command = "watcher.showServerLog";
      this.item.backgroundColor = new vscode.ThemeColor("statusBarItem.warningBackground");
    } else {
      this.item.backgroundColor = undefined;
      this.item.command = "watcher.showHistory";
      this.refreshSoon();
    }
    this.item.show();
  }

  refreshSoon(): void {
    clearTimeout(this.soon);
    this.soon = setTimeout(() => void this.refresh(), 200);
  }

  async refresh(): Promise<void> {
    const client = this.extension.client;
    if (client === undefined) {
      return;
    }
    try {
      const { watchers, waiting, total } = await summary(client);
      const names = [...new Set(watchers.map((w) => `${w.watcher} on ${w.session}`))];
      this.item.text = `$(eye) ${watchers.length} watcher${watchers.length === 1 ? "" : "s"} · ${waiting} pending`;
      this.item.tooltip = new vscode.MarkdownString(
        `**Watcher**\n\n${names.length ? names.map((n) => `- ${n}`).join("\n") : "No watcher attached now."}\n\n` +
          `${waiting} interjection${waiting === 1 ? "" : "s"} waiting to reach ${waiting === 1 ? "its" : "their"} session, ` +
          `${total} in the history. Click to show the history.`,
      );
    } catch (error) {
      this.extension.log.warn(`cannot read the watcher history: ${String(error)}`);
    }
  }

  dispose(): void {
    clearInterval(this.timer);
    clearTimeout(this.soon);
    this.diagnostics.dispose();
    this.item.dispose();
  }
}
