import { describe, expect, it } from "vitest";
import { call, ORACLE, say } from "../../../../test/support/customer-service-oracle.js";
import { contentText, type AssistantMessage } from "../../../protocol/index.js";
import { scoreEpisode, startEpisode, stepEpisode, type EpisodeSnapshot } from "../../engine.js";
import { seatView } from "../../seats.js";
import { customerService } from "./index.js";
import { GREETING, STOP_TOKEN } from "./prompts.js";
import type { CustomerServiceState } from "./state.js";
import { customerTasks, taskById } from "./tasks.js";

/**
 * Whole episodes through the engine (startEpisode / stepEpisode / scoreEpisode), the
 * agent seat played by the test and the user seat by the scripted user.
 */

const env = customerService;

async function start(taskId: string): Promise<EpisodeSnapshot> {
  const task = taskById(taskId);
  const split = task.split;
  const index = customerTasks.filter((t) => t.split === split).findIndex((t) => t.id === taskId);
  return startEpisode(env, { split, index, seed: 7 });
}

/** Plays the agent's moves in order; stops early if the episode ends. */
async function play(taskId: string, moves: readonly AssistantMessage[]): Promise<EpisodeSnapshot> {
  let snapshot = await start(taskId);
  for (const move of moves) {
    expect(snapshot.done, `${taskId}: the episode ended (${snapshot.stopReason}) before the agent's move ${JSON.stringify(move)}`).toBe(false);
    snapshot = (await stepEpisode(env, snapshot, move, { seat: "agent" })).snapshot;
    expect(snapshot.error, `${taskId}: ${snapshot.error}`).toBeNull();
  }
  return snapshot;
}

const stateOf = (s: EpisodeSnapshot) => s.state as CustomerServiceState;
const agentView = (s: EpisodeSnapshot) => seatView(s.messages, "agent");
const userView = (s: EpisodeSnapshot) => seatView(s.messages, "user");

