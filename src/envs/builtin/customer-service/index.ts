import { EngineError } from "../../engine.js";
import { defineEnv } from "../../define.js";
import { describeJudges, EMPTY_JUDGE_CATALOG, JudgeChoiceError, type JudgeCatalog } from "../../judges.js";
import { CLIENT_PLAYER, type SeatAssignment } from "../../seats.js";
import type { Environment } from "../../types.js";
import { argsFor, userModelEndpoint, type CustomerServiceArgs } from "./args.js";
import { openConversation, relay } from "./conversation.js";
import { llmUser, type LlmUserOptions } from "./llm-user.js";
import { AGENT_POLICY } from "./prompts.js";
import { customerServiceRubric } from "./rubric.js";
import { scriptedUser } from "./scripted-user.js";
import { AGENT, CustomerServiceState, USER } from "./state.js";
import { customerServiceDataset } from "./tasks.js";
import { agentTools } from "./tools.js";

/** Agent messages (tool calls and words) per episode: tau-bench's default bound of 30 steps. */
export const MAX_AGENT_TURNS = 30;

const DEFAULT_SEATS: SeatAssignment = { [AGENT]: CLIENT_PLAYER, [USER]: "scripted" };

export interface CustomerServiceOptions {
  /** How the `llm` user calls its model (timeouts, retries, failure log). */
  userModel?: LlmUserOptions;
}

/**
 * customer-service wired to an operator's judges, which the `llm` user may play on. The
 * server builds it through `withServices`; `customerService` (no judges) serves the
 * scripted user and refuses an `llm` user until then.
 */
export function createCustomerService(catalog: JudgeCatalog, options: CustomerServiceOptions = {}): Environment<CustomerServiceArgs, CustomerServiceState> {
  const env = defineEnv<CustomerServiceArgs, CustomerServiceState>({
    id: "customer-service",
    version: "1.0.0",
    description:
      "A simulated-user environment in the spirit of tau-bench: the agent seat serves a customer of a small online store with tools over the task's own database (authenticate, look up orders, cancel, change an address, return, exchange, transfer to a human) under a written policy; the user seat is a scripted customer (default) or an LLM the operator configured (`seats: {user: \"llm\"}`, args.user_model names a judge). Reward: the final database equals the expected one, checked by code, and on some tasks the user's verdict. " +
      (catalog.judges.length ? `User models: ${describeJudges(catalog)}.` : "This server has no judge configured, so only the scripted user is available."),
    kind: "multi_turn",
    argsSchema: argsFor(catalog),
    stateSchema: CustomerServiceState,
    dataset: customerServiceDataset,
    tools: agentTools,
    maxToolCallsPerMessage: 4,
    maxTurns: MAX_AGENT_TURNS,
    seats: {
      seats: [
        { name: AGENT, description: "The store's customer-service agent: tools over the database, the store's policy as its system prompt.", systemPrompt: AGENT_POLICY, players: [CLIENT_PLAYER], default: CLIENT_PLAYER, trainable: true },
        { name: USER, description: "The customer, with hidden instructions (who they are, what they want, what they know).", players: ["scripted", "llm"], default: "scripted", trainable: false },
      ],
      policies: { scripted: scriptedUser, llm: llmUser(catalog, options.userModel) },
      toPlay: (state) => state.to_play,
      assignment: (state) => state.seats,
    },
    setup: (row, { args, seats }) => {
      const assignment = seats ?? DEFAULT_SEATS;
      if (assignment[USER] === "llm") {
        // Fail at reset, not at the user's first move.
        try {
          userModelEndpoint(catalog, args);
        } catch (err) {
          if (err instanceof JudgeChoiceError) throw new EngineError("invalid_env_args", `customer-service: the llm user needs a model: ${err.message}`);
          throw err;
        }
      }
      return openConversation(row, assignment);
    },
    respond: (state, message, { seat }) => relay(state, message, seat),
    rubric: customerServiceRubric,
  });
  return { ...env, withServices: (services) => createCustomerService(services.judges, options) };
}

/**
 * Customer service for a small online store, with a simulated user (issue 27): nine tasks
 * (seven train, two eval) over a catalogue of five products, written for edgegym.
 */
export const customerService = createCustomerService(EMPTY_JUDGE_CATALOG);
