// Which program runs the watcher language server, and with what environment.
//
// The order: the `watcher.serverCommand` setting when the user set one (an explicit choice wins);
// else the interpreter selected in the Python extension, when watcher is installed there; else
// `watcher-lsp` on PATH. Each choice is logged so the output channel says which one ran.

import { execFile } from "node:child_process";
import * as path from "node:path";
import * as vscode from "vscode";
import { readSettings } from "./settings";

/** The program and arguments that start `watcher-lsp` over stdio, and where they came from. */
export interface ServerCommand {
  command: string;
  args: string[];
  origin: string;
}

/** The oldest `watcher-lsp` whose commands and code actions this extension relies on. */
export const MINIMUM_SERVER_VERSION = "0.1.0";

const PYTHON_EXTENSION = "ms-python.python";

interface PythonEnvironmentApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string };
    resolveEnvironment(env: { path: string }): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
  };
}

export async function serverCommand(log: vscode.LogOutputChannel): Promise<ServerCommand> {
  const settings = readSettings();
  const poll = ["--poll", String(settings.pollInterval)];
  const configured = settings.serverCommand;
  if (configured.length > 0) {
    const [command, ...args] = configured;
    return { command, args: [...args, ...poll], origin: 'the "watcher.serverCommand" setting' };
  }
  const python = await selectedInterpreter(log);
  if (python !== undefined) {
    if (await hasWatcher(python)) {
      return { command: python, args: ["-m", "watcher.lsp_bridge", ...poll], origin: "the Python extension's interpreter" };
    }
    log.info(`the selected interpreter ${python} has no watcher[lsp] installed; trying watcher-lsp on PATH`);
  }
  return { command: "watcher-lsp", args: poll, origin: "watcher-lsp on PATH" };
}

async function selectedInterpreter(log: vscode.LogOutputChannel): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension<PythonEnvironmentApi>(PYTHON_EXTENSION);
  if (extension === undefined) {
    return undefined;
  }
  try {
    const api = extension.isActive ? extension.exports : await extension.activate();
    const environments = api?.environments;
    if (environments === undefined) {
      return undefined;
    }
    const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
    const resolved = await environments.resolveEnvironment(environments.getActiveEnvironmentPath(resource));
    return resolved?.executable.uri?.fsPath;
  } catch (error) {
    log.warn(`cannot ask the Python extension for its interpreter: ${String(error)}`);
    return undefined;
  }
}

function hasWatcher(python: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(python, ["-c", "import watcher.lsp_bridge.server"], { timeout: 20_000 }, (error) => resolve(!error));
  });
}

/** The server's environment: the editor's own, plus the journal chosen in the settings. */
export function serverEnvironment(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  const journal = readSettings().journal;
  if (journal !== "") {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? process.cwd();
    env.WATCHER_JOURNAL = path.resolve(folder, journal);
  }
  return env;
}

/** True when `version` (a PEP 440 or semver string) is at least `minimum`, comparing release numbers. */
export function atLeast(version: string, minimum: string): boolean {
  const numbers = (v: string) => (v.match(/^\d+(\.\d+)*/)?.[0] ?? "0").split(".").map(Number);
  const [a, b] = [numbers(version), numbers(minimum)];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const [x, y] = [a[i] ?? 0, b[i] ?? 0];
    if (x !== y) {
      return x > y;
    }
  }
  return true;
}

/** The `watcher` command line next to the server: the same interpreter, or the same folder. */
export function cliFor(server: ServerCommand): [string, string[]] {
  if (server.args[0] === "-m" && server.args[1] === "watcher.lsp_bridge") {
    return [server.command, ["-m", "watcher"]];
  }
  if (path.isAbsolute(server.command) && path.basename(server.command).startsWith("watcher-lsp")) {
    return [path.join(path.dirname(server.command), "watcher"), []];
  }
  return ["watcher", []];
}
