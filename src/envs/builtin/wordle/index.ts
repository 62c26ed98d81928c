import { z } from "zod";
import { contentText, type ChatMessage } from "../../../protocol/index.js";
import { rowsDataset } from "../../dataset.js";
import { multiTurnEnv } from "../../define.js";
import { XmlParser } from "../../parsers/xml-parser.js";
import type { Parser } from "../../parsers/parser.js";
import { defineRubric } from "../../rubric.js";
import type { Dataset, RespondResult } from "../../types.js";
import { greens, scoreGuess, yellows, type Mark } from "./feedback.js";
import { ALLOWED, SOLUTIONS } from "./words.js";

const WordleArgs = z
  .object({
    max_guesses: z.number().int().min(1).max(10).default(6).describe("Guesses allowed; invalid guesses count too."),
    require_known_words: z.boolean().default(true).describe("Reject guesses that are not in the accepted word list."),
  })
  .strict();
type WordleArgs = z.infer<typeof WordleArgs>;

const MarkSchema = z.enum(["G", "Y", "-"]);
const WordleState = z
  .object({
    /** Valid guesses with their feedback, in order. */
    guesses: z.array(z.object({ word: z.string(), marks: z.array(MarkSchema).length(5) }).strict()),
    invalidGuesses: z.number().int().min(0),
    /** Turns spent, valid or not. */
    used: z.number().int().min(0),
    maxGuesses: z.number().int().min(1),
    solved: z.boolean(),
  })
  .strict();
type WordleState = z.infer<typeof WordleState>;

export const guessParser = new XmlParser({ fields: ["think", "guess"], answerField: "guess", optional: ["think"] });

const SYSTEM_PROMPT = `You are playing Wordle. Find the secret five-letter English word.
Write each guess as a real five-letter word inside <guess>…</guess>, for example <guess>crane</guess>. You may think inside <think>…</think> first.
After each guess you get one mark per letter:
G = the letter is in the word, in this spot;
Y = the letter is in the word, in another spot;
- = the letter is not in the word (or not as many times as you used it).
Invalid guesses (not five letters, or not a known word) count as guesses.`;

function promptFor(maxGuesses: number): string {
  return `Guess the secret five-letter word. You have ${maxGuesses} guesses.`;
}

const baseRows = rowsDataset({ rows: SOLUTIONS.map((word, i) => ({ prompt: promptFor(6), answer: word, info: { word_id: i } })), evalFraction: 0.1, seed: 2026 });

/** The secret rows, with the prompt naming the number of guesses the episode's args allow. */
const dataset: Dataset = {
  size: (split) => baseRows.size(split),
  row: async (split, index, rawArgs) => {
    const row = await baseRows.row(split, index);
    return { ...row, prompt: promptFor(WordleArgs.parse(rawArgs ?? {}).max_guesses) };
  },
};

const spaced = (text: string): string => text.split("").join(" ");
const user = (content: string): ChatMessage => ({ role: "user", content });

/** Why a guess is invalid, or null. */
function invalidReason(raw: string | undefined, requireKnown: boolean): string | null {
  if (raw === undefined || raw === "") return "I could not find a guess. Write it as <guess>word</guess>.";
  const word = raw.toLowerCase();
  if (!/^[a-z]+$/.test(word)) return `"${raw}" is not a word: use letters only.`;
  if (word.length !== 5) return `"${raw}" has ${word.length} letters, not 5.`;
  if (requireKnown && !ALLOWED.has(word)) return `"${raw}" is not in the word list.`;
  return null;
}

interface Summary {
  solved: boolean;
  used: number;
  maxGuesses: number;
  invalid: number;
  last: Mark[] | null;
}

/** From state, or replayed from the transcript when scoring statelessly (every 5-letter guess counts as valid). */
function summarize(state: WordleState | null, completion: readonly ChatMessage[], parser: Parser, answer: string | null): Summary {
  if (state) return { solved: state.solved, used: state.used, maxGuesses: state.maxGuesses, invalid: state.invalidGuesses, last: state.guesses.at(-1)?.marks ?? null };
  const said = completion.filter((m) => m.role === "assistant").map((m) => parser.parseAnswer(contentText(m.content))?.toLowerCase());
  let last: Mark[] | null = null;
  let invalid = 0;
  let used = 0;
  for (const guess of said) {
    used++;
    if (!guess || !answer || !/^[a-z]{5}$/.test(guess)) {
      invalid++;
      continue;
    }
    last = scoreGuess(guess, answer);
    if (guess === answer) return { solved: true, used, maxGuesses: Math.max(6, used), invalid, last };
  }
  return { solved: false, used, maxGuesses: Math.max(6, used), invalid, last };
}

