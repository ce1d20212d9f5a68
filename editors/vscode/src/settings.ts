// The extension's settings, read with their types checked.
//
// settings.json is hand-written: "watcher.serverCommand": "watcher-lsp" (a string, not a list) or
// "watcher.pollInterval": "fast" must not stop the extension with a TypeError. A value of the
// wrong type is replaced by the default and named in one warning that says what to write.

import * as vscode from "vscode";

/** The settings as the extension uses them, and what was wrong with the ones given. */
export interface WatcherSettings {
  serverCommand: string[];
  journal: string;
  pollInterval: number;
  roles: string[];
  evaluator: string;
  problems: string[];
}

const DEFAULT_POLL = 0.05;

function strings(config: vscode.WorkspaceConfiguration, key: string, example: string, problems: string[]): string[] {
  const value = config.get<unknown>(key, []);
  if (Array.isArray(value) && value.every((part) => typeof part === "string")) {
    return value.filter((part) => part.trim() !== "");
  }
  problems.push(`"watcher.${key}" must be a list of strings, such as ${example}, not ${JSON.stringify(value)}`);
  return [];
}

function text(config: vscode.WorkspaceConfiguration, key: string, fallback: string, problems: string[]): string {
  const value = config.get<unknown>(key, fallback);
  if (typeof value === "string") {
    return value.trim();
  }
  problems.push(`"watcher.${key}" must be a string, not ${JSON.stringify(value)}`);
  return fallback;
}

export function readSettings(): WatcherSettings {
  const config = vscode.workspace.getConfiguration("watcher");
  const problems: string[] = [];
  const serverCommand = strings(config, "serverCommand", '["/home/me/.venv/bin/watcher-lsp"]', problems);
  const roles = strings(config, "roles", '["security", "stuck"]', problems);
  const journal = text(config, "journal", "", problems);
  const evaluator = text(config, "evaluator", "rules", problems) || "rules";
  let pollInterval = config.get<unknown>("pollInterval", DEFAULT_POLL);
  if (typeof pollInterval !== "number" || !Number.isFinite(pollInterval) || pollInterval < 0.01) {
    problems.push(`"watcher.pollInterval" must be a number of seconds, 0.01 or more, such as 0.05, not ${JSON.stringify(pollInterval)}`);
    pollInterval = DEFAULT_POLL;
  }
  return { serverCommand, journal, pollInterval: pollInterval as number, roles, evaluator, problems };
}

/** One warning naming every setting of the wrong type (their defaults are used meanwhile). */
export async function warnAbout(problems: string[], log: vscode.LogOutputChannel): Promise<void> {
  if (problems.length === 0) {
    return;
  }
  for (const problem of problems) {
    log.warn(`setting ignored: ${problem}`);
  }
  const choice = await vscode.window.showWarningMessage(
    `Watcher: ${problems.join("; ")}. Using the default until it is fixed.`,
    "Open Settings",
  );
  if (choice === "Open Settings") {
    await vscode.commands.executeCommand("workbench.action.openSettings", "watcher.");
  }
}
