/** Per-letter Wordle feedback: G right letter right spot, Y in the word elsewhere, - not (or no more copies). */
export type Mark = "G" | "Y" | "-";

/**
 * Greens first, then yellows left to right while the answer has copies of the letter
 * left unmatched, so a repeated letter is yellow only as often as the answer allows:
 * SPEED against ABIDE gives `- - Y - Y` (one E in ABIDE: the first E is yellow, the
 * second gray; D is yellow).
 */
export function scoreGuess(guess: string, answer: string): Mark[] {
  const g = guess.toLowerCase();
  const a = answer.toLowerCase();
  if (g.length !== a.length) throw new Error(`guess "${guess}" and answer differ in length`);
  const marks: Mark[] = Array<Mark>(g.length).fill("-");
  const unmatched = new Map<string, number>();
  for (let i = 0; i < a.length; i++) {
    if (g[i] === a[i]) marks[i] = "G";
    else unmatched.set(a[i] as string, (unmatched.get(a[i] as string) ?? 0) + 1);
  }
  for (let i = 0; i < g.length; i++) {
    if (marks[i] === "G") continue;
    const left = unmatched.get(g[i] as string) ?? 0;
    if (left > 0) {
      marks[i] = "Y";
      unmatched.set(g[i] as string, left - 1);
    }
  }
  return marks;
}

export const greens = (marks: readonly Mark[]): number => marks.filter((m) => m === "G").length;
export const yellows = (marks: readonly Mark[]): number => marks.filter((m) => m === "Y").length;
