/**
 * Caps on what a reward function reads. Completions and, on the stateless
 * `POST /v1/envs/{env}/score`, reference answers too are chosen by the client, and
 * several rewards cost more than linear time in their length. A reward whose input is
 * past its environment's cap scores 0 with this error as the component's reason: the
 * episode or item is still scored (a model that rambles earns nothing, and a trainer's
 * batch is not refused for one bad rollout), and the work done stays bounded.
 */
export class AnswerTooLongError extends Error {
  override readonly name = "AnswerTooLongError";
  constructor(
    readonly what: string,
    readonly length: number,
    readonly limit: number,
    readonly unit: "characters" | "elements" = "characters",
  ) {
    super(`${what} is ${length} ${unit}, past this environment's limit of ${limit}; it scores 0`);
  }
}

/**
 * `text` split into code points, or AnswerTooLongError past `limit` code points. The
 * UTF-16 length is checked first, so an over-long string is refused without splitting it.
 *
 * @example const chars = codePointsWithin(answer, 10_000, "answer");
 */
export function codePointsWithin(text: string, limit: number, what: string): string[] {
  // A code point is one or two UTF-16 units, so past 2·limit units it is over for sure.
  if (text.length > 2 * limit) throw new AnswerTooLongError(what, text.length, limit);
  const chars = Array.from(text);
  if (chars.length > limit) throw new AnswerTooLongError(what, chars.length, limit);
  return chars;
}

/** `text` itself, or AnswerTooLongError past `limit` UTF-16 units. */
export function textWithin(text: string, limit: number, what: string): string {
  if (text.length > limit) throw new AnswerTooLongError(what, text.length, limit);
  return text;
}
