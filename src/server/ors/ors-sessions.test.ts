import { describe, expect, it } from "vitest";
import { builtinEnvs } from "../../envs/index.js";
import type { EpisodeService } from "../episodes/episode-service.js";
import { ApiError } from "../errors.js";
import { OrsSessions } from "./ors-sessions.js";
import { newSessionId } from "./session-id.js";

const bob = { name: "bob", admin: false };
const env = builtinEnvs.find((e) => e.id === "reverse-text");

/** A service where no episode is visible to bob and every reset finds its id taken, as when another tenant's episode has it. */
function takenEverywhere(): EpisodeService {
  const service = {
    env: () => env,
    get: (_viewer: unknown, id: string) => Promise.reject(new ApiError("episode_not_found", `no episode "${id}"`)),
    reset: (_viewer: unknown, _env: string, _body: unknown, _key: string, id: string) => Promise.reject(new ApiError("invalid_request", `episode id "${id}" is already taken; open a new session`)),
  };
  return service as unknown as EpisodeService;
}

async function refusal(run: Promise<unknown>): Promise<{ code: string; message: string }> {
  const err = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  const { code, message } = err as ApiError;
  return { code, message };
}

describe("OrsSessions.create", () => {
  it("an issued id that another tenant's episode has (1 in 2^32) is refused as an id never issued", async () => {
    const sessions = new OrsSessions(takenEverywhere());
    const body = { env_name: "reverse-text", split: "train", index: 0 };
    const taken = await refusal(sessions.create(bob, await newSessionId(bob), "reverse-text", body));
    const neverIssued = await refusal(sessions.create(bob, "ep_" + "0".repeat(32), "reverse-text", body));
    expect(taken).toEqual(neverIssued);
    expect(taken.message).not.toContain("taken");
  });
});
