import type { AnthropicContentBlock, AnthropicMessage } from "./anthropic-response.js";

/**
 * An Anthropic Messages answer replayed as the server-sent events Anthropic streams. The
 * upstream is called without streaming, so each block arrives whole: one delta per block.
 */

function event(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

/** A block as content_block_start announces it: empty, its text or input still to come as deltas. */
function startOf(block: AnthropicContentBlock): AnthropicContentBlock {
  return block.type === "text" ? { type: "text", text: "" } : { ...block, input: {} };
}

function deltaOf(block: AnthropicContentBlock): Record<string, unknown> | null {
  if (block.type === "text") return block.text === "" ? null : { type: "text_delta", text: block.text };
  // Always valid JSON (input is a parsed object), so the SDKs' incremental parser accepts it.
  return { type: "input_json_delta", partial_json: JSON.stringify(block.input) };
}

/**
 * The `event: …\ndata: …\n\n` blocks of the stream equivalent to a message: message_start
 * (the message with no content, no stop reason and no output tokens yet), then per block
 * content_block_start / content_block_delta (text_delta or input_json_delta) /
 * content_block_stop, then message_delta with the stop reason and the usage, and
 * message_stop. Folding the events back (as the SDKs' `messages.stream()` does) gives the
 * message again.
 *
 * @example
 * const events = anthropicSseEvents(chatToAnthropicResponse(completion, "claude-sonnet-4-5"));
 * return new Response(events.join(""), { headers: { "content-type": "text/event-stream" } });
 */
export function anthropicSseEvents(message: AnthropicMessage): string[] {
  const events = [
    event("message_start", {
      message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...message.usage, output_tokens: 0 } },
    }),
  ];
  message.content.forEach((block, index) => {
    events.push(event("content_block_start", { index, content_block: startOf(block) }));
    const delta = deltaOf(block);
    if (delta) events.push(event("content_block_delta", { index, delta }));
    events.push(event("content_block_stop", { index }));
  });
  // message_delta usage is cumulative: the SDKs overwrite the message_start counts with it.
  events.push(event("message_delta", { delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence }, usage: message.usage }));
  events.push(event("message_stop", {}));
  return events;
}
