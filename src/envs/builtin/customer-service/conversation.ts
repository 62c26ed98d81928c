import { contentText, type AssistantMessage } from "../../../protocol/index.js";
import { toSeat, type SeatAssignment } from "../../seats.js";
import type { RespondResult, SetupResult, TaskRow } from "../../types.js";
import { GREETING, readVerdict, STOP_TOKEN, TRANSFER_NOTICE } from "./prompts.js";
import { AGENT, USER, type CustomerServiceState } from "./state.js";
import { initialDatabase, taskOf } from "./tasks.js";

/**
 * Who hears what. The agent talks to the user with messages without tool calls: each is
 * shown to the user seat (a user message named "user"), and the user's reply to the agent
 * (a user message named "agent"). A message with tool calls is the agent working: the
 * engine runs its calls, their results go to the agent alone, and the agent moves again;
 * its text, if any, is not shown to the user. The user ends the conversation with
 * `###STOP###`; a transfer to a human ends it after the user's reply to the notice, so a
 * task that asks for the user's verdict gets one either way.
 */

/** A new episode: the task's database, nobody authenticated, the user to speak first (after the greeting, which only the user seat is shown). */
export function openConversation(row: TaskRow, seats: SeatAssignment): SetupResult<CustomerServiceState> {
  const task = taskOf(row);
  return {
    state: {
      task_id: task.id,
      seats,
      db: initialDatabase(task),
      auth_user_id: null,
      to_play: USER,
      turns: 0,
      user_turns: 0,
      tool_calls: 0,
      writes: 0,
      transferred: false,
      ended: null,
      verdict: null,
    },
    messages: [toSeat(USER, GREETING)],
  };
}

function agentMoved(state: CustomerServiceState, message: AssistantMessage): RespondResult<CustomerServiceState> {
  state.turns++;
  const calls = message.tool_calls?.length ?? 0;
  if (calls > 0) {
    state.tool_calls += calls;
    if (state.transferred) {
      state.to_play = USER;
      return { state, messages: [toSeat(USER, TRANSFER_NOTICE)] };
    }
    state.to_play = AGENT;
    return { state };
  }
  state.to_play = USER;
  return { state, messages: [toSeat(USER, contentText(message.content))] };
}

function userSpoke(state: CustomerServiceState, message: AssistantMessage): RespondResult<CustomerServiceState> {
  const text = contentText(message.content);
  state.user_turns++;
  if (state.transferred || text.includes(STOP_TOKEN)) {
    state.to_play = null;
    state.ended = state.transferred ? "transfer_to_human" : "user_stop";
    state.verdict = readVerdict(text);
    return { state, done: true, stopReason: state.ended };
  }
  state.to_play = AGENT;
  return { state, messages: [toSeat(AGENT, text)] };
}

/** The environment's reply to one seat's message (the engine has already run the agent's tool calls). */
export function relay(state: CustomerServiceState, message: AssistantMessage, seat: string | undefined): RespondResult<CustomerServiceState> {
  if (seat === AGENT) return agentMoved(state, message);
  if (seat === USER) return userSpoke(state, message);
  throw new Error(`customer-service: a message from ${seat === undefined ? "no seat" : `seat "${seat}"`}; its seats are "${AGENT}" and "${USER}"`);
}