/**
 * Wordle: guess a five-letter word in a few tries from per-letter feedback. Rewards
 * solving, solving in fewer guesses, and the letters the last guess got right.
 */
export const wordle = multiTurnEnv<WordleArgs, WordleState>({
  id: "wordle",
  version: "1.0.0",
  description: "Wordle: guess the secret five-letter word in <guess>…</guess> from G/Y/- feedback. Reward: solved, fewer guesses, partial credit from the last guess, format.",
  systemPrompt: SYSTEM_PROMPT,
  parser: guessParser,
  argsSchema: WordleArgs,
  stateSchema: WordleState,
  maxTurns: 10,
  dataset,
  setup: (_row, { args }) => ({ state: { guesses: [], invalidGuesses: 0, used: 0, maxGuesses: args.max_guesses, solved: false } }),
  respond: (state, message, { args, task }): RespondResult<WordleState> => {
    const answer = String(task.answer);
    const raw = guessParser.parse(contentText(message.content)).guess;
    const used = state.used + 1;
    const left = args.max_guesses - used;
    const outOfGuesses = (next: WordleState, text: string): RespondResult<WordleState> => ({
      state: next,
      messages: [user(`${text}\n\nNo guesses left. The word was ${answer.toUpperCase()}.`)],
      done: true,
      stopReason: "out_of_guesses",
    });
    const problem = invalidReason(raw, args.require_known_words);
    if (problem) {
      const next = { ...state, used, invalidGuesses: state.invalidGuesses + 1 };
      const text = `Guess ${used}/${args.max_guesses} is invalid: ${problem}`;
      if (left <= 0) return outOfGuesses(next, text);
      return { state: next, messages: [user(`${text}\nGuesses left: ${left}.`)] };
    }
    const word = (raw as string).toLowerCase();
    const marks = scoreGuess(word, answer);
    const next: WordleState = { ...state, used, guesses: [...state.guesses, { word, marks }] };
    const text = `Guess ${used}/${args.max_guesses}: ${spaced(word.toUpperCase())}\nFeedback:  ${marks.join(" ")}`;
    if (word === answer) {
      return { state: { ...next, solved: true }, messages: [user(`${text}\n\nSolved in ${used}!`)], done: true, stopReason: "solved" };
    }
    if (left <= 0) return outOfGuesses(next, text);
    return { state: next, messages: [user(`${text}\nGuesses left: ${left}.`)] };
  },
  rubric: defineRubric<WordleState>(
    [
      {
        name: "solved",
        weight: 1,
        description: "1 when the word was found.",
        fn: ({ state, completion, parser, answer }) => Number(summarize(state, completion, parser, answer).solved),
      },
      {
        name: "efficiency",
        weight: 0.5,
        description: "When solved: (max guesses − guesses used + 1) / max guesses, so 1 for a first-guess solve; else 0.",
        fn: ({ state, completion, parser, answer }) => {
          const s = summarize(state, completion, parser, answer);
          return s.solved ? (s.maxGuesses - s.used + 1) / s.maxGuesses : 0;
        },
      },
      {
        name: "partial",
        weight: 0.2,
        description: "(greens + 0.5 × yellows) / 5 for the last valid guess: partial credit for getting close.",
        fn: ({ state, completion, parser, answer }) => {
          const last = summarize(state, completion, parser, answer).last;
          return last ? (greens(last) + 0.5 * yellows(last)) / 5 : 0;
        },
      },
      {
        name: "format",
        weight: 0.1,
        description: "Each message is <guess>…</guess> (optional <think> before it) with nothing outside the tags.",
        fn: ({ completion, parser }) => parser.formatReward(completion),
      },
    ],
    ({ state, completion, parser, answer }) => {
      const s = summarize(state, completion, parser, answer);
      return { guesses: s.used, invalid_guesses: s.invalid, greens_last: s.last ? greens(s.last) : 0, yellows_last: s.last ? yellows(s.last) : 0 };
    },
  ),
});
