import type { ResponsesOutputItem, ResponsesResponse } from "./responses-response.js";

/**
 * An OpenAI Responses answer replayed as the server-sent events OpenAI streams. The
 * upstream is called without streaming, so each item's text or arguments come as one delta.
 */

/**
 * The `event: …\ndata: …\n\n` blocks of the stream equivalent to a response, numbered by
 * `sequence_number`: response.created and response.in_progress (the response in progress,
 * no output yet), then per output item response.output_item.added, for a message
 * response.content_part.added / response.output_text.delta / response.output_text.done /
 * response.content_part.done, for a function call response.function_call_arguments.delta /
 * .done, then response.output_item.done; last response.completed, or response.incomplete
 * when the response is incomplete (as OpenAI ends a stream cut by max_output_tokens).
 *
 * @example
 * const events = responsesSseEvents(chatToResponsesResponse(completion, "gpt-5", request));
 * return new Response(events.join(""), { headers: { "content-type": "text/event-stream" } });
 */
export function responsesSseEvents(response: ResponsesResponse): string[] {
  const events: string[] = [];
  let sequence = 0;
  const emit = (type: string, data: Record<string, unknown>): void => {
    events.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
  };

  const started: ResponsesResponse = { ...response, status: "in_progress", output: [], incomplete_details: null, usage: null };
  emit("response.created", { response: started });
  emit("response.in_progress", { response: started });
  response.output.forEach((item, outputIndex) => {
    emit("response.output_item.added", { output_index: outputIndex, item: pending(item) });
    if (item.type === "message") {
      item.content.forEach((part, contentIndex) => {
        const at = { item_id: item.id, output_index: outputIndex, content_index: contentIndex };
        emit("response.content_part.added", { ...at, part: { ...part, text: "" } });
        if (part.text !== "") emit("response.output_text.delta", { ...at, delta: part.text, logprobs: [] });
        emit("response.output_text.done", { ...at, text: part.text, logprobs: [] });
        emit("response.content_part.done", { ...at, part });
      });
    } else {
      const at = { item_id: item.id, output_index: outputIndex };
      if (item.arguments !== "") emit("response.function_call_arguments.delta", { ...at, delta: item.arguments });
      emit("response.function_call_arguments.done", { ...at, arguments: item.arguments });
    }
    emit("response.output_item.done", { output_index: outputIndex, item });
  });
  emit(response.status === "incomplete" ? "response.incomplete" : "response.completed", { response });
  return events;
}

/** An item as response.output_item.added announces it: in progress, its content still to come. */
function pending(item: ResponsesOutputItem): ResponsesOutputItem {
  return item.type === "message" ? { ...item, status: "in_progress", content: [] } : { ...item, status: "in_progress", arguments: "" };
}