describe("customer-service episodes", () => {
  it("opens with the agent's policy and the user's first words, the user having been greeted", async () => {
    const s = await start("cancel-by-mistake");
    expect(s.done).toBe(false);
    expect(stateOf(s)).toMatchObject({ to_play: "agent", seats: { agent: "client", user: "scripted" }, auth_user_id: null });
    const view = agentView(s);
    expect(view.map((m) => m.role)).toEqual(["system", "user"]);
    expect(contentText(view[0]!.content)).toMatch(/Authenticate the user before anything else/);
    expect(view[1]).toEqual({ role: "user", content: "Hi, I'd like to cancel an order I placed by mistake." });
    expect(userView(s)).toEqual([
      { role: "user", content: GREETING },
      { role: "assistant", content: "Hi, I'd like to cancel an order I placed by mistake." },
    ]);
  });

  it("relays words between the seats and keeps tool results with the agent", async () => {
    const s0 = await start("cancel-by-mistake");
    const asked = await stepEpisode(env, s0, say("Could you please give me your email address?"), { seat: "agent" });
    expect(asked.reply).toEqual([
      { role: "user", content: "Could you please give me your email address?", name: "user" },
      { role: "assistant", content: "Sure, it's noah.kim@example.com.", name: "user" },
      { role: "user", content: "Sure, it's noah.kim@example.com.", name: "agent" },
    ]);
    const looked = await stepEpisode(env, asked.snapshot, call("find_user_by_email", { email: "noah.kim@example.com" }), { seat: "agent" });
    expect(looked.reply).toEqual([{ role: "tool", tool_call_id: expect.any(String), content: "noah_kim_1001", name: "agent" }]);
    expect(stateOf(looked.snapshot)).toMatchObject({ to_play: "agent", auth_user_id: "noah_kim_1001", tool_calls: 1, turns: 2, user_turns: 2 });
    expect(userView(looked.snapshot).some((m) => contentText(m.content).includes("noah_kim_1001"))).toBe(false);
  });

  it.each(customerTasks.map((t) => t.id))("an oracle agent scores 1 on %s", async (taskId) => {
    const moves = ORACLE[taskId];
    expect(moves, `no oracle for ${taskId}`).toBeDefined();
    const s = await play(taskId, moves!);
    expect(s.done).toBe(true);
    const task = taskById(taskId);
    const state = stateOf(s);
    expect(s.stopReason).toBe(state.transferred ? "transfer_to_human" : "user_stop");
    expect(state.writes).toBe(task.actions.length);
    if (task.ask_verdict) expect(state.verdict).toBe("resolved");
    const score = await scoreEpisode(env, s);
    expect(score.reward, JSON.stringify(score)).toBe(1);
    expect(score.components.map((c) => [c.name, c.weight, c.score])).toEqual([
      ["db_match", 1, 1],
      ["user_verdict", 1, 0],
    ]);
    expect(score.seats?.agent?.reward).toBe(1);
    expect(score.seats?.user?.reward).toBe(1);
    expect(score.metrics).toMatchObject({ tool_calls: moves!.filter((m) => m.tool_calls).length, writes: task.actions.length });
  });

  it("scores 0 when the agent writes the wrong thing", async () => {
    // Cancels with a reason the user never gave.
    const wrongReason = ORACLE["cancel-by-mistake"]!.map((m) =>
      m.tool_calls?.[0]?.function.name === "cancel_pending_order" ? call("cancel_pending_order", { order_id: "#W2001", reason: "no longer needed" }) : m,
    );
    const a = await play("cancel-by-mistake", wrongReason);
    expect(a.done).toBe(true);
    expect((await scoreEpisode(env, a)).reward).toBe(0);

    // Cancels the user's other, pending order when the one they asked about cannot be cancelled.
    const b = await play("delivered-cannot-cancel", [
      ...ORACLE["delivered-cannot-cancel"]!.slice(0, 4),
      say("That order was delivered, but your backpack order #W3002 is pending. Shall I cancel that one? Please confirm."),
      call("cancel_pending_order", { order_id: "#W3002", reason: "no longer needed" }),
      say("Order #W3002 has been cancelled."),
    ]);
    expect(b.done).toBe(true);
    const score = await scoreEpisode(env, b);
    expect(score.reward).toBe(0);
    expect(score.components.find((c) => c.name === "db_match")?.score).toBe(0);
  });

  it("scores 0 when the database is right but the user, asked for a verdict, is not satisfied", async () => {
    // The return is made, but the refund amount is never told.
    const moves = ORACLE["return-lamp-refund"]!.map((m) => (m.content && contentText(m.content).includes("$39.90") ? say("Your return is requested.") : m));
    const s = await play("return-lamp-refund", moves);
    expect(stateOf(s).verdict).toBe("unresolved");
    const score = await scoreEpisode(env, s);
    expect(score.components.map((c) => [c.name, c.score])).toEqual([
      ["db_match", 1],
      ["user_verdict", -1],
    ]);
    expect(score.reward).toBe(0);
  });

  it("never shows the user's hidden instructions to the agent, nor stores them in the episode", async () => {
    for (const task of customerTasks) {
      const s = await play(task.id, ORACLE[task.id]!);
      const seen = JSON.stringify(agentView(s));
      expect(seen).not.toContain(task.instructions);
      // No sentence of the instructions either (the scripted user's lines are the task's script, written apart).
      for (const sentence of task.instructions.split(/(?<=\.)\s+/).filter((x) => x.length > 30)) expect(seen).not.toContain(sentence);
      expect(JSON.stringify(s)).not.toContain(task.instructions);
      expect(seen).not.toContain(STOP_TOKEN);
      expect(seen).not.toContain("VERDICT");
    }
  });

  it("ends a transfer after the user's last word, and a conversation that runs too long", async () => {
    const t = await play("damaged-wants-human", ORACLE["damaged-wants-human"]!);
    expect(t.stopReason).toBe("transfer_to_human");
    expect(contentText(userView(t).at(-1)!.content)).toBe(`Thank you.\nVERDICT: resolved\n${STOP_TOKEN}`);

    let s = await start("cancel-by-mistake");
    for (let i = 0; i < env.maxTurns && !s.done; i++) s = (await stepEpisode(env, s, call("get_product", { product_id: "P100" }), { seat: "agent" })).snapshot;
    expect([s.done, s.stopReason, s.truncated, s.turn]).toEqual([true, "max_turns", true, env.maxTurns]);
    expect((await scoreEpisode(env, s)).reward).toBe(0);
  });

  it("lets the scripted user give up on an agent that makes no sense", async () => {
    const s = await play("cancel-by-mistake", [say("Lovely weather."), say("Indeed."), say("Quite.")]);
    expect([s.done, s.stopReason]).toEqual([true, "user_stop"]);
    expect((await scoreEpisode(env, s)).reward).toBe(0);
  });
});
