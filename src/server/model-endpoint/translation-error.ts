/**
 * A request the model endpoint cannot translate for its Chat Completions upstream (a tool
 * type, content block or field with no Chat Completions equivalent, or a malformed body).
 * It carries the HTTP status the agent gets, so the route can answer in the agent's own
 * error shape without guessing; the message names the offending field and says what to do.
 *
 * @example
 * try {
 *   chatRequest = anthropicToChatRequest(body);
 * } catch (err) {
 *   if (err instanceof TranslationError) return anthropicError(err.status, err.message);
 *   throw err;
 * }
 */
export class TranslationError extends Error {
  readonly status: number;

  constructor(message: string, status = 400) {
    super(message);
    this.name = "TranslationError";
    this.status = status;
  }
}
