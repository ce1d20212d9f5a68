// The Watcher extension: starts `watcher-lsp` over stdio and shows what running watchers found.
//
// The language server does the work (it follows the journal, publishes diagnostics, offers the
// quick fixes Inject / Apply fix / Dismiss and runs them). This extension starts it, says clearly
// when it cannot, and adds what VS Code users expect: a status-bar item, palette commands, an
// output channel with the server's log. It sends no telemetry.

import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, RevealOutputChannelOn } from "vscode-languageclient/node";
import { registerCommands } from "./commands";
import { MINIMUM_SERVER_VERSION, ServerCommand, atLeast, cliFor, serverCommand, serverEnvironment } from "./server";
import { WatcherStatus } from "./status";

const LANGUAGES = ["python", "javascript", "javascriptreact", "typescript", "typescriptreact", "shellscript"];

/** The settings whose change needs a new server process. */
const RESTART_ON = ["watcher.serverCommand", "watcher.journal", "watcher.pollInterval"];

/** A client whose start-up failure is reported by the extension's own notification (with the fix). */
class WatcherClient extends LanguageClient {
  override error(message: string, data?: unknown, showNotification: boolean | "force" = true): void {
    const startFailed = message.includes("couldn't create connection to server");
    super.error(message, data, startFailed ? false : showNotification);
  }
}

export class WatcherExtension implements vscode.Disposable {
  client: LanguageClient | undefined;
  readonly log = vscode.window.createOutputChannel("Watcher", { log: true });
  readonly status = new WatcherStatus(this);
  private starting: Promise<void> | undefined;
  private server: ServerCommand | undefined;

  /** The `watcher` CLI of the environment the server runs from (for replays). */
  async cliCommand(): Promise<[string, string[]]> {
    return cliFor(this.server ?? (await serverCommand(this.log)));
  }

  async start(): Promise<void> {
    this.starting ??= this.startServer().finally(() => {
      this.starting = undefined;
      this.status.show();
    });
    this.status.show();
    return this.starting;
  }

  /** True while the server is being started (the status bar says so). */
  get isStarting(): boolean {
    return this.starting !== undefined;
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.status.show();
    if (client !== undefined) {
      await client.stop().catch((error) => this.log.warn(`stopping the server: ${String(error)}`));
    }
  }

  dispose(): void {
    void this.stop();
    this.status.dispose();
    this.log.dispose();
  }

  private async startServer(): Promise<void> {
    const server = await serverCommand(this.log);
    this.server = server;
    this.log.info(`starting ${[server.command, ...server.args].join(" ")} (${server.origin})`);
    const selector = LANGUAGES.flatMap((language) => [
      { scheme: "file", language },
      { scheme: "untitled", language },
      { scheme: "vscode-notebook-cell", language },
    ]);
    const clientOptions: LanguageClientOptions = {
      documentSelector: selector,
      outputChannel: this.log,
      traceOutputChannel: this.log,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationFailedHandler: () => false, // no retry: the notification says how to fix it
    };
    const client = new WatcherClient(
      "watcher",
      "Watcher",
      { command: server.command, args: server.args, options: { env: serverEnvironment() } }, // stdio, no --stdio flag
      clientOptions,
    );
    try {
      await client.start();
    } catch (error) {
      await client.dispose().catch(() => undefined);
      this.status.show();
      void this.cannotStart(server, error);
      return;
    }
    const info = client.initializeResult?.serverInfo;
    if (info?.name !== "watcher-lsp" || !atLeast(info.version ?? "0", MINIMUM_SERVER_VERSION)) {
      await client.stop().catch(() => undefined);
      this.status.show();
      void this.tooOld(server, info);
      return;
    }
    this.log.info(`watcher-lsp ${info.version} is running`);
    this.client = client;
    client.onNotification("watcher/interjection", () => this.status.refreshSoon());
    this.status.show();
  }

  private async cannotStart(server: ServerCommand, error: unknown): Promise<void> {
    const reason = String(error instanceof Error ? error.message : error);
    const missing = /ENOENT/.test(reason) ? `${server.command} was not found` : "it stopped before it answered";
    this.log.error(`the language server did not start (${server.origin}): ${reason}`);
    const choice = await vscode.window.showErrorMessage(
      `Watcher: the language server did not start: ${missing} (${server.origin}). ` +
        `Install it with pip install 'watcher[lsp]' in the environment VS Code runs in, ` +
        `or set "watcher.serverCommand" to the full path of watcher-lsp.`,
      "Open Settings",
      "Show Log",
    );
    await this.followUp(choice);
  }

  private async tooOld(server: ServerCommand, info: { name: string; version?: string } | undefined): Promise<void> {
    const found = info === undefined ? "a server that did not say its name" : `${info.name} ${info.version ?? "(no version)"}`;
    this.log.error(`${server.origin} started ${found}; this extension needs watcher-lsp ${MINIMUM_SERVER_VERSION} or newer`);
    const choice = await vscode.window.showErrorMessage(
      `Watcher: ${server.origin} started ${found}, but this extension needs watcher-lsp ${MINIMUM_SERVER_VERSION} or newer. ` +
        `Upgrade it with pip install -U 'watcher[lsp]', or point "watcher.serverCommand" at a newer one.`,
      "Open Settings",
      "Show Log",
    );
    await this.followUp(choice);
  }

  private async followUp(choice: string | undefined): Promise<void> {
    if (choice === "Open Settings") {
      await vscode.commands.executeCommand("workbench.action.openSettings", "watcher.serverCommand");
    } else if (choice === "Show Log") {
      this.log.show();
    }
  }
}

let extension: WatcherExtension | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extension = new WatcherExtension();
  context.subscriptions.push(extension, ...registerCommands(extension));
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (RESTART_ON.some((setting) => event.affectsConfiguration(setting))) {
        void extension?.restart();
      }
    }),
  );
  await extension.start();
}

export async function deactivate(): Promise<void> {
  await extension?.stop();
}
