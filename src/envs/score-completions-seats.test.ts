import { describe, expect, it } from "vitest";
import { ticTacToe2p } from "./builtin/tic-tac-toe/two-player.js";
import { reverseText } from "./builtin/reverse-text/index.js";
import { scoreCompletions } from "./score-completions.js";

const item = (seat: string | undefined, group: string | undefined, content: string) => ({
  prompt: [{ role: "user" as const, content: "Your move." }],
  completion: [{ role: "assistant" as const, content }],
  ...(seat === undefined ? {} : { seat }),
  ...(group === undefined ? {} : { group }),
});

describe("stateless scoring of a seated environment's completions", () => {
  it("scores each seat's conversation with advantages per seat: a group never mixes seats", async () => {
    const res = await scoreCompletions(ticTacToe2p, {
      items: [item("x", "x-0", "<move>5</move>"), item("x", "x-0", "five"), item("o", "o-0", "<move>1</move>"), item("o", "o-0", "<move>1</move>")],
      scale_advantages: false,
    });
    // Format is the only component a bare completion can earn (the game needs its state).
    const format = (i: number) => res.results[i]?.score.components.find((c) => c.name === "format")?.score;
    expect([format(0), format(1)]).toEqual([1, 0]);
    expect(res.results[0]?.advantage).toBeGreaterThan(0);
    expect(res.results[1]?.advantage).toBeLessThan(0);
    expect(res.results[2]?.advantage).toBe(0);
    expect(res.groups.map((g) => g.group)).toEqual(["x-0", "o-0"]);
  });

  it("refuses a group that mixes seats, an item without its seat, an unknown seat, and a seat on a one-player environment", async () => {
    const code = (p: Promise<unknown>) => p.then(() => "ok", (e: { code: string }) => e.code);
    expect(await code(scoreCompletions(ticTacToe2p, { items: [item("x", "g", "<move>1</move>"), item("o", "g", "<move>2</move>")], scale_advantages: false }))).toBe("invalid_request");
    expect(await code(scoreCompletions(ticTacToe2p, { items: [item(undefined, "g", "<move>1</move>")], scale_advantages: false }))).toBe("seat_required");
    expect(await code(scoreCompletions(ticTacToe2p, { items: [item("z", undefined, "<move>1</move>")], scale_advantages: false }))).toBe("unknown_seat");
    expect(await code(scoreCompletions(reverseText, { items: [item("x", undefined, "<answer>a</answer>")], scale_advantages: false }))).toBe("seats_unsupported");
  });
});
