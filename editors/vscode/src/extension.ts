// The Watcher extension: starts `watcher-lsp` over stdio and shows what running watchers found.
//
// The language server does the work (it follows the journal, publishes diagnostics, offers the
// quick fixes Inject / Apply fix / Dismiss and runs them). This extension starts it, says clearly
// when it cannot, and adds what VS Code users expect: a status-bar item, palette commands, an
// output channel with the server's log. It sends no telemetry.

import type { ChildProcess } from "node:child_process";
import * as vscode from "vscode";
import {
  CloseAction,
  ErrorHandler,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  State,
} from "vscode-languageclient/node";
import { registerCommands } from "./commands";
import { MINIMUM_SERVER_VERSION, ServerCommand, atLeast, cliFor, serverCommand, serverEnvironment } from "./server";
import { readSettings, warnAbout } from "./settings";
import { WatcherStatus } from "./status";

const LANGUAGES = ["python", "javascript", "javascriptreact", "typescript", "typescriptreact", "shellscript"];

/** How many times a server that crashes is restarted within 3 minutes before the extension gives up. */
const MAX_RESTARTS = 4;

/** How long the server has to answer the editor's first request: a program that is not watcher-lsp may never answer. */
const START_TIMEOUT_S = 20;

/** The settings whose change needs a new server process. */
const RESTART_ON = ["watcher.serverCommand", "watcher.journal", "watcher.pollInterval"];

/** A client whose start-up failure is reported by the extension's own notification (with the fix). */
class WatcherClient extends LanguageClient {
  override error(message: string, data?: unknown, showNotification: boolean | "force" = true): void {
    const startFailed =
      message.includes("couldn't create connection to server") ||
      (this.state !== State.Running && message.includes("connection to server is erroring")); // EPIPE, twice
    super.error(message, data, startFailed ? false : showNotification);
  }

  /** End a server that never answered `initialize`: its start then fails as a server that exited does. */
  endUnanswered(): void {
    // vscode-languageclient 9 keeps the process it spawned here, and cannot stop a client that is still starting
    (this as unknown as { _serverProcess?: ChildProcess })._serverProcess?.kill("SIGKILL");
  }
}

/** The output channel the client writes the server's stderr to, keeping its last line for our messages. */
class LastWords {
  private tail = "";
  readonly channel: vscode.LogOutputChannel;

  constructor(log: vscode.LogOutputChannel) {
    this.channel = new Proxy(log, {
      get: (target, name) => {
        if (name === "append") {
          return (text: string) => {
            this.tail = (this.tail + text).slice(-2000);
            target.append(text);
          };
        }
        const value: unknown = Reflect.get(target, name);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  }

  /** The last line the server wrote to stderr (empty when it wrote none). */
  last(): string {
    const lines = this.tail.split(/\r?\n/).filter((line) => line.trim() !== "");
    return (lines.pop() ?? "").trim().slice(0, 300);
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
    void warnAbout(readSettings().problems, this.log);
    const server = await serverCommand(this.log);
    this.server = server;
    this.log.info(`starting ${[server.command, ...server.args].join(" ")} (${server.origin})`);
    const selector = LANGUAGES.flatMap((language) => [
      { scheme: "file", language },
      { scheme: "untitled", language },
      { scheme: "vscode-notebook-cell", language },
    ]);
    const stderr = new LastWords(this.log);
    const clientOptions: LanguageClientOptions = {
      documentSelector: selector,
      outputChannel: stderr.channel,
      traceOutputChannel: this.log,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationFailedHandler: () => false, // no retry: the notification says how to fix it
      errorHandler: this.errorHandler(() => client),
    };
    const client = new WatcherClient(
      "watcher",
      "Watcher",
      { command: server.command, args: server.args, options: { env: serverEnvironment() } }, // stdio, no --stdio flag
      clientOptions,
    );
    let unanswered = false;
    const timer = setTimeout(() => {
      unanswered = true;
      client.endUnanswered();
    }, START_TIMEOUT_S * 1000);
    let failure: unknown;
    try {
      await client.start();
    } catch (error) {
      failure = error;
    } finally {
      clearTimeout(timer);
    }
    if (failure !== undefined || client.state !== State.Running) {
      // (a server that ended before answering is not restarted: start() then returns, not running)
      await client.dispose().catch(() => undefined);
      this.status.show();
      void this.cannotStart(server, failure ?? "it ended before it answered", stderr.last(), unanswered);
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

  /** vscode-languageclient's restart policy; when it gives up, the status bar and a message say so. */
  private errorHandler(client: () => LanguageClient): ErrorHandler {
    let fallback: ErrorHandler | undefined;
    const policy = () => (fallback ??= client().createDefaultErrorHandler(MAX_RESTARTS));
    return {
      error: (error, message, count) => policy().error(error, message, count),
      closed: async () => {
        if (client().state === State.Starting) {
          // it ended before answering `initialize`: the start fails and says why, where a restart would fail again
          return { action: CloseAction.DoNotRestart, handled: true };
        }
        const result = await policy().closed();
        if (result.action === CloseAction.DoNotRestart && this.client === client()) {
          void this.lost();
          return { ...result, handled: true };
        }
        return result;
      },
    };
  }

  /** The server crashed once too often: it stays stopped until the person restarts it. */
  private async lost(): Promise<void> {
    this.client = undefined;
    this.status.show();
    this.log.error(`the language server stopped ${MAX_RESTARTS + 1} times in 3 minutes; it is not restarted again`);
    const choice = await vscode.window.showErrorMessage(
      `Watcher: the language server stopped ${MAX_RESTARTS + 1} times in 3 minutes and is not restarted again. ` +
        `See the log for why, then run "Watcher: Restart Server".`,
      "Show Log",
      "Restart Server",
    );
    if (choice === "Show Log") {
      this.log.show();
    } else if (choice === "Restart Server") {
      await this.restart();
    }
  }

  private async cannotStart(server: ServerCommand, error: unknown, said: string, unanswered: boolean): Promise<void> {
    const reason = unanswered
      ? `it did not answer within ${START_TIMEOUT_S} s and was stopped`
      : String(error instanceof Error ? error.message : error);
    this.log.error(`the language server did not start (${server.origin}): ${reason}`);
    const message = unanswered
      ? `Watcher: the language server did not start: ${server.command} (${server.origin}) did not answer within ` +
        `${START_TIMEOUT_S} s, so it was stopped. Is it watcher-lsp? Fix "watcher.serverCommand", ` +
        `then run "Watcher: Restart Server".`
      : /ENOENT/.test(reason)
      ? `Watcher: the language server did not start: ${server.command} was not found (${server.origin}). ` +
        `Install it with pip install 'watcher[lsp]' in the environment VS Code runs in, ` +
        `or set "watcher.serverCommand" to the full path of watcher-lsp.`
      : `Watcher: the language server did not start: ${server.command} (${server.origin}) stopped before it answered` +
        (said ? `, saying: ${said}` : "; its reason is in the log") +
        `. Fix that, then run "Watcher: Restart Server".`;
    const choice = await vscode.window.showErrorMessage(message, "Open Settings", "Show Log");
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
