// Seated episodes in the console (docs/multi-agent.md): who plays each seat, and what was
// done in which seat, read back from the seats' own conversations.
import type { EnvInfo, Episode } from "../../src/protocol/index.js";

/** The player that is the person at the console (the protocol's `client`). */
export const CLIENT = "client";

/**
 * Who plays each seat of an episode reset with `requested`: the environment's defaults
 * with the request's choices over them (what the server records at reset).
 */
export function assignmentOf(info: EnvInfo, requested: Record<string, string> | null | undefined): Record<string, string> {
  return Object.fromEntries((info.seats ?? []).map((s) => [s.name, requested?.[s.name] ?? s.default]));
}

/** The seats a person plays (`client`), in the environment's order. */
export function clientSeats(info: EnvInfo, assignment: Record<string, string>): string[] {
  return (info.seats ?? []).map((s) => s.name).filter((name) => assignment[name] === CLIENT);
}

/** A player as the console names it: `you` for the client, else the policy's name. */
export function playerLabel(player: string): string {
  return player === CLIENT ? "you" : player;
}

/** `seats` in a page's query (`{"o":"minimax"}`), or null when absent or not an object of strings. */
export function seatsParam(raw: string | null): Record<string, string> | null {
  if (!raw) return null;
  try {
    const value = JSON.parse(raw) as unknown;
    if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
    const entries = Object.entries(value as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === "string");
    return Object.fromEntries(entries);
  } catch {
    return null;
  }
}

/**
 * Every step a person made, in order, from the client seats' own conversations: a seat's
 * view lists its messages turn by turn (`turns[].message_count`), and the turn in which a
 * client seat has an assistant message is the turn it stepped (the environment's players
 * sit in other seats). What the copied curl and Python replay.
 */
export function seatedSteps(views: Readonly<Record<string, Episode>>): { turn: number; seat: string; message: Episode["messages"][number] }[] {
  const steps: { turn: number; seat: string; message: Episode["messages"][number] }[] = [];
  for (const [seat, view] of Object.entries(views)) {
    let at = 0;
    for (const t of view.turns) {
      const first = view.messages[at];
      if (t.turn > 0 && t.message_count > 0 && first?.role === "assistant") steps.push({ turn: t.turn - 1, seat, message: first });
      at += t.message_count;
    }
  }
  return steps.sort((a, b) => a.turn - b.turn);
}
