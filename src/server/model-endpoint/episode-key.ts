/**
 * A harness episode's endpoint key: 32 random bytes, given to the client once (the reset
 * reply) and to the agent in its container; the episode stores only its SHA-256. WebCrypto
 * only, so both runtimes mint and check keys alike.
 */
const PREFIX = "egk_";

function base64url(bytes: Uint8Array): string {
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function mintEpisodeKey(): string {
  return PREFIX + base64url(crypto.getRandomValues(new Uint8Array(32)));
}

export async function episodeKeyHash(key: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Compares two hex hashes in time independent of where they differ. */
export function sameHash(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** The key an agent sent: `Authorization: Bearer …` (OpenAI clients) or `x-api-key` (Anthropic clients). */
export function presentedKey(headers: Headers): string | null {
  const auth = headers.get("authorization");
  const bearer = auth?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
  return bearer ?? headers.get("x-api-key")?.trim() ?? null;
}
