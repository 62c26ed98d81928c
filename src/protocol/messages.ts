import { z } from "zod";

/**
 * Chat messages in the OpenAI chat-completions shape, so a trainer passes them to and
 * from its model without translation. Content is text: the environments here are
 * text environments, and a list of text parts is accepted and joined for clients that
 * send the array form.
 */
const TextPart = z
  .object({ type: z.literal("text").meta({ description: "Always `text`." }), text: z.string().meta({ description: "The part's text." }) })
  .meta({ description: "A text content part (the array form of `content`)." });

export const MessageContent = z
  .union([z.string(), z.array(TextPart)])
  .meta({ description: "Message text, or a list of text parts.", example: "Reverse this text: hello" });

/** The optional `name` of a chat message. */
const NameField = z.string().optional().meta({ description: "Optional name of the participant (OpenAI chat shape); kept in the transcript, not interpreted." });

export const ToolCall = z
  .object({
    id: z.string().min(1).meta({ description: "Id the tool result must echo in `tool_call_id`.", example: "call_1" }),
    type: z.literal("function").meta({ description: "Always `function`." }),
    function: z
      .object({
      name: z.string().min(1).meta({ description: "Name of the tool to call.", example: "calculator" }),
      arguments: z
        .string()
        .meta({ description: "Arguments as a JSON-encoded object, exactly as the model wrote them.", example: '{"expression":"2+2"}' }),
    })
      .strict()
      .meta({ description: "The function called and its arguments." }),
  })
  .strict()
  .meta({ id: "ToolCall", description: "A function call made by the assistant." });

export const SystemMessage = z
  .object({ role: z.literal("system").meta({ description: "Always `system`." }), content: MessageContent, name: NameField })
  .strict()
  .meta({ id: "SystemMessage" });

export const UserMessage = z
  .object({ role: z.literal("user").meta({ description: "Always `user`." }), content: MessageContent, name: NameField })
  .strict()
  .meta({ id: "UserMessage" });

export const AssistantMessage = z
  .object({
    role: z.literal("assistant").meta({ description: "Always `assistant`." }),
    content: MessageContent.nullable().optional(),
    tool_calls: z.array(ToolCall).optional().meta({ description: "Tool calls; the server executes them during the step." }),
    name: NameField,
    reasoning_content: z
      .string()
      .nullable()
      .optional()
      .meta({ description: "Reasoning text some servers return beside `content` (kept in the transcript, not parsed)." }),
  })
  .strict()
  .meta({
    id: "AssistantMessage",
    description: "One assistant message. `content` may be null when the message only calls tools.",
    example: { role: "assistant", content: "<answer>olleh</answer>" },
  });

export const ToolMessage = z
  .object({
    role: z.literal("tool").meta({ description: "Always `tool`." }),
    content: MessageContent,
    tool_call_id: z.string().min(1).meta({ description: "The `id` of the tool call this answers." }),
    name: NameField,
  })
  .strict()
  .meta({ id: "ToolMessage" });

export const ChatMessage = z
  .discriminatedUnion("role", [SystemMessage, UserMessage, AssistantMessage, ToolMessage])
  .meta({ id: "ChatMessage", description: "A chat message in the OpenAI chat-completions shape." });

export const ToolDefinition = z
  .object({
    type: z.literal("function").meta({ description: "Always `function`." }),
    function: z
      .object({
        name: z.string().meta({ description: "The name the model calls the tool by.", example: "calculator" }),
        description: z.string().optional().meta({ description: "What the tool does, for the model." }),
        parameters: z.record(z.string(), z.unknown()).meta({ description: "JSON Schema of the arguments object." }),
        strict: z.boolean().optional().meta({ description: "OpenAI structured-outputs flag: the model's arguments must match `parameters` exactly." }),
      })
      .strict()
      .meta({ description: "The function the tool runs: its name, description and argument schema." }),
  })
  .strict()
  .meta({ id: "ToolDefinition", description: "An OpenAI function tool, ready to pass as `tools` to a chat completion." });

export type ToolCall = z.infer<typeof ToolCall>;
export type SystemMessage = z.infer<typeof SystemMessage>;
export type UserMessage = z.infer<typeof UserMessage>;
export type AssistantMessage = z.infer<typeof AssistantMessage>;
export type ToolMessage = z.infer<typeof ToolMessage>;
export type ChatMessage = z.infer<typeof ChatMessage>;
export type ToolDefinition = z.infer<typeof ToolDefinition>;
export type MessageContent = z.infer<typeof MessageContent>;

/** The text of a message's content, joining text parts; null content reads as "". */
export function contentText(content: MessageContent | null | undefined): string {
  if (content == null) return "";
  if (typeof content === "string") return content;
  return content.map((part) => part.text).join("");
}
