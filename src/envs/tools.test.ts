import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { AssistantMessage } from "../protocol/index.js";
import { rowsDataset } from "./dataset.js";
import { toolEnv } from "./define.js";
import { startEpisode, stepEpisode } from "./engine.js";
import { defineRubric } from "./rubric.js";
import { defineTool, executeToolCalls, hiddenArgNames, toolDefinition } from "./tools.js";

interface NotebookState {
  owner: string;
  notes: Record<string, string>;
}

const write = defineTool<NotebookState, z.ZodObject<{ title: z.ZodString; text: z.ZodString; notes: z.ZodRecord<z.ZodString, z.ZodString>; owner: z.ZodString }>>({
  name: "write_note",
  description: "Saves a note under a title.",
  parameters: z.object({ title: z.string().min(1), text: z.string(), notes: z.record(z.string(), z.string()), owner: z.string() }).strict(),
  hiddenArgs: { notes: (state) => state.notes, owner: (state) => state.owner },
  run: ({ title, text, notes, owner }) => {
    notes[title] = text; // the state's own object: this writes the episode's state
    return `saved "${title}" for ${owner} (${Object.keys(notes).length} notes)`;
  },
});

const read = defineTool<NotebookState, z.ZodObject<{ title: z.ZodString; notes: z.ZodRecord<z.ZodString, z.ZodString> }>>({
  name: "read_note",
  description: "Reads a note.",
  parameters: z.object({ title: z.string(), notes: z.record(z.string(), z.string()) }).strict(),
  hiddenArgs: { notes: (state) => state.notes },
  run: ({ title, notes }) => notes[title] ?? `no note "${title}"`,
});

const call = (name: string, args: unknown, id = "c1"): AssistantMessage => ({
  role: "assistant",
  content: null,
  tool_calls: [{ id, type: "function", function: { name, arguments: JSON.stringify(args) } }],
});

describe("hidden tool arguments", () => {
  it("are stripped from the schema the model sees", () => {
    expect(hiddenArgNames(write)).toEqual(["notes", "owner"]);
    const params = toolDefinition(write as never).function.parameters;
    expect(Object.keys(params.properties as object)).toEqual(["title", "text"]);
    expect(params.required).toEqual(["title", "text"]);
    expect(params.additionalProperties).toBe(false);
  });

  it("are injected from state before validation, overriding what the model wrote", async () => {
    const state: NotebookState = { owner: "ada", notes: {} };
    const out = await executeToolCalls([write, read], call("write_note", { title: "t", text: "x", owner: "mallory", notes: { forged: "1" } }).tool_calls!, state);
    expect(out.messages[0]).toEqual({ role: "tool", tool_call_id: "c1", content: 'saved "t" for ada (1 notes)' });
    expect(state.notes).toEqual({ t: "x" });
  });

  it("still validates the model's own arguments", async () => {
    const state: NotebookState = { owner: "ada", notes: {} };
    const out = await executeToolCalls([write], call("write_note", { title: "", text: "x" }).tool_calls!, state);
    expect(out.errors).toBe(1);
    expect(out.messages[0]?.content).toMatch(/invalid arguments: title:/);
  });

  it("keep state across steps of an episode (the state is stored with each step)", async () => {
    const env = toolEnv<Record<string, never>, NotebookState>({
      id: "notebook",
      version: "1",
      description: "notes",
      dataset: rowsDataset({ train: [{ prompt: "Take notes." }] }),
      stateSchema: z.object({ owner: z.string(), notes: z.record(z.string(), z.string()) }).strict(),
      setup: () => ({ state: { owner: "ada", notes: {} } }),
      tools: [write, read],
      rubric: defineRubric([{ name: "notes", weight: 1, fn: ({ state }) => Object.keys(state?.notes ?? {}).length }]),
    });
    expect(env.toolDefinitions().map((t) => Object.keys(t.function.parameters.properties as object))).toEqual([["title", "text"], ["title"]]);
    let snap = await startEpisode(env, { index: 0 });
    snap = (await stepEpisode(env, snap, call("write_note", { title: "plan", text: "ship it" }))).snapshot;
    // The stored snapshot is plain JSON: round-trip it as the server does.
    snap = JSON.parse(JSON.stringify(snap));
    const step = await stepEpisode(env, snap, call("read_note", { title: "plan" }, "c2"));
    expect(step.reply).toEqual([{ role: "tool", tool_call_id: "c2", content: "ship it" }]);
    expect(step.snapshot.state).toEqual({ owner: "ada", notes: { plan: "ship it" } });
  });
});

describe("toolUsageRubric", () => {
  it("counts calls per tool and failed calls", async () => {
    const { toolUsageRubric } = await import("./rewards.js");
    const { combineRubrics } = await import("./rubric-group.js");
    const { scoreRubric } = await import("./rubric.js");
    const { XmlParser } = await import("./parsers/xml-parser.js");
    const rubric = combineRubrics(defineRubric<null>([{ name: "one", weight: 1, fn: () => 1 }]), toolUsageRubric<null>());
    const completion = [
      { ...call("read_note", { title: "a" }), tool_calls: [...call("read_note", {}).tool_calls!, ...call("write_note", {}, "c2").tool_calls!] },
      { role: "tool" as const, tool_call_id: "c1", content: "Error: invalid arguments: title: required" },
      { role: "tool" as const, tool_call_id: "c2", content: "ok" },
      call("read_note", { title: "b" }, "c3"),
    ];
    const score = await scoreRubric(rubric, { prompt: [], completion, answer: null, info: {}, state: null, parser: new XmlParser({ fields: ["answer"] }), task: { prompt: "" } });
    expect(score.metrics).toEqual({ tool_errors: 1, "tool_calls/read_note": 2, "tool_calls/write_note": 1 });
    expect(score.reward).toBe(1);
  });
});
