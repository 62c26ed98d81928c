/** A response read once: status, headers, the raw text, and the JSON body when it parses. */
export interface HttpReply {
  status: number;
  headers: Headers;
  text: string;
  // Tests index into bodies of many shapes; the protocol schemas are checked elsewhere.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

export async function readReply(res: Response): Promise<HttpReply> {
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Request options for a JSON body (a string is sent as is, to test malformed bodies). */
export function jsonInit(method: string, body: unknown, headers: Record<string, string> = {}): RequestInit {
  return {
    method,
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  };
}
