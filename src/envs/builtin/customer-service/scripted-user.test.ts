import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../../protocol/index.js";
import { GREETING, readVerdict, STOP_TOKEN, TRANSFER_NOTICE } from "./prompts.js";
import { FALLBACK, GIVE_UP, MAX_FALLBACKS, scriptedReply, scriptedVerdict } from "./scripted-user.js";
import type { CustomerServiceState } from "./state.js";
import { initialDatabase, taskById } from "./tasks.js";

/** The user seat's view: the greeting, then alternating user lines (its own) and agent lines. */
function view(...turns: [user: string, agent: string][]): ChatMessage[] {
  return [{ role: "user", content: GREETING }, ...turns.flatMap(([u, a]): ChatMessage[] => [{ role: "assistant", content: u }, { role: "user", content: a }])];
}

function state(taskId: string, over: Partial<CustomerServiceState> = {}): CustomerServiceState {
  return {
    task_id: taskId,
    seats: { agent: "client", user: "scripted" },
    db: initialDatabase(taskById(taskId)),
    auth_user_id: null,
    to_play: "user",
    turns: 0,
    user_turns: 0,
    tool_calls: 0,
    writes: 0,
    transferred: false,
    ended: null,
    verdict: null,
    ...over,
  };
}

const reply = (taskId: string, v: ChatMessage[], over: Partial<CustomerServiceState> = {}) => scriptedReply(taskById(taskId), state(taskId, over), v);

describe("the scripted user", () => {
  it("opens with its request, then answers what the agent asks, by the first matching rule", () => {
    const id = "cancel-by-mistake";
    expect(reply(id, [{ role: "user", content: GREETING }])).toBe("Hi, I'd like to cancel an order I placed by mistake.");
    const opening = "Hi, I'd like to cancel an order I placed by mistake.";
    expect(reply(id, view([opening, "May I have your EMAIL address?"]))).toBe("Sure, it's noah.kim@example.com.");
    expect(reply(id, view([opening, "Which order is it?"]))).toBe("It's order #W2001, the blue T-shirt.");
    expect(reply(id, view([opening, "Why do you want to cancel?"]))).toBe("I ordered it by mistake.");
    // "confirm" comes before "reason" in the script, so a confirmation that names the reason gets a yes.
    expect(reply(id, view([opening, "I'll cancel #W2001 for the reason 'ordered by mistake'. Do you confirm?"]))).toBe("Yes, please cancel it.");
  });

  it("answers by how far the task has got, where a rule says so", () => {
    const id = "cancel-and-readdress";
    const v = view(["Hi! I need two things: cancel one order and change the address on another.", "Which order is it?"]);
    expect(reply(id, v)).toBe("First, please cancel order #W8001, the red T-shirt.");
    expect(reply(id, v, { writes: 1 })).toBe("Please change the shipping address of order #W8002 to 9 Harbor Lane, Seattle, WA 98101, USA.");
    // Both writes done: whatever the agent says next, the user is done.
    expect(reply(id, v, { writes: 2 })).toBe(`That's everything, thank you!\n${STOP_TOKEN}`);
  });

  it("stops when the agent says what it accepts, after the expected writes, or after a transfer", () => {
    const opening = "Hello, I want to cancel my desk lamp order, I don't need it anymore.";
    expect(reply("delivered-cannot-cancel", view([opening, "Sorry, that order Cannot Be Cancelled: it was delivered."]))).toBe(`I see. Okay, thanks anyway.\n${STOP_TOKEN}`);
    // A write on a task that expects none ends it too: the user got something, though not what they asked.
    expect(reply("delivered-cannot-cancel", view([opening, "I cancelled order #W3002 for you."]), { writes: 1 })).toBe(`I see. Okay, thanks anyway.\n${STOP_TOKEN}`);
    expect(reply("cancel-by-mistake", view(["Hi", "Done, it is cancelled."]), { writes: 1 })).toBe(`Thank you, that's all.\n${STOP_TOKEN}`);
    const transferred = [...view(["Hi, I want compensation.", "Let me transfer you."]), { role: "user" as const, content: TRANSFER_NOTICE }];
    expect(reply("damaged-wants-human", transferred, { transferred: true })).toBe(`Thank you.\nVERDICT: resolved\n${STOP_TOKEN}`);
  });

  it("gives its verdict by the task's rule: what the agent said, whether it transferred", () => {
    const lamp = taskById("return-lamp-refund");
    const told = (text: string) => view(["Hi", text]);
    expect(scriptedVerdict(lamp, state(lamp.id, { writes: 1 }), told("Refund: $39.90."))).toBe("resolved");
    expect(scriptedVerdict(lamp, state(lamp.id, { writes: 1 }), told("Your return is requested."))).toBe("unresolved");
    expect(reply(lamp.id, told("Done, $39.90 goes back to your card."), { writes: 1 })).toBe(`Great, thank you.\nVERDICT: resolved\n${STOP_TOKEN}`);
    const human = taskById("damaged-wants-human");
    expect(scriptedVerdict(human, state(human.id, { transferred: false }), told("We cannot help."))).toBe("unresolved");
    expect(readVerdict(`ok\nVERDICT: unresolved\nVERDICT: Resolved\n${STOP_TOKEN}`)).toBe("resolved");
    expect(readVerdict("no verdict here")).toBeNull();
  });

  it("says its fallback line when no rule matches, and gives up after a few", () => {
    const id = "return-lamp-refund";
    expect(reply(id, view(["Hi", "Lovely weather today."]))).toBe(FALLBACK);
    const turns: [string, string][] = [["Hi", "Hm."]];
    for (let i = 0; i < MAX_FALLBACKS; i++) turns.push([FALLBACK, "Hm."]);
    expect(reply(id, view(...turns))).toBe(`${GIVE_UP}\nVERDICT: unresolved\n${STOP_TOKEN}`);
  });

  it("is deterministic: the same view and state give the same line", () => {
    const v = view(["Hi", "What is your email?"]);
    expect(new Set(Array.from({ length: 5 }, () => reply("exchange-shoe-size", v))).size).toBe(1);
  });
});
