// What the server knows: the `watcher.history` command's answer, and the commands that act on it.

import { ExecuteCommandRequest, LanguageClient } from "vscode-languageclient/node";

export interface Location {
  path?: string | null;
  cell_id?: string | null;
  start_line: number;
  end_line?: number | null;
}

export interface Finding {
  interjection: {
    id: string;
    content: string;
    severity: "hint" | "warning" | "critical";
    urgent: boolean;
    locations: Location[];
  };
  session: string;
  watcher: string;
  status: string;
  journal: string;
  detail: string;
  shown: boolean;
  injectable: boolean;
}

export interface History {
  watchers: { session: string; watcher: string; journal: string }[];
  findings: Finding[];
}

/** Statuses of an interjection that has not reached its session yet. */
export const WAITING = new Set(["pending", "queued", "requested"]);

export async function history(client: LanguageClient): Promise<History> {
  return client.sendRequest(ExecuteCommandRequest.type, { command: "watcher.history", arguments: [] });
}

/** The attached watchers and the counts of interjections, without the interjections themselves. */
export interface Summary {
  watchers: { session: string; watcher: string; journal: string }[];
  waiting: number;
  total: number;
}

/** What the status bar shows, asked every few seconds: counts, not every finding (a server older than
 * the `summary` argument answers with the whole history, which is counted here). */
export async function summary(client: LanguageClient): Promise<Summary> {
  const answer: Partial<Summary> & Partial<History> = await client.sendRequest(ExecuteCommandRequest.type, {
    command: "watcher.history",
    arguments: [{ summary: true }],
  });
  const findings = answer.findings ?? [];
  return {
    watchers: answer.watchers ?? [],
    waiting: answer.waiting ?? findings.filter((f) => f.shown && WAITING.has(f.status)).length,
    total: answer.total ?? findings.length,
  };
}

/** Ask the server to inject (optionally edited text) or dismiss; the journal's owner applies it. */
export async function act(
  client: LanguageClient,
  command: "watcher.inject" | "watcher.dismiss",
  finding: Finding,
  content?: string,
): Promise<void> {
  const argument: Record<string, string> = { interjection_id: finding.interjection.id, journal: finding.journal };
  if (content !== undefined && content !== finding.interjection.content) {
    argument.content = content;
  }
  await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [argument] });
}
